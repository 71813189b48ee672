#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes edge-case tests (ONNX backend-test layout) with numpy references for
the operators added with issue 5: valid but unusual models (empty tensors,
size-1 dims, negative axes, per-axis parameters, zero-length sequences,
out-of-range lengths, sparse TfIdf coordinates, ...). Found by
tests/bad/make_new_op_cases.py's sweep; each case is checked for values by
tests/e2e/run_case.py.

Usage: make_new_op_edge_cases.py OUT_DIR [NAME_REGEX]  (writes OUT_DIR/ne_<name>)
"""
import os
import re
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_case  # noqa: E402

CASES = {}
rng = np.random.default_rng(11)


def case(fn):
    CASES[fn.__name__] = fn
    return fn


vi = onnx_case.value_info_of


def write(root, name, nodes, feeds, outputs, inits=(), opset=13, datasets=None):
    """feeds/outputs: [(name, array)]; more data sets as [(feeds, outputs)]."""
    onnx_case.write_case(os.path.join(root, "ne_" + name), nodes, feeds, outputs, inits, opset,
                         8, datasets, name=name)


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


# ----------------------------------------------------------------------------
# TfIdfVectorizer
# ----------------------------------------------------------------------------
def tfidf_ref(x, mode, min_g, max_g, max_skip, pool, counts, indexes, weights=None):
    """ONNX TfIdfVectorizer-9 (integer pool): counts of each pool n-gram
    (n in [min_g, max_g]; 1-grams once per token, longer ones once per
    (start, skip) with skip in [0, max_skip]); a repeated pool n-gram counts
    into the coordinate of its first occurrence only."""
    grams = {}
    for k, start in enumerate(counts):
        end = counts[k + 1] if k + 1 < len(counts) else len(pool)
        n = k + 1
        for p in range(start, end, n):
            grams.setdefault(tuple(pool[p:p + n]), len(grams))
    # map n-gram -> (number in pool order) -> index/weight
    order = []
    for k, start in enumerate(counts):
        end = counts[k + 1] if k + 1 < len(counts) else len(pool)
        for p in range(start, end, k + 1):
            order.append(tuple(pool[p:p + k + 1]))
    first = {}
    for i, gtok in enumerate(order):
        first.setdefault(gtok, i)
    dim = max(indexes) + 1 if len(indexes) else 0
    x2 = x.reshape(-1, x.shape[-1]) if x.ndim == 2 else x.reshape(1, -1)
    out = np.zeros((x2.shape[0], dim), np.float32)
    w = weights if weights is not None else [1.0] * len(indexes)
    for r in range(x2.shape[0]):
        row = [int(v) for v in x2[r]]
        cnt = np.zeros(len(order))
        for n in range(min_g, max_g + 1):
            skips = [0] if n == 1 else range(min(max_skip, len(row)) + 1)
            for s in skips:
                step = s + 1
                for st in range(len(row)):
                    if st + (n - 1) * step >= len(row):
                        break
                    tok = tuple(row[st + k * step] for k in range(n))
                    if tok in first:
                        cnt[first[tok]] += 1
        for i in range(len(order)):
            if first[order[i]] != i:
                continue
            c = cnt[i]
            if mode == "TF":
                v = c
            elif mode == "IDF":
                v = w[i] if c > 0 else 0
            else:
                v = c * w[i]
            out[r, indexes[i]] += v
    return out.reshape(x.shape[:-1] + (dim,)) if x.ndim == 2 else out.reshape(dim)


def tfidf_case(root, name, x, mode="TF", min_g=1, max_g=2, max_skip=1,
               pool=(2, 3, 5, 4, 5, 6, 7, 8, 6, 7), counts=(0, 4), indexes=None, weights=None):
    pool, counts = list(pool), list(counts)
    n_grams = 0
    for k, start in enumerate(counts):
        end = counts[k + 1] if k + 1 < len(counts) else len(pool)
        n_grams += (end - start) // (k + 1)
    indexes = list(indexes) if indexes is not None else list(range(n_grams))
    attrs = dict(mode=mode, min_gram_length=min_g, max_gram_length=max_g,
                 max_skip_count=max_skip, pool_int64s=pool, ngram_counts=counts,
                 ngram_indexes=indexes)
    if weights is not None:
        attrs["weights"] = list(weights)
    y = tfidf_ref(x, mode, min_g, max_g, max_skip, pool, counts, indexes, weights)
    write(root, name, [node("TfIdfVectorizer", ["x"], ["y"], **attrs)], [("x", x)], [("y", y)])


@case
def tfidf_sparse_coords(root):
    # Coordinates far apart (most of the row is zero), out of pool order, and
    # two n-grams sharing a coordinate.
    x = np.array([[2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 5, 6], [7, 8, 2, 2, 3, 4, 6, 7, 5, 6, 3, 5]],
                 np.int64)
    tfidf_case(root, "tfidf_sparse_coords", x, indexes=[900, 3, 3, 77, 0, 512, 2],
               mode="TFIDF", weights=[.5, 2, 3, 4, 5, 6, 7])


@case
def tfidf_repeated_ngrams(root):
    # The pool repeats 1-gram 5 and 2-gram (5,6): only the first copy counts.
    x = np.array([5, 6, 5, 6, 2, 5, 2, 6], np.int32)
    tfidf_case(root, "tfidf_repeated_ngrams", x, pool=[5, 2, 5, 6, 5, 6, 2, 5, 5, 6],
               counts=[0, 4], mode="IDF", weights=[1., 2, 3, 4, 5, 6, 7], max_skip=2)


@case
def tfidf_many_ngrams(root):
    # 3000 1-grams and 2000 2-grams mapped to shuffled coordinates.
    uni = list(range(100, 3100))
    bi = [int(v) for v in rng.integers(0, 40, 4000)]
    idx = [int(v) for v in rng.permutation(5000)]
    x = rng.integers(0, 3200, (3, 64)).astype(np.int64)
    x[:, ::3] = rng.integers(0, 40, x[:, ::3].shape)
    tfidf_case(root, "tfidf_many_ngrams", x, pool=uni + bi, counts=[0, 3000], indexes=idx,
               max_skip=3)


@case
def tfidf_one_col(root):
    tfidf_case(root, "tfidf_one_col", np.array([[5], [6]], np.int64), max_skip=1 << 40)


@case
def tfidf_only_bigrams_min2(root):
    x = np.array([[2, 3, 5, 4, 5, 6, 7, 8, 6, 7]], np.int64)
    tfidf_case(root, "tfidf_only_bigrams_min2", x, min_g=2, max_g=2, max_skip=5,
               indexes=[40, 1, 2, 30, 0, 50, 20])


# ----------------------------------------------------------------------------
# Quantization
# ----------------------------------------------------------------------------
def quant_ref(x, s, zp, axis, qdt):
    lo, hi = (-128, 127) if qdt == np.int8 else (0, 255)
    if np.ndim(s) == 1 and x.ndim:
        shape = [1] * x.ndim
        shape[axis] = -1
        s = np.reshape(s, shape)
        zp = np.reshape(zp, shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.rint(x.astype(np.float32) / np.float32(s)) + zp
    return np.clip(np.nan_to_num(v, nan=lo, posinf=hi, neginf=lo), lo, hi).astype(qdt)


@case
def quant_per_axis_neg(root):
    x = (rng.standard_normal((2, 3, 4)) * 40).astype(np.float32)
    s = np.array([0.5, 1.0, 2.0, 0.25], np.float32)
    zp = np.array([-3, 0, 10, 127], np.int8)
    write(root, "quant_per_axis_neg", [node("QuantizeLinear", ["x", "s", "zp"], ["y"], axis=-1)],
          [("x", x)], [("y", quant_ref(x, s, zp, 2, np.int8))], [("s", s), ("zp", zp)])


@case
def quant_saturate_inf(root):
    # +-inf and huge values saturate; scale 0 makes x/0 = +-inf (0/0 is NaN:
    # not in the data).
    x = np.array([[np.inf, -np.inf, 1e30, -1e30, 2.5, -2.5, 3.5]], np.float32)
    s = np.array([0.5], np.float32)
    zp = np.array([128], np.uint8)
    write(root, "quant_saturate_inf", [node("QuantizeLinear", ["x", "s", "zp"], ["y"])],
          [("x", x)], [("y", quant_ref(x, s[0], zp[0], 0, np.uint8))], [("s", s), ("zp", zp)])


@case
def quant_scalar_and_empty(root):
    x = np.array(3.7, np.float32)
    e = np.zeros((0, 3), np.float32)
    s, zp = np.float32(0.5), np.uint8(1)
    write(root, "quant_scalar_and_empty",
          [node("QuantizeLinear", ["x", "s", "zp"], ["y"]),
           node("QuantizeLinear", ["e", "s", "zp"], ["f"])],
          [("x", x), ("e", e)],
          [("y", quant_ref(x, s, zp, 0, np.uint8)), ("f", np.zeros((0, 3), np.uint8))],
          [("s", s), ("zp", zp)])


@case
def dequant_per_axis_int32(root):
    x = rng.integers(-1000, 1000, (3, 2)).astype(np.int32)
    s = np.array([0.5, 0.25, 2.0], np.float32)
    zp = np.array([0, 0, 0], np.int32)
    y = (x.astype(np.float32) * s[:, None]).astype(np.float32)
    write(root, "dequant_per_axis_int32",
          [node("DequantizeLinear", ["x", "s", "zp"], ["y"], axis=0)], [("x", x)], [("y", y)],
          [("s", s), ("zp", zp)])


def dyn_quant_ref(x):
    mn = min(0.0, float(x.min())) if x.size else 0.0
    mx = max(0.0, float(x.max())) if x.size else 0.0
    scale = np.float32((mx - mn) / 255) if mx != mn else np.float32(1)
    zp = np.uint8(np.rint(np.clip(0 - np.float32(mn) / scale, 0, 255)))
    y = np.clip(np.rint(x / scale) + zp, 0, 255).astype(np.uint8)
    return y, np.array(scale, np.float32), np.array(zp, np.uint8)


@case
def dynquant_edges(root):
    sets = []
    for x in (np.zeros((2, 3), np.float32), -np.abs(rng.standard_normal((2, 3))).astype(np.float32),
              np.abs(rng.standard_normal((2, 3))).astype(np.float32) + 1,
              rng.standard_normal((2, 3)).astype(np.float32)):
        y, s, z = dyn_quant_ref(x)
        sets.append(([("x", x)], [("y", y), ("s", s), ("z", z)]))
    write(root, "dynquant_edges", [node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])],
          sets[0][0], sets[0][1], opset=11, datasets=sets)


def qmm_ref(a, az, b, bz, as_, bs, ys, yz, per_row_a=False, per_col_b=False):
    a32 = a.astype(np.int64) - (np.reshape(az, (-1, 1)) if per_row_a else az)
    b32 = b.astype(np.int64) - (np.reshape(bz, (1, -1)) if per_col_b else bz)
    acc = np.matmul(a32, b32).astype(np.float32)
    sa = np.reshape(as_, (-1, 1)) if per_row_a else as_
    sb = np.reshape(bs, (1, -1)) if per_col_b else bs
    mult = (np.float32(sa) * np.float32(sb) / np.float32(ys)).astype(np.float32)
    lo, hi = (0, 255) if yz.dtype == np.uint8 else (-128, 127)
    return np.clip(np.rint(acc * mult) + yz, lo, hi).astype(yz.dtype)


@case
def qmm_per_row_col(root):
    a = rng.integers(0, 256, (3, 5)).astype(np.uint8)
    b = rng.integers(-128, 128, (5, 4)).astype(np.int8)
    as_ = np.array([0.02, 0.05, 0.1], np.float32)
    az = np.array([128, 100, 3], np.uint8)
    bs = np.array([0.1, 0.2, 0.05, 0.3], np.float32)
    bz = np.array([0, -5, 7, 1], np.int8)
    ys, yz = np.float32(0.5), np.int8(-3)
    y = qmm_ref(a, az, b, bz, as_, bs, ys, yz, True, True)
    write(root, "qmm_per_row_col",
          [node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])],
          [("a", a), ("b", b)], [("y", y)],
          [("as", as_), ("az", az), ("bs", bs), ("bz", bz), ("ys", ys), ("yz", yz)])


@case
def qmm_batch_bcast(root):
    a = rng.integers(0, 256, (2, 1, 3, 4)).astype(np.uint8)
    b = rng.integers(0, 256, (5, 4, 2)).astype(np.uint8)
    y = qmm_ref(a, np.uint8(7), b, np.uint8(250), np.float32(.03), np.float32(.02),
                np.float32(.4), np.uint8(9))
    write(root, "qmm_batch_bcast",
          [node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])],
          [("a", a), ("b", b)], [("y", y)],
          [("as", np.float32(.03)), ("az", np.uint8(7)), ("bs", np.float32(.02)),
           ("bz", np.uint8(250)), ("ys", np.float32(.4)), ("yz", np.uint8(9))])


@case
def mmi_edges(root):
    a = rng.integers(-128, 128, (3, 4)).astype(np.int8)
    b = rng.integers(0, 256, (4,)).astype(np.uint8)
    az = np.array([1, -2, 3], np.int8)
    y = np.matmul(a.astype(np.int32) - az[:, None], b.astype(np.int32) - 200).astype(np.int32)
    k0a, k0b = np.zeros((2, 0), np.uint8), np.zeros((0, 3), np.uint8)
    write(root, "mmi_edges",
          [node("MatMulInteger", ["a", "b", "az", "bz"], ["y"]),
           node("MatMulInteger", ["k0a", "k0b"], ["z"])],
          [("a", a), ("b", b), ("k0a", k0a), ("k0b", k0b)],
          [("y", y), ("z", np.zeros((2, 3), np.int32))],
          [("az", az), ("bz", np.uint8(200))])


def conv_ref(x, w, pads, strides, group):
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - kh) // strides[0] + 1
    ow = (xp.shape[3] - kw) // strides[1] + 1
    y = np.zeros((n, m, oh, ow), np.int64)
    mg = m // group
    for mo in range(m):
        gi = mo // mg
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, gi * cg:(gi + 1) * cg, i * strides[0]:i * strides[0] + kh,
                           j * strides[1]:j * strides[1] + kw]
                y[:, mo, i, j] = (patch * w[mo]).reshape(n, -1).sum(1)
    return y


@case
def qconv_group_pads_per_channel(root):
    x = rng.integers(0, 256, (2, 4, 5, 6)).astype(np.uint8)
    w = rng.integers(-128, 128, (6, 2, 3, 2)).astype(np.int8)
    xz, wz = np.uint8(120), np.array([0, 1, -1, 2, 0, 5], np.int8)
    xs, ws = np.float32(0.05), np.array([.01, .02, .03, .01, .02, .04], np.float32)
    ys, yz = np.float32(0.3), np.uint8(100)
    bias = rng.integers(-500, 500, 6).astype(np.int32)
    pads, strides = [1, 0, 2, 1], [2, 1]
    acc = conv_ref(x.astype(np.int64) - xz, w.astype(np.int64) - wz[:, None, None, None],
                   pads, strides, 2)
    # Padding holds x_zero_point, i.e. 0 after the subtraction: conv_ref pads zeros.
    acc = acc + bias[None, :, None, None]
    mult = (xs * ws / ys).astype(np.float32)[None, :, None, None]
    y = np.clip(np.rint(acc.astype(np.float32) * mult) + yz, 0, 255).astype(np.uint8)
    write(root, "qconv_group_pads_per_channel",
          [node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"],
                group=2, pads=pads, strides=strides)],
          [("x", x)], [("y", y)],
          [("xs", xs), ("xz", xz), ("w", w), ("ws", ws), ("wz", wz), ("ys", ys), ("yz", yz),
           ("b", bias)])


@case
def convint_empty_and_1x1(root):
    x = rng.integers(0, 256, (1, 3, 1, 1)).astype(np.uint8)
    w = rng.integers(0, 256, (2, 3, 1, 1)).astype(np.uint8)
    y = conv_ref(x.astype(np.int64) - 9, w.astype(np.int64) - 4, [0] * 4, [1, 1], 1)
    e = np.zeros((0, 3, 1, 1), np.uint8)
    write(root, "convint_empty_and_1x1",
          [node("ConvInteger", ["x", "w", "xz", "wz"], ["y"]),
           node("ConvInteger", ["e", "w", "xz", "wz"], ["f"])],
          [("x", x), ("e", e)], [("y", y.astype(np.int32)), ("f", np.zeros((0, 2, 1, 1), np.int32))],
          [("w", w), ("xz", np.uint8(9)), ("wz", np.uint8(4))])


# ----------------------------------------------------------------------------
# Signal
# ----------------------------------------------------------------------------
def dft_ref(x, n=None, axis=1, inverse=False, onesided=False):
    c = x[..., 0] + (1j * x[..., 1] if x.shape[-1] == 2 else 0)
    c = c.astype(np.complex128)
    ax = axis if axis >= 0 else axis + x.ndim
    n = n or c.shape[ax]
    y = np.fft.ifft(c, n=n, axis=ax) if inverse else np.fft.fft(c, n=n, axis=ax)
    if onesided:
        y = np.take(y, np.arange(n // 2 + 1), axis=ax)
    return np.stack([y.real, y.imag], -1)


@case
def dft_lengths(root):
    x = rng.standard_normal((2, 7, 1)).astype(np.float32)
    z = rng.standard_normal((1, 3, 5, 2)).astype(np.float64)
    write(root, "dft_lengths",
          [node("DFT", ["x", "n13"], ["a"]), node("DFT", ["x", "n3"], ["b"], onesided=1),
           node("DFT", ["x", "n1"], ["c"]), node("DFT", ["z"], ["d"], axis=-2, inverse=1),
           node("DFT", ["x", "n5i"], ["e"], inverse=1)],
          [("x", x), ("z", z)],
          [("a", dft_ref(x, 13).astype(np.float32)),
           ("b", dft_ref(x, 3, onesided=True).astype(np.float32)),
           ("c", dft_ref(x, 1).astype(np.float32)),
           ("d", dft_ref(z, None, -2, inverse=True)),
           ("e", dft_ref(x, 5, inverse=True).astype(np.float32))],
          [("n13", np.int64(13)), ("n3", np.int64(3)), ("n1", np.int64(1)),
           ("n5i", np.int32(5))], opset=17)


@case
def dft_empty_batch(root):
    x = np.zeros((0, 8, 1), np.float32)
    write(root, "dft_empty_batch", [node("DFT", ["x"], ["y"])], [("x", x)],
          [("y", np.zeros((0, 8, 2), np.float32))], opset=17)


def stft_ref(sig, step, window, flen, onesided):
    frames = (sig.shape[1] - flen) // step + 1
    out = []
    for f in range(frames):
        seg = sig[:, f * step:f * step + flen]
        if window is not None:
            seg = seg * window[None, :, None]
        out.append(dft_ref(seg, flen, 1, onesided=onesided))
    return np.stack(out, 1)


@case
def stft_edges(root):
    s = rng.standard_normal((2, 16, 1)).astype(np.float32)
    c = rng.standard_normal((1, 9, 2)).astype(np.float32)
    w = np.hanning(16).astype(np.float32)
    write(root, "stft_edges",
          [node("STFT", ["s", "st4", "", "fl5"], ["a"]),
           node("STFT", ["s", "big", "w"], ["b"]),
           node("STFT", ["c", "st2", "", "fl4"], ["d"], onesided=0)],
          [("s", s), ("c", c)],
          [("a", stft_ref(s, 4, None, 5, True).astype(np.float32)),
           ("b", stft_ref(s, 1 << 40, w, 16, True).astype(np.float32)),
           ("d", stft_ref(c, 2, None, 4, False).astype(np.float32))],
          [("st4", np.int64(4)), ("fl5", np.int64(5)), ("big", np.int64(1 << 40)),
           ("w", w), ("st2", np.int32(2)), ("fl4", np.int32(4))], opset=17)


def window_ref(kind, n, periodic):
    a = {"Hann": (0.5, 0.5, 0), "Hamming": (25 / 46, 21 / 46, 0),
         "Blackman": (0.42, 0.5, 0.08)}[kind]
    if n == 0:
        return np.zeros(0)
    N = n if periodic else n - 1
    if N == 0:
        # Symmetric, size 1: cos(2*pi*0/0) is NaN in the ONNX reference (its
        # function body) and onnxruntime, and mlcc follows them.
        return np.full(1, np.nan)
    k = np.arange(n)
    return a[0] - a[1] * np.cos(2 * np.pi * k / N) + a[2] * np.cos(4 * np.pi * k / N)


@case
def windows_small(root):
    nodes, outs, inits = [], [], []
    for kind in ("Hann", "Hamming", "Blackman"):
        for n in (0, 1, 2, 7):
            for per in (0, 1):
                o = "%s_%d_%d" % (kind.lower(), n, per)
                nodes.append(node(kind + "Window", ["n%d" % n], [o], periodic=per))
                outs.append((o, window_ref(kind, n, per).astype(np.float32)))
        o = kind.lower() + "_f64"
        nodes.append(node(kind + "Window", ["n7"], [o], output_datatype=11))
        outs.append((o, window_ref(kind, 7, 1)))
    inits = [("n%d" % n, np.int64(n)) for n in (0, 1, 2, 7)]
    # A graph input keeps the outputs from being folded away entirely.
    write(root, "windows_small", nodes + [node("Identity", ["x"], ["xo"])],
          [("x", np.ones(1, np.float32))], outs + [("xo", np.ones(1, np.float32))], inits,
          opset=17)


# ----------------------------------------------------------------------------
# Recurrent: zero-size dims
# ----------------------------------------------------------------------------
@case
def rnn_zero_sizes(root):
    # seq_length 0: Y is empty and Y_h 0 (no step ran); batch 0: all empty;
    # input_size 0: the gates see only the recurrence and the bias.
    H = 3
    w0 = np.zeros((1, 4 * H, 0), np.float32)
    r = (rng.standard_normal((1, 4 * H, H)) * 0.5).astype(np.float32)
    b = (rng.standard_normal((1, 8 * H)) * 0.5).astype(np.float32)
    x_in0 = np.zeros((2, 2, 0), np.float32)
    # reference for input_size 0: LSTM with x contributing nothing
    sig = lambda v: 1 / (1 + np.exp(-v))
    h = np.zeros((2, H))
    c = np.zeros((2, H))
    ys = []
    for t in range(2):
        a = h @ r[0].T + b[0, :4 * H] + b[0, 4 * H:]
        i, o, f, g = sig(a[:, :H]), sig(a[:, H:2 * H]), sig(a[:, 2 * H:3 * H]), np.tanh(a[:, 3 * H:])
        c = f * c + i * g
        h = o * np.tanh(c)
        ys.append(h.copy())
    w4 = (rng.standard_normal((1, 4 * H, 4)) * 0.5).astype(np.float32)
    write(root, "rnn_zero_sizes",
          [node("LSTM", ["xs0", "w4", "r", "b"], ["y0", "yh0", "yc0"], hidden_size=H),
           node("LSTM", ["xb0", "w4", "r", "b"], ["y1", "yh1"], hidden_size=H),
           node("LSTM", ["xi0", "w0", "r", "b"], ["y2", "yh2"], hidden_size=H)],
          [("xs0", np.zeros((0, 2, 4), np.float32)), ("xb0", np.zeros((3, 0, 4), np.float32)),
           ("xi0", x_in0)],
          [("y0", np.zeros((0, 1, 2, H), np.float32)), ("yh0", np.zeros((1, 2, H), np.float32)),
           ("yc0", np.zeros((1, 2, H), np.float32)),
           ("y1", np.zeros((3, 1, 0, H), np.float32)), ("yh1", np.zeros((1, 0, H), np.float32)),
           ("y2", np.stack(ys)[:, None].astype(np.float32)),
           ("yh2", ys[-1][None].astype(np.float32))],
          [("w4", w4), ("w0", w0), ("r", r), ("b", b)], opset=14)


# ----------------------------------------------------------------------------
# Data-dependent outputs
# ----------------------------------------------------------------------------
@case
def nonzero_scalar(root):
    sets = [([("x", np.array(v, np.float32))],
             [("y", np.zeros((1, 1 if v else 0), np.int64))]) for v in (2.5, 0.0)]
    write(root, "nonzero_scalar", [node("NonZero", ["x"], ["y"])], sets[0][0], sets[0][1],
          datasets=sets)


def nms_ref(boxes, scores, max_out, iou, score_th, center):
    res = []
    for bi in range(boxes.shape[0]):
        bx = boxes[bi].astype(np.float64)
        if center:
            xc, yc, w, h = bx.T
            bx = np.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], 1)
        y1 = np.minimum(bx[:, 0], bx[:, 2]); y2 = np.maximum(bx[:, 0], bx[:, 2])
        x1 = np.minimum(bx[:, 1], bx[:, 3]); x2 = np.maximum(bx[:, 1], bx[:, 3])
        area = (y2 - y1) * (x2 - x1)
        for ci in range(scores.shape[1]):
            sc = scores[bi, ci]
            cand = [i for i in np.argsort(-sc, kind="stable")
                    if score_th is None or sc[i] > score_th]
            sel = []
            for i in cand:
                if len(sel) >= max_out:
                    break
                ok = True
                for j in sel:
                    ih = max(0, min(y2[i], y2[j]) - max(y1[i], y1[j]))
                    iw = max(0, min(x2[i], x2[j]) - max(x1[i], x1[j]))
                    inter = ih * iw
                    uni = area[i] + area[j] - inter
                    if uni > 0 and inter / uni > iou:
                        ok = False
                        break
                if ok:
                    sel.append(i)
            res += [[bi, ci, i] for i in sel]
    return np.array(res, np.int64).reshape(-1, 3)


@case
def nms_edges(root):
    boxes = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
                       [0, 10.1, 1, 11.1], [0, 100, 1, 101]]], np.float32)
    scores = np.array([[[.9, .75, .6, .95, .5, .3], [.1, .2, .3, .4, .5, .6]]], np.float32)
    sets = []
    for mx in (0, 1, 1 << 40):
        pass
    write(root, "nms_edges",
          [node("NonMaxSuppression", ["b", "s", "m0", "iou", "st"], ["zero"]),
           node("NonMaxSuppression", ["b", "s", "mneg", "iou", "st"], ["neg"]),
           node("NonMaxSuppression", ["b", "s", "mbig", "iou"], ["big"]),
           node("NonMaxSuppression", ["b", "s"], ["none"])],
          [("b", boxes), ("s", scores)],
          [("zero", np.zeros((0, 3), np.int64)), ("neg", np.zeros((0, 3), np.int64)),
           ("big", nms_ref(boxes, scores, 1 << 40, 0.5, None, 0)),
           ("none", np.zeros((0, 3), np.int64))],
          [("m0", np.array([0], np.int64)), ("mneg", np.array([-4], np.int64)),
           ("mbig", np.array([1 << 40], np.int64)), ("iou", np.array([0.5], np.float32)),
           ("st", np.array([0.0], np.float32))], opset=11)


@case
def compress_unique_empty(root):
    x = np.zeros((0, 4), np.float32)
    write(root, "compress_unique_empty",
          [node("Compress", ["x", "c"], ["y"], axis=0),
           node("Unique", ["x"], ["u", "i", "inv", "cnt"], axis=0),
           node("Unique", ["s"], ["su", "si", "sinv", "scnt"])],
          [("x", x), ("c", np.zeros(0, np.bool_)), ("s", np.array(7, np.int64))],
          [("y", x), ("u", x), ("i", np.zeros(0, np.int64)), ("inv", np.zeros(0, np.int64)),
           ("cnt", np.zeros(0, np.int64)), ("su", np.array([7], np.int64)),
           ("si", np.array([0], np.int64)), ("sinv", np.array([0], np.int64)),
           ("scnt", np.array([1], np.int64))], opset=11)


# ----------------------------------------------------------------------------
# Control flow
# ----------------------------------------------------------------------------
def const_node(out, arr):
    return node("Constant", [], [out], value=numpy_helper.from_array(np.asarray(arr)))


@case
def loop_edges(root):
    # trip count 0 and negative: carried values pass through; cond false at
    # start; an i32 trip count.
    body = helper.make_graph(
        [node("Identity", ["c"], ["co"]), node("Add", ["v", "one"], ["vo"]),
         node("Cast", ["i"], ["ic"], to=TensorProto.FLOAT), node("Mul", ["vo", "ic"], ["so"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("v", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("co", TensorProto.BOOL, []),
         helper.make_tensor_value_info("vo", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("so", TensorProto.FLOAT, [2])],
        initializer=[numpy_helper.from_array(np.ones(2, np.float32), "one")])
    x = np.array([1.5, -2], np.float32)
    v3 = x + 3
    scans = np.stack([(x + k + 1) * k for k in range(3)])
    write(root, "loop_edges",
          [node("Loop", ["m0", "", "x"], ["a", "as"], body=body),
           node("Loop", ["mneg", "", "x"], ["b", "bs"], body=body),
           node("Loop", ["m5", "f", "x"], ["c", "cs"], body=body),
           node("Loop", ["m3", "", "x"], ["d", "ds"], body=body)],
          [("x", x)],
          [("a", x), ("as", np.zeros((0, 2), np.float32)), ("b", x),
           ("bs", np.zeros((0, 2), np.float32)), ("c", x), ("cs", np.zeros((0, 2), np.float32)),
           ("d", v3), ("ds", scans.astype(np.float32))],
          [("m0", np.int64(0)), ("mneg", np.int64(-5)), ("m5", np.int64(5)),
           ("f", np.bool_(False)), ("m3", np.int32(3))])


@case
def scan_axes_directions(root):
    body = helper.make_graph(
        [node("Add", ["st", "e"], ["st2"]), node("Mul", ["e", "two"], ["out"])], "body",
        [helper.make_tensor_value_info("st", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("st2", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("out", TensorProto.FLOAT, [2])],
        initializer=[numpy_helper.from_array(np.float32(2), "two")])
    x = rng.standard_normal((2, 4)).astype(np.float32)  # sequence on axis 1 (-1)
    s0 = np.array([1, -1], np.float32)
    seq = x.T[::-1]  # reverse direction
    st = s0 + seq.sum(0)
    outs = (seq * 2)[::-1]  # reverse output direction, stacked on axis -1
    write(root, "scan_axes_directions",
          [node("Scan", ["s0", "x"], ["st", "o"], body=body, num_scan_inputs=1,
                scan_input_axes=[-1], scan_input_directions=[1], scan_output_axes=[-1],
                scan_output_directions=[1])],
          [("s0", s0), ("x", x)], [("st", st.astype(np.float32)), ("o", outs.T.astype(np.float32))],
          opset=11)


@case
def if_one_elem_cond(root):
    tb = helper.make_graph([node("Neg", ["x"], ["o"])], "t", [],
                           [helper.make_tensor_value_info("o", TensorProto.FLOAT, [2])])
    eb = helper.make_graph([node("Abs", ["x"], ["o"])], "e", [],
                           [helper.make_tensor_value_info("o", TensorProto.FLOAT, [2])])
    x = np.array([-1.5, 2], np.float32)
    sets = [([("c", np.array([[v]], np.bool_)), ("x", x)], [("y", -x if v else np.abs(x))])
            for v in (True, False)]
    write(root, "if_one_elem_cond", [node("If", ["c"], ["y"], then_branch=tb, else_branch=eb)],
          sets[0][0], sets[0][1], datasets=sets)


# ----------------------------------------------------------------------------
# Spatial
# ----------------------------------------------------------------------------
@case
def det_edges(root):
    a = rng.standard_normal((2, 3, 4, 4))
    write(root, "det_edges",
          [node("Det", ["e"], ["de"]), node("Det", ["one"], ["d1"]), node("Det", ["s"], ["ds"]),
           node("Det", ["a"], ["da"]), node("Det", ["eb"], ["deb"])],
          [("e", np.zeros((0, 0), np.float32)), ("one", np.array([[-2.5]], np.float32)),
           ("s", np.ones((3, 3), np.float32)), ("a", a), ("eb", np.zeros((0, 3, 3), np.float32))],
          [("de", np.array(1, np.float32)), ("d1", np.array(-2.5, np.float32)),
           ("ds", np.array(0, np.float32)), ("da", np.linalg.det(a)),
           ("deb", np.zeros(0, np.float32))], opset=11)


def revseq_ref(x, lens, batch_axis, time_axis):
    y = x.copy()
    for b, l in enumerate(lens):
        l = int(l)
        if batch_axis == 1:
            y[:l, b] = x[:l, b][::-1]
        else:
            y[b, :l] = x[b, :l][::-1]
    return y


@case
def reverse_sequence_edges(root):
    x = rng.standard_normal((4, 3, 2)).astype(np.float32)
    xt = rng.standard_normal((3, 5)).astype(np.float32)
    lens = np.array([4, 1, 0], np.int64)
    lt = np.array([5, 2, 1], np.int32)
    write(root, "reverse_sequence_edges",
          [node("ReverseSequence", ["x", "l"], ["y"]),
           node("ReverseSequence", ["xt", "lt"], ["yt"], batch_axis=0, time_axis=1)],
          [("x", x), ("l", lens), ("xt", xt), ("lt", lt)],
          [("y", revseq_ref(x, lens, 1, 0)), ("yt", revseq_ref(xt, lt, 0, 1))], opset=10)


@case
def upsample_edges(root):
    x = rng.standard_normal((1, 1, 3, 4)).astype(np.float32)
    # nearest, downscale: out = floor(in * s); src index = floor(dst / s)
    def nearest(x, s):
        out_shape = [int(np.floor(d * sc)) for d, sc in zip(x.shape, s)]
        idx = np.ix_(*[np.minimum((np.arange(o) / sc).astype(np.int64), d - 1)
                       for o, sc, d in zip(out_shape, s, x.shape)])
        return x[idx]
    s1 = [1, 1, 0.5, 0.3]
    s2 = [1, 1, 2, 3]
    xi = rng.integers(-5, 5, (2, 3)).astype(np.int32)
    write(root, "upsample_edges",
          [node("Upsample", ["x", "s1"], ["a"]), node("Upsample", ["x", "s2"], ["b"]),
           node("Upsample", ["xi", "s3"], ["c"])],
          [("x", x), ("xi", xi)],
          [("a", nearest(x, s1)), ("b", nearest(x, s2)), ("c", nearest(xi, [2.5, 1]))],
          [("s1", np.array(s1, np.float32)), ("s2", np.array(s2, np.float32)),
           ("s3", np.array([2.5, 1], np.float32))], opset=9)


# ----------------------------------------------------------------------------
# Legacy opsets
# ----------------------------------------------------------------------------
@case
def legacy_broadcast_axis(root):
    a = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = rng.standard_normal((3, 4)).astype(np.float32)
    c = rng.standard_normal((3,)).astype(np.float32)
    write(root, "legacy_broadcast_axis",
          [node("Add", ["a", "b"], ["t"], broadcast=1, axis=1),
           node("Mul", ["t", "c"], ["u"], broadcast=1, axis=1),
           node("Sub", ["u", "s"], ["y"], broadcast=1, axis=3)],
          [("a", a), ("b", b), ("c", c), ("s", np.array([2], np.float32))],
          [("y", (a + b[None, :, :, None]) * c[None, :, None, None] - 2)], opset=6)


@case
def cf_subgraph_names(root):
    """Body outputs that are a formal input, a body initializer, an outer
    value and the incoming condition; a formal input named like an outer
    value; a branch output named like the If's condition."""
    vi_ = helper.make_tensor_value_info
    x = np.array([1.5, -2], np.float32)
    k = np.array([10, 20], np.float32)
    body = helper.make_graph(
        [node("Add", ["x", "k"], ["xo"])], "body",
        [vi_("i", TensorProto.INT64, []), vi_("cin", TensorProto.BOOL, []),
         vi_("x", TensorProto.FLOAT, [2])],
        [vi_("cin", TensorProto.BOOL, []), vi_("xo", TensorProto.FLOAT, [2]),
         vi_("k", TensorProto.FLOAT, [2]), vi_("x", TensorProto.FLOAT, [2]),
         vi_("i", TensorProto.INT64, [])],
        initializer=[numpy_helper.from_array(k, "k")])
    body2 = helper.make_graph([node("Identity", ["cin"], ["cout"])], "body2",
                              [vi_("i", TensorProto.INT64, []), vi_("cin", TensorProto.BOOL, [])],
                              [vi_("cout", TensorProto.BOOL, []), vi_("y", TensorProto.FLOAT, [2])])
    tb = helper.make_graph([node("Neg", ["y"], ["c"])], "t", [],
                           [vi_("c", TensorProto.FLOAT, [2])])
    eb = helper.make_graph([node("Abs", ["y"], ["c"])], "e", [],
                           [vi_("c", TensorProto.FLOAT, [2])])
    y = np.array([-0.5, 3], np.float32)
    sets = []
    for c in (True, False):
        sets.append(([("x", x), ("y", y), ("c", np.array(c))],
                     [("xf", x + 3 * k), ("ks", np.stack([k] * 3)),
                      ("xs", np.stack([x, x + k, x + 2 * k])), ("is", np.arange(3, dtype=np.int64)),
                      ("ys", np.stack([y, y])), ("z", -y if c else np.abs(y))]))
    write(root, "cf_subgraph_names",
          [node("Loop", ["M", "C", "x"], ["xf", "ks", "xs", "is"], body=body),
           node("Loop", ["M2", ""], ["ys"], body=body2),
           node("If", ["c"], ["z"], then_branch=tb, else_branch=eb)],
          sets[0][0], sets[0][1], [("M", np.int64(3)), ("C", np.bool_(True)), ("M2", np.int64(2))],
          datasets=sets)


@case
def cf_nested_and_while(root):
    """An If inside a Loop whose condition comes from the iteration number and
    whose branches read a loop-carried value and an outer value; a while-style
    Loop (no trip count) ended by a condition computed from the iteration
    number; a Scan whose body returns its inputs unchanged."""
    vi_ = helper.make_tensor_value_info
    F = TensorProto.FLOAT
    it = helper.make_graph([node("Add", ["v", "x"], ["o"])], "it", [], [vi_("o", F, [2])])
    ie = helper.make_graph([node("Sub", ["v", "x"], ["o"])], "ie", [], [vi_("o", F, [2])])
    body = helper.make_graph(
        [node("Identity", ["cin"], ["cout"]), node("Less", ["i", "two"], ["lt"]),
         node("If", ["lt"], ["vo"], then_branch=it, else_branch=ie)], "body",
        [vi_("i", TensorProto.INT64, []), vi_("cin", TensorProto.BOOL, []), vi_("v", F, [2])],
        [vi_("cout", TensorProto.BOOL, []), vi_("vo", F, [2])],
        initializer=[numpy_helper.from_array(np.int64(2), "two")])
    wbody = helper.make_graph(
        [node("Less", ["i", "three"], ["cout"]), node("Mul", ["v", "x"], ["vo"])], "wbody",
        [vi_("i", TensorProto.INT64, []), vi_("cin", TensorProto.BOOL, []), vi_("v", F, [2])],
        [vi_("cout", TensorProto.BOOL, []), vi_("vo", F, [2])],
        initializer=[numpy_helper.from_array(np.int64(3), "three")])
    sbody = helper.make_graph([], "sbody", [vi_("st", F, [2]), vi_("e", F, [2])],
                              [vi_("st", F, [2]), vi_("e", F, [2])])
    x = np.array([1.5, -2], np.float32)
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    v = x.copy()
    for i in range(5):
        v = v + x if i < 2 else v - x
    write(root, "cf_nested_and_while",
          [node("Loop", ["M", "", "x"], ["vf"], body=body),
           node("Loop", ["", "C", "x"], ["wf"], body=wbody),
           node("Scan", ["x", "xs"], ["s", "o"], body=sbody, num_scan_inputs=1)],
          [("x", x), ("xs", xs)],
          [("vf", v), ("wf", x ** 5), ("s", x), ("o", xs)],
          [("M", np.int64(5)), ("C", np.bool_(True))], opset=11)


@case
def bf16_cast_specials(root):
    """float32 -> bfloat16 -> float32 of NaNs (payload only in the low bits,
    which plain truncation or rounding would turn into infinity), infinities,
    the largest float (rounds to infinity), denormals and ties."""
    bits = np.array([0x7F800001, 0xFF800001, 0x7FC00000, 0xFFFFFFFF, 0x7F7FFFFF, 0x00000001,
                     0x80000001, 0x3F808000, 0x3F818000, 0x3F80C000, 0x7F800000, 0xFF800000,
                     0x00800000, 0x007FFFFF, 0x3F807FFF], np.uint32)
    x = bits.view(np.float32)
    ref = []
    for b in bits.tolist():
        if np.isnan(np.uint32(b).view(np.float32)):
            ref.append(((b >> 16) | 0x40) & 0xFFFF)
        else:
            ref.append(((b + 0x7FFF + ((b >> 16) & 1)) >> 16) & 0xFFFF)
    ref = np.array(ref, np.uint16)
    g = helper.make_graph(
        [node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16),
         node("Cast", ["y"], ["z"], to=TensorProto.FLOAT)], "bf16_cast_specials",
        [vi("x", x)],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [len(x)]),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [len(x)])])
    # ONNX 1.12 stores bfloat16 references as uint16 tensors.
    t = onnx.TensorProto(name="y", data_type=TensorProto.UINT16, dims=[len(x)],
                         raw_data=ref.tobytes())
    z = (ref.astype(np.uint32) << 16).view(np.float32)
    onnx_case.save_case(os.path.join(root, "ne_bf16_cast_specials"), onnx_case.model(g, 13, 8),
                        [([("x", x)], [("y", t), ("z", z)])])


@case
def legacy_op_forms(root):
    """Opset 1-9 forms of ops whose attributes or semantics changed later:
    Softmax/LogSoftmax/Hardmax-11 (2-D coercion at 'axis'), Slice-1, TopK-1,
    Pad-2, Split-2, Clip-6, Gemm-1 (broadcast C), Dropout-7 (float mask),
    Upsample-7 linear, Squeeze/Unsqueeze-1."""
    x3 = rng.standard_normal((2, 3, 4)).astype(np.float32)
    xt = rng.standard_normal((3, 6)).astype(np.float32)

    def sm2d(x, axis):
        s = x.reshape(int(np.prod(x.shape[:axis])), -1)
        e = np.exp(s - s.max(1, keepdims=True))
        return (e / e.sum(1, keepdims=True)).reshape(x.shape)

    def hm2d(x, axis):
        s = x.reshape(int(np.prod(x.shape[:axis])), -1)
        r = np.zeros_like(s)
        r[np.arange(s.shape[0]), s.argmax(1)] = 1
        return r.reshape(x.shape)

    write(root, "legacy_softmax11",
          [node("Softmax", ["x"], ["a"]), node("Softmax", ["x"], ["b"], axis=2),
           node("LogSoftmax", ["x"], ["c"], axis=0), node("Hardmax", ["x"], ["d"])],
          [("x", x3)], [("a", sm2d(x3, 1)), ("b", sm2d(x3, 2)), ("c", np.log(sm2d(x3, 0))),
                        ("d", hm2d(x3, 1))], opset=11)
    x4 = rng.standard_normal((3, 5, 4)).astype(np.float32)
    x5 = rng.standard_normal((1, 3, 1, 4)).astype(np.float32)
    idx = np.argsort(-xt, 1, kind="stable")[:, :2]
    write(root, "legacy_opset1",
          [node("Slice", ["x4"], ["a"], starts=[1, -3], ends=[1000, -1], axes=[1, 2]),
           node("Squeeze", ["x5"], ["b"], axes=[0, 2]),
           node("Unsqueeze", ["x5"], ["c"], axes=[0, 5]),
           node("TopK", ["xt"], ["v", "i"], k=2)],
          [("x4", x4), ("x5", x5), ("xt", xt)],
          [("a", x4[:, 1:, -3:-1]), ("b", x5.reshape(3, 4)), ("c", x5.reshape(1, 1, 3, 1, 4, 1)),
           ("v", np.take_along_axis(xt, idx, 1)), ("i", idx.astype(np.int64))], opset=1)
    write(root, "legacy_opset2",
          [node("Pad", ["x"], ["a"], pads=[0, 1, 1, 0], value=2.5),
           node("Pad", ["x"], ["b"], pads=[0, 2, 0, 1], mode="reflect"),
           node("Split", ["x"], ["c", "d"], axis=1, split=[2, 4])],
          [("x", xt)],
          [("a", np.pad(xt, ((0, 1), (1, 0)), constant_values=2.5)),
           ("b", np.pad(xt, ((0, 0), (2, 1)), mode="reflect")), ("c", xt[:, :2]),
           ("d", xt[:, 2:])], opset=2)
    A = rng.standard_normal((3, 4)).astype(np.float32)
    B = rng.standard_normal((5, 4)).astype(np.float32)
    C = rng.standard_normal((5,)).astype(np.float32)
    write(root, "legacy_opset6",
          [node("Clip", ["x"], ["a"], min=-0.5, max=0.7),
           node("Gemm", ["A", "B", "C"], ["g"], transB=1, alpha=0.5, beta=2.0, broadcast=1)],
          [("x", xt), ("A", A), ("B", B), ("C", C)],
          [("a", np.clip(xt, -0.5, 0.7)), ("g", 0.5 * A @ B.T + 2 * C)], opset=6)
    xu = rng.standard_normal((1, 1, 2, 3)).astype(np.float32)

    def lin_asym(x, sh, sw):
        H, W = x.shape[2:]
        oh, ow = int(H * sh), int(W * sw)
        out = np.zeros((1, 1, oh, ow), np.float32)
        for i in range(oh):
            for j in range(ow):
                yy, xx = min(i / sh, H - 1), min(j / sw, W - 1)
                y0, x0 = int(np.floor(yy)), int(np.floor(xx))
                y1, x1 = min(y0 + 1, H - 1), min(x0 + 1, W - 1)
                dy, dx = yy - y0, xx - x0
                out[0, 0, i, j] = (x[0, 0, y0, x0] * (1 - dy) * (1 - dx) +
                                   x[0, 0, y1, x0] * dy * (1 - dx) +
                                   x[0, 0, y0, x1] * (1 - dy) * dx + x[0, 0, y1, x1] * dy * dx)
        return out

    write(root, "legacy_opset7",
          [node("Dropout", ["x"], ["y", "m"], ratio=0.3),
           node("Upsample", ["xu"], ["u"], mode="linear", scales=[1., 1., 2., 2.])],
          [("x", xt), ("xu", xu)],
          [("y", xt), ("m", np.ones(xt.shape, np.float32)), ("u", lin_asym(xu, 2, 2))], opset=7)


def main():
    root = sys.argv[1]
    flt = sys.argv[2] if len(sys.argv) > 2 else ""
    os.makedirs(root, exist_ok=True)
    for name, fn in CASES.items():
        if re.search(flt, name):
            fn(root)
    print("wrote cases to %s" % root)


if __name__ == "__main__":
    main()
