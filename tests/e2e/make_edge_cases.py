#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes regression cases (ONNX backend-test layout) with numpy references for
compiler edge cases:

* fusion after a node whose one present output is not output 0 (LSTM with
  outputs ['', 'Y_h'] then Relu; ['', '', 'Y_c'] then Tanh, Neg): the fuse
  pass must not chain an epilogue onto it, since only output 0 takes one
  (passes/fuse.c grow_chain; before the fix -O2 failed with "does not read
  '?' at its carried input");
* Max/Min/Sum/Mean with many inputs (ONNX allows up to 2^31-1): 1500 inputs
  of mixed broadcast shapes, repeated names, initializers, as a fusion anchor
  and as an epilogue, float32/int32/float16/float64; a Sum whose fused chain
  has more distinct inputs than the elementwise loop nest holds; and a Sum
  of 4097 inputs (model only: mlcc must refuse it as UNIMPLEMENTED, naming
  its limit of 4096);
* Gemms with a constant transposed B that pack-weights stores as [K, N].

Values of the variadic cases are small multiples of 1/8, so every partial sum
is exact and the reference does not depend on the summation order.
Usage: make_edge_cases.py OUT_DIR (writes OUT_DIR/edge_<name>).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnx_case

def write_case(root, name, nodes, feeds, outputs, inits=(), opset=13):
    """feeds: [(name, array)] graph inputs (one data set); outputs:
    [(name, reference array)]; inits: [(name, array)] initializers."""
    onnx_case.write_case(os.path.join(root, "edge_" + name), nodes, feeds, outputs, inits,
                         opset=opset)


def lstm_forward(x, w, r):
    """ONNX LSTM (opset 14), forward, no bias/peepholes/initial state,
    default activations; x [S,B,I], w [1,4H,I], r [1,4H,H] (gates i,o,f,c).
    Returns Y_h, Y_c as [1,B,H] in float64."""
    sig = lambda v: 1 / (1 + np.exp(-v))
    x, w, r = x.astype(np.float64), w[0].astype(np.float64), r[0].astype(np.float64)
    H = r.shape[1]
    h = np.zeros((x.shape[1], H))
    c = np.zeros_like(h)
    for t in range(x.shape[0]):
        g = x[t] @ w.T + h @ r.T
        i, o, f, cc = (g[:, k * H:(k + 1) * H] for k in range(4))
        c = sig(f) * c + sig(i) * np.tanh(cc)
        h = sig(o) * np.tanh(c)
    return h[None], c[None]


def fuse_cases(root, rng):
    S, B, I, H = 4, 3, 5, 6
    x = rng.standard_normal((S, B, I)).astype(np.float32)
    w = (rng.standard_normal((1, 4 * H, I)) * 0.5).astype(np.float32)
    r = (rng.standard_normal((1, 4 * H, H)) * 0.5).astype(np.float32)
    yh, yc = lstm_forward(x, w, r)
    write_case(root, "lstm_yh_relu",
               [helper.make_node("LSTM", ["x", "w", "r"], ["", "y_h"], hidden_size=H),
                helper.make_node("Relu", ["y_h"], ["y"])],
               [("x", x)], [("y", np.maximum(yh, 0).astype(np.float32))],
               inits=[("w", w), ("r", r)], opset=14)
    write_case(root, "lstm_yc_tanh_neg",
               [helper.make_node("LSTM", ["x", "w", "r"], ["", "", "y_c"], hidden_size=H),
                helper.make_node("Tanh", ["y_c"], ["t"]),
                helper.make_node("Neg", ["t"], ["y"])],
               [("x", x)], [("y", (-np.tanh(yc)).astype(np.float32))],
               inits=[("w", w), ("r", r)], opset=14)


def eighths(rng, shape, dtype, lo=-64, hi=64):
    return (rng.integers(lo, hi + 1, size=shape) / 8.0).astype(dtype)


def variadic_operands(rng, n, out_shape, dtype, shapes, scale=True):
    """n operand names/arrays for a variadic node: mixed broadcast shapes,
    the first 40 fed at run time (tests/e2e/harness.c takes at most 64
    inputs), the others initializers (kernel arguments all the same), every
    50th slot repeating an earlier name. Returns (slot names, feeds, inits,
    slot arrays)."""
    names, feeds, inits, arrays = [], [], [], []
    for i in range(n):
        if i % 50 == 49:
            j = int(rng.integers(0, i))
            names.append(names[j])
            arrays.append(arrays[j])
            continue
        shape = out_shape if i == 0 else shapes[int(rng.integers(0, len(shapes)))]
        a = eighths(rng, shape, dtype) if scale else rng.integers(-1000, 1000, size=shape).astype(dtype)
        nm = "v%d" % i
        (feeds if i < 40 else inits).append((nm, a))
        names.append(nm)
        arrays.append(a)
    return names, feeds, inits, arrays


def variadic_cases(root, rng):
    out = (2, 3, 4)
    shapes = [(2, 3, 4), (3, 4), (4,), (1,), (2, 1, 4), (), (3, 1), (2, 3, 4), (2, 3, 4)]
    n = 1500
    # Sum anchor (float32) with a fused Relu.
    names, feeds, inits, arrs = variadic_operands(rng, n, out, np.float32, shapes)
    ref = np.maximum(sum(a.astype(np.float64) for a in arrs), 0)
    write_case(root, "sum1500_relu",
               [helper.make_node("Sum", names, ["s"]), helper.make_node("Relu", ["s"], ["y"])],
               feeds, [("y", np.broadcast_to(ref, out).astype(np.float32))], inits=inits)
    # Max (int32) as an epilogue of Neg(x): the chain value at slot 7.
    names, feeds, inits, arrs = variadic_operands(rng, n, out, np.int32, shapes, scale=False)
    x = rng.integers(-1000, 1000, size=out).astype(np.int32)
    names[7] = "negx"
    arrs[7] = -x
    ref = arrs[0]
    for a in arrs[1:]:
        ref = np.maximum(ref, a)
    write_case(root, "max1500_int32_epilogue",
               [helper.make_node("Neg", ["x"], ["negx"]), helper.make_node("Max", names, ["y"])],
               [("x", x)] + feeds, [("y", np.broadcast_to(ref, out).astype(np.int32))],
               inits=inits)
    # Min (float16), inputs only.
    names, feeds, inits, arrs = variadic_operands(rng, n, out, np.float16, shapes)
    ref = arrs[0]
    for a in arrs[1:]:
        ref = np.minimum(ref, a)
    write_case(root, "min1500_f16", [helper.make_node("Min", names, ["y"])],
               feeds, [("y", np.broadcast_to(ref, out).astype(np.float16))], inits=inits)
    # Mean (float64).
    names, feeds, inits, arrs = variadic_operands(rng, n, out, np.float64, shapes)
    ref = sum(arrs) / n
    write_case(root, "mean1500_f64", [helper.make_node("Mean", names, ["y"])],
               feeds, [("y", np.broadcast_to(ref, out).astype(np.float64))], inits=inits)
    # Sum of 60 distinct inputs then 12 Adds of distinct inputs: 73 arrays in
    # one fused loop nest, more than it holds, so the Sum takes the run-time
    # loop path.
    names = ["a%d" % i for i in range(60)]
    arrs = [eighths(rng, out, np.float32) for _ in names]
    nodes = [helper.make_node("Sum", names, ["t0"])]
    acc = sum(a.astype(np.float64) for a in arrs)
    feeds = list(zip(names, arrs))[:20]
    inits = list(zip(names, arrs))[20:]
    for j in range(12):
        b = eighths(rng, out, np.float32)
        feeds.append(("b%d" % j, b))
        nodes.append(helper.make_node("Add", ["t%d" % j, "b%d" % j],
                                      ["t%d" % (j + 1) if j < 11 else "y"]))
        acc = acc + b
    write_case(root, "sum60_add_chain", nodes, feeds, [("y", acc.astype(np.float32))],
               inits=inits)
    # 4097 inputs: over mlcc's limit (model only; mlcc must say UNIMPLEMENTED).
    d = os.path.join(root, "edge_sum4097_refused")
    os.makedirs(d, exist_ok=True)
    names = ["v%d" % i for i in range(4097)]
    g = helper.make_graph(
        [helper.make_node("Sum", names, ["y"])], "sum4097",
        [helper.make_tensor_value_info(nm, TensorProto.FLOAT, [2]) for nm in names],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, os.path.join(d, "model.onnx"))


def rmsnorm_cases(root, rng):
    """Decomposed RMSNorms (canonicalize rewrites them into RMSNormalization-23): the
    Hugging Face LlamaRMSNorm export, x * Reciprocal(Sqrt(mean(x^2) + eps)) * weight, with
    x also feeding a residual Add; and Div(x, Sqrt(...)) with Mul(x, x) and no weight."""
    x = rng.standard_normal((2, 5, 16)).astype(np.float32)
    w = rng.standard_normal(16).astype(np.float32)
    two, eps = np.array(2.0, np.float32), np.array(1e-6, np.float32)
    nodes = [helper.make_node("Pow", ["x", "two"], ["sq"]),
             helper.make_node("ReduceMean", ["sq"], ["var"], axes=[-1], keepdims=1),
             helper.make_node("Add", ["var", "eps"], ["ve"]),
             helper.make_node("Sqrt", ["ve"], ["std"]),
             helper.make_node("Reciprocal", ["std"], ["inv"]),
             helper.make_node("Mul", ["x", "inv"], ["n"]),
             helper.make_node("Mul", ["w", "n"], ["nw"]),
             helper.make_node("Add", ["nw", "x"], ["y"]),
             helper.make_node("Mul", ["y", "y"], ["sq2"]),
             helper.make_node("ReduceMean", ["sq2"], ["var2"], axes=[-1], keepdims=1),
             helper.make_node("Add", ["eps", "var2"], ["ve2"]),
             helper.make_node("Sqrt", ["ve2"], ["std2"]),
             helper.make_node("Div", ["y", "std2"], ["z"])]
    f64 = x.astype(np.float64)
    n = f64 / np.sqrt((f64 * f64).mean(-1, keepdims=True) + 1e-6) * w + f64
    z = n / np.sqrt((n * n).mean(-1, keepdims=True) + 1e-6)
    write_case(root, "rmsnorm_decomposed", nodes, [("x", x)], [("z", z.astype(np.float32))],
               inits=[("two", two), ("eps", eps), ("w", w)])


def gemm_transb_cases(root, rng):
    """Gemms with a constant B [N, K] and transB=1 that pack-weights stores as [K, N] with
    transB=0 (mlcc_gemm_transpose_b_wins: M >= 4 and the vector kernel takes [K, N]):
    the transformer's out_proj shape (64x128 by 128x128, bias [N]); and a B shared by two
    Gemms, one of 7 rows with alpha, beta and a [M, N] C (transposed: odd M, N = 40 with a
    column remainder, K = 19 not a multiple of the lanes), one of 1 row (left as it is)."""
    x = rng.standard_normal((64, 128)).astype(np.float32)
    w = (rng.standard_normal((128, 128)) * 0.1).astype(np.float32)
    b = rng.standard_normal(128).astype(np.float32)
    y = x.astype(np.float64) @ w.T.astype(np.float64) + b
    write_case(root, "gemm_transb_const", [
        helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)],
        [("x", x)], [("y", y.astype(np.float32))], inits=[("w", w), ("b", b)])
    a7 = rng.standard_normal((7, 19)).astype(np.float32)
    a1 = rng.standard_normal((1, 19)).astype(np.float32)
    ws = rng.standard_normal((40, 19)).astype(np.float32)
    c7 = rng.standard_normal((7, 40)).astype(np.float32)
    y7 = 0.5 * (a7.astype(np.float64) @ ws.T.astype(np.float64)) + 2.0 * c7
    y1 = a1.astype(np.float64) @ ws.T.astype(np.float64)
    write_case(root, "gemm_transb_shared", [
        helper.make_node("Gemm", ["a7", "ws", "c7"], ["y7"], transB=1, alpha=0.5, beta=2.0),
        helper.make_node("Gemm", ["a1", "ws"], ["y1"], transB=1)],
        [("a7", a7), ("a1", a1)], [("y7", y7.astype(np.float32)), ("y1", y1.astype(np.float32))],
        inits=[("ws", ws), ("c7", c7)])


def main():
    root = sys.argv[1]
    rng = np.random.default_rng(5)
    fuse_cases(root, rng)
    variadic_cases(root, rng)
    rmsnorm_cases(root, rng)
    gemm_transb_cases(root, rng)


if __name__ == "__main__":
    main()
