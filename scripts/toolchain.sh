# toolchain.sh — the LLVM release attnlab's clang builds use, named once. Sourced (not run) by
# build.sh (the relaxed and threaded modules) and tests/c/fuzz.sh (libFuzzer): moving to another
# release is a change of this line, and of the README's words about it.
LLVM=19
CLANG=clang-$LLVM
WASM_LD=wasm-ld-$LLVM
# Debian's packages of these tools; libclang-rt: the sanitizer and libFuzzer runtimes of fuzz.sh.
LLVM_PACKAGES=("clang-$LLVM" "lld-$LLVM" "libclang-rt-$LLVM-dev")
LLVM_RUNTIMES=/usr/lib/llvm-$LLVM/lib/clang/$LLVM/lib/linux
