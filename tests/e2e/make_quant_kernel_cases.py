#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the integer-kernel cases of issue 16 (targets/kernels/qgemm.c,
passes/quant_fuse.c) into OUT_DIR, one folder per case, with exact numpy
references: int32 accumulation (wrapping like the spec's int32), then the
spec's float32 requantization y = saturate(round_half_even(float32(acc) * M)
+ y_zero_point), M = float32(float32(x_scale * w_scale) / y_scale). The
compiled kernels must match these bit for bit (run_case.py compares integers
exactly), on every target: a result must not depend on the CPU.

The qdq_* cases are QDQ graphs (DequantizeLinear -> Conv/MatMul ->
[Relu/Clip] -> QuantizeLinear) that mlcc's quant-fuse pass turns into
integer kernels; their reference is the same exact integer evaluation of
the fused op (bias DequantizeLinear of int32 with scale x_scale * w_scale),
which is what the float graph computes up to float rounding of the
accumulation. qdq_check.py (beside this file) compares the fused and the
unfused (--passes= without quant-fuse) builds of those graphs within one
quantization step."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper
from onnx import mapping as onnx_mapping

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_case import write_case  # noqa: E402

F32 = np.float32


def conv_acc(x, w, xz, wz, pads, strides, dil, group):
    """int64 accumulation of (x - xz) * (w - wz) over the window (2-D, NCHW);
    wz is per output channel ([M]). Returned wrapped to int32."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.full((n, c, h + pads[0] + pads[2], wd + pads[1] + pads[3]), xz, dtype=np.int64)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + wd] = x
    xp -= np.int64(xz)
    oh = (h + pads[0] + pads[2] - dil[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + pads[1] + pads[3] - dil[1] * (kw - 1) - 1) // strides[1] + 1
    wi = w.astype(np.int64) - np.asarray(wz, dtype=np.int64).reshape(m, 1, 1, 1)
    mg = m // group
    acc = np.zeros((n, m, oh, ow), dtype=np.int64)
    for g in range(group):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i * dil[0]:i * dil[0] + strides[0] * (oh - 1) + 1:strides[0],
                           j * dil[1]:j * dil[1] + strides[1] * (ow - 1) + 1:strides[1]]
                acc[:, g * mg:(g + 1) * mg] += np.einsum(
                    "nchw,mc->nmhw", patch, wi[g * mg:(g + 1) * mg, :, i, j])
    return ((acc + 2**31) % 2**32 - 2**31).astype(np.int32)


def requant(acc, xs, ws, ys, yz, ydt, axis_len, lo=None, hi=None):
    """Spec float32 requantization of int32 |acc| [N, M, ...] with per-channel
    |ws| ([M] or scalar)."""
    ws = np.broadcast_to(np.asarray(ws, dtype=F32).reshape(-1), (axis_len,))
    mult = (F32(xs) * ws) / F32(ys)
    shape = (1, axis_len) + (1,) * (acc.ndim - 2)
    f = acc.astype(F32) * mult.astype(F32).reshape(shape)
    r = np.rint(f).astype(F32) + F32(yz)
    qlo, qhi = (-128, 127) if ydt == np.int8 else (0, 255)
    if lo is not None:
        qlo = max(qlo, lo)
    if hi is not None:
        qhi = min(qhi, hi)
    return np.clip(r, qlo, qhi).astype(ydt)


def qlinear_conv_case(out, name, rng, x, w, xs, xz, ws, wz, ys, yz, ydt, bias=None,
                      pads=(0, 0, 0, 0), strides=(1, 1), dil=(1, 1), group=1, tail=None):
    """tail: None, or an ONNX element type the conv's output is Cast to (a node fused
    after the conv as its epilogue, so the conv's own output is not a kernel argument)."""
    m = w.shape[0]
    wz_arr = np.asarray(wz, dtype=w.dtype).reshape(-1)
    acc = conv_acc(x, w, int(xz), np.broadcast_to(wz_arr.astype(np.int64), (m,)),
                   pads, strides, dil, group)
    if bias is not None:
        acc = ((acc.astype(np.int64) + bias.reshape(1, m, 1, 1) + 2**31) % 2**32
               - 2**31).astype(np.int32)
    y = requant(acc, xs, ws, ys, yz, ydt, m)
    ws_arr = np.asarray(ws, dtype=F32).reshape(-1)
    if ws_arr.size != wz_arr.size:  # the spec wants equal shapes
        ws_arr = np.broadcast_to(ws_arr, (m,)).copy()
        wz_arr = np.broadcast_to(wz_arr, (m,)).copy()
    inits = [("xs", np.array(xs, dtype=F32)), ("xz", np.array(xz, dtype=x.dtype)),
             ("w", w), ("ws", ws_arr if ws_arr.size > 1 else ws_arr.reshape(())),
             ("wz", wz_arr if wz_arr.size > 1 else wz_arr.reshape(())),
             ("ys", np.array(ys, dtype=F32)), ("yz", np.array(yz, dtype=ydt))]
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias is not None:
        inits.append(("b", bias.astype(np.int32)))
        ins.append("b")
    nodes = [helper.make_node("QLinearConv", ins, ["q" if tail else "y"], pads=list(pads),
                              strides=list(strides), dilations=list(dil), group=group)]
    if tail:
        nodes.append(helper.make_node("Cast", ["q"], ["y"], to=tail))
        y = y.astype(helper.tensor_dtype_to_np_dtype(tail) if hasattr(
            helper, "tensor_dtype_to_np_dtype") else onnx_mapping.TENSOR_TYPE_TO_NP_TYPE[tail])
    write_case(os.path.join(out, name), nodes, [("x", x)], [("y", y)], inits, opset=13)


def conv_integer_case(out, name, x, w, xz, wz, pads=(0, 0, 0, 0), strides=(1, 1), group=1):
    m = w.shape[0]
    acc = conv_acc(x, w, int(xz), np.broadcast_to(np.asarray(wz, np.int64).reshape(-1), (m,)),
                   pads, strides, (1, 1), group)
    inits = [("xz", np.array(xz, dtype=x.dtype)), ("w", w),
             ("wz", np.array(wz, dtype=w.dtype))]
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=list(pads),
                            strides=list(strides), group=group)
    write_case(os.path.join(out, name), [node], [("x", x)], [("y", acc)], inits, opset=13)


def matmul_acc(a, b, az, bz):
    """int32 (wrapping) (a - az) @ (b - bz) with bz per column ([N]) or scalar."""
    acc = (a.astype(np.int64) - np.int64(az)) @ (
        b.astype(np.int64) - np.asarray(bz, np.int64).reshape(1, -1))
    return ((acc + 2**31) % 2**32 - 2**31).astype(np.int32)


def qlinear_matmul_case(out, name, a, b, as_, az, bs, bz, ys, yz, ydt):
    """QLinearMatMul with a constant B [K, N]; b_scale / b_zero_point scalar or
    per column ([N]). The spec's float32 requantization per column."""
    n = b.shape[1]
    acc = matmul_acc(a, b, int(az), bz)
    bs_arr = np.asarray(bs, F32).reshape(-1)
    bz_arr = np.asarray(bz, b.dtype).reshape(-1)
    if bs_arr.size != bz_arr.size:
        bs_arr = np.broadcast_to(bs_arr, (n,)).copy()
        bz_arr = np.broadcast_to(bz_arr, (n,)).copy()
    mult = (F32(as_) * np.broadcast_to(bs_arr, (n,))) / F32(ys)
    f = acc.astype(F32) * mult.astype(F32)
    r = np.rint(f).astype(F32) + F32(yz)
    lo, hi = (-128, 127) if ydt == np.int8 else (0, 255)
    y = np.clip(r, lo, hi).astype(ydt)
    inits = [("as", np.array(as_, F32)), ("az", np.array(az, a.dtype)), ("b", b),
             ("bs", bs_arr if bs_arr.size > 1 else bs_arr.reshape(())),
             ("bz", bz_arr if bz_arr.size > 1 else bz_arr.reshape(())),
             ("ys", np.array(ys, F32)), ("yz", np.array(yz, ydt))]
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
                            ["y"])
    write_case(os.path.join(out, name), [node], [("a", a)], [("y", y)], inits, opset=13)


def matmul_integer_case(out, name, a, b, az, bz):
    acc = matmul_acc(a, b, int(az), bz)
    bz_arr = np.asarray(bz, b.dtype).reshape(-1)
    inits = [("b", b), ("az", np.array(az, a.dtype)),
             ("bz", bz_arr if bz_arr.size > 1 else bz_arr.reshape(()))]
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    write_case(os.path.join(out, name), [node], [("a", a)], [("y", acc)], inits, opset=13)


def quantize(x, s, z, dt):
    """ONNX QuantizeLinear in float32: saturate(round_half_even(x / s) + z)."""
    lo, hi = (-128, 127) if dt == np.int8 else (0, 255)
    return np.clip(np.rint(F32(x) / F32(s)) + F32(z), lo, hi).astype(dt)


def qdq_conv_case(out, name, x, xs, xz, xdt, layers, opset=13):
    """A QDQ graph: x (float) -> QuantizeLinear -> [DequantizeLinear -> Conv
    (DequantizeLinear weights, bias) -> act -> QuantizeLinear] per layer ->
    DequantizeLinear -> y (float). Each layer is a dict: w (int8/uint8), ws,
    wz, w_axis, bias ("int32" exact, "float", None), act (None, "relu",
    ("clip", lo, hi)), ys, yz, ydt, pads, strides, group. The reference is the
    exact integer evaluation of the fused kernels."""
    nodes, inits = [], []
    add = lambda n, a: inits.append((n, np.asarray(a)))
    add("xs", np.array(xs, F32))
    add("xz", np.array(xz, xdt))
    nodes.append(helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["q_in"]))
    q = quantize(x, xs, xz, xdt)
    cur, cur_s, cur_z = "q_in", "xs", "xz"
    cs, cz = F32(xs), int(xz)
    for i, L in enumerate(layers):
        w = L["w"]
        m = w.shape[0]
        ws = np.asarray(L["ws"], F32).reshape(-1)
        wz = np.asarray(L["wz"], w.dtype).reshape(-1)
        add("w%d" % i, w)
        add("ws%d" % i, ws if ws.size > 1 else ws.reshape(()))
        add("wz%d" % i, wz if wz.size > 1 else wz.reshape(()))
        nodes.append(helper.make_node("DequantizeLinear", [cur, cur_s, cur_z], ["dx%d" % i]))
        nodes.append(helper.make_node("DequantizeLinear", ["w%d" % i, "ws%d" % i, "wz%d" % i],
                                      ["dw%d" % i], axis=L.get("w_axis", 0)))
        conv_in = ["dx%d" % i, "dw%d" % i]
        wsb = np.broadcast_to(ws, (m,))
        bq = None
        if L.get("bias") == "int32":
            bq = L["b"].astype(np.int32)
            add("b%d" % i, bq)
            add("bs%d" % i, (cs * wsb).astype(F32))
            add("bz%d" % i, np.zeros(m, np.int32))
            nodes.append(helper.make_node("DequantizeLinear", ["b%d" % i, "bs%d" % i, "bz%d" % i],
                                          ["db%d" % i], axis=0))
            conv_in.append("db%d" % i)
        elif L.get("bias") == "float":
            bf = L["b"].astype(F32)
            add("b%d" % i, bf)
            step = (cs * wsb).astype(F32).astype(np.float64)
            bq = np.clip(np.rint(bf.astype(np.float64) / step), -2**31, 2**31 - 1).astype(np.int32)
            conv_in.append("b%d" % i)
        pads = L.get("pads", (0, 0, 0, 0))
        strides = L.get("strides", (1, 1))
        group = L.get("group", 1)
        nodes.append(helper.make_node("Conv", conv_in, ["c%d" % i], pads=list(pads),
                                      strides=list(strides), group=group))
        acc = conv_acc(q, w, cz, np.broadcast_to(wz.astype(np.int64), (m,)), pads, strides,
                       (1, 1), group)
        if bq is not None:
            acc = ((acc.astype(np.int64) + bq.reshape(1, m, 1, 1) + 2**31) % 2**32
                   - 2**31).astype(np.int32)
        ys, yz, ydt = F32(L["ys"]), L["yz"], L["ydt"]
        act = L.get("act")
        pre = "c%d" % i
        lo = hi = None
        qb = lambda v: int(quantize(np.array([v], F32), ys, yz, ydt)[0])
        if act == "relu":
            nodes.append(helper.make_node("Relu", [pre], ["a%d" % i]))
            pre, lo = "a%d" % i, qb(0.0)
        elif isinstance(act, tuple):
            add("clo%d" % i, np.array(act[1], F32))
            add("chi%d" % i, np.array(act[2], F32))
            nodes.append(helper.make_node("Clip", [pre, "clo%d" % i, "chi%d" % i], ["a%d" % i]))
            pre, lo, hi = "a%d" % i, qb(act[1]), qb(act[2])
        add("ys%d" % i, np.array(ys, F32))
        add("yz%d" % i, np.array(yz, ydt))
        nodes.append(helper.make_node("QuantizeLinear", [pre, "ys%d" % i, "yz%d" % i],
                                      ["q%d" % i]))
        q = requant(acc, cs, ws, ys, yz, ydt, m, lo, hi)
        cur, cur_s, cur_z, cs, cz = "q%d" % i, "ys%d" % i, "yz%d" % i, ys, int(yz)
    nodes.append(helper.make_node("DequantizeLinear", [cur, cur_s, cur_z], ["y"]))
    y = ((q.astype(np.int32) - cz).astype(F32) * cs).astype(F32)
    write_case(os.path.join(out, name), nodes, [("x", x.astype(F32))], [("y", y)], inits,
               opset=opset)
    with open(os.path.join(out, name, "quant_step.txt"), "w") as f:
        f.write("%.9g\n" % cs)


def u8(rng, shape, lo=0, hi=256):
    return rng.integers(lo, hi, size=shape).astype(np.uint8)


def s8(rng, shape, lo=-128, hi=128):
    return rng.integers(lo, hi, size=shape).astype(np.int8)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(16)
    # 3x3, pad 1, u8 x s8, per-channel weight scales, int32 bias, odd M.
    qlinear_conv_case(out, "qk_conv3x3_u8s8_perchannel", rng, u8(rng, (1, 16, 9, 11)),
                      s8(rng, (13, 16, 3, 3)), 0.02, 128, rng.uniform(0.001, 0.01, 13), 0,
                      0.05, 120, np.uint8, bias=rng.integers(-3000, 3000, 13),
                      pads=(1, 1, 1, 1))
    # Saturation at both ends: a large multiplier drives outputs to 0 and 255.
    qlinear_conv_case(out, "qk_conv_saturate_u8", rng, u8(rng, (1, 8, 6, 6)),
                      s8(rng, (7, 8, 3, 3)), 0.5, 100, 0.5, 0, 0.25, 128, np.uint8,
                      pads=(1, 1, 1, 1))
    qlinear_conv_case(out, "qk_conv_saturate_s8", rng, s8(rng, (1, 8, 6, 6)),
                      s8(rng, (7, 8, 3, 3)), 0.5, -5, 0.5, 0, 0.25, 3, np.int8,
                      pads=(0, 0, 0, 0))
    # Zero points at the ends of their ranges: x 255 / 0, y -128 / 127,
    # per-channel weight zero points, uint8 weights with zero point 255.
    qlinear_conv_case(out, "qk_conv_zp_extremes_a", rng, u8(rng, (1, 5, 7, 7)),
                      s8(rng, (6, 5, 3, 3)), 0.03, 255, [0.01] * 6,
                      np.array([-128, 127, 0, 5, -7, 1], np.int8), 0.2, -128, np.int8,
                      pads=(1, 2, 0, 1))
    qlinear_conv_case(out, "qk_conv_zp_extremes_b", rng, u8(rng, (2, 5, 7, 7)),
                      u8(rng, (6, 5, 3, 3)), 0.03, 0, 0.004, 255, 0.3, 127, np.int8,
                      bias=rng.integers(-20000, 20000, 6), pads=(1, 1, 1, 1))
    qlinear_conv_case(out, "qk_conv_s8x_u8w", rng, s8(rng, (1, 9, 5, 8)),
                      u8(rng, (11, 9, 2, 3)), 0.05, -128, 0.002, 128, 0.1, 0, np.uint8,
                      strides=(2, 1), dil=(1, 2), pads=(0, 1, 1, 2))
    # Groups (2), stride 2, odd channel counts that fill no vector.
    qlinear_conv_case(out, "qk_conv_groups_stride", rng, u8(rng, (1, 6, 11, 9)),
                      s8(rng, (10, 3, 3, 3)), 0.02, 7, rng.uniform(0.002, 0.02, 10), 0,
                      0.07, 9, np.uint8, bias=rng.integers(-500, 500, 10),
                      pads=(1, 1, 1, 1), strides=(2, 2), group=2)
    # K = 1 (1x1 kernel over one channel) and a 1x1 conv with K = 67.
    qlinear_conv_case(out, "qk_conv_k1", rng, u8(rng, (1, 1, 5, 5)), s8(rng, (3, 1, 1, 1)),
                      0.1, 3, 0.05, 0, 0.02, 11, np.uint8)
    qlinear_conv_case(out, "qk_conv1x1_k67", rng, u8(rng, (1, 67, 4, 5)),
                      s8(rng, (33, 67, 1, 1)), 0.01, 128, rng.uniform(0.001, 0.01, 33), 0,
                      0.03, 128, np.uint8)
    # Huge K (8064 = 896 x 3 x 3): sums far outside int16, exact int32.
    x = np.full((1, 896, 3, 3), 255, np.uint8)
    x[0, ::7] = 0
    w = np.full((3, 896, 3, 3), -128, np.int8)
    w[1] = 127
    w[2, ::2] = 1
    conv_integer_case(out, "qk_convint_huge_k", x, w, 0, 0)
    conv_integer_case(out, "qk_convint_u8_zp", u8(rng, (1, 4, 6, 7)), u8(rng, (5, 4, 3, 3)),
                      77, 200, pads=(1, 1, 1, 1))
    conv_integer_case(out, "qk_convint_s8", s8(rng, (1, 12, 5, 5)), s8(rng, (9, 12, 3, 3)),
                      -3, 2, strides=(2, 2))

    # The blocked x86 kernel (MLCC_QBLOCK_ATTR: 16-channel blocks x 6 pixels,
    # k pairs): M = 40 (two full blocks and an 8-channel tail), odd K (63:
    # the single-k step), OW = 14 (a 2-pixel tail tile); a width dilation
    # (3 segments of odd length 9) with M = 21; groups of 5 channels with
    # uint8 weights at zero point 255 and int8 x at -128; a huge K (9000) with
    # M = 17 and sums near 2^28.
    qlinear_conv_case(out, "qk_blk_m40_odd_k", rng, u8(rng, (1, 7, 9, 14)),
                      s8(rng, (40, 7, 3, 3)), 0.02, 131, rng.uniform(0.001, 0.01, 40),
                      rng.integers(-3, 4, 40).astype(np.int8), 0.05, 120, np.uint8,
                      bias=rng.integers(-3000, 3000, 40), pads=(1, 1, 1, 1))
    qlinear_conv_case(out, "qk_blk_dilated_odd_seg", rng, u8(rng, (1, 3, 10, 13)),
                      s8(rng, (21, 3, 3, 3)), 0.03, 0, 0.004, 0, 0.04, 255, np.uint8,
                      pads=(2, 2, 2, 2), dil=(2, 2))
    qlinear_conv_case(out, "qk_blk_group_mg5_u8w", rng, s8(rng, (1, 12, 9, 10)),
                      u8(rng, (15, 4, 3, 3)), 0.05, -128, rng.uniform(0.001, 0.004, 15), 255,
                      0.3, 127, np.int8, bias=rng.integers(-20000, 20000, 15),
                      pads=(1, 0, 1, 1), strides=(2, 2), group=3)
    x = np.where(rng.random((1, 1000, 3, 3)) < 0.5, 255, 0).astype(np.uint8)
    w = np.where(rng.random((17, 1000, 3, 3)) < 0.8, 127, -128).astype(np.int8)
    w[3] = -128
    x[0, :, 1, 1] = 255
    conv_integer_case(out, "qk_blk_convint_huge_k", x, w, 0, 0)

    # QLinearMatMul / MatMulInteger with a constant B (the blocked kernel on
    # x86: B's columns in 16-channel blocks, A's rows in 6-row tiles): batch
    # dims, per-column B parameters, N = 40 and 13 (channel tails), odd K,
    # zero points at the ends, saturation, K = 1, a huge K, a 1-D A.
    qlinear_matmul_case(out, "qk_mm_u8s8_percol", u8(rng, (2, 5, 37)), s8(rng, (37, 40)),
                        0.02, 128, rng.uniform(0.002, 0.01, 40), np.zeros(40, np.int8), 0.05,
                        120, np.uint8)
    qlinear_matmul_case(out, "qk_mm_s8_u8w_saturate", s8(rng, (7, 64)), u8(rng, (64, 13)),
                        0.05, -128, rng.uniform(0.002, 0.01, 13),
                        rng.integers(0, 256, 13).astype(np.uint8), 0.1, 127, np.int8)
    qlinear_matmul_case(out, "qk_mm_1d_a", u8(rng, (50,)), s8(rng, (50, 33)), 0.03, 0, 0.004,
                        -3, 0.02, 255, np.uint8)
    a = np.where(rng.random((3, 9001)) < 0.5, 255, 0).astype(np.uint8)
    b = np.where(rng.random((9001, 17)) < 0.8, 127, -128).astype(np.int8)
    matmul_integer_case(out, "qk_mmint_huge_k", a, b, 0, 0)
    matmul_integer_case(out, "qk_mmint_k1", u8(rng, (10, 1)), s8(rng, (1, 20)), 3,
                        rng.integers(-128, 128, 20).astype(np.int8))

    # The AMX form of the blocked kernel (x86 with AMX-TILE and AMX-INT8:
    # amx_block, 16 pixels x 16 channels x 64 k per tdpbusd): K = 216 (a
    # zero-padded last B tile of 6 quad rows), M = 40 (two AMX blocks and an
    # 8-channel VNNI tail), OW = 53 (three full pixel tiles and one of 5);
    # K = 81 (one full 64 k, then 4 quads and 1 single k in the padded tile), OW
    # = 150 (runs of three tiles, then three and a 6-row tile), int8 x; a
    # width dilation (3 segments of 60 k) with stride 2; one output pixel
    # (M = 1 for the tiles) with K = 2700 (3x3); QLinearMatMul with one row of A,
    # K = 3000, N = 40; 100 rows of int8 A in units of 96 and 4 rows, N = 50.
    qlinear_conv_case(out, "qk_amx_k216_m40_ow53", rng, u8(rng, (1, 24, 6, 53)),
                      s8(rng, (40, 24, 3, 3)), 0.02, 131, rng.uniform(0.001, 0.01, 40),
                      rng.integers(-3, 4, 40).astype(np.int8), 0.05, 120, np.uint8,
                      bias=rng.integers(-3000, 3000, 40), pads=(1, 1, 1, 1))
    qlinear_conv_case(out, "qk_amx_k81_ow150_s8x", rng, s8(rng, (1, 9, 5, 150)),
                      s8(rng, (32, 9, 3, 3)), 0.05, -7, rng.uniform(0.001, 0.004, 32), 0,
                      0.3, 3, np.int8, bias=rng.integers(-20000, 20000, 32),
                      pads=(0, 1, 0, 1))
    qlinear_conv_case(out, "qk_amx_dilated_s2", rng, u8(rng, (1, 20, 8, 120)),
                      s8(rng, (16, 20, 3, 3)), 0.03, 0, 0.004, 0, 0.04, 255, np.uint8,
                      pads=(2, 2, 2, 2), strides=(1, 2), dil=(1, 2))
    qlinear_conv_case(out, "qk_amx_1pixel_k2700", rng, u8(rng, (1, 300, 3, 3)),
                      s8(rng, (48, 300, 3, 3)), 0.01, 128, rng.uniform(0.0005, 0.001, 48), 0,
                      0.2, 128, np.uint8, bias=rng.integers(-3000, 3000, 48))
    qlinear_matmul_case(out, "qk_amx_mm_m1_k3000", u8(rng, (1, 3000)), s8(rng, (3000, 40)),
                        0.01, 128, rng.uniform(0.0005, 0.001, 40), np.zeros(40, np.int8), 0.2,
                        128, np.uint8)
    qlinear_matmul_case(out, "qk_amx_mm_s8a_m100", s8(rng, (2, 100, 200)), s8(rng, (200, 50)),
                        0.03, -5, 0.004, 0, 0.3, 2, np.int8)

    # The x86 vector packing of the input rows (emit_pack_rows_vec: 16
    # columns x 16 or 8 channels per byte transpose, the scalar loop for the
    # rest): 24 channels (16 + 8) over 37 columns (two vectors and a tail);
    # 13 channels (8 + 5) of int8 x at -128 with uint8 weights (the int16
    # rows), stride 2 and a width dilation; 1x1 with two groups of 16
    # channels over 48 columns, int8 y saturating at both ends.
    qlinear_conv_case(out, "qk_pack_vec_u8_3x3", rng, u8(rng, (1, 24, 7, 37)),
                      s8(rng, (20, 24, 3, 3)), 0.02, 131, rng.uniform(0.001, 0.01, 20), 0,
                      0.05, 120, np.uint8, bias=rng.integers(-3000, 3000, 20),
                      pads=(1, 1, 1, 1))
    qlinear_conv_case(out, "qk_pack_vec_s8_u8w_stride2", rng, s8(rng, (2, 13, 6, 50)),
                      u8(rng, (9, 13, 3, 3)), 0.03, -128, 0.002, 128, 0.1, 7, np.uint8,
                      pads=(2, 1, 0, 3), strides=(2, 2), dil=(1, 2))
    qlinear_conv_case(out, "qk_pack_vec_1x1_groups", rng, u8(rng, (1, 32, 3, 48)),
                      s8(rng, (6, 16, 1, 1)), 0.05, 0, rng.uniform(0.01, 0.05, 6), 0,
                      0.01, 0, np.int8, bias=rng.integers(-20000, 20000, 6), group=2)

    # Depthwise (the emit_dw kernel): odd channel counts, widths that fill no
    # vector, stride 2, a channel multiplier of 2, dilation, 1-D.
    qlinear_conv_case(out, "qk_dw3x3_pad", rng, u8(rng, (1, 13, 9, 19)), s8(rng, (13, 1, 3, 3)),
                      0.02, 128, rng.uniform(0.002, 0.02, 13), 0, 0.05, 100, np.uint8,
                      bias=rng.integers(-3000, 3000, 13), pads=(1, 1, 1, 1), group=13)
    qlinear_conv_case(out, "qk_dw_stride2_mult2", rng, u8(rng, (2, 6, 11, 13)),
                      s8(rng, (12, 1, 3, 3)), 0.02, 5, rng.uniform(0.002, 0.02, 12),
                      rng.integers(-5, 5, 12).astype(np.int8), 0.04, -3, np.int8,
                      pads=(1, 0, 1, 2), strides=(2, 2), group=6)
    qlinear_conv_case(out, "qk_dw5x5_dilated_u8w", rng, s8(rng, (1, 4, 12, 12)),
                      u8(rng, (4, 1, 5, 5)), 0.02, -128, 0.003, 128, 0.1, 128, np.uint8,
                      pads=(4, 4, 4, 4), dil=(2, 2), group=4)
    conv_integer_case(out, "qk_convint_dw", u8(rng, (1, 5, 7, 9)), u8(rng, (5, 1, 3, 3)), 255,
                      7, pads=(1, 1, 1, 1), group=5)
    # The x86 plane form of the depthwise kernel (emit_dw_plane, 16 pixels per
    # vector): rows of exactly 32 (no masked tail), int8 x at -128 saturating
    # int8 y at both ends with per-channel weight zero points; stride 2 over
    # three vectors with a multiplier of 3 and odd channels; stride 3 with a
    # 5x5 window, uint8 weights at zero point 255 and x zero point 255 (uint8
    # y saturating at both ends); a 7x7 plane (one masked vector per row);
    # and a plane above the stack limit (the row form runs instead).
    qlinear_conv_case(out, "qk_dwp_w32_s8_sat", rng, s8(rng, (1, 5, 10, 32)),
                      s8(rng, (5, 1, 3, 3)), 0.05, -128, rng.uniform(0.01, 0.05, 5),
                      rng.integers(-20, 20, 5).astype(np.int8), 0.01, 127, np.int8,
                      bias=rng.integers(-30000, 30000, 5), pads=(1, 1, 1, 1), group=5)
    qlinear_conv_case(out, "qk_dwp_stride2_mult3", rng, u8(rng, (2, 7, 17, 40)),
                      s8(rng, (21, 1, 3, 3)), 0.02, 3, rng.uniform(0.002, 0.02, 21),
                      0, 0.03, 128, np.uint8, bias=rng.integers(-3000, 3000, 21),
                      pads=(1, 1, 1, 1), strides=(2, 2), group=7)
    qlinear_conv_case(out, "qk_dwp_stride3_5x5_u8w", rng, u8(rng, (1, 3, 20, 37)),
                      u8(rng, (3, 1, 5, 5)), 0.02, 255, 0.004, 255, 0.02, 0, np.uint8,
                      pads=(2, 1, 2, 3), strides=(3, 3), group=3)
    qlinear_conv_case(out, "qk_dwp_7x7", rng, u8(rng, (1, 33, 7, 7)),
                      s8(rng, (33, 1, 3, 3), -127, 128), 0.02, 0, rng.uniform(0.01, 0.05, 33),
                      0, 6 / 255, 0, np.uint8, bias=rng.integers(-500, 500, 33),
                      pads=(1, 1, 1, 1), group=33)
    # The VNNI forms (x86 with AVX-512 VNNI + VBMI, uint8 x, int8 w: four taps
    # of a row per vpdpbusd): a 14 x 14 plane read straight from the input
    # rows (one vector per output row) with per-channel weight zero points
    # and saturation at both ends; a 5x5 window (two quads per row) at stride
    # 2 with asymmetric pads and a multiplier of 2; rows of 64 bytes at
    # stride 4 (16 output pixels, the widest window); and a 30-wide plane
    # (two vectors per row: the padded stack plane).
    qlinear_conv_case(out, "qk_dwd_14_wzp", rng, u8(rng, (1, 19, 14, 14)),
                      s8(rng, (19, 1, 3, 3)), 0.03, 7, rng.uniform(0.01, 0.05, 19),
                      rng.integers(-9, 9, 19).astype(np.int8), 0.02, 120, np.uint8,
                      bias=rng.integers(-20000, 20000, 19), pads=(1, 1, 1, 1), group=19)
    qlinear_conv_case(out, "qk_dwd_5x5_s2_mult2", rng, u8(rng, (2, 6, 15, 13)),
                      s8(rng, (12, 1, 5, 5)), 0.02, 200, rng.uniform(0.002, 0.02, 12),
                      0, 0.05, 3, np.uint8, bias=rng.integers(-3000, 3000, 12),
                      pads=(2, 1, 2, 3), strides=(2, 2), group=6)
    qlinear_conv_case(out, "qk_dwd_w64_s4", rng, u8(rng, (1, 3, 9, 64)),
                      s8(rng, (3, 1, 3, 3)), 0.02, 0, 0.01, 0, 0.03, 128, np.uint8,
                      pads=(1, 1, 1, 1), strides=(4, 4), group=3)
    qlinear_conv_case(out, "qk_dwp_w30_wzp", rng, u8(rng, (1, 5, 11, 30)),
                      s8(rng, (5, 1, 3, 3)), 0.02, 90, 0.01, -5, 0.04, 100, np.uint8,
                      pads=(1, 1, 1, 1), group=5)
    conv_integer_case(out, "qk_convint_dwd", u8(rng, (1, 4, 7, 7)), s8(rng, (4, 1, 3, 3)), 131,
                      np.array([0, -3, 5, 127], np.int8), pads=(1, 1, 1, 1), group=4)
    # Depthwise / grouped convs with a Cast fused after them (x86's plane
    # kernel stores through the epilogue; it once refused them as INTERNAL).
    qlinear_conv_case(out, "qk_dwp_cast_f32", rng, u8(rng, (1, 2, 5, 5)),
                      s8(rng, (2, 1, 3, 3)), 0.02, 100, np.array([0.01, 0.03], F32),
                      np.zeros(2, np.int8), 0.05, 120, np.uint8, group=2,
                      tail=TensorProto.FLOAT)
    qlinear_conv_case(out, "qk_dwp_cast_i32_tail", rng, u8(rng, (1, 4, 9, 21)),
                      s8(rng, (4, 1, 3, 3)), 0.02, 7, 0.004, 0, 0.03, 128, np.uint8,
                      bias=rng.integers(-3000, 3000, 4), pads=(1, 1, 1, 1), group=4,
                      tail=TensorProto.INT32)
    qlinear_conv_case(out, "qk_dwp_big_plane", rng, u8(rng, (1, 2, 300, 330)),
                      s8(rng, (2, 1, 3, 3)), 0.02, 100, 0.01, 0, 0.05, 120, np.uint8,
                      pads=(1, 1, 1, 1), group=2)

    # QDQ graphs (quant-fuse). Output step = the last layer's ys.
    x = rng.uniform(-1, 1, (1, 8, 12, 12)).astype(F32)
    qdq_conv_case(out, "qdq_conv_relu_u8", x, 2 / 255, 128, np.uint8, [dict(
        w=s8(rng, (16, 8, 3, 3), -127, 128), ws=rng.uniform(0.002, 0.01, 16), wz=np.zeros(16, np.int8),
        bias="int32", b=rng.integers(-2000, 2000, 16), act="relu", ys=0.02, yz=10,
        ydt=np.uint8, pads=(1, 1, 1, 1))])
    qdq_conv_case(out, "qdq_conv_clip_s8", x, 1 / 127, -3, np.int8, [dict(
        w=s8(rng, (12, 8, 3, 3), -127, 128), ws=rng.uniform(0.005, 0.02, 12), wz=np.zeros(12, np.int8),
        bias="int32", b=rng.integers(-3000, 3000, 12), act=("clip", 0.0, 6.0), ys=6 / 255,
        yz=-128, ydt=np.int8, pads=(1, 1, 1, 1))])
    qdq_conv_case(out, "qdq_conv_float_bias_stride", x, 2 / 255, 120, np.uint8, [dict(
        w=s8(rng, (7, 8, 3, 3)), ws=0.004, wz=3, bias="float",
        b=rng.uniform(-0.5, 0.5, 7), ys=0.05, yz=128, ydt=np.uint8, strides=(2, 2),
        pads=(0, 1, 1, 0))])
    qdq_conv_case(out, "qdq_conv_chain", x, 2 / 255, 128, np.uint8, [
        dict(w=s8(rng, (16, 8, 3, 3), -127, 128), ws=rng.uniform(0.002, 0.01, 16),
             wz=np.zeros(16, np.int8), bias="int32", b=rng.integers(-2000, 2000, 16),
             act="relu", ys=0.02, yz=0, ydt=np.uint8, pads=(1, 1, 1, 1)),
        dict(w=s8(rng, (10, 8, 1, 1), -127, 128), ws=rng.uniform(0.002, 0.01, 10),
             wz=np.zeros(10, np.int8), bias="int32", b=rng.integers(-2000, 2000, 10),
             ys=0.03, yz=128, ydt=np.uint8, group=2),
    ])
    # MobileNet-style block: 1x1 expand + Clip(0,6), depthwise 3x3 + Clip, 1x1.
    qdq_conv_case(out, "qdq_mobilenet_block", x, 2 / 255, 128, np.uint8, [
        dict(w=s8(rng, (24, 8, 1, 1), -127, 128), ws=rng.uniform(0.005, 0.02, 24),
             wz=np.zeros(24, np.int8), bias="int32", b=rng.integers(-2000, 2000, 24),
             act=("clip", 0.0, 6.0), ys=6 / 255, yz=0, ydt=np.uint8),
        dict(w=s8(rng, (24, 1, 3, 3), -127, 128), ws=rng.uniform(0.01, 0.05, 24),
             wz=np.zeros(24, np.int8), bias="int32", b=rng.integers(-500, 500, 24),
             act=("clip", 0.0, 6.0), ys=6 / 255, yz=0, ydt=np.uint8, pads=(1, 1, 1, 1),
             group=24),
        dict(w=s8(rng, (8, 24, 1, 1), -127, 128), ws=rng.uniform(0.002, 0.01, 8),
             wz=np.zeros(8, np.int8), bias="int32", b=rng.integers(-2000, 2000, 8),
             ys=0.03, yz=128, ydt=np.uint8),
    ])
    # Per-channel weights along axis 1 are not a Conv's output channels: the
    # chain stays float (quant-fuse declines), still within one step.
    qdq_conv_case(out, "qdq_conv_axis1_stays_float", x, 2 / 255, 128, np.uint8, [dict(
        w=s8(rng, (8, 8, 3, 3), -127, 128), ws=np.full(8, 0.004, F32), wz=np.zeros(8, np.int8),
        w_axis=1, act="relu", ys=0.02, yz=0, ydt=np.uint8, pads=(1, 1, 1, 1))])

    # The aarch64 sdot form of the blocked kernel (qa_block: 16 channels x 4
    # pixels, runs of 4 quads by indexed sdot, the segment's last 1..3 quads
    # and last 1..3 k; int8 rows x - 128 for uint8 x). K = 45 (2 runs, 3
    # quads, 1 k) with M = 17 (a full block and 1 channel), OW = 10 (a
    # 2-pixel tile), x zero point 255, per-channel weight zero points -128 /
    # 127 / 0, int8 y at -128; int8 x at 127 with a width dilation (segments
    # of 21 = 1 run, 1 quad, 1 k) and M = 33, uint8 y at 0; a 1x1 conv with
    # K = 6 (1 quad, 2 k) and x zero point 0; QLinearMatMul with K = 19 and
    # N = 21 (y zero point 255), with N = 48 and int8 A at 127 (whole blocks:
    # one 16-byte store per row), MatMulInteger with int8 A at -128, K = 70,
    # N = 32.
    wz = rng.integers(-4, 5, 17).astype(np.int8)
    wz[:3] = [-128, 127, 0]
    qlinear_conv_case(out, "qk_arm_k45_m17", rng, u8(rng, (1, 5, 8, 10)),
                      s8(rng, (17, 5, 3, 3)), 0.02, 255, rng.uniform(0.0005, 0.002, 17), wz,
                      0.05, -128, np.int8, bias=rng.integers(-3000, 3000, 17),
                      pads=(1, 1, 1, 1))
    qlinear_conv_case(out, "qk_arm_s8x_dilated_m33", rng, s8(rng, (1, 7, 9, 15)),
                      s8(rng, (33, 7, 3, 3)), 0.03, 127, rng.uniform(0.001, 0.004, 33), 0,
                      0.2, 0, np.uint8, bias=rng.integers(-20000, 20000, 33),
                      pads=(2, 1, 2, 3), strides=(1, 2), dil=(2, 2))
    qlinear_conv_case(out, "qk_arm_1x1_k6", rng, u8(rng, (2, 6, 5, 7)), s8(rng, (19, 6, 1, 1)),
                      0.05, 0, 0.01, 0, 0.02, 128, np.uint8)
    qlinear_matmul_case(out, "qk_arm_mm_k19_n21", u8(rng, (9, 19)), s8(rng, (19, 21)),
                        0.02, 0, rng.uniform(0.002, 0.01, 21),
                        rng.integers(-128, 128, 21).astype(np.int8), 0.01, 255, np.uint8)
    qlinear_matmul_case(out, "qk_arm_mm_s8a_n48", s8(rng, (2, 7, 40)), s8(rng, (40, 48)),
                        0.03, 127, rng.uniform(0.002, 0.01, 48), np.zeros(48, np.int8),
                        0.05, -128, np.int8)
    matmul_integer_case(out, "qk_arm_mmint_s8a_k70", s8(rng, (5, 70)), s8(rng, (70, 32)), -128,
                        rng.integers(-128, 128, 32).astype(np.int8))


if __name__ == "__main__":
    main()
