#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Benchmarks mlcc-compiled models side by side with onnxruntime.

For each model in ../shared/models (or --models): compiles it with mlcc for the
host (-mcpu=native), timing the compile; links bench/bench_main.c; then runs
mlcc and onnxruntime-node alternately (ROUNDS rounds of RUNS/ROUNDS timed runs
each, after warm-up) on the reference input, and prints medians (--stat min:
minima, steadier on a shared machine), the ratio
mlcc/ORT, GFLOP/s (2*MACs from the models' manifest), the workspace size, and
mlcc's error against the reference output. onnxruntime-node is installed with
`npm install --ignore-scripts onnxruntime-node` into a scratch folder outside
the repository (--ort-dir, default /tmp/mlcc-bench-ort).

With --threads 1,2 both mlcc (NAME_run_parallel_v with the pthread pool of
examples/parallel_for) and ORT (intraOpNumThreads) run at each thread count.
--peak-gflops (per core, default 260) gives the % of peak column.

With --tune SECONDS each model is also built with `mlcc --tune --tune-time=SECONDS`
(docs/tuning.md; records in a scratch file, the tuning wall time is reported) and the
tuned library runs in the same rounds, between the default library and ORT: the
table then has default, tuned and ORT side by side.

With --baseline-mlcc PATH and/or --baseline-pfor DIR a baseline library (built by that
mlcc, linked with that folder's mlcc_pthread_pfor.c; each defaults to this run's) runs in
the same rounds just before the new one, and a table of baseline vs new is printed.

Usage: bench/run.py --mlcc build/mlcc [--runs 20] [--threads 1,2] [--stat min] [--rt]
                    [--tune SECONDS [--tune-trials N]]
                    [--baseline-mlcc OLD/build/mlcc] [--baseline-pfor OLD/examples/parallel_for]
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def ensure_ort(ort_dir):
    mod = os.path.join(ort_dir, "node_modules", "onnxruntime-node")
    if not os.path.isdir(mod):
        os.makedirs(ort_dir, exist_ok=True)
        subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund",
                        "onnxruntime-node"], cwd=ort_dir, check=True,
                       stdout=subprocess.DEVNULL)
    return os.path.join(ort_dir, "node_modules")


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("--models", default=os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--only", default=None, help="comma-separated model names")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--threads", default="1", help="comma-separated thread counts (mlcc and ORT)")
    ap.add_argument("--peak-gflops", type=float, default=260.0, help="one core's FP32 peak")
    ap.add_argument("--rt", action="store_true",
                    help="run the timed runs (mlcc and ORT) at real-time priority (chrt -f 10; "
                         "needs root or CAP_SYS_NICE) so other processes of a shared machine "
                         "cannot preempt them")
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="per-round statistic and its aggregate over rounds (min is steadier "
                         "on a shared machine)")
    ap.add_argument("--ort-dir", default="/tmp/mlcc-bench-ort")
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--tune", type=float, default=0,
                    help="also build with mlcc --tune --tune-time=SECONDS and run it side by side")
    ap.add_argument("--tune-trials", type=int, default=12)
    ap.add_argument("--baseline-mlcc", default=None,
                    help="also build with this mlcc and run it side by side (old vs new)")
    ap.add_argument("--baseline-pfor", default=None,
                    help="folder with the baseline's mlcc_pthread_pfor.c (default: this repo's)")
    args = ap.parse_args()

    manifest = json.load(open(os.path.join(args.models, "manifest.json")))["models"]
    names = args.only.split(",") if args.only else list(manifest)
    node_path = None if args.no_ort else ensure_ort(args.ort_dir)
    work = tempfile.mkdtemp(prefix="mlcc-bench-")
    threads = [int(t) for t in args.threads.split(",")]
    rows = []
    try:
        for name in names:
            rows.extend(bench_one(args, name, manifest[name], work, node_path, threads))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    if args.tune:
        print("| model | threads | tuning (s) | default (ms) | tuned (ms) | tuned/default | "
              "ORT (ms) | default/ORT | tuned/ORT | tuned max err / max|ref| |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            o = r["ort_ms"]
            print("| %s | %d | %.1f | %.4f | %.4f | %.2f | %s | %s | %s | %.2g |" % (
                r["name"], r["threads"], r["tune_s"], r["mlcc_ms"], r["tuned_ms"],
                r["tuned_ms"] / r["mlcc_ms"], "%.4f" % o if o else "-",
                "%.2f" % (r["mlcc_ms"] / o) if o else "-",
                "%.2f" % (r["tuned_ms"] / o) if o else "-", r["tuned_err"]))
        print()
    if args.baseline_mlcc or args.baseline_pfor:
        print("| model | threads | baseline (ms) | new (ms) | new/baseline | ORT (ms) | "
              "baseline/ORT | new/ORT |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            o = r["ort_ms"]
            print("| %s | %d | %.4f | %.4f | %.3f | %s | %s | %s |" % (
                r["name"], r["threads"], r["base_ms"], r["mlcc_ms"], r["mlcc_ms"] / r["base_ms"],
                "%.4f" % o if o else "-", "%.3f" % (r["base_ms"] / o) if o else "-",
                "%.3f" % (r["mlcc_ms"] / o) if o else "-"))
        print()
    print("| model | threads | MACs | compile (s) | mlcc (ms) | ORT (ms) | mlcc/ORT | mlcc GFLOP/s | % of peak | ORT GFLOP/s | workspace (KiB) | max err / max|ref| mlcc | ORT |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        gf = 2 * r["macs"] / r["mlcc_ms"] / 1e6
        print("| %s | %d | %.3g G | %.2f | %.3f | %s | %s | %.1f | %.0f%% | %s | %d | %.2g | %s |" % (
            r["name"], r["threads"], r["macs"] / 1e9, r["compile_s"], r["mlcc_ms"],
            "%.3f" % r["ort_ms"] if r["ort_ms"] else "-",
            "%.2f" % (r["mlcc_ms"] / r["ort_ms"]) if r["ort_ms"] else "-",
            gf, 100 * gf / (args.peak_gflops * r["threads"]),
            "%.1f" % (2 * r["macs"] / r["ort_ms"] / 1e6) if r["ort_ms"] else "-",
            r["workspace"] // 1024, r["err"],
            "%.2g" % r["ort_err"] if r.get("ort_err") is not None else "-"))


def bench_one(args, name, meta, work, node_path, threads):
    mdir = os.path.join(args.models, name)
    model = os.path.join(mdir, "model.onnx")
    lib = os.path.join(work, "lib%s.a" % name)
    t0 = time.monotonic()
    subprocess.run([args.mlcc, model, "-o", lib, "--name=" + name, "-mcpu=native"], check=True)
    compile_s = time.monotonic() - t0
    header = open(os.path.join(work, name + ".h")).read()
    ws = int(re.search(r"WORKSPACE_SIZE (\d+)", header).group(1))
    exe = os.path.join(work, "bench_" + name)
    pfor_dir = os.path.join(ROOT, "examples", "parallel_for")

    def link(hdr, library, out_exe, pfor=pfor_dir):
        subprocess.run(["cc", "-O2", "-include", hdr,
                        "-DMLCC_INFO=%s_info" % name,
                        "-DMLCC_RUN_PARALLEL_V=%s_run_parallel_v" % name, "-I", pfor,
                        os.path.join(HERE, "bench_main.c"),
                        os.path.join(pfor, "mlcc_pthread_pfor.c"),
                        library, "-lm", "-lpthread", "-o", out_exe], check=True)

    link(os.path.join(work, name + ".h"), lib, exe)
    base_exe = None
    if args.baseline_mlcc or args.baseline_pfor:
        bdir = os.path.join(work, "base_" + name)
        os.makedirs(bdir, exist_ok=True)
        blib = os.path.join(bdir, "lib%s.a" % name)
        subprocess.run([args.baseline_mlcc or args.mlcc, model, "-o", blib, "--name=" + name,
                        "-mcpu=native"], check=True)
        base_exe = os.path.join(work, "bench_base_" + name)
        link(os.path.join(bdir, name + ".h"), blib, base_exe,
             os.path.abspath(args.baseline_pfor or pfor_dir))
    tuned_exe, tune_s = None, 0.0
    if args.tune:
        tdir = os.path.join(work, "tuned_" + name)
        os.makedirs(tdir, exist_ok=True)
        tlib = os.path.join(tdir, "lib%s.a" % name)
        t0 = time.monotonic()
        subprocess.run([args.mlcc, model, "-o", tlib, "--name=" + name, "-mcpu=native", "--tune",
                        "--tune-time=%g" % args.tune, "--tune-trials=%d" % args.tune_trials,
                        "--no-cache", "--tuning-records=" + os.path.join(tdir, "records.json")],
                       check=True)
        tune_s = time.monotonic() - t0
        tuned_exe = os.path.join(work, "bench_tuned_" + name)
        link(os.path.join(tdir, name + ".h"), tlib, tuned_exe)
    x = load_pb(os.path.join(mdir, "test_data_set_0", "input_0.pb")).astype(np.float32)
    ref = load_pb(os.path.join(mdir, "test_data_set_0", "output_0.pb"))
    inp = os.path.join(work, name + ".in")
    x.tofile(inp)
    with open(inp + ".json", "w") as f:
        json.dump({"shape": list(x.shape)}, f)
    out = os.path.join(work, name + ".out")
    ort_out = os.path.join(work, name + ".ort.out")
    per_round = max(1, args.runs // args.rounds)
    agg = statistics.median if args.stat == "median" else min
    rows = []
    for nt in threads:
        mlcc_t, ort_t, tuned_t, base_t = [], [], [], []
        env = dict(os.environ, MLCC_BENCH_OUT=out, MLCC_BENCH_THREADS=str(nt))
        tuned_out = out + ".tuned"
        tenv = dict(env, MLCC_BENCH_OUT=tuned_out)
        for _ in range(args.rounds):
            rt = ["chrt", "-f", "10"] if args.rt else []
            col = 0 if args.stat == "median" else 1
            if base_exe:
                r = subprocess.run(rt + [base_exe, str(per_round), inp], check=True,
                                   capture_output=True, text=True, env=env)
                base_t.append(float(r.stdout.split()[col]))
            r = subprocess.run(rt + [exe, str(per_round), inp], check=True, capture_output=True,
                               text=True, env=env)
            col = 0 if args.stat == "median" else 1
            mlcc_t.append(float(r.stdout.split()[col]))
            if tuned_exe:
                r = subprocess.run(rt + [tuned_exe, str(per_round), inp], check=True,
                                   capture_output=True, text=True, env=tenv)
                tuned_t.append(float(r.stdout.split()[col]))
            if node_path:
                r = subprocess.run(rt + ["node", os.path.join(HERE, "ort_bench.js"), model, inp,
                                    str(nt), str(per_round), ort_out], check=True,
                                   capture_output=True, text=True,
                                   env=dict(os.environ, NODE_PATH=node_path))
                ort_t.append(float(r.stdout.split()[col]))
        scale = max(1e-30, float(np.max(np.abs(ref))))
        y = np.fromfile(out, dtype=np.float32).reshape(ref.shape)
        err = float(np.max(np.abs(y - ref)) / scale)
        ort_err = None
        if node_path and os.path.exists(ort_out):
            yo = np.fromfile(ort_out, dtype=np.float32)
            if yo.size == ref.size:
                ort_err = float(np.max(np.abs(yo.reshape(ref.shape) - ref)) / scale)
        tuned_err = None
        if tuned_exe:
            yt = np.fromfile(tuned_out, dtype=np.float32).reshape(ref.shape)
            tuned_err = float(np.max(np.abs(yt - ref)) / scale)
        row = {"name": name, "threads": nt, "macs": meta["macs"], "compile_s": compile_s,
               "tuned_ms": agg(tuned_t) if tuned_t else None, "tune_s": tune_s,
               "tuned_err": tuned_err,
               "mlcc_ms": agg(mlcc_t), "base_ms": agg(base_t) if base_t else None,
               "ort_ms": agg(ort_t) if ort_t else None, "workspace": ws,
               "err": err, "ort_err": ort_err}
        print(name, row, flush=True)
        rows.append(row)
    return rows


if __name__ == "__main__":
    sys.exit(main())
