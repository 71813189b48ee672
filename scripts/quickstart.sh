#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's main job: set up, build mlcc, then compile the example detector
# for x86-64, aarch64 and riscv64 and run each (cross targets under qemu-user).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build="$(pwd)/${MLCC_BUILD_DIR:-build}"
mlcc="$build/mlcc"
for target in x86_64 aarch64 riscv64; do
  dir="$build/examples/detector-$target"
  echo "== detector for $target"
  cmake -S examples/detector -B "$dir" -G Ninja -DMLCC_EXECUTABLE="$mlcc" \
    -DCMAKE_TOOLCHAIN_FILE="$(pwd)/toolchains/$target-linux-gnu.cmake" >/dev/null
  cmake --build "$dir" -j2 >/dev/null
  (cd "$dir" && ctest --output-on-failure -Q)
  case $target in
    x86_64) "$dir/detector_app" ;;
    aarch64) qemu-aarch64 -L /usr/aarch64-linux-gnu "$dir/detector_app" 3 ;;
    riscv64) qemu-riscv64 -L /usr/riscv64-linux-gnu "$dir/detector_app" 3 ;;
  esac
done
