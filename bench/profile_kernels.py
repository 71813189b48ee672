#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Per-kernel profile of a whole model, measured inside the model's own run.

Compiles MODEL with `mlcc --profile -mcpu=native` (the entry times every
kernel call with clock_gettime(CLOCK_MONOTONIC) into NAME_profile(); the
kernels are the normal ones, docs/generated-api.md "Profile builds"), links
bench/profile_main.c with the pthread pool of examples/parallel_for, runs it
at each thread count (--threads 1,2) and prints one row per kernel (a node
plus its fused epilogue): its op types, parallel units (0: the kernel runs
whole on the calling thread in NAME_run_parallel), FLOPs, per-call time (the minimum
over the runs by default: steadiest on a shared machine; --stat mean for the
average), share of the summed kernel time, GFLOP/s, and with several thread
counts the speedup of each kernel over the first count.

MODEL is an .onnx path or the name of a model in ../shared/models (whose
test_data_set_0 inputs are used; other models get random inputs).

Usage: bench/profile_kernels.py --mlcc build/mlcc MODEL [--threads 1,2] [--runs 30]
       [--top N] [--sort time|order] [--stat min|mean] [--rt]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODELS = os.path.join(ROOT, "..", "shared", "models")
NP_DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64,
             "int32": np.int32, "uint8": np.uint8, "int8": np.int8, "bool": np.uint8,
             "float16": np.float16}


def model_inputs(model, header, work):
    """Input files in graph order: the model's test data if it has some."""
    files = []
    data_dir = os.path.join(os.path.dirname(model), "test_data_set_0")
    decls = re.findall(r'/\* input\s+(\d+) "[^"]*": (\w+) \[([0-9,]*)\] \*/', header)
    rng = np.random.default_rng(0)
    for idx, dtype, dims in decls:
        shape = [int(d) for d in dims.split(",") if d]
        pb = os.path.join(data_dir, "input_%s.pb" % idx)
        if os.path.exists(pb):
            import onnx
            from onnx import numpy_helper
            t = onnx.TensorProto()
            with open(pb, "rb") as f:
                t.ParseFromString(f.read())
            x = numpy_helper.to_array(t)
        elif dtype.startswith("float"):
            x = rng.standard_normal(shape)
        else:
            x = np.zeros(shape)
        path = os.path.join(work, "in%s.bin" % idx)
        x.astype(NP_DTYPES.get(dtype, np.float32)).tofile(path)
        files.append(path)
    return files


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("model")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--top", type=int, default=1000)
    ap.add_argument("--sort", choices=("time", "order"), default="time")
    ap.add_argument("--stat", choices=("min", "mean"), default="min")
    ap.add_argument("--mcpu", default="native")
    ap.add_argument("--extra", default="", help="extra mlcc flags, space separated")
    ap.add_argument("--rt", action="store_true",
                    help="run the timed runs at real-time priority (chrt -f 10; needs root or "
                         "CAP_SYS_NICE): on a shared machine other processes then cannot "
                         "preempt them, which makes 2-thread numbers meaningful")
    args = ap.parse_args()
    model = args.model
    if not os.path.exists(model):
        model = os.path.join(MODELS, model, "model.onnx")
    threads = [int(t) for t in args.threads.split(",")]
    work = tempfile.mkdtemp(prefix="mlcc-profile-")
    try:
        name = "prof"
        lib = os.path.join(work, "libprof.a")
        cmd = [args.mlcc, model, "-o", lib, "--name=" + name, "--profile", "-mcpu=" + args.mcpu]
        subprocess.run(cmd + [x for x in args.extra.split() if x], check=True)
        hdr = os.path.join(work, name + ".h")
        exe = os.path.join(work, "profile_main")
        pfor = os.path.join(ROOT, "examples", "parallel_for")
        subprocess.run(["cc", "-O2", "-include", hdr, "-DMLCC_NAME=" + name, "-I", pfor,
                        os.path.join(HERE, "profile_main.c"), os.path.join(pfor, "mlcc_pthread_pfor.c"),
                        lib, "-lm", "-lpthread", "-o", exe], check=True)
        ins = model_inputs(model, open(hdr).read(), work)
        results = []  # per thread count: (run_min_ms, rows)
        for nt in threads:
            prefix = ["chrt", "-f", "10"] if args.rt else []
            r = subprocess.run(prefix + [exe, str(args.runs), str(nt)] + ins, check=True,
                               capture_output=True, text=True)
            run_ms, rows = None, []
            for line in r.stdout.splitlines():
                f = line.split("\t")
                if f[0] == "run":
                    run_ms = float(f[1])
                elif f[0] == "k":
                    calls, total, mn, flops = int(f[2]), int(f[3]), int(f[4]), int(f[5])
                    ms = (mn if args.stat == "min" else total / max(calls, 1)) / 1e6
                    rows.append({"k": int(f[1]), "ms": ms if calls else 0.0, "flops": flops,
                                 "units": int(f[6]), "ops": f[7], "name": f[8] if len(f) > 8 else ""})
            results.append((run_ms, rows))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    base = results[0][1]
    order = list(range(len(base)))
    if args.sort == "time":
        order.sort(key=lambda i: -base[i]["ms"])
    head = "| # | kernel | ops | units | GFLOP | %s |" % " | ".join(
        "ms %dt | share | GFLOP/s%s" % (nt, "" if j == 0 else " | x%dt" % threads[0])
        for j, nt in enumerate(threads))
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for i in order[: args.top]:
        b = base[i]
        cells = []
        for j, (_, rows) in enumerate(results):
            row = rows[i]
            total = sum(x["ms"] for x in rows) or 1.0
            gf = "%.1f" % (row["flops"] / row["ms"] / 1e6) if row["flops"] > 0 and row["ms"] > 0 else "-"
            cells.append("%.4f | %.1f%% | %s" % (row["ms"], 100 * row["ms"] / total, gf))
            if j > 0:
                cells.append("%.2f" % (b["ms"] / row["ms"]) if row["ms"] > 0 else "-")
        print("| %d | %s | %s | %d | %s | %s |" % (
            b["k"], b["name"][:48], b["ops"][:32], b["units"],
            "%.3f" % (b["flops"] / 1e9) if b["flops"] >= 0 else "-", " | ".join(cells)))
    for j, (run_ms, rows) in enumerate(results):
        total = sum(x["ms"] for x in rows)
        flops = sum(x["flops"] for x in rows if x["flops"] > 0)
        print("%d thread(s): sum of kernel %s times %.3f ms (%.1f GFLOP/s); whole run min %.3f ms%s" % (
            threads[j], args.stat, total, flops / total / 1e6 if total else 0, run_ms,
            "" if j == 0 else "; speedup x%.2f" % (results[0][0] / run_ms)))


if __name__ == "__main__":
    sys.exit(main())
