#!/usr/bin/env bash
# build.sh — builds attnlab into dist/:
#   1. the C core natively under AddressSanitizer + UBSan, and runs tests/c/test_native.c,
#      tests/c/test_linear_backward.c, tests/c/test_model.c, tests/c/test_model_decode.c and
#      tests/c/test_recurrent.c on it,
#      so memory errors surface before any WebAssembly step;
#   2. dist/attnlab-scalar.wasm and dist/attnlab-simd.wasm with Emscripten (Debian's emcc);
#   3. dist/attnlab-relaxed.wasm (relaxed-SIMD fused multiply-add) with clang + wasm-ld (LLVM 19), and
#      the threaded modules dist/attnlab-{scalar,simd,relaxed}-threads.wasm (shared memory);
#   4. copies src/js (the binding, its types and the shared modules, as a tree) next to the
#      modules, and the text corpus (data/kjv.txt, data/kjv-index.json) next to tasks.js.
# Missing compilers are installed with apt-get (scripts/apt-install.sh) when this runs as root (or
# with sudo); otherwise it stops and says what to install. Environment: ATTNLAB_SKIP_BUILD=1 skips everything when dist/
# is complete (npm pack in tests); ATTNLAB_SKIP_NATIVE_TEST=1 skips step 1.
set -euo pipefail
cd "$(dirname "$0")"

SRC=src/c
OUT=dist
BUILD=build
# Every .c of src/c but freestanding.c (the relaxed build's libc) is the core.
mapfile -t CORE_SOURCES < <(ls "$SRC"/*.c | grep -v /freestanding.c$)
EXPORTS_FILE="$SRC/exports.txt" # the one list of exported C functions

# Every build's modules, from the one manifest of builds (src/js/builds.js).
mapfile -t WASM_FILES < <(node --input-type=module -e \
  "import { BUILD_FILES } from './src/js/builds.js'; console.log(BUILD_FILES.join('\n'));")
(( ${#WASM_FILES[@]} > 0 )) || { echo "build.sh: could not read src/js/builds.js" >&2; exit 1; }

dist_complete() {
  local f
  for f in attnlab.js pool.js pool-worker.js "${WASM_FILES[@]}"; do [[ -f $OUT/$f ]] || return 1; done
}
if [[ "${ATTNLAB_SKIP_BUILD:-}" == 1 ]] && dist_complete; then
  echo "build.sh: ATTNLAB_SKIP_BUILD=1 and dist/ is complete; nothing to do"
  exit 0
fi

# --- tools -------------------------------------------------------------------------------------
# What is missing comes from Debian, through the one install routine (scripts/ensure.mjs uses it too).
apt_install() { bash scripts/apt-install.sh build.sh "$@" || exit 1; }

command -v emcc >/dev/null || apt_install emscripten
# The LLVM release (clang, wasm-ld, the fuzzer's runtimes): scripts/toolchain.sh names it once.
source scripts/toolchain.sh
command -v "$CLANG" >/dev/null && command -v "$WASM_LD" >/dev/null && [[ -d $LLVM_RUNTIMES ]] \
  || apt_install "${LLVM_PACKAGES[@]}"
NATIVE_CC=${CC:-gcc}
command -v "$NATIVE_CC" >/dev/null || apt_install gcc

# Debian's emcc runs its JS tools with the system node, which finds acorn etc. only here.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
# Debian's Emscripten ships a prebuilt, frozen cache (libc etc.) next to itself. A non-root user
# cannot write there, so it gets a private copy that emcc may add to.
if [[ ! -w /usr/share/emscripten/cache ]]; then
  if [[ ! -d "$BUILD/emcache" ]]; then mkdir -p "$BUILD" && cp -a /usr/share/emscripten/cache "$BUILD/emcache"; fi
  export EM_CACHE="$PWD/$BUILD/emcache"
fi

mkdir -p "$OUT" "$BUILD"

# The version is package.json's; attnlab.h and the binding hold copies a consumer reads without
# loading anything (scripts/version.mjs writes them, and `npm version` runs it). Stop when they differ.
node scripts/version.mjs --check || exit 1

# --- 1. native sanitizer test ------------------------------------------------------------------
# -O0: gcc takes ~45 s to optimise the sanitized kernels and gains nothing here; -Werror keeps
# warnings from piling up.
NATIVE_FLAGS=(-std=c11 -O0 -g -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all)
# Twice: with simd.h's SSE layer and with its portable four-float struct (the scalar wasm build's).
if [[ "${ATTNLAB_SKIP_NATIVE_TEST:-}" != 1 ]]; then
  for layer in sse portable; do
    echo "build.sh: native C test (ASan + UBSan, $layer simd.h)"
    define=(); [[ $layer == portable ]] && define=(-DATTN_PORTABLE)
    for test in test_native test_linear_backward test_model test_model_decode test_recurrent; do
      "$NATIVE_CC" "${NATIVE_FLAGS[@]}" "${define[@]}" "${CORE_SOURCES[@]}" "tests/c/$test.c" -lm \
        -o "$BUILD/${test}_$layer"
      "$BUILD/${test}_$layer"
    done
  done
fi

# --- 2. Emscripten: scalar and SIMD128 ---------------------------------------------------------
# A standalone module with no entry point: no Emscripten JS glue (its ES6 output breaks in Node),
# our binding instantiates it. The core allocates nothing, so no malloc is linked; the binding lays
# buffers out above attn_heap_base() and grows memory itself, up to the 4 GiB of wasm32.
EMCC_EXPORTS=$(sed 's/^/_/' "$EXPORTS_FILE" | paste -sd, -)
EMCC_FLAGS=(-std=c11 -O3 -DNDEBUG -Wall -Wextra -Werror
  --no-entry -sSTANDALONE_WASM=1 -sEXPORTED_FUNCTIONS="$EMCC_EXPORTS"
  -sALLOW_MEMORY_GROWTH=1 -sINITIAL_MEMORY=2MB -sMAXIMUM_MEMORY=4GB -sTOTAL_STACK=256KB
  -sERROR_ON_UNDEFINED_SYMBOLS=1 -sFILESYSTEM=0)
echo "build.sh: emcc scalar"
emcc "${EMCC_FLAGS[@]}" "${CORE_SOURCES[@]}" -o "$OUT/attnlab-scalar.wasm"
echo "build.sh: emcc simd128"
emcc "${EMCC_FLAGS[@]}" -msimd128 "${CORE_SOURCES[@]}" -o "$OUT/attnlab-simd.wasm"

# --- 3. clang: relaxed SIMD and the threaded builds ----------------------------------------------
# clang 14 (Emscripten's) only emits the pre-standard FMA opcode that engines reject; clang-19
# emits f32x4.relaxed_madd. We compile and link in separate steps so the clang driver does not run
# a wasm-opt from PATH (Debian's binaryen cannot parse relaxed opcodes). There is no libc, hence
# -ffreestanding and freestanding.c.
# -mllvm -disable-lsr: what Emscripten's own driver passes to clang (emcc -v shows it). LLVM's loop
# strength reduction turns the micro-kernel's constant offsets (v128.load offset=16) into separate
# i32.add chains and hoists all four broadcast loads of a step ahead of the multiply-adds, so 14
# vectors are live against the 15 registers V8 gives WebAssembly on x86-64. Without the flag a
# clang-19 SIMD128 module ran softmax 14 % slower than the emcc one (n = 1024, both on one thread,
# interleaved in one process: 8.26 against 7.25 ms); with it, the same (7.23 ms).
CLANG_CFLAGS=(--target=wasm32 -std=c11 -O3 -DNDEBUG -Wall -Wextra -Werror -ffreestanding
  -fno-exceptions -mllvm -disable-lsr)
CLANG_LDFLAGS=(--no-entry --stack-first -z stack-size=262144 --initial-memory=2097152
  --max-memory=4294967296 --gc-sections --strip-debug)

# clang_module NAME CFLAGS... -- LDFLAGS...: compiles the core and freestanding.c with the common
# flags and these, each into build/NAME/, and links dist/attnlab-NAME.wasm with these link flags
# and the exports of exports.txt.
clang_module() {
  local name=$1; shift
  local cflags=() ldflags=() src obj objects=()
  while [[ $# -gt 0 && $1 != -- ]]; do cflags+=("$1"); shift; done
  [[ $# -gt 0 ]] && shift
  ldflags=("$@")
  echo "build.sh: $CLANG $name"
  mkdir -p "$BUILD/$name"
  for src in "${CORE_SOURCES[@]}" "$SRC/freestanding.c"; do
    obj="$BUILD/$name/$(basename "${src%.c}").o"
    "$CLANG" "${CLANG_CFLAGS[@]}" "${cflags[@]}" -c "$src" -o "$obj"
    objects+=("$obj")
  done
  "$WASM_LD" "${CLANG_LDFLAGS[@]}" "${ldflags[@]}" $(sed 's/^/--export=/' "$EXPORTS_FILE") \
    "${objects[@]}" -o "$OUT/attnlab-$name.wasm"
}

clang_module relaxed -msimd128 -mrelaxed-simd -- --export-memory

# The threaded builds: one module per SIMD level that several instances run on one shared memory
# (docs/contract.md, "Threads"): atomics for the pool's counters and wait/notify, bulk memory so
# that wasm-ld can initialise the data segments once (passive segments + __wasm_init_memory)
# whichever instance starts first. The memory is imported (the binding creates it shared, with the
# module's maximum) and __stack_pointer is exported so that the binding gives each worker instance
# its own stack. clang for all three: the freestanding route the relaxed build already takes, and
# Emscripten 3.1.6's threads need its JS runtime, which a standalone module has not.
THREADS_CFLAGS=(-matomics -mbulk-memory -DATTN_THREADS)
THREADS_LDFLAGS=(--import-memory --shared-memory --export=__stack_pointer
  $(sed 's/^/--export=/' "$SRC/exports-threads.txt")) # the pool's entry points, on top of exports.txt
clang_module scalar-threads "${THREADS_CFLAGS[@]}" -- "${THREADS_LDFLAGS[@]}"
clang_module simd-threads "${THREADS_CFLAGS[@]}" -msimd128 -- "${THREADS_LDFLAGS[@]}"
clang_module relaxed-threads "${THREADS_CFLAGS[@]}" -msimd128 -mrelaxed-simd -- "${THREADS_LDFLAGS[@]}"

# --- 4. the binding ----------------------------------------------------------------------------
# src/js as a tree (a module may live in a folder, as tasks/ does): its .js and .d.ts files, in
# the same relative places, so that the binding's relative imports hold in dist/ too.
(cd src/js && find . -type f \( -name '*.js' -o -name '*.d.ts' \) -print0) |
  while IFS= read -r -d '' f; do install -D -m 644 "src/js/$f" "$OUT/$f"; done
# tasks.js (Node) and corpus.js (browsers, bundlers) find the corpus next to themselves
cp data/kjv.txt data/kjv-index.json "$OUT/"
dist_complete || { echo "build.sh: a module src/js/builds.js lists was not built (${WASM_FILES[*]})" >&2; exit 1; }
# The stamp: when, and whether step 1's native tests ran (npm test rebuilds a build that skipped them).
native_tests=ran; [[ "${ATTNLAB_SKIP_NATIVE_TEST:-}" == 1 ]] && native_tests=skipped
printf '%s native-tests-%s\n' "$(date -u +%FT%TZ)" "$native_tests" > "$OUT/.stamp"
ls -l "$OUT"/*.wasm | awk '{ print "build.sh: " $5 " bytes  " $9 }'
