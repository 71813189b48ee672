#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's test command: set up, build, and run the whole CTest suite
# (unit, driver, ONNX node tests, the shared models when ../shared exists).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build="${MLCC_BUILD_DIR:-build}"
ctest --test-dir "$build" -j2 --output-on-failure -LE cross-slow "$@"
