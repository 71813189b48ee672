#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Compile time of a model through add_ml_model() (cmake/MLModel.cmake), the host variant
# an app links, with Ninja: cold (empty kernel cache), `touch model.onnx`, weights changed
# (the largest float initializer scaled by 1.01, same shapes), and a fresh build folder on a
# warm cache. Prints wall and CPU time (user+sys of the whole build, GNU time) and mlcc's
# own "-v" kernel count per step (BENCHMARKS.md, "CMake host variant").
#
# usage: bench/cmake_host_variant.sh MLCC [MODEL.onnx] [MLCC_SOURCE_DIR]
#   MODEL defaults to ../shared/models/resnet18/model.onnx; the work folder is a temporary
#   directory (removed at the end), with its own kernel cache.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
mlcc="$(realpath "$1")"
model="$(realpath "${2:-$here/../shared/models/resnet18/model.onnx}")"
src_dir="$(realpath "${3:-$here}")"
w="$(mktemp -d /tmp/mlcc-cmake-bench-XXXXXX)"
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/src"
cp "$model" "$w/src/model.onnx"
/usr/bin/python3 - "$w/src" <<'PY'
import sys
import numpy as np
import onnx
from onnx import numpy_helper
d = sys.argv[1]
m = onnx.load(d + "/model.onnx")
for t in sorted(m.graph.initializer, key=lambda t: -int(np.prod(t.dims))):
    a = numpy_helper.to_array(t)
    if a.dtype == np.float32:
        t.CopyFrom(numpy_helper.from_array(a * np.float32(1.01), t.name))
        break
onnx.save(m, d + "/model_w2.onnx")
PY
cat >"$w/src/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.20)
project(bench LANGUAGES C)
include("$src_dir/cmake/MLModel.cmake")
add_ml_model(net model.onnx)
file(WRITE \${CMAKE_BINARY_DIR}/main.c "#include \"net.h\"\nint main(void) { return NET_WORKSPACE_SIZE == 0; }\n")
add_executable(app \${CMAKE_BINARY_DIR}/main.c)
target_link_libraries(app PRIVATE net)
EOF
# mlcc with -v on its compile runs (those writing a depfile), stderr to v.log.
printf '#!/bin/sh\ncase " $* " in *" -MD "*) exec "%s" -v "$@" 2>>"%s";; esac\nexec "%s" "$@"\n' \
  "$mlcc" "$w/v.log" "$mlcc" >"$w/mlcc-v"
chmod +x "$w/mlcc-v"
export MLCC_CACHE_DIR="$w/cache"
configure() { cmake -S "$w/src" -B "$w/b" -G Ninja -DMLCC_EXECUTABLE="$w/mlcc-v" >/dev/null; }
step() {
  : >"$w/v.log"
  /usr/bin/time -o "$w/time" -f "%e %U %S" cmake --build "$w/b" -j2 >"$w/build.log" 2>&1 ||
    { cat "$w/build.log"; exit 1; }
  read -r e u s <"$w/time"
  printf "%-16s %7.2f s wall %7.2f s cpu   %s\n" "$1" "$e" "$(echo "$u + $s" | bc)" \
    "$(grep -h -E 'kernels? compiled' "$w/v.log" | tr '\n' ' ')"
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
configure
step cold
touch "$w/src/model.onnx"
step touch
cp "$w/src/model_w2.onnx" "$w/src/model.onnx"
step weights-changed
rm -rf "$w/b"
configure
step fresh-build-dir
