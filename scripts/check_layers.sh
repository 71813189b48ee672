#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Refuses an #include that reaches up the layers of mlcc (issue 13).
#
# usage: check_layers.sh ROOT
#
# The layers, bottom first, each a CMake library (CMakeLists.txt) and a Bazel
# cc_library (BUILD):
#   ir/       mlcc_ir       may include ir/ only
#   targets/  mlcc_targets  may include ir/ and targets/
#   passes/   mlcc_passes   may include ir/, passes/ and of targets/ only its public
#                           headers: targets/target.h (the target description),
#                           targets/codegen/codegen.h (constant folding by the JIT),
#                           targets/kernels/pack.h (the packed weight layouts)
#   driver/   mlcc_driver   may include every layer
# ir/ and passes/ may not include LLVM's headers (<llvm-c/...>): only targets/ and
# the driver's tests see LLVM. Tests, fuzzers and benchmarks (*_test.c, *_fuzz.c,
# *_bench.c, *_test_util.h) are not part of a layer and are not checked.
# Quoted includes are checked ("dir/file.h", the project's spelling); every
# violation is printed as FILE:LINE: message. CMake runs this before it compiles the
# layers (target mlcc_layers) and CTest runs it as lint.layers; lint.layers.planted
# checks that a planted upward include is refused.
# Exit: 0 clean, 1 a violation, 2 misuse.
set -eu

[ $# -eq 1 ] || { echo "usage: check_layers.sh ROOT" >&2; exit 2; }
root=$1
[ -d "$root/ir" ] || { echo "check_layers.sh: $root has no ir/" >&2; exit 2; }
cd "$root"

# allowed LAYER INCLUDED_PATH: 0 when LAYER may include INCLUDED_PATH.
allowed() {
  case "$1:$2" in
    ir:ir/*) return 0 ;;
    targets:ir/* | targets:targets/*) return 0 ;;
    passes:ir/* | passes:passes/*) return 0 ;;
    passes:targets/target.h | passes:targets/codegen/codegen.h) return 0 ;;
    passes:targets/kernels/pack.h) return 0 ;;
    driver:*) return 0 ;;
  esac
  return 1
}

bad=0
for layer in ir targets passes driver; do
  [ -d "$layer" ] || continue
  files=$(find "$layer" -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) \
    ! -name '*_test.c' ! -name '*_fuzz.c' ! -name '*_bench.c' ! -name '*_test_util.h' |
    LC_ALL=C sort)
  for f in $files; do
    # "N:path" for every quoted include, and "N:<llvm-c/...>" for LLVM's headers.
    hits=$(sed -n -e 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*|\1|p' \
      -e 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*<\(llvm-c/[^>]*\)>.*|<\1>|p' "$f" |
      sort -u)
    for inc in $hits; do
      case "$inc" in
        "<llvm-c/"*)
          case "$layer" in
            ir | passes)
              line=$(grep -n "include[[:space:]]*$inc" "$f" | head -1 | cut -d: -f1)
              echo "$f:$line: includes $inc: $layer/ does not see LLVM (only targets/ does)"
              bad=1
              ;;
          esac
          continue
          ;;
        */*) ;;
        *) continue ;;  # a header beside the file or a generated one without a folder
      esac
      top=${inc%%/*}
      case "$top" in ir | targets | passes | driver) ;; *) continue ;; esac
      if ! allowed "$layer" "$inc"; then
        line=$(grep -n "include[[:space:]]*\"$inc\"" "$f" | head -1 | cut -d: -f1)
        echo "$f:$line: includes \"$inc\": $layer/ may not include $top/ (upward; see scripts/check_layers.sh)"
        bad=1
      fi
    done
  done
done
[ "$bad" = 0 ] || { echo "check_layers.sh: upward includes (layers: ir <- targets <- passes <- driver)" >&2; exit 1; }
exit 0
