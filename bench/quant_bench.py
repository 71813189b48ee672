#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Quantized models side by side (issue 16): mlcc int8 vs mlcc float32 vs
onnxruntime int8 (QDQ) vs onnxruntime float32, in one run, per thread count.

For each model (default: resnet18, mobilenet_v2, squeezenet1_1, detector,
transformer of ../shared/models) the QDQ model of scripts/quantize.py (the
cached one of the quant.* tests under --quant-dir when present, else
quantized here with the tests' calibration: sample input + 2 seeded random
inputs) and the float model are compiled with mlcc -mcpu=native (--mcpu CPU:
both mlcc builds for that CPU, e.g. x86-64-v3 for the AVX2-only form on any
AVX2 host; onnxruntime still picks its kernels from the host's CPU) and linked
with bench/bench_main.c, and the four runners alternate: ROUNDS rounds of
RUNS/ROUNDS timed runs each after warm-up (bench/run.py's scheme,
bench/ort_bench.js for onnxruntime-node 1.30 with graph optimizations 'all',
i.e. its QDQ fusion into int8 kernels). Prints a Markdown table: medians (or
--stat min), the int8/float32 ratios, GOP/s (2*MACs / time, the manifest's
MACs), and the library (.a) and NAME_WEIGHTS_SIZE bytes of both builds.

Usage: bench/quant_bench.py --mlcc build/mlcc [--threads 1,2] [--runs 20] [--rounds 4]
       [--only resnet18,...] [--stat min] [--quant-dir build/tests/quant] [--mcpu CPU] [--mattr F]
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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "quant"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import quantize  # noqa: E402
import run_quant_model  # noqa: E402

MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_1", "detector", "transformer"]


def build(args, model, name, work):
    lib = os.path.join(work, "lib%s.a" % name)
    t0 = time.monotonic()
    subprocess.run([args.mlcc, model, "-o", lib, "--name=" + name, "-mcpu=" + args.mcpu]
                   + (["-mattr=" + args.mattr] if args.mattr else []),
                   check=True)
    compile_s = time.monotonic() - t0
    header = open(os.path.join(work, name + ".h")).read()
    weights = int(re.search(r"WEIGHTS_SIZE (\d+)", header).group(1))
    exe = os.path.join(work, "bench_" + name)
    pfor_dir = os.path.join(ROOT, "examples", "parallel_for")
    subprocess.run(["cc", "-O2", "-include", os.path.join(work, name + ".h"),
                    "-DMLCC_INFO=%s_info" % name,
                    "-DMLCC_RUN_PARALLEL_V=%s_run_parallel_v" % name, "-I", pfor_dir,
                    os.path.join(HERE, "bench_main.c"),
                    os.path.join(pfor_dir, "mlcc_pthread_pfor.c"),
                    lib, "-lm", "-lpthread", "-o", exe], check=True)
    return {"exe": exe, "lib_bytes": os.path.getsize(lib), "weights": weights,
            "compile_s": compile_s}


def qdq_model(args, name, work):
    cached = os.path.join(args.quant_dir, name, "qdq.onnx")
    if os.path.exists(cached):
        return cached
    out = os.path.join(work, "quant_" + name)
    ns = argparse.Namespace(model_dir=os.path.join(args.models, name), out=out,
                            ort_dir=args.ort_dir)
    if run_quant_model.prepare(ns) != 0:
        raise SystemExit("quantizing %s failed" % name)
    return os.path.join(out, "qdq.onnx")


def bench_model(args, name, meta, work, threads):
    fmodel = os.path.join(args.models, name, "model.onnx")
    qmodel = qdq_model(args, name, work)
    f32 = build(args, fmodel, name + "_f32", work)
    i8 = build(args, qmodel, name + "_i8", work)
    _, x = quantize.load_pb(os.path.join(args.models, name, "test_data_set_0", "input_0.pb"))
    inp = os.path.join(work, name + ".in")
    x.astype(np.float32).tofile(inp)
    with open(inp + ".json", "w") as f:
        json.dump({"shape": list(x.shape)}, f)
    node_path = os.path.join(args.ort_dir, "node_modules")
    per_round = max(1, args.runs // args.rounds)
    col = 0 if args.stat == "median" else 1
    agg = statistics.median if args.stat == "median" else min
    rows = []
    for nt in threads:
        t = {"mlcc_f32": [], "mlcc_i8": [], "ort_f32": [], "ort_i8": []}
        for _ in range(args.rounds):
            for key, b in (("mlcc_f32", f32), ("mlcc_i8", i8)):
                r = subprocess.run([b["exe"], str(per_round), inp], check=True,
                                   capture_output=True, text=True,
                                   env=dict(os.environ, MLCC_BENCH_THREADS=str(nt)))
                t[key].append(float(r.stdout.split()[col]))
            for key, m in (("ort_f32", fmodel), ("ort_i8", qmodel)):
                r = subprocess.run(["node", os.path.join(HERE, "ort_bench.js"), m, inp, str(nt),
                                    str(per_round)], check=True, capture_output=True, text=True,
                                   env=dict(os.environ, NODE_PATH=node_path))
                t[key].append(float(r.stdout.split()[col]))
        row = {k: agg(v) for k, v in t.items()}
        row.update(name=name, threads=nt, macs=meta["macs"], f32=f32, i8=i8)
        print(name, nt, {k: row[k] for k in t}, flush=True)
        rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("--models", default=os.path.join(ROOT, "..", "shared", "models"))
    ap.add_argument("--only", default=None, help="comma-separated model names")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--stat", choices=("median", "min"), default="median")
    ap.add_argument("--ort-dir", default=os.path.join(ROOT, "tools", "ort"))
    ap.add_argument("--mattr", default=None,
                    help="mlcc -mattr for both mlcc builds, e.g. -amx-tile,-amx-int8 (the VNNI form)")
    ap.add_argument("--mcpu", default="native",
                    help="mlcc -mcpu for both mlcc builds (ORT always uses the host CPU)")
    ap.add_argument("--quant-dir", default=os.path.join(ROOT, "build", "tests", "quant"))
    args = ap.parse_args()
    manifest = json.load(open(os.path.join(args.models, "manifest.json")))["models"]
    names = args.only.split(",") if args.only else MODELS
    threads = [int(t) for t in args.threads.split(",")]
    work = tempfile.mkdtemp(prefix="mlcc-qbench-")
    rows = []
    try:
        for name in names:
            rows.extend(bench_model(args, name, manifest[name], work, threads))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print("| model | threads | mlcc int8 (ms) | mlcc f32 (ms) | int8/f32 | ORT int8 (ms) | "
          "ORT f32 (ms) | mlcc int8 / ORT int8 | mlcc int8 GOP/s | ORT int8 GOP/s | "
          "lib int8 / f32 (KiB) | weights int8 / f32 (KiB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %s | %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %d / %d | "
              "%d / %d |" % (
                  r["name"], r["threads"], r["mlcc_i8"], r["mlcc_f32"],
                  r["mlcc_i8"] / r["mlcc_f32"], r["ort_i8"], r["ort_f32"],
                  r["mlcc_i8"] / r["ort_i8"], 2 * r["macs"] / r["mlcc_i8"] / 1e6,
                  2 * r["macs"] / r["ort_i8"] / 1e6, r["i8"]["lib_bytes"] // 1024,
                  r["f32"]["lib_bytes"] // 1024, r["i8"]["weights"] // 1024,
                  r["f32"]["weights"] // 1024))
    return 0


if __name__ == "__main__":
    sys.exit(main())
