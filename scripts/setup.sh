#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages mlcc needs (only those missing), then
# configures and builds mlcc into ${MLCC_BUILD_DIR:-build}.
# Usage: scripts/setup.sh            (as root, or with sudo available)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  # build (git: the commit in mlcc --version; the fleet and Bazel tests snapshot the tree with it)
  git cmake ninja-build make gcc pkg-config llvm-16-dev libprotobuf-c-dev protobuf-c-compiler
  libssl-dev zlib1g-dev libzstd-dev libtinfo-dev libxml2-dev
  libcurl4-openssl-dev  # remote kernel cache (driver/remote_cache.c)
  # tests: reference data, ONNX python tooling, cross toolchains and emulators
  python3 python3-onnx python3-numpy libonnx-testdata qemu-user
  # cross gcc and their C libraries: --no-install-recommends would drop the libc6-dev-*-cross
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-riscv64-linux-gnu libc6-dev-riscv64-cross
  # microcontrollers (docs/mcu.md, tests/mcu/): bare-metal gcc, their C library, qemu-system
  gcc-arm-none-eabi picolibc-arm-none-eabi gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf
  qemu-system-arm qemu-system-misc
  clang-16 libclang-rt-16-dev  # libFuzzer targets (scripts/fuzz.sh, ctest fuzz.smoke)
  lld-16  # mlcc -c joins the kernel objects with ld.lld -r (driver/archive.h)
  iproute2  # ip netns: the two-host cache tests (tests/e2e/cache/fleet_test.py)
  nginx  # WebDAV server for the remote kernel cache tests (tests/e2e/cache/)
  # Bazel rules (docs/bazel.md): Debian's offline Bazel 4.2.3 and its rules_java
  bazel-bootstrap bazel-rules-java
)
# node and npm for onnxruntime-node, the oracle of tests/onnx/opset_cases (below);
# a machine with another Node.js install (nodesource) keeps its own
command -v npm >/dev/null || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Each toolchain the README's two commands use must compile and run a C program
# that needs its C library and libm: x86-64 natively, aarch64 and riscv64 with
# Debian's cross gcc under qemu-user (binfmt is not assumed). A missing piece
# stops setup with one line naming the package that provides it.
check_dir="$(mktemp -d)"
trap 'rm -rf "$check_dir"' EXIT
cat >"$check_dir/check.c" <<'CHECK'
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  double x = argc > 1 ? atof(argv[1]) : 2.0;
  printf("%.6f\n", sqrt(x));
  return 0;
}
CHECK
check_toolchain() {  # name cc cc-package libc-package emulator...
  local name="$1" cc="$2" cc_pkg="$3" libc_pkg="$4"
  shift 4
  if ! command -v "$cc" >/dev/null; then
    echo "setup: $name: $cc not found (Debian package $cc_pkg)" >&2
    exit 1
  fi
  if ! "$cc" -O1 "$check_dir/check.c" -lm -o "$check_dir/check-$name" 2>"$check_dir/cc-$name.log"; then
    echo "setup: $name: $cc cannot build a C program ($(grep -m1 -i 'error' "$check_dir/cc-$name.log" || true)); install $libc_pkg" >&2
    exit 1
  fi
  if (($#)) && ! command -v "$1" >/dev/null; then
    echo "setup: $name: $1 not found (Debian package qemu-user)" >&2
    exit 1
  fi
  local out
  if ! out="$("$@" "$check_dir/check-$name" 16 2>&1)" || [ "$out" != "4.000000" ]; then
    echo "setup: $name: the test program did not run correctly (got '$out'); check $cc_pkg, $libc_pkg and qemu-user" >&2
    exit 1
  fi
}
check_toolchain x86-64 gcc gcc libc6-dev
check_toolchain aarch64 aarch64-linux-gnu-gcc gcc-aarch64-linux-gnu libc6-dev-arm64-cross \
  qemu-aarch64 -L /usr/aarch64-linux-gnu
check_toolchain riscv64 riscv64-linux-gnu-gcc gcc-riscv64-linux-gnu libc6-dev-riscv64-cross \
  qemu-riscv64 -L /usr/riscv64-linux-gnu
echo "setup: toolchains ok: x86-64, aarch64 (qemu-aarch64), riscv64 (qemu-riscv64)"

# onnxruntime-node 1.30.0 into tools/ort (ignored by git): tests/onnx/opset_cases/
# computes the expected outputs of its cases with it (ort_run.js). --ignore-scripts:
# the package's install script fetches GPU libraries from a host that is not
# reachable; the CPU library ships inside the package. Only regenerating cases
# needs it, so a failure here is a warning.
ort_version=1.30.0
ort_pkg=tools/ort/node_modules/onnxruntime-node/package.json
if ! grep -qs "\"version\": \"$ort_version\"" "$ort_pkg"; then
  mkdir -p tools/ort
  if (cd tools/ort && npm install --ignore-scripts --no-audit --no-fund --no-save \
        "onnxruntime-node@$ort_version" >npm-install.log 2>&1); then
    echo "setup: installed onnxruntime-node $ort_version into tools/ort"
  else
    echo "setup: warning: npm could not install onnxruntime-node $ort_version (tools/ort/npm-install.log); tests/onnx/opset_cases cannot be regenerated" >&2
  fi
fi

build="${MLCC_BUILD_DIR:-build}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2
echo "setup: built $build/mlcc"
