#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# lint.symbols.planted: scripts/check_symbols.sh accepts a scratch object tree
# whose emit object uses only the emit layer, and refuses the same tree when the
# emit object calls a function a kernels object defines (declared by hand, as
# an include check would not see it); the message names the object and symbol.
#
# usage: planted_symbols_test.sh CHECK_SYMBOLS_SH CC
set -eu
check=$1
cc=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
mkdir -p "$tmp/o/targets/emit" "$tmp/o/targets/kernels" "$tmp/src"

printf 'int mlcc_planted_kernel(int x) { return x + 1; }\n' >"$tmp/src/k.c"
printf 'int mlcc_planted_helper(int x) { return x * 2; }\n' >"$tmp/src/h.c"
printf 'int mlcc_planted_helper(int);\nint e(int x) { return mlcc_planted_helper(x); }\n' \
  >"$tmp/src/clean.c"
printf 'int mlcc_planted_kernel(int);\nint e(int x) { return mlcc_planted_kernel(x); }\n' \
  >"$tmp/src/bad.c"
"$cc" -c -o "$tmp/o/targets/kernels/k.c.o" "$tmp/src/k.c"
"$cc" -c -o "$tmp/o/targets/emit/h.c.o" "$tmp/src/h.c"

# expect RC WHAT SRC
expect() {
  "$cc" -c -o "$tmp/o/targets/emit/e.c.o" "$tmp/src/$3"
  rc=0
  out=$(sh "$check" "$tmp/o" 2>&1) || rc=$?
  if [ "$rc" -ne "$1" ]; then
    echo "FAIL: $2: exit $rc, wanted $1: $out"
    fails=$((fails + 1))
  elif [ "$1" -ne 0 ] && ! printf '%s' "$out" | grep -q 'e.c.o: references mlcc_planted_kernel'; then
    echo "FAIL: $2: the message does not name e.c.o and mlcc_planted_kernel: $out"
    fails=$((fails + 1))
  else
    echo "ok: $2"
  fi
}

expect 0 "emit uses emit" clean.c
expect 1 "emit calls a kernels function" bad.c
rc=0
sh "$check" "$tmp/nothing" >/dev/null 2>&1 || rc=$?
if [ "$rc" -ne 2 ]; then echo "FAIL: missing objects: exit $rc, wanted 2"; fails=$((fails + 1)); else echo "ok: missing objects"; fi
[ "$fails" -eq 0 ] || exit 1
echo "all planted symbol checks passed"
