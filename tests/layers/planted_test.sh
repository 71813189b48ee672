#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# lint.layers.planted: scripts/check_layers.sh refuses each kind of upward
# include planted in a scratch tree (and accepts the same tree without it), so
# lint.layers and the mlcc_layers build step can fail.
#
# usage: planted_test.sh CHECK_LAYERS_SH
set -eu
check=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# tree: a minimal clean tree (one file per layer, each including what it may).
tree() {
  rm -rf "$tmp/t"
  mkdir -p "$tmp/t/ir" "$tmp/t/targets/emit" "$tmp/t/passes" "$tmp/t/driver"
  printf '#include "ir/graph.h"\n' >"$tmp/t/ir/graph.c"
  printf '#include "ir/graph.h"\n#include <llvm-c/Core.h>\n' >"$tmp/t/targets/emit/emit.c"
  printf '#include "targets/target.h"\n#include "passes/pass.h"\n' >"$tmp/t/passes/pass.c"
  printf '#include "passes/pass.h"\n#include "targets/emit/emit.h"\n' >"$tmp/t/driver/main.c"
  # Tests are not part of a layer.
  printf '#include "driver/main.h"\n' >"$tmp/t/ir/graph_test.c"
}

# expect RC WHAT FILE LINE: plants LINE in FILE of a clean tree and wants RC.
expect() {
  tree
  [ -z "$3" ] || printf '%s\n' "$4" >>"$tmp/t/$3"
  rc=0
  out=$(sh "$check" "$tmp/t" 2>&1) || rc=$?
  if [ "$rc" -ne "$1" ]; then
    echo "FAIL: $2: exit $rc, wanted $1: $out"
    fails=$((fails + 1))
  elif [ "$1" -ne 0 ] && ! printf '%s' "$out" | grep -q "$3:"; then
    echo "FAIL: $2: the message does not name $3: $out"
    fails=$((fails + 1))
  else
    echo "ok: $2"
  fi
}

expect 0 "the clean tree passes" "" ""
expect 1 "ir/ including targets/" ir/graph.c '#include "targets/target.h"'
expect 1 "ir/ including passes/" ir/graph.c '#include "passes/pass.h"'
expect 1 "ir/ including LLVM" ir/graph.c '#include <llvm-c/Core.h>'
expect 1 "targets/ including passes/" targets/emit/emit.c '#include "passes/plan_memory.h"'
expect 1 "targets/ including driver/" targets/emit/emit.c '  #  include "driver/cache.h"'
expect 1 "passes/ including targets/ internals" passes/pass.c '#include "targets/emit/emit.h"'
expect 1 "passes/ including LLVM" passes/pass.c '#include <llvm-c/Core.h>'
expect 0 "passes/ including targets/kernels/pack.h" passes/pass.c '#include "targets/kernels/pack.h"'
expect 1 "a header in ir/ including driver/" ir/graph.h '#include "driver/options.h"'
[ "$fails" -eq 0 ]
