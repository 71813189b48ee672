#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the quantized-region cases of issue 16 item 1 (passes/quant_fuse.c:
int8 data movement, QDQ MatMul / Gemm) into OUT_DIR, one folder per case,
with exact numpy references that follow the ONNX specs:

* DequantizeLinear: float32((q - z) * s); QuantizeLinear:
  saturate(round_half_even(x / s) + z) with the division in float32.
* Data movement (MaxPool, Reshape, Flatten, Transpose, Squeeze, Unsqueeze,
  Concat) between a DequantizeLinear and a QuantizeLinear with the same
  parameters: the reference evaluates the float graph as written
  (dequantize, move / take the max in float32, quantize), which is exactly
  the op on the integers; quant-fuse runs those ops on the int8 tensor.
  Chains whose parameters differ stay float in mlcc and in the reference.
* QDQ MatMul / Gemm -> [Relu / Clip] -> QuantizeLinear: int32 accumulation of
  (a - a_zp) * (b - b_zp) plus the int32 bias (scale a_s * b_s[n], zero point
  0), then y = saturate(round_half_even(float32(acc) * M) + y_zp),
  M = float32(float32(a_s * b_s[n]) / y_s), the activation a clamp of the
  integer result (tests/quant/qref.py's fused form, the formula of mlcc's
  kernels).

Graph outputs are the uint8 / int8 tensors, so run_case.py compares them
exactly (the issue's rule, within one step and >= 99% identical, is met with
0 steps and 100%). Each case's model has opset 13."""
import os
import sys

import numpy as np
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_case import graph, model, save_case, write_case  # noqa: E402
from make_quant_kernel_cases import quantize, u8, s8  # noqa: E402

F32 = np.float32


def dequantize(q, s, z):
    return ((q.astype(np.int32) - int(z)).astype(F32) * F32(s)).astype(F32)


def maxpool2d(x, k, s, p):
    """float or integer NCHW max pool, pads excluded from the max."""
    n, c, h, w = x.shape
    lo = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp = np.full((n, c, h + p[0] + p[2], w + p[1] + p[3]), lo, dtype=x.dtype)
    xp[:, :, p[0]:p[0] + h, p[1]:p[1] + w] = x
    oh = (h + p[0] + p[2] - k[0]) // s[0] + 1
    ow = (w + p[1] + p[3] - k[1]) // s[1] + 1
    y = np.full((n, c, oh, ow), lo, dtype=x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            y = np.maximum(y, xp[:, :, i:i + s[0] * (oh - 1) + 1:s[0],
                                 j:j + s[1] * (ow - 1) + 1:s[1]])
    return y


class Builder:
    """Accumulates nodes, initializers and a numpy evaluation side by side."""

    def __init__(self):
        self.nodes, self.inits, self.env = [], [], {}
        self.n = 0

    def const(self, name, a):
        self.inits.append((name, np.asarray(a)))
        self.env[name] = np.asarray(a)
        return name

    def fresh(self, base):
        self.n += 1
        return "%s%d" % (base, self.n)

    def node(self, op, ins, value, **attrs):
        out = self.fresh(op.lower())
        self.nodes.append(helper.make_node(op, ins, [out], **attrs))
        self.env[out] = value
        return out

    def q(self, x, s, z):
        return self.node("QuantizeLinear", [x, s, z],
                         quantize(self.env[x], self.env[s], self.env[z], self.env[z].dtype))

    def dq(self, x, s, z):
        return self.node("DequantizeLinear", [x, s, z],
                         dequantize(self.env[x], self.env[s], self.env[z]))

    def write(self, out, name, feeds, outputs):
        write_case(os.path.join(out, name), self.nodes, feeds,
                   [(o, self.env[o]) for o in outputs], self.inits)


def move_case(out, name, rng, dt, z, other_z):
    """x -> Q -> {MaxPool, Reshape, Transpose, Unsqueeze, Squeeze, Flatten,
    Concat} each between DQ and Q of equal parameters, a Q(DQ(.)) pair, and a
    MaxPool whose Q has other parameters (stays float)."""
    b = Builder()
    x = rng.uniform(-5, 5, (1, 6, 9, 9)).astype(F32)
    s, zz = b.const("s", np.array(0.03, F32)), b.const("z", np.array(z, dt))
    s2, z2 = b.const("s2", np.array(0.045, F32)), b.const("z2", np.array(other_z, dt))
    b.env["x"] = x
    q0 = b.q("x", s, zz)
    v = b.env
    mp = b.node("MaxPool", [b.dq(q0, s, zz)], maxpool2d(v[b.nodes[-1].output[0]], (3, 3),
                (2, 2), (1, 1, 1, 1)), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    q1 = b.q(mp, s, zz)                                                   # [1,6,5,5]
    shp = b.const("shp", np.array([1, 6, 25], np.int64))
    d = b.dq(q1, s, zz)
    q2 = b.q(b.node("Reshape", [d, shp], v[d].reshape(1, 6, 25)), s, zz)
    d = b.dq(q2, s, zz)
    q3 = b.q(b.node("Transpose", [d], v[d].transpose(0, 2, 1), perm=[0, 2, 1]), s, zz)
    ax = b.const("ax", np.array([1], np.int64))
    d = b.dq(q3, s, zz)
    q4 = b.q(b.node("Unsqueeze", [d, ax], v[d][:, None]), s, zz)          # [1,1,25,6]
    d = b.dq(q4, s, zz)
    q5 = b.q(b.node("Squeeze", [d, ax], v[d][:, 0]), s, zz)               # [1,25,6]
    d = b.dq(q5, s, zz)
    q6 = b.q(b.node("Flatten", [d], v[d].reshape(1, -1), axis=1), s, zz)  # [1,150]
    d = b.dq(q0, s, zz)
    q7 = b.q(b.node("Flatten", [d], v[d].reshape(1, -1), axis=1), s, zz)  # [1,486]
    d6, d7 = b.dq(q6, s, zz), b.dq(q7, s, zz)
    q8 = b.q(b.node("Concat", [d6, d7], np.concatenate([v[d6], v[d7]], 1), axis=1), s, zz)
    q9 = b.q(b.dq(q8, s, zz), s, zz)                                      # Q(DQ) = identity
    d = b.dq(q9, s, zz)
    shp2 = b.const("shp2", np.array([2, 318], np.int64))
    y0 = b.q(b.node("Reshape", [d, shp2], v[d].reshape(2, 318)), s, zz)
    # Other parameters: MaxPool stays float (DQ -> MaxPool -> Q as written).
    d = b.dq(q1, s, zz)
    y1 = b.q(b.node("MaxPool", [d], maxpool2d(v[d], (2, 2), (1, 1), (0, 0, 0, 0)),
                    kernel_shape=[2, 2]), s2, z2)
    assert np.array_equal(v[q9], v[q8])
    b.write(out, name, [("x", x)], [y0, y1])


def wrap32(acc):
    assert acc.min() >= -2**31 and acc.max() < 2**31, "int32 accumulator overflow"
    return acc.astype(np.int64)


def matmul_case(out, name, rng, a_shape, n, op="MatMul", adt=np.uint8, az=128, bdt=np.int8,
                bz=0, per_col=True, bias=None, act=None, ys=0.05, yz=128, ydt=np.uint8,
                trans_b=0, attrs=None, pow2=False):
    """x [.., M, K] float -> Q -> DQ -> MatMul / Gemm (DQ of a constant B) [+ bias]
    -> [act] -> Q -> output. bias: None, "int32" (DQ of int32, scale as * bs[n]) or
    "float" (a float32 constant); act: None, "relu", ("clip", lo, hi). attrs: extra
    Gemm attributes (transA, alpha, beta: the chain stays float); pow2 picks
    power-of-two scales so that the float evaluation is exact in any order."""
    bld = Builder()
    k = a_shape[-1]
    as_ = 2.0 ** -5 if pow2 else 0.03
    x = rng.uniform(-4, 4, a_shape).astype(F32)
    if pow2:
        x = np.round(x * 8) / 8
    a_s, a_z = bld.const("as", np.array(as_, F32)), bld.const("az", np.array(az, adt))
    bld.env["x"] = x
    a_q = bld.q("x", a_s, a_z)
    lo, hi = (-128, 128) if bdt == np.int8 else (0, 256)
    bq = rng.integers(lo, hi, (k, n)).astype(bdt)              # [K, N]
    if pow2:
        bs = np.full(n if per_col else 1, 2.0 ** -6, F32)
    else:
        bs = rng.uniform(0.002, 0.02, n if per_col else 1).astype(F32)
    bzv = np.broadcast_to(np.asarray(bz, bdt).reshape(-1), bs.shape).astype(bdt)
    stored = bq.T.copy() if trans_b else bq
    bld.const("b", stored)
    bld.const("bs", bs if per_col else bs.reshape(()))
    bld.const("bz", bzv if per_col else bzv.reshape(()))
    bsn = np.broadcast_to(bs, (n,))
    bzn = np.broadcast_to(bzv.astype(np.int64), (n,))
    bld.nodes.append(helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["db"],
                                      axis=(0 if trans_b else 1)))
    db = ((stored.astype(np.int32) - (bzv.reshape(-1, 1) if trans_b and per_col else
                                      bzv.reshape(1, -1) if per_col else bzv)).astype(F32)
          * (bs.reshape(-1, 1) if trans_b and per_col else bs.reshape(1, -1) if per_col else
             bs)).astype(F32)
    bld.env["db"] = db
    da = bld.dq(a_q, a_s, a_z)
    acc = wrap32(np.matmul(bld.env[a_q].astype(np.int64) - az, bq.astype(np.int64) - bzn))
    step = (F32(as_) * bsn).astype(F32)
    ins = [da, "db"]
    bias_f = None
    if bias == "int32":
        b32 = rng.integers(-5000, 5000, n).astype(np.int32)
        bld.const("bias", b32)
        bld.const("bias_s", step)
        bld.const("bias_z", np.zeros(n, np.int32))
        bld.nodes.append(helper.make_node("DequantizeLinear", ["bias", "bias_s", "bias_z"],
                                          ["dbias"], axis=0))
        ins.append("dbias")
        acc = wrap32(acc + b32)
        bias_f = (b32.astype(F32) * step).astype(F32)
    elif bias == "float":
        bf = rng.uniform(-1, 1, n).astype(F32)
        bld.const("bias", bf.reshape(1, n))
        ins.append("bias")
        acc = wrap32(acc + np.clip(np.rint(bf.astype(np.float64) / step.astype(np.float64)),
                                   -2**31, 2**31 - 1).astype(np.int64))
        bias_f = bf
    kw = dict(attrs or {})
    if op == "Gemm" and trans_b:
        kw["transB"] = 1
    fused = not attrs
    if kw.get("transA"):
        ins[0] = bld.node("Transpose", [da], bld.env[da].T)
        fused = False
    alpha, beta = kw.get("alpha", 1.0), kw.get("beta", 1.0)
    real = np.matmul(bld.env[ins[0]].T if kw.get("transA") else bld.env[da],
                     db.T if trans_b else db).astype(np.float64) * alpha
    if bias_f is not None:
        real = real + beta * bias_f.astype(np.float64)
    mm = bld.node(op, ins, real.astype(F32), **kw)
    ys_, yz_ = bld.const("ys", np.array(ys, F32)), bld.const("yz", np.array(yz, ydt))
    qb = lambda v: float(quantize(np.array([v], F32), ys, yz, ydt)[0])
    lo_q, hi_q = (-128, 127) if ydt == np.int8 else (0, 255)
    cur = mm
    if act == "relu":
        cur = bld.node("Relu", [mm], np.maximum(bld.env[mm], F32(0)))
        lo_q = max(lo_q, qb(0.0))
    elif isinstance(act, tuple):
        c_lo, c_hi = bld.const("clo", np.array(act[1], F32)), bld.const("chi", np.array(act[2], F32))
        cur = bld.node("Clip", [mm, c_lo, c_hi], np.clip(bld.env[mm], F32(act[1]), F32(act[2])))
        lo_q, hi_q = max(lo_q, qb(act[1])), min(hi_q, qb(act[2]))
    y = bld.q(cur, ys_, yz_)
    if fused:
        mult = ((F32(as_) * bsn).astype(F32) / F32(ys)).astype(F32)
        f = (acc.astype(F32) * mult).astype(F32)
        r = np.clip(np.rint(f.astype(np.float64)) + yz, lo_q, hi_q)
        bld.env[y] = r.astype(ydt)
    else:
        assert pow2, "a float chain needs exact (power-of-two) scales"
    bld.write(out, name, [("x", x)], [y])


def act_matmul_case(out, name, rng, a_shape, b_shape, adt, az, bdt, bz, ys, yz, ydt,
                    a_range=4.0, b_range=4.0, both_ends=True):
    """Two float inputs x [.., M, K] and w [.., K, N] -> Q -> DQ -> MatMul -> Q:
    activation x activation (attention's QK^T and AV), B a run-time tensor with
    a per-tensor zero point. quant-fuse makes it one QLinearMatMul, which runs
    quant.c's row form (k outer, n inner, whole vectors of int32
    accumulators, then a scalar tail). Reference: int32 sum of (a - a_zp) *
    (b - b_zp), y = saturate(round_half_even(float32(acc) * M) + y_zp),
    M = float32(float32(a_s * b_s) / y_s)."""
    bld = Builder()
    as_, bs_ = 0.03, 0.02
    x = rng.uniform(-a_range, a_range, a_shape).astype(F32)
    w = rng.uniform(-b_range, b_range, b_shape).astype(F32)
    bld.env["x"], bld.env["w"] = x, w
    a_s, a_z = bld.const("as", np.array(as_, F32)), bld.const("az", np.array(az, adt))
    b_s, b_z = bld.const("bs", np.array(bs_, F32)), bld.const("bz", np.array(bz, bdt))
    a_q, b_q = bld.q("x", a_s, a_z), bld.q("w", b_s, b_z)
    da, db = bld.dq(a_q, a_s, a_z), bld.dq(b_q, b_s, b_z)
    mm = bld.node("MatMul", [da, db], np.matmul(bld.env[da], bld.env[db]).astype(F32))
    ys_, yz_ = bld.const("ys", np.array(ys, F32)), bld.const("yz", np.array(yz, ydt))
    y = bld.q(mm, ys_, yz_)
    acc = wrap32(np.matmul(bld.env[a_q].astype(np.int64) - az,
                           bld.env[b_q].astype(np.int64) - bz))
    mult = (F32(F32(as_) * F32(bs_)) / F32(ys)).astype(F32)
    f = (acc.astype(F32) * mult).astype(F32)
    lo_q, hi_q = (-128, 127) if ydt == np.int8 else (0, 255)
    bld.env[y] = np.clip(np.rint(f.astype(np.float64)) + yz, lo_q, hi_q).astype(ydt)
    lo_hit, hi_hit = (bld.env[y] == lo_q).any(), (bld.env[y] == hi_q).any()
    assert (lo_hit and hi_hit) if both_ends else lo_hit, "no saturation"
    bld.write(out, name, [("x", x), ("w", w)], [y])


def sigmoid_case(out, name, rng, shape, xdt, xs, xz, ys, yz, ydt):
    """x float -> Q -> DQ -> Sigmoid -> Q -> output: quant-fuse's QLookup (a
    256-entry table). Reference: the float graph in the specs' float32 steps,
    the sigmoid as float32(1 / (1 + exp(-v))) evaluated in float64 and rounded
    once (the formula the table is computed with), QuantizeLinear dividing in
    float32 with round half to even and saturation. Every one of the 256 input
    values occurs (the x range covers the whole int8 range and beyond)."""
    bld = Builder()
    lo_x = (np.iinfo(xdt).min - xz - 4) * xs
    hi_x = (np.iinfo(xdt).max - xz + 4) * xs
    x = rng.uniform(lo_x, hi_x, shape).astype(F32)
    # one element per quantized value, so the table is checked entry by entry
    qvals = np.arange(np.iinfo(xdt).min, np.iinfo(xdt).max + 1)
    x.reshape(-1)[:256] = ((qvals - xz) * xs).astype(F32)
    bld.env["x"] = x
    x_s, x_z = bld.const("xs", np.array(xs, F32)), bld.const("xz", np.array(xz, xdt))
    xq = bld.q("x", x_s, x_z)
    d = bld.dq(xq, x_s, x_z)
    v = bld.env[d].astype(np.float64)
    sig = (1.0 / (1.0 + np.exp(-v))).astype(F32)
    sg = bld.node("Sigmoid", [d], sig)
    y_s, y_z = bld.const("ys", np.array(ys, F32)), bld.const("yz", np.array(yz, ydt))
    y = bld.q(sg, y_s, y_z)
    yq = bld.env[y]
    assert len(np.unique(bld.env[xq])) == 256, "not every input value"
    info = np.iinfo(ydt)
    assert (yq == info.max).any() or (yq == info.min).any(), "no saturation"
    bld.write(out, name, [("x", x)], [y])


# ---------------------------------------------------------------------------
# int8 Add / Mul, average pools, Concat of other parameters (issues 16, 17):
# quant-fuse's QLinearAdd / QLinearMul / QLinearGlobalAveragePool /
# QLinearAveragePool / QLinearConcat (com.microsoft opset 1). Each case is
# written twice: the QDQ graph (qg_<name>, which quant-fuse rewrites) and
# the same computation with the contrib op itself (qg_<name>_qop, the
# QOperator form onnxruntime runs; tests/quant/ort_contrib_check.py
# compares onnxruntime with the reference on those). The reference is the
# formula mlcc's kernels compute (targets/kernels/qelementwise.c):
# * Add / Mul / Concat: the float graph, operation for operation in float32
#   (DQ, the op, Q with a float32 division); a Relu is a clamp at the zero
#   point (exact).
# * pools: the exact integer sum, y = saturate(rne(float32(acc) *
#   float32(xs / float32(ys * n))) + yz). The float graph (DQ -> pool -> Q)
#   is asserted to be within one step of it on >= 99% identical elements.
# ---------------------------------------------------------------------------


def pair_case(out, name, b, qnodes, feeds, outputs, inits_extra=()):
    """Writes the QDQ case |name| from Builder |b| and the QOperator case
    |name|_qop whose nodes are |qnodes| (same feeds, outputs, references)."""
    b.write(out, name, feeds, outputs)
    ref = [(o, b.env[o]) for o in outputs]
    g = graph(qnodes, name + "_qop", feeds, ref, list(b.inits) + list(inits_extra))
    save_case(os.path.join(out, name + "_qop"),
              model(g, opsets=[("", 13), ("com.microsoft", 1)]), [(feeds, ref)])


def qop(op, ins, out, **attrs):
    return helper.make_node(op, ins, [out], domain="com.microsoft", **attrs)


def qparams(b, tag, s, z, dt):
    return b.const("s" + tag, np.array(s, F32)), b.const("z" + tag, np.array(z, dt))


def binary_case(out, name, rng, op, a_shape, b_shape, dt, pa, pb, pc, relu=False, lo=-3, hi=3):
    """x, w float -> Q -> DQ -> Add | Mul (numpy broadcast) -> [Relu] -> Q -> y.
    pa, pb, pc: (scale, zero point) of A, B and the output."""
    b = Builder()
    xa = rng.uniform(lo, hi, a_shape).astype(F32)
    xb = rng.uniform(lo, hi, b_shape).astype(F32)
    b.env["xa"], b.env["xb"] = xa, xb
    sa, za = qparams(b, "a", *pa, dt)
    sb, zb = qparams(b, "b", *pb, dt)
    sc, zc = qparams(b, "c", *pc, dt)
    qa, qb = b.q("xa", sa, za), b.q("xb", sb, zb)
    da, db = b.dq(qa, sa, za), b.dq(qb, sb, zb)
    f = b.env[da] + b.env[db] if op == "Add" else b.env[da] * b.env[db]
    cur = b.node(op, [da, db], f.astype(F32))
    if relu:
        cur = b.node("Relu", [cur], np.maximum(b.env[cur], F32(0)))
    y = b.q(cur, sc, zc)
    qn = [n for n in b.nodes if n.output[0] in (qa, qb)]
    qn.append(qop("QLinear" + op, [qa, sa, za, qb, sb, zb, sc, zc], y))
    if relu:  # the contrib op has no activation: the QOperator form clamps after
        return b.write(out, name, [("xa", xa), ("xb", xb)], [y])
    pair_case(out, name, b, qn, [("xa", xa), ("xb", xb)], [y])


def pool_ref(xq, xs, xz, ys, yz, dt, sums, counts):
    """The kernels' formula from integer window sums and divisors."""
    m = (F32(xs) / (F32(ys) * counts.astype(F32))).astype(F32)
    f = (sums.astype(F32) * m).astype(F32)
    lo, hi = (-128, 127) if dt == np.int8 else (0, 255)
    return np.clip(np.rint(f.astype(np.float64)) + int(yz), lo, hi).astype(dt)


def avgpool_windows(x, k, s, p, ceil_mode, include_pad):
    """(sums, counts) of a 2-D NCHW average pool over int64 |x| (pads
    excluded from the sums; counts per count_include_pad)."""
    n, c, h, w = x.shape
    def odim(i, kk, ss, p0, p1):
        num = i + p0 + p1 - kk
        return (-(-num // ss) if ceil_mode else num // ss) + 1
    oh, ow = odim(h, k[0], s[0], p[0], p[2]), odim(w, k[1], s[1], p[1], p[3])
    sums = np.zeros((n, c, oh, ow), x.dtype)
    counts = np.zeros((n, c, oh, ow), np.int64)
    for i in range(oh):
        for j in range(ow):
            for a in range(k[0]):
                for bb in range(k[1]):
                    r, q = i * s[0] - p[0] + a, j * s[1] - p[1] + bb
                    inside = 0 <= r < h and 0 <= q < w
                    padded = -p[0] <= r < h + p[2] and -p[1] <= q < w + p[3]
                    if inside:
                        sums[:, :, i, j] += x[:, :, r, q]
                    if inside or (include_pad and padded):
                        counts[:, :, i, j] += 1
    return sums, np.maximum(counts, 1)


def pool_case(out, name, rng, dt, shape, px, py, kind="gap", **attrs):
    """x float -> Q -> DQ -> GlobalAveragePool | AveragePool -> Q -> y."""
    b = Builder()
    x = rng.uniform(-4, 4, shape).astype(F32)
    b.env["x"] = x
    sx, zx = qparams(b, "x", *px, dt)
    sy, zy = qparams(b, "y", *py, dt)
    qx = b.q("x", sx, zx)
    d = b.dq(qx, sx, zx)
    xi = b.env[qx].astype(np.int64) - int(px[1])
    if kind == "gap":
        sums = xi.sum(axis=(2, 3), keepdims=True)
        counts = np.full(sums.shape, shape[2] * shape[3], np.int64)
        fl = b.env[d].astype(np.float64).mean(axis=(2, 3), keepdims=True).astype(F32)
        pool = b.node("GlobalAveragePool", [d], fl)
        qn_op = qop("QLinearGlobalAveragePool", [qx, sx, zx, sy, zy], "y_out")
    else:
        k, st, p = attrs["kernel_shape"], attrs.get("strides", [1, 1]), attrs.get("pads", [0] * 4)
        cm, cip = attrs.get("ceil_mode", 0), attrs.get("count_include_pad", 0)
        sums, counts = avgpool_windows(xi, k, st, p, cm, cip)
        fsum, _ = avgpool_windows(b.env[d].astype(np.float64), k, st, p, cm, cip)
        fl = (fsum / counts).astype(F32)
        pool = b.node("AveragePool", [d], fl, **attrs)
        qn_op = qop("QLinearAveragePool", [qx, sx, zx, sy, zy], "y_out", **attrs)
    y = b.q(pool, sy, zy)
    float_graph = b.env[y]
    b.env[y] = pool_ref(b.env[qx], px[0], px[1], py[0], py[1], dt, sums, counts)
    diff = np.abs(float_graph.astype(np.int64) - b.env[y].astype(np.int64))
    assert diff.max() <= 1 and (diff == 0).mean() >= 0.99, (name, diff.max(), (diff == 0).mean())
    qn_op.output[0] = y
    pair_case(out, name, b, [b.nodes[0], qn_op], [("x", x)], [y])


def concat_case(out, name, rng, dt, shapes, params, py, axis):
    """x_i float -> Q_i -> DQ_i -> Concat -> Q (other parameters) -> y."""
    b = Builder()
    feeds, ds, qn, trip = [], [], [], []
    for i, (shp, pr) in enumerate(zip(shapes, params)):
        x = rng.uniform(-4, 4, shp).astype(F32)
        b.env["x%d" % i] = x
        feeds.append(("x%d" % i, x))
        sx, zx = qparams(b, "x%d" % i, *pr, dt)
        qx = b.q("x%d" % i, sx, zx)
        qn.append(b.nodes[-1])
        ds.append(b.dq(qx, sx, zx))
        trip += [qx, sx, zx]
    sy, zy = qparams(b, "y", *py, dt)
    cat = b.node("Concat", ds, np.concatenate([b.env[d] for d in ds], axis), axis=axis)
    y = b.q(cat, sy, zy)
    qn.append(qop("QLinearConcat", [sy, zy] + trip, y, axis=axis))
    pair_case(out, name, b, qn, feeds, [y])


def shared_dq_case(out, name, rng):
    """A DequantizeLinear read by an Add and by a MaxPool (equal parameters):
    the Add becomes QLinearAdd, the MaxPool int8 data movement, and the
    DequantizeLinear goes (no float reader left)."""
    b = Builder()
    x = rng.uniform(-2, 2, (1, 4, 6, 6)).astype(F32)
    b.env["x"] = x
    s, z = qparams(b, "", 0.02, 120, np.uint8)
    s2, z2 = qparams(b, "2", 0.035, 10, np.uint8)
    qx = b.q("x", s, z)
    d = b.dq(qx, s, z)
    mp = b.node("MaxPool", [d], maxpool2d(b.env[d], (2, 2), (2, 2), (0, 0, 0, 0)),
                kernel_shape=[2, 2], strides=[2, 2])
    y0 = b.q(mp, s, z)
    add = b.node("Add", [d, d], (b.env[d] + b.env[d]).astype(F32))
    y1 = b.q(b.node("Relu", [add], np.maximum(b.env[add], F32(0))), s2, z2)
    b.write(out, name, [("x", x)], [y0, y1])


def ew_cases(out, rng):
    u8, i8 = np.uint8, np.int8
    binary_case(out, "qg_add_u8", rng, "Add", (1, 8, 7, 9), (1, 8, 7, 9), u8,
                (0.025, 128), (0.031, 100), (0.05, 120))
    binary_case(out, "qg_add_relu_u8", rng, "Add", (2, 5, 13), (2, 5, 13), u8,
                (0.025, 128), (0.031, 100), (0.03, 0), relu=True)
    # Broadcast; int8 zero points at the ends; a small output scale saturates both ends.
    binary_case(out, "qg_add_bcast_s8", rng, "Add", (2, 3, 5, 7), (3, 1, 7), i8,
                (0.03, -128), (0.02, 127), (0.01, 0))
    binary_case(out, "qg_add_bcast_u8_zp0_255", rng, "Add", (3, 1), (1, 37), u8,
                (0.03, 0), (0.02, 255), (0.015, 128))
    binary_case(out, "qg_mul_chan_u8", rng, "Mul", (1, 6, 5, 11), (1, 6, 1, 1), u8,
                (0.02, 128), (0.01, 0), (0.04, 128))
    # Scales without exact ratios: with a_s * b_s / c_s = 0.125 exactly, many
    # results are exact ties that onnxruntime's order (integer product times
    # the ratio) rounds to even and the float graph's rounded products do not.
    binary_case(out, "qg_mul_s8_sat", rng, "Mul", (4, 33), (4, 33), i8,
                (0.0517, -128), (0.0483, 127), (0.0213, -3))
    binary_case(out, "qg_mul_scalar_s8", rng, "Mul", (2, 3, 19), (1,), i8,
                (0.02, 5), (0.03, -7), (0.02, 0))
    pool_case(out, "qg_gap_u8", rng, u8, (1, 5, 6, 7), (0.03, 128), (0.01, 128))
    pool_case(out, "qg_gap_s8_sat", rng, i8, (2, 3, 25, 5), (0.03, -128), (0.004, 127))
    pool_case(out, "qg_avgpool_u8", rng, u8, (1, 4, 9, 10), (0.0313, 128), (0.0217, 100),
              kind="avg", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    pool_case(out, "qg_avgpool_s8_ceil", rng, i8, (1, 3, 8, 7), (0.0271, 0), (0.0193, -128),
              kind="avg", kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1], ceil_mode=1)
    pool_case(out, "qg_avgpool_s8_incl_pad", rng, i8, (1, 3, 8, 7), (0.0271, 0), (0.0193, -128),
              kind="avg", kernel_shape=[3, 3], strides=[2, 1], pads=[1, 1, 1, 1],
              count_include_pad=1)
    concat_case(out, "qg_concat_u8", rng, u8, [(1, 3, 4, 5), (1, 2, 4, 5), (1, 1, 4, 5)],
                [(0.03, 128), (0.05, 0), (0.02, 255)], (0.04, 128), 1)
    concat_case(out, "qg_concat_s8_last", rng, i8, [(2, 3, 7), (2, 3, 1)],
                [(0.03, -128), (0.01, 127)], (0.03, -128), -1)
    shared_dq_case(out, "qg_add_shared_dq", rng)


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(1601)
    move_case(out, "qg_move_u8", rng, np.uint8, 128, 3)
    # Zero points at the ends of the int8 range; x saturates at both ends.
    move_case(out, "qg_move_s8_zp127", rng, np.int8, 127, 0)
    move_case(out, "qg_move_s8_zpm128", rng, np.int8, -128, 0)
    # QDQ MatMul / Gemm -> QLinearMatMul with int32 bias and fused activation.
    matmul_case(out, "qg_matmul_percol", rng, (5, 37), 19)
    matmul_case(out, "qg_matmul_batched_relu", rng, (2, 3, 7, 16), 9, act="relu", ys=0.02, yz=0,
                per_col=False, bz=3)
    matmul_case(out, "qg_gemm_transb_bias_clip", rng, (4, 33), 13, op="Gemm", trans_b=1,
                bias="int32", act=("clip", 0.0, 6.0), ys=6 / 255, yz=0)
    matmul_case(out, "qg_gemm_float_bias_s8", rng, (3, 20), 11, op="Gemm", adt=np.int8, az=-128,
                bias="float", ys=0.2, yz=127, ydt=np.int8)
    # Saturation at both ends (large multiplier), uint8 weights with zero point 255, K = 1.
    matmul_case(out, "qg_matmul_saturate_u8w", rng, (6, 1), 17, bdt=np.uint8, bz=255, ys=0.002,
                yz=128)
    matmul_case(out, "qg_gemm_k1000_zp0", rng, (2, 1000), 7, op="Gemm", az=0, trans_b=1,
                bias="int32", ys=0.5, yz=0, ydt=np.int8)
    # Declined (stay float): transA, alpha != 1; exact power-of-two scales.
    matmul_case(out, "qg_gemm_transa_float", rng, (6, 4), 5, op="Gemm", attrs={"transA": 1},
                pow2=True, ys=2.0 ** -3, yz=100)
    matmul_case(out, "qg_gemm_alpha_float", rng, (4, 6), 5, op="Gemm", attrs={"alpha": 0.5},
                bias="int32", pow2=True, ys=2.0 ** -3, yz=100)
    ew_cases(out, rng)
    rng2 = np.random.default_rng(1602)  # its own stream: the cases above keep their data
    # Activation x activation (run-time B): N = 19 (vectors and a tail), int8 B with
    # zero point -3, y saturating at both ends; a broadcast 2-D B, uint8 with zero point
    # 255 (all b - b_zp <= 0, so y saturates low), N = 40, int8 y.
    act_matmul_case(out, "qg_matmul_act_s8", rng2, (2, 3, 5, 37), (2, 3, 37, 19), np.uint8, 128,
                    np.int8, -3, 0.05, 128, np.uint8)
    act_matmul_case(out, "qg_matmul_act_bcast_u8", rng2, (3, 6, 24), (24, 40), np.uint8, 0,
                    np.uint8, 255, 0.02, 10, np.int8, b_range=6.0,
                    both_ends=False)
    # int8 Sigmoid (QLookup): uint8 -> uint8 with the output saturating at 255
    # (ys below 1/255), int8 x with zero point 127 -> int8 y with zero point -128.
    sigmoid_case(out, "qg_sigmoid_u8", rng2, (2, 3, 7, 11), np.uint8, 0.05, 128, 0.0035, 3,
                 np.uint8)
    sigmoid_case(out, "qg_sigmoid_s8", rng2, (5, 61), np.int8, 0.04, 127, 1.0 / 256, -128,
                 np.int8)
    return 0


if __name__ == "__main__":
    sys.exit(main())
