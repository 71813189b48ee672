#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's main command: set up, build mlcc, then build examples/detector
# once -- add_ml_model(detector detector.onnx TARGETS x86 aarch64 riscv)
# compiles the model for all three targets in that one build -- and run the
# app for each: x86-64 natively, aarch64 and riscv64 under qemu-user. The top
# boxes must be the same on every target.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build="$(pwd)/${MLCC_BUILD_DIR:-build}"
dir="$build/examples/detector"
echo "== one build of examples/detector for x86, aarch64, riscv"
cmake -S examples/detector -B "$dir" -G Ninja -DMLCC_EXECUTABLE="$build/mlcc" >/dev/null
cmake --build "$dir" -j2
declare -A run=(
  [x86]="$dir/detector_app"
  [aarch64]="qemu-aarch64 -L /usr/aarch64-linux-gnu $dir/detector_app_aarch64"
  [riscv]="qemu-riscv64 -L /usr/riscv64-linux-gnu $dir/detector_app_riscv"
)
reference=""
for target in x86 aarch64 riscv; do
  echo "== detector on $target"
  out="$(${run[$target]} 3)"
  echo "$out"
  boxes="$(grep ' box ' <<<"$out")"
  if [ -z "$reference" ]; then
    reference="$boxes"
  elif [ "$boxes" != "$reference" ]; then
    echo "quickstart: the top boxes on $target differ from x86" >&2
    exit 1
  fi
done
echo "== same top boxes on x86, aarch64 and riscv"
