#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the weight-only quantized MatMul cases (passes/quant_fuse.c's
WQMatMul rule, targets/kernels/wq_matmul.c) into OUT_DIR, one folder per
case: a constant int4/uint4/int8/uint8 weight -> DequantizeLinear (opset 21:
per tensor, per column or block_size along K; zero points present, absent
or one value for all) -> MatMul / Gemm with a float32 activation.

Reference (numpy): the spec's float chain. DequantizeLinear gives
w = float32((q - z) * s) (the product of an integer and a float32, exact in
float64, rounded once to float32); MatMul is then evaluated in float64 over
those float32 weights, y = A @ w. mlcc's kernel dequantizes the same float32
weights and sums the K products in float32 in its own order, so the two
differ only by the float32 summation error, which for any order is at most
gamma(K+1) * (|A| @ |w|) per element with gamma(n) = n*u / (1 - n*u),
u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 3.1; the
+1 covers a rounded product where no fused multiply-add is used). Each case
writes that bound's maximum over the outputs as its absolute tolerance
(tolerance.txt: "rtol atol", read by run_case.py --tolerance-file): loose
enough never to fail a correct kernel, tight enough that a wrong code, scale,
zero point or block boundary moves an output past it (the weights' scales
are 0.01-0.1 and the A values O(1), so one wrong code moves a sum by about
|a| * s, several times the bound of these sizes).

Usage: make_wq_matmul_cases.py OUT_DIR"""
import os
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_case  # noqa: E402

F32 = np.float32
I4, U4 = onnx_case.INT4, onnx_case.UINT4
I8, U8 = "int8", "uint8"
RANGE = {I4: (-8, 7), U4: (0, 15), I8: (-128, 127), U8: (0, 255)}
NP = {I4: np.int8, U4: np.uint8, I8: np.int8, U8: np.uint8}


def qtensor(name, v, elem):
    if elem in (I4, U4):
        return onnx_case.subbyte_tensor(name, v, elem)
    return onnx_case.tensor(name, np.asarray(v, NP[elem]))


def gamma(n):
    u = 2.0 ** -24
    return n * u / (1 - n * u)


def make(out, name, elem, k, n, a_shape, block, zp="yes", form="matmul", bias=None,
         relu=False, seed=0):
    """block: > 0 block_size along K, 0 per column, -1 per tensor. zp: 'yes'
    (random), 'no' (absent), 'one' (one value for all elements). form:
    'matmul' (W [K, N]), 'gemm' (transB 0), 'gemm_tb' (W [N, K], transB 1).
    bias: None, 'n' ([N]) or 'scalar' ([1]) Gemm C."""
    rng = np.random.default_rng(abs(hash(name)) % (2 ** 32) if seed == 0 else seed)
    lo, hi = RANGE[elem]
    q = rng.integers(lo, hi + 1, (k, n)).astype(np.int64)
    q[0, 0], q[-1, -1] = lo, hi
    if block > 0:
        nb = -(-k // block)
        s = rng.uniform(0.01, 0.1, (nb, n)).astype(F32)
    elif block == 0:
        nb = 1
        s = rng.uniform(0.01, 0.1, (n,)).astype(F32)
    else:
        nb = 1
        s = np.array(rng.uniform(0.01, 0.1), F32)
    if zp == "yes":
        z = rng.integers(lo, hi + 1, s.shape).astype(np.int64)
        z.reshape(-1)[0] = lo
        z.reshape(-1)[-1] = hi
    elif zp == "one":
        z = np.full(s.shape, (lo + hi + 1) // 2, np.int64)
    else:
        z = None
    # expanded [K, N] parameters
    if block > 0:
        se = np.repeat(s, block, axis=0)[:k]
        ze = np.repeat(z, block, axis=0)[:k] if z is not None else 0
    else:
        se = np.broadcast_to(s, (k, n))
        ze = np.broadcast_to(z, (k, n)) if z is not None else 0
    w = ((q - ze) * se.astype(np.float64)).astype(F32)
    a = rng.uniform(-1, 1, a_shape).astype(F32)
    trans = form == "gemm_tb"
    wq_arr, s_arr, z_arr = q, s, z
    axis = 0
    if trans:
        wq_arr = q.T
        s_arr = s.T if block > 0 else s
        z_arr = (z.T if block > 0 else z) if z is not None else None
        axis = 1 if block > 0 else 0
    elif block <= 0:
        axis = 1
    inits = [qtensor("w", wq_arr.astype(NP[elem]), elem), ("s", s_arr)]
    ins = ["w", "s"]
    if z_arr is not None:
        inits.append(qtensor("zp", z_arr.astype(NP[elem]), elem))
        ins.append("zp")
    attrs = {"axis": axis}
    if block > 0:
        attrs["block_size"] = block
    nodes = [helper.make_node("DequantizeLinear", ins, ["wf"], **attrs)]
    a64 = a.astype(np.float64)
    ref = a64 @ w.astype(np.float64)
    mag = np.abs(a64) @ np.abs(w.astype(np.float64))
    if form == "matmul":
        nodes.append(helper.make_node("MatMul", ["a", "wf"], ["y0" if relu else "y"]))
    else:
        gins = ["a", "wf"]
        if bias is not None:
            c = rng.uniform(-1, 1, (n,) if bias == "n" else (1,)).astype(F32)
            inits.append(("c", c))
            gins.append("c")
            ref = ref + c.astype(np.float64)
            mag = mag + np.abs(c.astype(np.float64))
        nodes.append(helper.make_node("Gemm", gins, ["y0" if relu else "y"],
                                      transB=1 if trans else 0))
    if relu:
        nodes.append(helper.make_node("Relu", ["y0"], ["y"]))
        ref = np.maximum(ref, 0)
    atol = gamma(k + 2) * float(mag.max())
    case = os.path.join(out, name)
    g = onnx_case.graph(nodes, name, [("a", a)], [("y", ref.astype(F32))], inits)
    m = onnx_case.model(g, opset=21, ir_version=10)
    onnx_case.save_case(case, m, [([("a", a)], [("y", ref.astype(F32))])])
    with open(os.path.join(case, "tolerance.txt"), "w") as f:
        # rtol 0: the bound is absolute; 2^-24 relative covers the reference's
        # own rounding to float32.
        f.write("%.3g %.6g\n" % (2.0 ** -23, atol))


CASES = [
    # name, elem, K, N, A shape, block, zp, form, bias, relu
    ("wq_i4_b32_m1", I4, 256, 64, (1, 256), 32, "yes", "matmul", None, False),
    ("wq_u4_b16_ntail", U4, 80, 37, (3, 80), 16, "yes", "matmul", None, False),
    ("wq_i4_b64_ktail_nozp", I4, 200, 50, (16, 200), 64, "no", "matmul", None, False),
    ("wq_u4_b128_zp_one", U4, 300, 33, (5, 300), 128, "one", "matmul", None, False),
    ("wq_i4_b16_odd_k", I4, 63, 17, (2, 63), 16, "yes", "matmul", None, False),
    ("wq_u4_b33_odd_block", U4, 100, 20, (9, 100), 33, "yes", "matmul", None, False),
    ("wq_i4_b32_m9_relu", I4, 96, 48, (9, 96), 32, "yes", "matmul", None, True),
    ("wq_i4_b32_batched", I4, 64, 32, (2, 3, 64), 32, "no", "matmul", None, False),
    ("wq_u4_b32_1d", U4, 64, 24, (64,), 32, "yes", "matmul", None, False),
    ("wq_i4_pertensor", I4, 64, 40, (4, 64), -1, "yes", "matmul", None, False),
    ("wq_u4_percol", U4, 48, 16, (2, 48), 0, "yes", "matmul", None, False),
    ("wq_i8_percol", I8, 128, 40, (4, 128), 0, "yes", "matmul", None, False),
    ("wq_u8_b32", U8, 96, 24, (1, 96), 32, "yes", "matmul", None, False),
    ("wq_i8_b64_nozp_m16", I8, 128, 64, (16, 128), 64, "no", "matmul", None, False),
    ("wq_gemm_tb_i4_b32_bias", I4, 128, 30, (3, 128), 32, "yes", "gemm_tb", "n", False),
    ("wq_gemm_u4_b16_bias1", U4, 64, 20, (2, 64), 16, "yes", "gemm", "scalar", False),
    ("wq_gemm_tb_i8_percol", I8, 64, 18, (1, 64), 0, "yes", "gemm_tb", None, False),
    ("wq_i4_b32_1024", I4, 1024, 1024, (1, 1024), 32, "no", "matmul", None, False),
]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for i, (name, elem, k, n, ash, block, zp, form, bias, relu) in enumerate(CASES):
        make(out, name, elem, k, n, ash, block, zp, form, bias, relu, seed=1000 + i)
    return 0


if __name__ == "__main__":
    sys.exit(main())
