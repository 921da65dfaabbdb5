#!/usr/bin/env bash
# fuzz.sh — builds the libFuzzer harness over the public C API (tests/c/fuzz_api.c) with
# clang (scripts/toolchain.sh: LLVM 19) and AddressSanitizer + UBSan (-fno-sanitize-recover=all: undefined behaviour stops it),
# then runs it on the committed seed corpus (tests/c/fuzz-corpus/) plus what it finds.
#
#   bash tests/c/fuzz.sh                          # 20 s, as npm test runs it
#   bash tests/c/fuzz.sh -max_total_time=3600     # longer; any libFuzzer flag is passed on
#
# New inputs go to build/fuzz-corpus/ (not committed); a crash is written to build/ and the
# script exits non-zero. Seeds come from tests/c/make-fuzz-seeds.py.
set -euo pipefail
cd "$(dirname "$0")/../.."

FUZZ_FLAGS=(-g -O1 -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
  -DATTN_PORTABLE) # the portable simd.h layer: the scalar build's code paths
source scripts/toolchain.sh
mapfile -t CORE_SOURCES < <(ls src/c/*.c | grep -v /freestanding.c$)
mkdir -p build/fuzz-corpus
"$CLANG" "${FUZZ_FLAGS[@]}" "${CORE_SOURCES[@]}" tests/c/fuzz_api.c -o build/fuzz_api
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(-max_total_time=20)
build/fuzz_api -artifact_prefix=build/ -print_final_stats=1 "${args[@]}" build/fuzz-corpus tests/c/fuzz-corpus
