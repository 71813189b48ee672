#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Per-layer profile: times each heavy node (Conv, ConvTranspose, Gemm, MatMul)
of a model alone.

Every such node is cut out into a one-node ONNX model (its constant inputs as
initializers, the others as graph inputs filled with random data), compiled
with mlcc -mcpu=native, linked with bench/bench_main.c and timed (median of
--runs after warm-up). Prints one row per layer with its shape, MACs, time,
GFLOP/s and the share of the model's summed layer time, slowest first, so the
kernels that lose are visible. Fused epilogues are not included (the node is
compiled alone), so the sum is a lower bound of the model's latency.

For the kernels of a whole model measured inside its own run (every op,
fused epilogues included, 1 and 2 threads), use bench/profile_kernels.py
(mlcc --profile); this script stays for tuning one layer in isolation.

Usage: bench/profile_layers.py --mlcc build/mlcc MODEL.onnx [--runs 50] [--top 20]
       [--filter REGEX] [--stat min|median]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
HEAVY = ("Conv", "ConvTranspose", "Gemm", "MatMul")


def dims(vi):
    return [d.dim_value for d in vi.type.tensor_type.shape.dim]


def macs_of(node, shapes, inits):
    out = shapes.get(node.output[0])
    if out is None:
        return 0
    if node.op_type in ("Conv", "ConvTranspose"):
        w = inits[node.input[1]].shape
        k = int(np.prod(w[1:]))
        return int(np.prod(out)) * k if node.op_type == "Conv" else int(np.prod(shapes[node.input[0]])) * int(np.prod(w[1:]))
    a = shapes.get(node.input[0])
    if a is None:
        return 0
    k = a[0] if (node.op_type == "Gemm" and any(x.name == "transA" and x.i for x in node.attribute)) else a[-1]
    return int(np.prod(out)) * int(k)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("model")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--top", type=int, default=1000)
    ap.add_argument("--mcpu", default="native")
    ap.add_argument("--extra", default="", help="extra mlcc flags, space separated")
    ap.add_argument("--filter", default="", help="only layers whose name or shape matches this regex")
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="time to report (min is steadier on a busy machine)")
    args = ap.parse_args()
    m = shape_inference.infer_shapes(onnx.load(args.model))
    g = m.graph
    shapes = {vi.name: dims(vi) for vi in list(g.value_info) + list(g.input) + list(g.output)}
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    for i in g.initializer:
        shapes[i.name] = list(i.dims)
    work = tempfile.mkdtemp(prefix="mlcc-prof-")
    rows = []
    rng = np.random.default_rng(0)
    try:
        for idx, node in enumerate(g.node):
            if node.op_type not in HEAVY:
                continue
            if args.filter and not re.search(args.filter, "%s %s %s" % (node.name, node.op_type, shapes.get(node.output[0]))):
                continue
            ins, feeds, new_inits = [], [], []
            for name in node.input:
                if not name:
                    continue
                if name in inits:
                    new_inits.append(numpy_helper.from_array(inits[name], name))
                else:
                    ins.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, shapes[name]))
                    feeds.append(rng.standard_normal(shapes[name]).astype(np.float32))
            outs = [helper.make_tensor_value_info(node.output[0], onnx.TensorProto.FLOAT, shapes[node.output[0]])]
            one = helper.make_model(helper.make_graph([node], "layer", ins, outs, new_inits),
                                    opset_imports=m.opset_import)
            path = os.path.join(work, "l%d.onnx" % idx)
            onnx.save(one, path)
            lib = os.path.join(work, "libl%d.a" % idx)
            cmd = [args.mlcc, path, "-o", lib, "--name=l%d" % idx, "-mcpu=" + args.mcpu]
            cmd += [x for x in args.extra.split() if x]
            subprocess.run(cmd, check=True)
            exe = os.path.join(work, "l%d" % idx)
            subprocess.run(["cc", "-O2", "-include", os.path.join(work, "l%d.h" % idx),
                            "-DMLCC_INFO=l%d_info" % idx, os.path.join(HERE, "bench_main.c"), lib,
                            "-lm", "-o", exe], check=True, stderr=subprocess.DEVNULL)
            files = []
            for j, f in enumerate(feeds):
                fp = os.path.join(work, "l%d_in%d.bin" % (idx, j))
                f.tofile(fp)
                files.append(fp)
            r = subprocess.run([exe, str(args.runs)] + files, check=True, capture_output=True, text=True)
            ms = float(r.stdout.split()[0 if args.stat == "median" else 1])
            mac = macs_of(node, shapes, inits)
            attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
            desc = "%s %s->%s k%s s%s g%s" % (node.op_type, shapes.get(node.input[0]),
                                              shapes.get(node.output[0]),
                                              list(inits[node.input[1]].shape[2:]) if node.input[1] in inits and node.op_type.startswith("Conv") else "",
                                              attrs.get("strides", ""), attrs.get("group", 1))
            rows.append((ms, mac, node.name or "#%d" % idx, desc))
            print("%-40s %8.4f ms  %7.1f GFLOP/s  %s" % (rows[-1][2][:40], ms, 2 * mac / ms / 1e6, desc),
                  flush=True, file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    total = sum(r[0] for r in rows) or 1.0
    print("| layer | shape | MACs | ms | GFLOP/s | share |")
    print("|---|---|---|---|---|---|")
    for ms, mac, name, desc in sorted(rows, reverse=True)[: args.top]:
        print("| %s | %s | %.3g M | %.4f | %.1f | %.1f%% |" % (name, desc, mac / 1e6, ms,
                                                         2 * mac / ms / 1e6, 100 * ms / total))
    print("| total | | %.3g G | %.3f | %.1f | |" % (sum(r[1] for r in rows) / 1e9, total,
                                                  2 * sum(r[1] for r in rows) / total / 1e6))


if __name__ == "__main__":
    sys.exit(main())
