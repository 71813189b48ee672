#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages mlcc needs (only those missing), then
# configures and builds mlcc into ${MLCC_BUILD_DIR:-build}.
# Usage: scripts/setup.sh            (as root, or with sudo available)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  # build
  cmake ninja-build make gcc pkg-config llvm-16-dev libprotobuf-c-dev protobuf-c-compiler
  libssl-dev zlib1g-dev libzstd-dev libtinfo-dev libxml2-dev
  libcurl4-openssl-dev  # remote kernel cache (driver/remote_cache.c)
  # tests: reference data, ONNX python tooling, cross toolchains and emulators
  python3 python3-onnx python3-numpy libonnx-testdata qemu-user
  # cross gcc and their C libraries: --no-install-recommends would drop the libc6-dev-*-cross
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc-riscv64-linux-gnu libc6-dev-riscv64-cross
  clang-16 libclang-rt-16-dev  # libFuzzer targets (scripts/fuzz.sh, ctest fuzz.smoke)
  lld-16  # mlcc -c joins the kernel objects with ld.lld -r (driver/archive.h)
  nginx  # WebDAV server for the remote kernel cache tests (tests/e2e/cache/)
  # Bazel rules (docs/bazel.md): Debian's offline Bazel 4.2.3 and its rules_java
  bazel-bootstrap bazel-rules-java
)
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

build="${MLCC_BUILD_DIR:-build}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j2
echo "setup: built $build/mlcc"
