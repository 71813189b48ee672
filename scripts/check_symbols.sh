#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Refuses a symbol reference from the emit toolkit up into the kernels (issue 13):
# targets/emit/ sits below targets/kernels/, so no object compiled from
# targets/emit/*.c may leave undefined a global symbol that an object compiled
# from targets/kernels/*.c defines. check_layers.sh checks the includes; this
# checks what the compiled objects link against (a prototype declared by hand
# gets past an include check, not past this one).
#
# usage: check_symbols.sh OBJDIR
#   OBJDIR: the object directory of mlcc_targets, holding targets/emit/*.o and
#           targets/kernels/*.o (CMake: build/CMakeFiles/mlcc_targets.dir).
# Every violation is printed as OBJECT: references SYMBOL (defined in OBJECT).
# CTest runs this as lint.symbols; lint.symbols.planted checks that it can fail.
# Exit: 0 clean, 1 a violation, 2 misuse (no such objects, no nm).
set -eu

[ $# -eq 1 ] || { echo "usage: check_symbols.sh OBJDIR" >&2; exit 2; }
dir=$1
nm=${NM:-nm}
command -v "$nm" >/dev/null 2>&1 || { echo "check_symbols.sh: no $nm" >&2; exit 2; }
emit=$(find "$dir/targets/emit" -name '*.o' 2>/dev/null | sort)
kern=$(find "$dir/targets/kernels" -name '*.o' 2>/dev/null | sort)
if [ -z "$emit" ] || [ -z "$kern" ]; then
  echo "check_symbols.sh: $dir has no targets/emit/*.o or targets/kernels/*.o (build first)" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# SYMBOL OBJECT for every global symbol the kernels define.
for o in $kern; do
  "$nm" -g --defined-only "$o" | awk -v o="$o" 'NF == 3 { print $3, o }'
done | sort -k1,1 >"$tmp/defined"
# SYMBOL OBJECT for every symbol an emit object leaves undefined.
for o in $emit; do
  "$nm" -u "$o" | awk -v o="$o" '{ print $NF, o }'
done | sort -k1,1 >"$tmp/undefined"

join "$tmp/undefined" "$tmp/defined" >"$tmp/bad"
if [ -s "$tmp/bad" ]; then
  awk '{ print $2 ": references " $1 " (defined in " $3 "): targets/emit may not use targets/kernels" }' "$tmp/bad"
  exit 1
fi
exit 0
