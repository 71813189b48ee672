#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's main command: set up, build mlcc, then build examples/detector
# once -- add_ml_model(detector detector.onnx TARGETS x86 aarch64 riscv)
# compiles the model for all three targets in that one build -- and run the
# app for each: x86-64 natively, aarch64 and riscv64 under qemu-user. The top
# boxes must be the same on every target. Then the fleet with
# microcontrollers: examples/kws builds the MLPerf Tiny keyword spotter
# (../shared/models/tiny/kws_dscnn) for x86, aarch64, riscv, cortex-m4 and
# rv32 in one CMake build and runs the app on each (natively, under
# qemu-user, on the qemu-system boards with semihosting); every target's
# scores must match the reference (rtol 1e-4, atol 1e-5) and each other.
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

# --- the fleet with microcontrollers: examples/kws ---------------------------------
kws_model="${MLCC_KWS_MODEL_DIR:-$(pwd)/../shared/models/tiny/kws_dscnn}"
if [ ! -f "$kws_model/model.onnx" ]; then
  echo "quickstart: skipping the microcontroller fleet: no $kws_model/model.onnx" \
       "(the shared MLPerf Tiny models; set MLCC_KWS_MODEL_DIR)" >&2
  exit 0
fi
kdir="$build/examples/kws"
echo "== one build of examples/kws for x86, aarch64, riscv, cortex-m4, rv32"
cmake -S examples/kws -B "$kdir" -G Ninja -DMLCC_EXECUTABLE="$build/mlcc" \
  -DKWS_MODEL_DIR="$kws_model" >/dev/null
cmake --build "$kdir" -j2 --target all kws_fleet
semi=(-semihosting-config enable=on,target=native -nographic -monitor none -serial none)
declare -A krun=(
  [x86]="$kdir/kws_app"
  [aarch64]="qemu-aarch64 -L /usr/aarch64-linux-gnu $kdir/kws_app_aarch64"
  [riscv]="qemu-riscv64 -L /usr/riscv64-linux-gnu $kdir/kws_app_riscv"
  [cortex-m4]="qemu-system-arm -M mps2-an386 -cpu cortex-m4 ${semi[*]} -kernel $kdir/kws_app_cortex_m4.elf"
  [rv32]="qemu-system-riscv32 -M virt -bios none -m 32M ${semi[*]} -kernel $kdir/kws_app_rv32.elf"
)
fleet=(x86 aarch64 riscv cortex-m4 rv32)
rm -f "$kdir"/data/output_*.bin
for target in "${fleet[@]}"; do
  echo "== kws on $target: ${krun[$target]%% *}"
  # semihosting writes the bare-metal app's text to qemu's stderr
  out="$(cd "$kdir/data" && ${krun[$target]} 2>&1)" || {
    echo "$out"; echo "quickstart: kws on $target failed" >&2; exit 1; }
  grep -E 'top class|kws: ok' <<<"$out"
done
/usr/bin/python3 examples/kws/compare.py "$kdir/data" "${fleet[@]}"
/usr/bin/python3 - "$kdir/kws_fleet/manifest.json" <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["models"][0]["targets"]:
    print("== kws_fleet %-9s %-28s RAM %7d B (workspace %d + stack %d), flash %7d B (code %d + weights %d + ...)"
          % (t["alias"], t["triple"], t["ram_size"], t["workspace_size"], t["stack_size"],
             t["flash_size"], t["code_size"], t["weights_size"]))
PY
echo "== same scores on x86, aarch64, riscv, cortex-m4 and rv32; bundle: $kdir/kws_fleet.tar.gz"
