#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Quick int8 vs float32 latency check of mlcc's integer conv kernels
(issue 16): a chain of LAYERS 3x3 convolutions, CH channels, HxW pixels,
batch 1, built three ways and compiled by mlcc for this machine
(-mcpu=native), each linked with bench/bench_main.c and timed on one thread:

  float   Conv -> Relu, float32 weights
  qlinear QLinearConv chain (uint8 activations, int8 per-channel weights,
          int32 bias), the QOperator form
  qdq     DequantizeLinear -> Conv -> Relu -> QuantizeLinear per layer (the
          QDQ form onnxruntime's quantizer writes), which the quant-fuse pass
          turns into the same integer kernels

Prints one line per form: median and min ms over RUNS runs and the ratio to
float. A rough check, not the benchmark table (bench/run.py owns that).
With --depthwise the convolutions are depthwise (weights [CH, 1, 3, 3],
group = CH: the int8 depthwise kernel, e.g. --ch 144 --hw 56).
Usage: bench/qconv_bench.py --mlcc build/mlcc [--layers 3 --ch 64 --hw 56 --runs 30]
       [--depthwise]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def build_models(layers, ch, hw, rng, depthwise=False):
    cg = 1 if depthwise else ch
    grp = ch if depthwise else 1
    ws = [rng.normal(0, 0.05, (ch, cg, 3, 3)).astype(np.float32) for _ in range(layers)]
    bs = [rng.normal(0, 0.1, ch).astype(np.float32) for _ in range(layers)]
    x_info = lambda n, t: helper.make_tensor_value_info(n, t, [1, ch, hw, hw])
    mk = lambda nodes, inits, tin, tout, name: helper.make_model(
        helper.make_graph(nodes, name, [x_info("x", tin)], [x_info("y", tout)],
                          initializer=inits),
        opset_imports=[helper.make_opsetid("", 13)])
    # float
    nodes, inits, cur = [], [], "x"
    for i in range(layers):
        inits += [numpy_helper.from_array(ws[i], "w%d" % i), numpy_helper.from_array(bs[i], "b%d" % i)]
        nodes += [helper.make_node("Conv", [cur, "w%d" % i, "b%d" % i], ["c%d" % i], pads=[1] * 4,
                                   group=grp),
                  helper.make_node("Relu", ["c%d" % i], ["r%d" % i if i < layers - 1 else "y"])]
        cur = "r%d" % i
    fmodel = mk(nodes, inits, TensorProto.FLOAT, TensorProto.FLOAT, "qbench_f")
    # quantization parameters (plausible, not calibrated: speed only)
    s_act = np.float32(0.02)
    wsc = [(np.abs(w).reshape(ch, -1).max(1) / 127).astype(np.float32) for w in ws]
    wq = [np.clip(np.rint(w / s.reshape(-1, 1, 1, 1)), -127, 127).astype(np.int8)
          for w, s in zip(ws, wsc)]
    bq = [np.rint(b / (s_act * s)).astype(np.int32) for b, s in zip(bs, wsc)]
    # QLinearConv
    nodes, inits, cur = [], [numpy_helper.from_array(np.array(s_act, np.float32), "s"),
                             numpy_helper.from_array(np.array(0, np.uint8), "z")], "x"
    for i in range(layers):
        inits += [numpy_helper.from_array(wq[i], "w%d" % i),
                  numpy_helper.from_array(wsc[i], "ws%d" % i),
                  numpy_helper.from_array(np.zeros(ch, np.int8), "wz%d" % i),
                  numpy_helper.from_array(bq[i], "b%d" % i)]
        out = "q%d" % i if i < layers - 1 else "y"
        nodes.append(helper.make_node("QLinearConv", [cur, "s", "z", "w%d" % i, "ws%d" % i,
                                                      "wz%d" % i, "s", "z", "b%d" % i], [out],
                                      pads=[1] * 4, group=grp))
        cur = out
    qmodel = mk(nodes, inits, TensorProto.UINT8, TensorProto.UINT8, "qbench_q")
    # QDQ
    nodes, inits, cur = [], [numpy_helper.from_array(np.array(s_act, np.float32), "s"),
                             numpy_helper.from_array(np.array(0, np.uint8), "z")], "x"
    for i in range(layers):
        inits += [numpy_helper.from_array(wq[i], "w%d" % i),
                  numpy_helper.from_array(wsc[i], "ws%d" % i),
                  numpy_helper.from_array(np.zeros(ch, np.int8), "wz%d" % i),
                  numpy_helper.from_array(bq[i], "b%d" % i),
                  numpy_helper.from_array((s_act * wsc[i]).astype(np.float32), "bs%d" % i),
                  numpy_helper.from_array(np.zeros(ch, np.int32), "bz%d" % i)]
        out = "q%d" % i if i < layers - 1 else "y"
        nodes += [helper.make_node("DequantizeLinear", [cur, "s", "z"], ["dx%d" % i]),
                  helper.make_node("DequantizeLinear", ["w%d" % i, "ws%d" % i, "wz%d" % i],
                                   ["dw%d" % i], axis=0),
                  helper.make_node("DequantizeLinear", ["b%d" % i, "bs%d" % i, "bz%d" % i],
                                   ["db%d" % i], axis=0),
                  helper.make_node("Conv", ["dx%d" % i, "dw%d" % i, "db%d" % i], ["c%d" % i],
                                   pads=[1] * 4, group=grp),
                  helper.make_node("Relu", ["c%d" % i], ["r%d" % i]),
                  helper.make_node("QuantizeLinear", ["r%d" % i, "s", "z"], [out])]
        cur = out
    qdq = mk(nodes, inits, TensorProto.UINT8, TensorProto.UINT8, "qbench_qdq")
    return {"float": fmodel, "qlinear": qmodel, "qdq": qdq}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--ch", type=int, default=64)
    ap.add_argument("--hw", type=int, default=56)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--mcpu", default="native")
    ap.add_argument("--mlcc-flag", action="append", default=[])
    ap.add_argument("--depthwise", action="store_true", help="depthwise 3x3 convs (group = ch)")
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    work = tempfile.mkdtemp(prefix="mlcc-qbench-")
    models = build_models(args.layers, args.ch, args.hw, rng, args.depthwise)
    macs = args.layers * args.ch * (1 if args.depthwise else args.ch) * 9 * args.hw * args.hw
    base = None
    for name, model in models.items():
        path = os.path.join(work, name + ".onnx")
        onnx.save(model, path)
        lib = os.path.join(work, "libqb_%s.a" % name)
        subprocess.run([args.mlcc, path, "-o", lib, "--name=qb_" + name, "-mcpu=" + args.mcpu]
                       + args.mlcc_flag, check=True)
        exe = os.path.join(work, "bench_" + name)
        subprocess.run(["cc", "-O2", "-include", os.path.join(work, "qb_" + name + ".h"),
                        "-DMLCC_INFO=qb_%s_info" % name, os.path.join(HERE, "bench_main.c"), lib,
                        "-lm", "-o", exe], check=True)
        elem = 4 if name == "float" else 1
        inp = os.path.join(work, name + ".in")
        (rng.random(args.ch * args.hw * args.hw * elem) * 255).astype(np.uint8).tofile(inp)
        t0 = os.times()
        out = subprocess.run([exe, str(args.runs), inp], check=True, capture_output=True,
                             text=True).stdout.split()
        t1 = os.times()
        cpu_ms = (t1.children_user - t0.children_user) * 1e3 / (args.runs + 3)
        med, mn = float(out[0]), float(out[1])
        if base is None:
            base = cpu_ms
        # CPU time per run (user time of the harness / runs incl. warm-up): on
        # a shared, loaded machine the wall-clock median mostly measures the
        # other tenants.
        print("%-8s cpu %7.2f ms/run  wall median %7.2f min %7.2f ms  %6.1f GOP/s (cpu)  "
              "%.2fx of float" % (name, cpu_ms, med, mn, 2 * macs / cpu_ms / 1e6, cpu_ms / base))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
