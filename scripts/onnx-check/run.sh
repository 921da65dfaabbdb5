#!/usr/bin/env bash
# run.sh ONNX_REPO — builds harness.c natively and runs check.py against an onnx checkout (say the
# one `git clone https://github.com/onnx/onnx` gives); a developer's check, not part of npm test
# (the machines CI runs on reach no git host). Needs gcc and python3 with numpy (Debian: python3-numpy).
set -euo pipefail
op="${1:?usage: run.sh ONNX_REPO}/onnx/reference/ops/op_linear_attention.py"
[[ -f "$op" ]] || { echo "run.sh: no $op (an onnx checkout with the LinearAttention reference op, opset 27)" >&2; exit 2; }
cd "$(dirname "$0")/../.."
mkdir -p build
mapfile -t CORE < <(ls src/c/*.c | grep -v /freestanding.c$)
gcc -std=c11 -O2 -Wall -Wextra -Werror -I src/c "${CORE[@]}" scripts/onnx-check/harness.c -lm -o build/onnx-check-harness
/usr/bin/python3 scripts/onnx-check/check.py "$1" build/onnx-check-harness
