#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end test of mlcc's Bazel rules (docs/bazel.md), offline, with Debian's Bazel 4.2.3:
#   1. `bazel build //:mlcc` in mlcc's own workspace;
#   2. the consumer workspace here (mlcc as external repository @mlcc): `bazel test` for the
#      host, --config=aarch64 and --config=riscv64 (under qemu); tiny_test checks values
#      against a numpy reference, detector_test's outputs must agree across the targets;
#      and --config=cortex-m4: tiny_test on qemu-system-arm's mps2-an386 board (and
#      --config=cortex-m55 / rv32 / rv32f: tiny_test on mps3-an547 and riscv32 virt);
#   3. ml_model_fleet: the bundle's layout and manifest.json, for x86, aarch64 and riscv, and
#      the same bytes (files and tarball) as CMake's ml_model_bundle() (docs/bundle.md);
#   4. the objects (archive members) and the header from Bazel equal those of mlcc run
#      directly with the same flags (sha256), for every target;
#   5. `bazel clean`, then a rebuild is served entirely from --disk_cache.
# Exit 0 pass, 1 fail, 77 skip (no bazel). Timings are printed per step.
#
# Environment: MLCC=path of an mlcc to compare with (the CMake-built one; default: the one
# built in step 1); MLCC_BAZEL_OUT=scratch dir for Bazel's output_user_root and disk cache
# (default /tmp/mlcc-bazel-$UID; CTest sets it under the build dir).
set -euo pipefail

src_root="$(cd "$(dirname "$0")/../.." && pwd)"

if ! command -v bazel >/dev/null 2>&1; then
  echo "SKIP: bazel is not installed (Debian: apt-get install bazel-bootstrap bazel-rules-java)"
  exit 77
fi
for tool in qemu-aarch64 qemu-riscv64 aarch64-linux-gnu-gcc riscv64-linux-gnu-gcc protoc-c; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "SKIP: $tool is not installed (scripts/setup.sh installs it)"
    exit 77
  fi
done

out="${MLCC_BAZEL_OUT:-/tmp/mlcc-bazel-$(id -u)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
user_root="$out/root"
disk_cache="$out/disk-cache"
work="$out/work"
rm -rf "$work"
mkdir -p "$work"

# Test a snapshot of the source tree, like a fresh clone: the tracked and untracked (not
# ignored) files, or everything but build directories without git. Edits made while the
# test runs then cannot change what it builds (the clean rebuild must be all cache hits).
root="$out/src"
here="$root/tests/bazel"
rm -rf "$root"
mkdir -p "$root"
if git -C "$src_root" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$src_root" && git ls-files -co --exclude-standard -z |
     while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
     tar --null -T - -cf -) | tar -xf - -C "$root"
else
  (cd "$src_root" && tar --exclude='./build*' --exclude='./bazel-*' -cf - .) | tar -xf - -C "$root"
fi

# The snapshot has no .git: give @mlcc_build_info (bazel/deps.bzl) the commit, as a source
# tarball's packager would, so the Bazel-built mlcc prints the same commit as the CMake one
# and the two fleet manifests agree.
if commit="$(git -C "$src_root" rev-parse --verify -q HEAD 2>/dev/null)"; then
  export MLCC_GIT_COMMIT="$commit"
fi

# No network: a repository that is not defined locally must fail, not download.
export HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9
export http_proxy=$HTTP_PROXY https_proxy=$HTTPS_PROXY

# Sources newer than $MLCC: it is not the program this snapshot builds (step 4 then skips it).
stale=""
if [ -n "${MLCC:-}" ] && [ -e "$MLCC" ]; then
  stale="$(find "$src_root/ir" "$src_root/passes" "$src_root/targets" "$src_root/driver" \
    -newer "$MLCC" \( -name '*.c' -o -name '*.h' -o -name '*.def' -o -name '*.proto' \) | head -3)"
fi

startup=(--output_user_root="$user_root")
common=(--symlink_prefix=/ --config=ci --disk_cache="$disk_cache" --color=no --curses=no)

fail() { echo "FAIL: $*" >&2; exit 1; }
t_start=$SECONDS
step_start=$SECONDS
step() {
  echo "== [$((SECONDS - t_start))s] $*"
  step_start=$SECONDS
}
done_step() { echo "   ok ($((SECONDS - step_start))s)"; }

shutdown() {
  (cd "$root" && bazel "${startup[@]}" shutdown >/dev/null 2>&1) || true
  (cd "$here" && bazel "${startup[@]}" shutdown >/dev/null 2>&1) || true
}
trap shutdown EXIT

# bazel_in DIR LOG ARGS...: runs bazel in DIR, output to LOG (shown on failure).
bazel_in() {
  local dir="$1" log="$2"
  shift 2
  if ! (cd "$dir" && bazel "${startup[@]}" "$@") >"$log" 2>&1; then
    grep -v -E 'linux-sandbox|^\[' "$log" | tail -40 >&2
    fail "bazel $* (in $dir; log $log)"
  fi
}

# --- 1. mlcc itself ---------------------------------------------------------------------
step "bazel build //:mlcc (mlcc's workspace, offline)"
bazel_in "$root" "$work/mlcc.log" build "${common[@]}" //:mlcc
bazel_mlcc="$(cd "$root" && bazel "${startup[@]}" info "${common[@]}" bazel-bin 2>/dev/null)/mlcc"
"$bazel_mlcc" --version | head -2
mlcc="${MLCC:-$bazel_mlcc}"
[ -x "$mlcc" ] || fail "MLCC=$mlcc is not executable"
done_step

# --- 2. consumer tests on three targets ---------------------------------------------------
# Start clean, like CI: every action then runs or comes from the disk cache, and so is
# stored there under its full key. (An incremental build after a header edit re-runs only
# the compiles whose discovered includes changed; the others keep their local results and
# are not stored under the new key, which lists every declared header.)
bazel_in "$here" "$work/clean0.log" clean
declare -A checksum
for config in host aarch64 riscv64; do
  step "bazel test //... ($config)"
  flags=("${common[@]}")
  [ "$config" = host ] || flags+=(--config="$config")
  bazel_in "$here" "$work/test-$config.log" test "${flags[@]}" --nocache_test_results \
    --build_tests_only //...
  grep -E '^//:.*(PASSED|FAILED)' "$work/test-$config.log" | sed 's/^/   /'
  logs="$(cd "$here" && bazel "${startup[@]}" info "${flags[@]}" bazel-testlogs 2>/dev/null)"
  grep -h '^tiny:' "$logs/tiny_test/test.log" | sed 's/^/   /'
  line="$(grep -h '^detector: checksum' "$logs/detector_test/test.log")" ||
    fail "no detector output in $logs/detector_test/test.log"
  echo "   $line"
  checksum[$config]="$line"
  bin="$(cd "$here" && bazel "${startup[@]}" info "${flags[@]}" bazel-bin 2>/dev/null)"
  case "$config" in
    host) want="X86-64" ;;
    aarch64) want="AArch64" ;;
    riscv64) want="RISC-V" ;;
  esac
  # grep without -q reads all of readelf's output (pipefail: no SIGPIPE on readelf)
  readelf -h "$bin/tiny_test" | grep "Machine:.*$want" >/dev/null ||
    fail "$bin/tiny_test is not a $want binary"
  mkdir -p "$work/lib-$config"
  cp "$bin/_mlcc/detector/libdetector.a" "$bin/_mlcc/detector/detector.h" "$work/lib-$config/"
  done_step
done
# The same detector, same input, on three targets: equal within DESIGN §4's tolerance.
python3 - "${checksum[host]}" "${checksum[aarch64]}" "${checksum[riscv64]}" <<'EOF' || fail "detector outputs differ across targets"
import sys
vals = [[float(v) for v in line.replace("checksum", "").replace("samples", "").split()[1:]]
        for line in sys.argv[1:]]
for other in vals[1:]:
    for a, b in zip(vals[0], other):
        if abs(a - b) > 1e-5 * 6912 + 1e-4 * abs(a):
            sys.exit("detector: %r vs %r" % (vals[0], other))
print("   detector outputs agree across x86, aarch64, riscv64")
EOF

# --- 2b. a microcontroller: --config=cortex-m4 -------------------------------------------
# arm-none-eabi-gcc + picolibc (toolchains/bazel), tiny_test linked with the board library
# and run on qemu-system-arm -M mps2-an386 through --run_under (semihosting: stdout, exit).
step "bazel test //... (cortex-m4, qemu-system-arm -M mps2-an386)"
flags=("${common[@]}" --config=cortex-m4)
bazel_in "$here" "$work/test-cortex-m4.log" test "${flags[@]}" --nocache_test_results \
  --build_tests_only //...
grep -E '^//:.*(PASSED|FAILED|SKIPPED)' "$work/test-cortex-m4.log" | sed 's/^/   /'
grep -q '^//:tiny_test .*PASSED' "$work/test-cortex-m4.log" || fail "tiny_test did not pass on cortex-m4"
logs="$(cd "$here" && bazel "${startup[@]}" info "${flags[@]}" bazel-testlogs 2>/dev/null)"
grep -h '^tiny: 5/5' "$logs/tiny_test/test.log" | sed 's/^/   /' ||
  fail "tiny_test on cortex-m4 printed no '5/5 outputs match' ($logs/tiny_test/test.log)"
bin="$(cd "$here" && bazel "${startup[@]}" info "${flags[@]}" bazel-bin 2>/dev/null)"
readelf -h "$bin/tiny_test" | grep "Machine:.*ARM" >/dev/null || fail "$bin/tiny_test is not an Arm binary"
readelf -h "$bin/_mlcc/tiny/libtiny.a" | grep "Machine:.*ARM" >/dev/null ||
  fail "the cortex-m4 libtiny.a is not Arm code"
# The other boards: tiny_test on cortex-m55 (mps3-an547), rv32 and rv32f (virt).
for cfg in cortex-m55 rv32 rv32f; do
  flags=("${common[@]}" --config=$cfg)
  bazel_in "$here" "$work/test-$cfg.log" test "${flags[@]}" --nocache_test_results \
    --build_tests_only //:tiny_test
  grep -E '^//:.*(PASSED|FAILED|SKIPPED)' "$work/test-$cfg.log" | sed "s/^/   $cfg /"
  grep -q '^//:tiny_test .*PASSED' "$work/test-$cfg.log" || fail "tiny_test did not pass on $cfg"
  logs="$(cd "$here" && bazel "${startup[@]}" info "${flags[@]}" bazel-testlogs 2>/dev/null)"
  grep -h '^tiny: 5/5' "$logs/tiny_test/test.log" | sed "s/^/   $cfg /" ||
    fail "tiny_test on $cfg printed no '5/5 outputs match' ($logs/tiny_test/test.log)"
done
# ml_model_fleet with the microcontroller: its manifest's RAM/flash figures against mlcc -v
# on the same model and target.
bazel_in "$here" "$work/tiny-fleet.log" build "${common[@]}" //:tiny_fleet
fbin="$(cd "$here" && bazel "${startup[@]}" info "${common[@]}" bazel-bin 2>/dev/null)"
"$mlcc" "$here/tiny.onnx" --name=tiny --target=cortex-m4 -o "$work/m4/libtiny.a" -v \
  2>"$work/m4-v.log" || fail "mlcc --target=cortex-m4 -v failed"
python3 - "$fbin/tiny_fleet/manifest.json" "$work/m4-v.log" "$work/m4/tiny.h" <<'EOF' || fail "tiny_fleet: the cortex-m4 RAM/flash figures"
import json, re, sys
m = json.load(open(sys.argv[1]))
t = {x["alias"]: x for x in m["models"][0]["targets"]}["cortex-m4"]
v = re.search(r"RAM (\d+) bytes \(workspace (\d+), stack (\d+).*flash (\d+) bytes \(code (\d+), "
              r"weights (\d+)", open(sys.argv[2]).read())
ram, ws, stack, flash, code, weights = map(int, v.groups())
hdr = open(sys.argv[3]).read()
assert m["format"] == 2 and t["triple"] == "thumbv7em-none-eabihf", t
assert (t["ram_size"], t["workspace_size"], t["stack_size"], t["flash_size"], t["code_size"],
        t["weights_size"]) == (ram, ws, stack, flash, code, weights), (t, v.groups())
assert "#define TINY_STACK_SIZE %d " % stack in hdr, hdr
print("   tiny_fleet cortex-m4: RAM %d B (workspace %d + stack %d), flash %d B = mlcc -v"
      % (ram, ws, stack, flash))
EOF
done_step

# --- 3. the fleet bundle -------------------------------------------------------------------
step "bazel build //:detector_fleet (x86, aarch64, riscv in one build)"
bazel_in "$here" "$work/fleet.log" build "${common[@]}" //:detector_fleet
bin="$(cd "$here" && bazel "${startup[@]}" info "${common[@]}" bazel-bin 2>/dev/null)"
bundle="$bin/detector_fleet"
(cd "$bundle" && find . -type f | sort | sed 's/^/   /')
python3 - "$bundle" "$root/examples/detector/detector.onnx" <<'EOF' || fail "bad fleet manifest"
import hashlib, json, os, sys
bundle, model = sys.argv[1], sys.argv[2]
sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
m = json.load(open(os.path.join(bundle, "manifest.json")))
assert m["format"] == 2 and m["bundle"] == "detector_fleet", m
assert m["mlcc"]["version"] and m["mlcc"]["llvm"].startswith("16."), m["mlcc"]
(d,) = m["models"]
assert (d["name"], d["file"], d["sha256"], d["size"]) == (
    "detector", "detector.onnx", sha(model), os.path.getsize(model)), d
want = {"x86": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu", "riscv": "riscv64-linux-gnu"}
assert [t["alias"] for t in d["targets"]] == sorted(want), d["targets"]
for t in d["targets"]:
    assert t["triple"] == want[t["alias"]], t
    assert t["cpu"] and t["workspace_size"] > 0 and t["workspace_align"] > 0, t
    assert t["stack_size"] > 0 and t["entry_abi"] == 3 and t["inputs"] and t["outputs"], t
    assert t["library"] == "%s/lib/libdetector.a" % t["triple"], t
    assert t["header"] == "%s/include/detector.h" % t["triple"], t
    assert sha(os.path.join(bundle, t["library"])) == t["library_sha256"], t
    assert sha(os.path.join(bundle, t["header"])) == t["header_sha256"], t
print("   manifest.json: format 2, %s, mlcc %s, LLVM %s, %d targets, sha256s match"
      % (d["name"], m["mlcc"]["version"], m["mlcc"]["llvm"], len(d["targets"])))
EOF
# The same bundle from CMake (ml_model_bundle, host toolchain) with $mlcc: every file and the
# tarball byte-identical (docs/bundle.md), when $mlcc is the program this snapshot builds.
if [ -z "$stale" ] || [ "$mlcc" = "$bazel_mlcc" ]; then
  cm="$work/cmake-bundle"
  rm -rf "$cm" && mkdir -p "$cm/src"
  cp "$root/examples/detector/detector.onnx" "$cm/src/"
  {
    echo 'cmake_minimum_required(VERSION 3.20)'
    echo 'project(fleet LANGUAGES C)'
    echo "include(\"$root/cmake/MLModel.cmake\")"
    echo 'add_ml_model(detector detector.onnx TARGETS x86 aarch64 riscv)'
    echo 'ml_model_bundle(detector_fleet MODELS detector)'
  } >"$cm/src/CMakeLists.txt"
  (cmake -S "$cm/src" -B "$cm/build" -G Ninja -DMLCC_EXECUTABLE="$mlcc" &&
     cmake --build "$cm/build" --target detector_fleet) >"$work/cmake-bundle.log" 2>&1 ||
    { tail -30 "$work/cmake-bundle.log" >&2; fail "CMake bundle (log $work/cmake-bundle.log)"; }
  diff -r "$cm/build/detector_fleet" "$bundle" >&2 ||
    fail "the Bazel bundle differs from CMake's ml_model_bundle()"
  cmp "$cm/build/detector_fleet.tar.gz" "$bin/detector_fleet.tar.gz" ||
    fail "detector_fleet.tar.gz differs between Bazel and CMake"
  echo "   identical to CMake's ml_model_bundle(detector_fleet ...): every file and the tarball"
fi
tar_sha="$(sha256sum "$bin/detector_fleet.tar.gz" | cut -d' ' -f1)"
echo "   detector_fleet.tar.gz sha256 $tar_sha"
done_step

# --- 4. Bazel's outputs == mlcc run directly with the same flags -------------------------------
# Against the very mlcc binary the rule ran (the exec-configuration build of @mlcc//:mlcc:
# this shows the rule adds nothing), and against $MLCC (the CMake build) unless the sources
# changed after it was built (then the two mlcc binaries are not the same program).
execroot="$(cd "$here" && bazel "${startup[@]}" info "${common[@]}" execution_root 2>/dev/null)"
exec_mlcc="$(cd "$here" && bazel "${startup[@]}" aquery "${common[@]}" \
  'mnemonic(MlccCompile, //:detector)' 2>/dev/null |
  grep -o 'bazel-out/[^ ]*/bin/external/mlcc/mlcc' | head -1)"
[ -n "$exec_mlcc" ] && [ -x "$execroot/$exec_mlcc" ] || fail "cannot find the exec mlcc (aquery)"
references=("$execroot/$exec_mlcc")
if [ -n "$stale" ] && [ "$mlcc" != "$bazel_mlcc" ]; then
  echo "   WARNING: sources changed after $mlcc was built ($(echo $stale)); not comparing with it"
elif [ "$mlcc" != "$bazel_mlcc" ]; then
  references+=("$mlcc")
fi
# members DIR ARCHIVE: "sha256 name" of each member, sorted by name.
members() {
  local dir="$1" archive="$2"
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && ar x "$archive" && sha256sum -- * | sort -k2)
}
for reference in "${references[@]}"; do
  step "objects and header equal those of mlcc run directly ($reference)"
  for pair in x86:host:ar aarch64:aarch64:aarch64-linux-gnu-ar riscv:riscv64:riscv64-linux-gnu-ar; do
    IFS=: read -r alias config ar <<<"$pair"
    direct="$work/direct-$alias"
    rm -rf "$direct" && mkdir -p "$direct"
    (cd "$direct" && MLCC_AR="$(command -v "$ar")" "$reference" \
       "$root/examples/detector/detector.onnx" -o libdetector.a --name=detector \
       --target="$alias" --no-cache)
    want_hdr="$(sha256sum <"$direct/detector.h")"
    want_objs="$(members "$work/m-direct-$alias" "$direct/libdetector.a")"
    [ -n "$want_objs" ] || fail "no members in $direct/libdetector.a"
    # The fleet archives with mlcc's own llvm-ar (like CMake), ml_model_library with the
    # toolchain's ar: the same members either way.
    (cd "$direct" && mkdir -p own && "$reference" "$root/examples/detector/detector.onnx" \
       -o own/libdetector.a --name=detector --target="$alias" --no-cache)
    triple="$(python3 -c 'import json,sys; print({t["alias"]: t["triple"] for t in json.load(open(sys.argv[1]))["models"][0]["targets"]}[sys.argv[2]])' "$bundle/manifest.json" "$alias")"
    for got in "$work/lib-$config" "$bundle/$triple/lib"; do
      hdr="$got/detector.h"
      want_ar="$direct/libdetector.a"
      if [ ! -f "$hdr" ]; then
        hdr="$bundle/$triple/include/detector.h"
        want_ar="$direct/own/libdetector.a"
      fi
      [ "$(sha256sum <"$hdr")" = "$want_hdr" ] || fail "$alias: $hdr differs from mlcc's header"
      got_objs="$(members "$work/m-got" "$got/libdetector.a")"
      if [ "$got_objs" != "$want_objs" ]; then
        diff <(echo "$want_objs") <(echo "$got_objs") >&2 || true
        fail "$alias: objects in $got/libdetector.a differ from those of $reference"
      fi
      cmp -s "$got/libdetector.a" "$want_ar" ||
        fail "$alias: $got/libdetector.a differs from the archive of $reference (same ar)"
    done
    echo "   $alias: header + $(echo "$want_objs" | wc -l) objects + archive identical" \
         "(ml_model_library --config=$config, ml_model_fleet, mlcc -o; header ${want_hdr%% *})"
  done
  done_step
done

# --- 5. clean rebuild from the disk cache ------------------------------------------------------
step "bazel clean; rebuild everything from --disk_cache"
bazel_in "$here" "$work/clean.log" clean
for config in host aarch64 riscv64; do
  flags=("${common[@]}")
  [ "$config" = host ] || flags+=(--config="$config")
  targets=(//:tiny //:detector //:tiny_test //:detector_test)
  [ "$config" = host ] && targets+=(//:detector_fleet)
  bazel_in "$here" "$work/rebuild-$config.log" build "${flags[@]}" "${targets[@]}"
  summary="$(grep -E 'INFO: [0-9]+ process' "$work/rebuild-$config.log" | tail -1)"
  echo "   $config: ${summary#INFO: }"
  # Bazel 4.2 counts --disk_cache hits as "remote cache hit".
  echo "$summary" | grep -q -E '(remote|disk) cache hit' || fail "$config: no disk cache hits after clean"
  if echo "$summary" | grep -q -E 'sandbox|local'; then
    fail "$config: actions ran after clean instead of coming from the disk cache"
  fi
done
bin="$(cd "$here" && bazel "${startup[@]}" info "${common[@]}" bazel-bin 2>/dev/null)"
[ "$(sha256sum "$bin/detector_fleet.tar.gz" | cut -d' ' -f1)" = "$tar_sha" ] ||
  fail "fleet tarball changed after clean rebuild"
done_step

echo "PASS: bazel consumer (host, aarch64, riscv64), fleet, equality with mlcc, disk cache" \
     "($((SECONDS - t_start))s)"
