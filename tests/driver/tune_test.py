#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of measured tuning and tuning records (docs/tuning.md, issue 18).

usage: tune_test.py MLCC CASE      (CASE: one of the functions named case_*)

Each case runs in a fresh temporary directory with its own kernel cache, on a
small model of MatMul+Add+Relu and Gemm(transB) built here with onnx.helper.
Outputs are checked against numpy through tests/e2e/harness.c; "default"
builds (no records) are the byte-for-byte reference of what an ignored
record must give. Exit 0 = pass, 1 = fail.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MLCC = None
HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.join(HERE, "..", "e2e", "harness.c")
# N2 < 8 lanes: the Gemm keeps its transposed B (pack-weights stores a constant B
# as [K, N] only where the vector kernel then takes it), so its kernel stays on
# the scalar path whose "cols" parameter the crafted records set.
M, K, N, N2 = 16, 64, 48, 6


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)
    print("ok:", what)


def run(*args, cwd=None, env=None):
    full = dict(os.environ)
    if env:
        full.update(env)
    p = subprocess.run([MLCC, *args], cwd=cwd, env=full, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=900)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    print("$ mlcc " + " ".join(args) + f"  -> {p.returncode}")
    if out:
        print("  stdout: " + out[:3000].replace("\n", "\n          "))
    if err:
        print("  stderr: " + err[:3000].replace("\n", "\n          "))
    return p.returncode, out, err


def make_model(path):
    rng = np.random.default_rng(7)
    w = rng.standard_normal((K, N)).astype(np.float32) * 0.2
    b = rng.standard_normal((N,)).astype(np.float32)
    w2 = rng.standard_normal((N2, N)).astype(np.float32) * 0.2
    b2 = rng.standard_normal((N2,)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h0"], name="mm"),
        helper.make_node("Add", ["h0", "b"], ["h1"], name="add"),
        helper.make_node("Relu", ["h1"], ["h"], name="relu"),
        helper.make_node("Gemm", ["h", "w2", "b2"], ["y"], name="gemm", transB=1),
    ]
    g = helper.make_graph(
        nodes, "tunable",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [M, K])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [M, N2])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
         numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(b2, "b2")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)
    return w, b, w2, b2


def reference(x, w, b, w2, b2):
    return np.maximum(x @ w + b, 0) @ w2.T + b2


def build(d, out, *extra):
    rc, _, err = run("--name=tunable", "tunable.onnx", "-o", out, *extra, cwd=d)
    check(rc == 0, f"build {out} exit 0")
    return err


def read(d, rel):
    with open(os.path.join(d, rel), "rb") as f:
        return f.read()


def run_library(d, lib_dir, weights):
    """Links tests/e2e/harness.c with lib_dir/libtunable.a, runs it, checks numpy."""
    exe = os.path.join(d, lib_dir, "harness")
    p = subprocess.run(["cc", "-std=c11", "-O1", "-I", os.path.join(d, lib_dir), "-include",
                        "tunable.h", "-DMLCC_INFO=tunable_info", HARNESS,
                        os.path.join(d, lib_dir, "libtunable.a"), "-lm", "-o", exe],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    print(p.stdout.decode())
    check(p.returncode == 0, "the harness links")
    x = np.random.default_rng(3).standard_normal((M, K)).astype(np.float32)
    xin, yout = os.path.join(d, lib_dir, "x.bin"), os.path.join(d, lib_dir, "y.bin")
    x.tofile(xin)
    p = subprocess.run([exe, xin, yout])
    check(p.returncode == 0, "the harness runs")
    y = np.fromfile(yout, dtype=np.float32).reshape(M, N2)
    ref = reference(x, *weights)
    check(np.all(np.abs(y - ref) <= 1e-5 + 1e-4 * np.abs(ref)), f"{lib_dir}: outputs match numpy")


def records_of(path):
    with open(path) as f:
        doc = json.load(f)
    check(doc["format"] == "mlcc-tuning-records" and doc["version"] == 1, "record set header")
    return doc


def crafted(doc):
    """The record set with a non-default schedule for every record: rows=2
    (both kernels have >= 2 rows), vectors=1 on MatMul's vector path, cols=4
    on Gemm's scalar (transposed-B) path."""
    doc = json.loads(json.dumps(doc))
    for r in doc["records"]:
        r["sched"] = [2, 1, 0, 0] if r["op"] == "MatMul" else [2, 0, 4, 0]
    return doc


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f)


def tune_once(d):
    """--tune with a tiny budget; returns the record set it wrote."""
    rc, _, err = run("--name=tunable", "tunable.onnx", "-o", "tuned/libtunable.a", "--tune",
                     "--tune-trials=3", "--tune-time=120", "--cache-dir=cache",
                     "--tuning-records=recs.json", "-j2", cwd=d)
    check(rc == 0, "--tune exit 0")
    check("mlcc: --tune: 2 tunable kernels" in err, "--tune reports the two tunable kernels")
    return records_of(os.path.join(d, "recs.json"))


def case_roundtrip(d):
    weights = make_model(os.path.join(d, "tunable.onnx"))
    doc = tune_once(d)
    check(len(doc["records"]) == 2, "one record per tunable kernel")
    for r in doc["records"]:
        check(len(r["key"]) == 64 and len(r["cpu_key"]) == 64, "record keys are SHA-256 hex")
        check(r["time_ns"] > 0 and r["default_time_ns"] > 0, "measured times recorded")
        check(r["triple"] == "x86_64-linux-gnu" and r["space_version"] >= 1, "record target")
    tune_files = [f for _, _, fs in os.walk(os.path.join(d, "cache", "tune")) for f in fs]
    check(len(tune_files) == 2, "the records are in <cache>/tune/")
    run_library(d, "tuned", weights)
    # Ordinary builds: from the file, from the cache, twice: byte-identical.
    build(d, "a/libtunable.a", "--no-cache", "--tuning-records=recs.json")
    build(d, "b/libtunable.a", "--cache-dir=cache")
    build(d, "c/libtunable.a", "--no-cache", "--tuning-records=recs.json")
    lib = read(d, "tuned/libtunable.a")
    check(read(d, "a/libtunable.a") == lib, "records from the file: the tuned library")
    check(read(d, "b/libtunable.a") == lib, "records from the cache: the tuned library")
    check(read(d, "c/libtunable.a") == lib, "byte-identical across runs")
    # Export -> import: a record set written again reads back the same.
    build(d, "e/libtunable.a", "--no-cache", "--tuning-records=recs.json", "--describe=e/d.json",
          "-MD", "-MF", "e/lib.d")
    # Non-default schedules, applied for sure: correct, stable, and other code.
    write_json(os.path.join(d, "forced.json"), crafted(doc))
    err = build(d, "f/libtunable.a", "--no-cache", "--tuning-records=forced.json",
                "-d", "explain-cache", "--describe=f/d.json", "-MD", "-MF", "f/lib.d")
    check("rows=2,vectors=1" in err and "rows=2,cols=4" in err, "explain names the schedules")
    build(d, "g/libtunable.a", "--no-cache", "--tuning-records=forced.json")
    build(d, "default/libtunable.a", "--no-cache")
    check(read(d, "f/libtunable.a") == read(d, "g/libtunable.a"), "forced: byte-identical")
    check(read(d, "f/libtunable.a") != read(d, "default/libtunable.a"), "forced: other code")
    run_library(d, "f", weights)
    run_library(d, "default", weights)
    desc = json.loads(read(d, "f/d.json"))
    digest = desc["target"].get("tuning_records_sha256", "")
    check(len(digest) == 64, "--describe gives the records digest")
    build(d, "h/libtunable.a", "--no-cache", "--describe=h/d.json")
    check("tuning_records_sha256" not in json.loads(read(d, "h/d.json"))["target"],
          "no digest without records")
    check("forced.json" in read(d, "f/lib.d").decode(), "the depfile lists the records file")
    # --no-tuning-records: the default library.
    build(d, "n/libtunable.a", "--no-cache", "--tuning-records=forced.json", "--no-tuning-records")
    check(read(d, "n/libtunable.a") == read(d, "default/libtunable.a"),
          "--no-tuning-records gives the default")


def case_other_cpu(d):
    make_model(os.path.join(d, "tunable.onnx"))
    build(d, "x/libtunable.a", "--no-cache", "--describe=x/d.json")
    # Records are made for the default CPU (x86-64-v3) by hand from a -### free path:
    # tune once with a budget of one trial per kernel (the default only).
    rc, _, _ = run("--name=tunable", "tunable.onnx", "-o", "t/libtunable.a", "--tune",
                   "--tune-trials=1", "--no-cache", "--tuning-records=recs.json", cwd=d)
    check(rc == 0, "--tune with one trial")
    write_json(os.path.join(d, "forced.json"), crafted(records_of(os.path.join(d, "recs.json"))))
    err = build(d, "s/libtunable.a", "--no-cache", "-mcpu=skylake", "--tuning-records=forced.json",
                "-d", "explain-cache")
    build(d, "s0/libtunable.a", "--no-cache", "-mcpu=skylake")
    check(read(d, "s/libtunable.a") == read(d, "s0/libtunable.a"),
          "records of x86-64-v3 are not applied to -mcpu=skylake")
    check("not applied to CPU skylake" in err, "explain says why")
    build(d, "v/libtunable.a", "--no-cache", "--tuning-records=forced.json")
    check(read(d, "v/libtunable.a") != read(d, "x/libtunable.a"), "but they are for x86-64-v3")


def case_bad_records(d):
    make_model(os.path.join(d, "tunable.onnx"))
    build(d, "default/libtunable.a", "--no-cache")
    default = read(d, "default/libtunable.a")
    rc, _, _ = run("--name=tunable", "tunable.onnx", "-o", "t/libtunable.a", "--tune",
                   "--tune-trials=1", "--cache-dir=cache", "--tuning-records=recs.json", cwd=d)
    check(rc == 0, "--tune with one trial")
    good = crafted(records_of(os.path.join(d, "recs.json")))
    text = json.dumps(good)
    bad = {
        "garbage": b"\x00\xffnot json at all",
        "truncated": text[: len(text) // 2].encode(),
        "other_format": json.dumps(dict(good, format="tvm-log")).encode(),
        "short_key": json.dumps(dict(good, records=[dict(r, key="abc") for r in good["records"]])).encode(),
        "outside_space": json.dumps(dict(good, records=[dict(r, sched=[99, 0, 0, 0]) for r in good["records"]])).encode(),
        "unused_param": json.dumps(dict(good, records=[dict(r, sched=[2, 0, 0, 5]) for r in good["records"]])).encode(),
        "space_version": json.dumps(dict(good, records=[dict(r, space_version=999) for r in good["records"]])).encode(),
        "other_triple": json.dumps(dict(good, records=[dict(r, triple="aarch64-linux-gnu") for r in good["records"]])).encode(),
        "deep": b"[" * 100000,
    }
    for name, data in bad.items():
        with open(os.path.join(d, name + ".json"), "wb") as f:
            f.write(data)
        rc, _, err = run("--name=tunable", "tunable.onnx", "-o", f"{name}/libtunable.a",
                         "--no-cache", f"--tuning-records={name}.json", cwd=d)
        check(rc == 0, f"{name}: the build succeeds")
        check("warning" in err, f"{name}: a warning")
        check(read(d, f"{name}/libtunable.a") == default, f"{name}: the default schedules")
    # A damaged record in the (untrusted, shared) cache: silently the default.
    for root, _, files in os.walk(os.path.join(d, "cache", "tune")):
        for f in files:
            with open(os.path.join(root, f), "wb") as fh:
                fh.write(b'{"format": "mlcc-tuning-records", "version": 1, "records": [{"key": 1}]}')
    rc, _, err = run("--name=tunable", "tunable.onnx", "-o", "dc/libtunable.a", "--cache-dir=cache",
                     "-d", "explain-cache", cwd=d)
    check(rc == 0 and "damaged" in err, "a damaged cache record is explained and ignored")
    check(read(d, "dc/libtunable.a") == default, "damaged cache record: the default")
    rc, _, err = run("--name=tunable", "tunable.onnx", "-o", "m/libtunable.a", "--no-cache",
                     "--tuning-records=missing.json", cwd=d)
    check(rc == 1 and "missing.json" in err, "a missing records file is an error naming it")


def case_cache_admin(d):
    make_model(os.path.join(d, "tunable.onnx"))
    rc, _, _ = run("--name=tunable", "tunable.onnx", "-o", "t/libtunable.a", "--tune",
                   "--tune-trials=1", "--cache-dir=cache", cwd=d)
    check(rc == 0, "--tune into the cache")
    rc, out, _ = run("--cache-dir=cache", "--cache-stats", cwd=d)
    check(rc == 0 and "Tuning records:     2 files" in out, "--cache-stats counts the records")
    rc, out, _ = run("--cache-dir=cache", "--cache-clear", cwd=d)
    check(rc == 0 and "Cleared 2 tuning record files" in out, "--cache-clear removes them")
    rc, out, _ = run("--cache-dir=cache", "--cache-stats", cwd=d)
    check("Tuning records" not in out, "none left")


def case_runner_qemu(d):
    if shutil.which("qemu-aarch64") is None or shutil.which("aarch64-linux-gnu-gcc") is None:
        print("skip: qemu-aarch64 or aarch64-linux-gnu-gcc missing")
        return
    weights = make_model(os.path.join(d, "tunable.onnx"))
    rc, _, err = run("--name=tunable", "tunable.onnx", "-o", "t/libtunable.a", "--target=aarch64",
                     "--tune", "--cache-dir=cache", cwd=d)
    check(rc == 2 and "--tune-runner" in err, "a cross target without a runner: usage error")
    rc, _, err = run("--name=tunable", "tunable.onnx", "-o", "t/libtunable.a", "--target=aarch64",
                     "--tune", "--tune-trials=2", "--tune-runner=qemu-aarch64 -L /usr/aarch64-linux-gnu",
                     "--cache-dir=cache", "--tuning-records=recs.json", cwd=d)
    check(rc == 0, "--tune through qemu-aarch64")
    doc = records_of(os.path.join(d, "recs.json"))
    check(len(doc["records"]) == 2 and all(r["triple"] == "aarch64-linux-gnu" for r in doc["records"]),
          "aarch64 records")
    build(d, "a/libtunable.a", "--target=aarch64", "--cache-dir=cache")
    check(read(d, "a/libtunable.a") == read(d, "t/libtunable.a"), "the cache's aarch64 records apply")
    # x86 builds do not see them.
    build(d, "x/libtunable.a", "--cache-dir=cache", "-d", "explain-cache")
    build(d, "x0/libtunable.a", "--no-cache")
    check(read(d, "x/libtunable.a") == read(d, "x0/libtunable.a"), "no aarch64 record on x86")


CMAKE_PROJECT = """cmake_minimum_required(VERSION 3.20)
project(tune_consumer LANGUAGES C)
include(${MLCC_SOURCE_DIR}/cmake/MLModel.cmake)
add_ml_model(tunable tunable.onnx TARGETS x86 TUNING_RECORDS records.json
  OPTIONS --no-cache)
"""


def case_cmake(d):
    """add_ml_model(... TUNING_RECORDS file): the records are used, and a new
    record set rebuilds the library (the file is a dependency)."""
    if shutil.which("cmake") is None or shutil.which("ninja") is None:
        print("skip: cmake or ninja missing")
        return
    src = os.path.join(d, "src")
    os.makedirs(src)
    make_model(os.path.join(src, "tunable.onnx"))
    rc, _, _ = run("--name=tunable", "tunable.onnx", "-o", "t/libtunable.a", "--tune",
                   "--tune-trials=1", "--no-cache", "--tuning-records=recs.json", cwd=src)
    check(rc == 0, "--tune with one trial")
    doc = records_of(os.path.join(src, "recs.json"))
    write_json(os.path.join(src, "records.json"), doc)
    with open(os.path.join(src, "CMakeLists.txt"), "w") as f:
        f.write(CMAKE_PROJECT)
    bld = os.path.join(d, "bld")
    root = os.path.abspath(os.path.join(HERE, "..", ".."))
    p = subprocess.run(["cmake", "-S", src, "-B", bld, "-G", "Ninja", "-DMLCC_SOURCE_DIR=" + root,
                        "-DMLCC_EXECUTABLE=" + MLCC], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    print(p.stdout.decode()[-2000:])
    check(p.returncode == 0, "configure")
    lib = os.path.join(bld, "mlcc", "tunable", "x86", "libtunable.a")

    def ninja():
        p = subprocess.run(["ninja", "-C", bld], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = p.stdout.decode()
        print(out[-2000:])
        check(p.returncode == 0, "ninja builds")
        return out

    ninja()
    with open(lib, "rb") as f:
        first = f.read()
    build(src, "plain/libtunable.a", "--no-cache", "--target=x86",
          "--tuning-records=records.json")
    check(first == read(src, "plain/libtunable.a"), "the rule's library uses the records")
    check("no work to do" in ninja(), "a second build does nothing")
    write_json(os.path.join(src, "records.json"), crafted(doc))
    out = ninja()
    check("mlcc tunable.onnx" in out, "a new record set reruns mlcc")
    with open(lib, "rb") as f:
        second = f.read()
    check(second != first, "and changes the library")
    build(src, "forced/libtunable.a", "--no-cache", "--target=x86",
          "--tuning-records=records.json")
    check(second == read(src, "forced/libtunable.a"), "the new records are used")


def case_remote(d):
    """Records through the remote cache (nginx WebDAV, as tests/e2e/cache): a --tune
    run uploads them under their own /ac/ keys; a build with an empty local cache
    fetches and uses them (and keeps a local copy); a poisoned remote record is
    ignored."""
    sys.path.insert(0, os.path.join(HERE, "..", "e2e", "cache"))
    import cache_test
    import trust_test
    try:
        ng = cache_test.Nginx(d)
    except cache_test.Skip as e:
        print("skip:", e)
        return
    try:
        make_model(os.path.join(d, "tunable.onnx"))
        rc, _, _ = run("--name=tunable", "tunable.onnx", "-o", "t/libtunable.a", "--tune",
                       "--tune-trials=1", "--cache-dir=c1", "--tuning-records=recs.json",
                       "--remote-cache=" + ng.url(), cwd=d)
        check(rc == 0, "--tune with a remote cache")
        # Replace the uploaded records by non-default ones, as a nightly job on
        # another machine would: tune into a second cache with the crafted set.
        write_json(os.path.join(d, "forced.json"), crafted(records_of(os.path.join(d, "recs.json"))))
        build(d, "want/libtunable.a", "--no-cache", "--tuning-records=forced.json")
        ac = os.path.join(ng.root, "ci", "ac")
        before = set(os.listdir(ac))
        check(len(before) >= 2, "records uploaded under /ac/")
        # Upload the crafted records by tuning "into" a fresh cache: simplest is
        # to put the record files by hand through the same keys mlcc uses.
        import hashlib
        for r in crafted(records_of(os.path.join(d, "recs.json")))["records"]:
            key = hashlib.sha256(("mlcc-tuning-record-v1:" + r["cpu_key"]).encode()).hexdigest()
            check(key in before, "the record's /ac/ key is the documented one")
            body = json.dumps({"format": "mlcc-tuning-records", "version": 1, "records": [r]})
            blob = hashlib.sha256(body.encode()).hexdigest()
            os.makedirs(os.path.join(ng.root, "ci", "cas"), exist_ok=True)
            with open(os.path.join(ng.root, "ci", "cas", blob), "w") as f:
                f.write(body)
            # An ActionResult naming the blob (the encoder of cache_test).
            with open(os.path.join(ac, key), "wb") as f:
                f.write(trust_test.action_result(blob, len(body)))
        build(d, "r0/libtunable.a", "--cache-dir=c2", "--remote-cache=" + ng.url())
        check(read(d, "r0/libtunable.a") != read(d, "want/libtunable.a"),
              "without --remote-tuning-records the remote is not asked for records")
        build(d, "r/libtunable.a", "--cache-dir=c2", "--remote-cache=" + ng.url(),
              "--remote-tuning-records")
        check(read(d, "r/libtunable.a") == read(d, "want/libtunable.a"),
              "an empty local cache: the remote records are used")
        check(os.path.isdir(os.path.join(d, "c2", "tune")), "and copied to the local cache")
        # Poisoned: the blob no longer matches its digest -> rejected, default.
        for name in os.listdir(os.path.join(ng.root, "ci", "cas")):
            path = os.path.join(ng.root, "ci", "cas", name)
            with open(path, "rb") as f:
                data = f.read()
            if data.startswith(b"{"):
                with open(path, "wb") as f:
                    f.write(data.replace(b'"sched": [2', b'"sched": [3'))
        build(d, "p/libtunable.a", "--cache-dir=c3", "--remote-cache=" + ng.url(),
              "--remote-tuning-records")
        build(d, "p0/libtunable.a", "--no-cache")
        check(read(d, "p/libtunable.a") == read(d, "p0/libtunable.a"),
              "a poisoned remote record is ignored")
    finally:
        ng.stop()


def main():
    global MLCC
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    MLCC = os.path.abspath(sys.argv[1])
    fn = globals().get("case_" + sys.argv[2])
    if fn is None:
        print("unknown case", sys.argv[2])
        return 2
    d = tempfile.mkdtemp(prefix="mlcc-tune-test-")
    try:
        fn(d)
    except Failure as e:
        print("FAIL:", e)
        return 1
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
