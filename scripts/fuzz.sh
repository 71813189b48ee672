#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (CMake preset `fuzz`: clang-16,
# -fsanitize=fuzzer,address) and runs each for a bounded time, one process
# on one core each, seeded with the repository's models (tests/data, tests/bad,
# examples/) and a sample of the ONNX node tests (libonnx-testdata).
#
#   scripts/fuzz.sh [SECONDS_PER_FUZZER] [FUZZER...]
#     SECONDS_PER_FUZZER  default 60; the issue's bar is 1800
#     FUZZER              default: every *_fuzz target that was built
#   MLCC_FUZZ_BUILD=DIR   build folder (default build-fuzz)
#   MLCC_FUZZ_OUT=DIR     corpora, logs and crash inputs (default $MLCC_FUZZ_BUILD/fuzz-out)
#
# Exits 1 if any fuzzer found a crash, leak, timeout (hang) or OOM; the input
# is saved as $MLCC_FUZZ_OUT/crashes/<fuzzer>-{crash,leak,timeout,oom}-<sha1>
# and its log is $MLCC_FUZZ_OUT/<fuzzer>.log. Reproduce with
#   $MLCC_FUZZ_BUILD/<fuzzer> <crash file>
# and turn it into a tests/bad/ case once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
secs="${1:-60}"
shift || true
build="${MLCC_FUZZ_BUILD:-$root/build-fuzz}"
out="${MLCC_FUZZ_OUT:-$build/fuzz-out}"

if ! command -v clang-16 >/dev/null; then
  echo "fuzz.sh: clang-16 is needed (apt-get install clang-16)" >&2
  exit 2
fi
cmake --preset fuzz -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)"

fuzzers=("$@")
if [ ${#fuzzers[@]} -eq 0 ]; then
  for f in "$build"/*_fuzz; do [ -x "$f" ] && fuzzers+=("$(basename "$f")"); done
fi

# --- seeds --------------------------------------------------------------------
mkdir -p "$out/seeds/models" "$out/seeds/options" "$out/crashes"
find tests/data tests/bad examples -name '*.onnx' -size -512k -exec cp -f {} "$out/seeds/models/" \;
node=/usr/share/libonnx-testdata/data/node
if [ -d "$node" ]; then
  # A fixed sample: every 8th node test (sorted), about 60 models.
  i=0
  for m in $(ls -d "$node"/*/ | sort); do
    if [ $((i % 8)) -eq 0 ] && [ -f "$m/model.onnx" ]; then
      cp -f "$m/model.onnx" "$out/seeds/models/node_$(basename "$m").onnx"
    fi
    i=$((i + 1))
  done
fi
n=0
while IFS= read -r line; do
  printf '%s' "$line" | tr '|' '\0' >"$out/seeds/options/seed$n"
  n=$((n + 1))
done <<'SEEDS'
model.onnx
-o|out.a|--name=det|--target=aarch64|-mcpu=native|-mattr=+v|-O3|-j|4|-MD|-MFdeps.d|m.onnx
-c|--target=riscv|-O0|--input-shape=x=1x3x224x224|m.onnx
-S|--emit=ll|--passes=infer-shapes,fuse,plan-memory|--print-after-all|m.onnx
-###|-v|--emit=header|--name=_a1|m.onnx
--emit=ir|-o|-|--verify-each|--cache-dir=/tmp/c|--no-cache|m.onnx
--version
--help
--print-targets
--emitt=ll|m.onnx
--input-shape=images=1x3x320x320|--input-shape=n=0|m.onnx
--input-value=k=3|--input-value=shape=1,-1,2.5e1|--input-value=a=b=@in.pb|m.onnx
--target=x86_64-linux-gnu|-mcpu=x86-64-v3|-O1|m.onnx
SEEDS

# cache_fuzz: real kernels, entries and HTTP responses (made once per output folder).
if [ -x "$build/mlcc" ] && [ -z "$(ls -A "$out/seeds/cache" 2>/dev/null)" ]; then
  /usr/bin/python3 scripts/cache_fuzz_seeds.py "$build/mlcc" "$out/seeds/cache" >/dev/null || true
fi

# --- run ----------------------------------------------------------------------
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
status=0
for f in "${fuzzers[@]}"; do
  bin="$build/$f"
  corpus="$out/corpus/$f"
  mkdir -p "$corpus"
  seeds="$out/seeds/models"
  [ "$f" = options_fuzz ] && seeds="$out/seeds/options"
  [ "$f" = cache_fuzz ] && seeds="$out/seeds/cache"
  echo "fuzz.sh: $f for ${secs}s (log: $out/$f.log)"
  rc=0
  "$bin" "$corpus" "$seeds" -max_total_time="$secs" -timeout=30 -rss_limit_mb=3072 \
    -max_len=65536 -print_final_stats=1 -artifact_prefix="$out/crashes/$f-" \
    >"$out/$f.log" 2>&1 || rc=$?
  grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^#[0-9]+ +DONE' "$out/$f.log" | sed "s/^/  /" || true
  if [ $rc -ne 0 ]; then
    echo "fuzz.sh: $f FAILED (exit $rc); see $out/$f.log" >&2
    grep -E 'ERROR: |SUMMARY: |Test unit written to' "$out/$f.log" | head -5 >&2 || true
    status=1
  fi
done
exit $status
