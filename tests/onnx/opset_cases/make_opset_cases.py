#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the opset 18-26 cases (tests/onnx/opset_cases/cases/<name>/) in the
ONNX backend-test layout through the shared writer tests/e2e/onnx_case.py,
with expected outputs computed by onnxruntime-node 1.30 (ort_run.js, installed
by scripts/setup.sh into tools/ort).

Debian's onnx is 1.12 (opsets <= 17), so the models are built with
onnx.helper and never checked with onnx.checker. Inputs come from a seeded
numpy generator and onnxruntime runs single-threaded without graph
optimizations, so a rerun writes the same bytes; --check compares a fresh
generation with the committed cases instead of writing them.

  tests/onnx/opset_cases/make_opset_cases.py [--out DIR] [--only NAME,...] [--check]

Every case is one (op, opset, mode) from the ONNX changelog; CASES below says
what each one covers. tests/onnx/opset_cases/opset_cases.cmake runs them all
on x86 and its MLCC_OPSET_CROSS_SAMPLE under qemu on aarch64 and riscv64.
"""
import argparse
import filecmp
import itertools
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import onnx_case  # noqa: E402

ORT_MODULES = os.path.join(ROOT, "tools", "ort", "node_modules")
CASES_DIR = os.path.join(HERE, "cases")
# The IR version each opset came with (onnx/helper.py's VERSION_TABLE); mlcc
# reads IR <= 10, so the opset 23-26 cases say 10, which onnxruntime accepts.
IR_OF_OPSET = {18: 8, 19: 9, 20: 9, 21: 10, 22: 10}

F32, I64, BOOL, I32, U8 = (TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL,
                           TensorProto.INT32, TensorProto.UINT8)
NP_OF = {F32: np.float32, I64: np.int64, BOOL: np.bool_, I32: np.int32, U8: np.uint8,
         TensorProto.INT8: np.int8, TensorProto.UINT16: np.uint16,
         TensorProto.INT16: np.int16, TensorProto.UINT32: np.uint32,
         TensorProto.UINT64: np.uint64, TensorProto.DOUBLE: np.float64,
         TensorProto.FLOAT16: np.float16, onnx_case.UINT4: np.uint8, onnx_case.INT4: np.int8,
         17: np.uint8, 18: np.uint8, 19: np.uint8, 20: np.uint8, 24: np.uint8,  # float8: the bits
         onnx_case.UINT2: np.uint8, onnx_case.INT2: np.int8,
         onnx_case.FLOAT4E2M1: np.uint8}  # float4e2m1: the codes
I4, U4, I2, U2 = onnx_case.INT4, onnx_case.UINT4, onnx_case.INT2, onnx_case.UINT2

CASES = {}



def case(fn):
    CASES[fn.__name__] = fn
    return fn


def rng(name):
    return np.random.default_rng(abs(hash_name(name)))


def hash_name(name):
    h = 0
    for c in name.encode():
        h = (h * 131 + c) % (1 << 31)
    return h


class Spec:
    """One case: nodes, graph inputs fed by the data set (feeds), constant
    inputs (inits), outputs as [(name, elem_type)], and the opset. An
    optional numpy reference cross-checks onnxruntime's outputs; where the
    two disagree the numpy reference (the spec) is used and |why| is written
    to the case's REFERENCE.txt."""

    def __init__(self, nodes, feeds, outputs, opset, inits=(), numpy_ref=None, why=None,
                 ort_refuses=None, types=None):
        self.nodes, self.feeds, self.outputs = nodes, list(feeds), list(outputs)
        self.opset, self.inits = opset, list(inits)
        # numpy_ref: feeds dict -> [arrays]
        self.numpy_ref, self.why = numpy_ref, why
        # ort_refuses: why onnxruntime cannot run a form the spec defines; the
        # case is checked that onnxruntime still refuses it and takes the
        # numpy reference.
        self.ort_refuses = ort_refuses
        # types: {feed name: ONNX element type} for feeds whose array is not
        # of that type (float8 bits as uint8); outputs are typed by
        # self.outputs, initializers may be TensorProtos
        self.types = dict(types or {})


def node(op, ins, outs, **attrs):
    return helper.make_node(op, ins, outs, **attrs)


# --- Reduce* 18: axes as input 1, noop_with_empty_axes --------------------------
REDUCE_OPS = ["ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
              "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]


def reduce_data(r, op):
    x = r.uniform(0.5, 2.0, size=(2, 3, 4)).astype(np.float32)
    if op not in ("ReduceLogSum", "ReduceProd"):  # log of a negative sum is NaN
        x *= np.where(r.random(x.shape) < 0.5, -1, 1).astype(np.float32)
    return x


def make_reduce_case(op, name, axes, keepdims, noop=None, opset=18):
    r = rng(name)
    x = reduce_data(r, op)
    ins, inits = ["x"], []
    if axes is not None:
        ins.append("axes")
        inits.append(("axes", np.array(axes, dtype=np.int64)))
    attrs = {"keepdims": keepdims}
    if noop is not None:
        attrs["noop_with_empty_axes"] = noop
    return Spec([node(op, ins, ["y"], **attrs)], [("x", x)], [("y", F32)], opset, inits)


for _op in REDUCE_OPS:
    _short = _op[len("Reduce"):].lower()
    CASES["reduce18_%s_axes_input" % _short] = (
        lambda op=_op, s=_short: make_reduce_case(op, "reduce18_%s_axes_input" % s, [-1, 0], 1))
CASES["reduce18_mean_axes_input_nokeep"] = lambda: make_reduce_case(
    "ReduceMean", "reduce18_mean_axes_input_nokeep", [1], 0)
CASES["reduce18_max_no_axes_reduces_all"] = lambda: make_reduce_case(
    "ReduceMax", "reduce18_max_no_axes_reduces_all", None, 0)
CASES["reduce18_sumsquare_empty_axes_noop"] = lambda: make_reduce_case(
    "ReduceSumSquare", "reduce18_sumsquare_empty_axes_noop", [], 1, noop=1)
CASES["reduce18_l2_empty_axes_reduces_all"] = lambda: make_reduce_case(
    "ReduceL2", "reduce18_l2_empty_axes_reduces_all", [], 1, noop=0)
CASES["reduce20_min_axes_input"] = lambda: make_reduce_case(
    "ReduceMin", "reduce20_min_axes_input", [2], 1, opset=20)


@case
def reduce20_max_min_bool():
    x = rng("reduce20_bool").random((3, 4, 2)) < 0.3
    x[1] = False  # an all-false row
    x[2, :, 0] = True  # an all-true column
    return Spec([node("ReduceMax", ["x", "a"], ["mx"], keepdims=0),
                 node("ReduceMin", ["x", "a"], ["mn"], keepdims=1)], [("x", x)],
                [("mx", BOOL), ("mn", BOOL)], 20, [("a", np.array([1], np.int64))])


# --- Split 18: num_outputs ------------------------------------------------------
@case
def split18_num_outputs_even():
    x = rng("split18_even").standard_normal((2, 6)).astype(np.float32)
    return Spec([node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)], [("x", x)],
                [("a", F32), ("b", F32), ("c", F32)], 18)


@case
def split18_num_outputs_uneven():
    # 7 along axis 0 into 3: ceil(7/3) = 3, so 3, 3 and a smaller last part 1
    x = rng("split18_uneven").standard_normal((7, 2)).astype(np.float32)
    return Spec([node("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=3)], [("x", x)],
                [("a", F32), ("b", F32), ("c", F32)], 18)


@case
def split18_split_input():
    x = rng("split18_input").standard_normal((5, 3)).astype(np.float32)
    return Spec([node("Split", ["x", "s"], ["a", "b"], axis=0)], [("x", x)],
                [("a", F32), ("b", F32)], 18, [("s", np.array([2, 3], dtype=np.int64))])


# --- Pooling: MaxPool/AveragePool 22 drop a ceil_mode window that starts in ---
# the right padding; AveragePool 19 (dilations attribute, here absent) --------
def pool_case(op, opset, **attrs):
    x = rng(op + str(opset)).standard_normal((1, 2, 6, 6)).astype(np.float32)
    return Spec([node(op, ["x"], ["y"], **attrs)], [("x", x)], [("y", F32)], opset)


@case
def maxpool22_ceil_window_in_right_pad():
    # padded 8, kernel 3, stride 3: ceil gives 3 windows, the third would
    # start at 6 = the first right-pad element, so it is dropped (2 windows)
    return pool_case("MaxPool", 22, kernel_shape=[3, 3], strides=[3, 3], pads=[0, 0, 2, 2],
                     ceil_mode=1)


@case
def averagepool22_ceil_window_in_right_pad():
    return pool_case("AveragePool", 22, kernel_shape=[3, 3], strides=[3, 3],
                     pads=[0, 0, 2, 2], ceil_mode=1, count_include_pad=0)


# --- LpPool 2/11/18/22: (sum over the window of |x|^p)^(1/p); 18: ceil_mode, dilations
def lppool_ref(x, kernel, strides=None, pads=None, dilations=None, p=2, ceil_mode=0,
               auto_pad="NOTSET"):
    """numpy LpPool (onnx/defs/nn/defs.cc, LpPool-18): padding contributes 0;
    auto_pad SAME_* gives ceil(in / stride) outputs; ceil_mode drops a last
    window that would start in the right padding (as MaxPool/AveragePool)."""
    n = len(kernel)
    strides = strides or [1] * n
    dilations = dilations or [1] * n
    pads = list(pads or [0] * (2 * n))
    out = []
    for i in range(n):
        din, dk = x.shape[2 + i], (kernel[i] - 1) * dilations[i] + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            o = -(-din // strides[i])
            total = max(0, (o - 1) * strides[i] + dk - din)
            pads[i] = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
            pads[i + n] = total - pads[i]
        elif auto_pad == "VALID":
            pads[i] = pads[i + n] = 0
            o = (din - dk) // strides[i] + 1
        else:
            span = din + pads[i] + pads[i + n] - dk
            o = span // strides[i] + 1
            if ceil_mode and span % strides[i]:
                o += 1
                if (o - 1) * strides[i] >= din + pads[i]:
                    o -= 1
        out.append(o)
    xa = np.abs(x.astype(np.float64)) ** p
    y = np.zeros(x.shape[:2] + tuple(out))
    for idx in np.ndindex(*out):
        sl = []
        for i in range(n):
            pos = [idx[i] * strides[i] - pads[i] + k * dilations[i] for k in range(kernel[i])]
            sl.append([q for q in pos if 0 <= q < x.shape[2 + i]])
        sub = xa[(slice(None), slice(None)) + np.ix_(*sl)] if all(sl) else np.zeros(x.shape[:2])
        y[(slice(None), slice(None)) + idx] = sub.reshape(x.shape[:2] + (-1,)).sum(-1) \
            if all(sl) else 0
    return (y ** (1.0 / p)).astype(np.float32)


def lppool_case(name, opset, shape, **attrs):
    x = rng(name).standard_normal(shape).astype(np.float32)
    kw = dict(kernel=attrs["kernel_shape"], strides=attrs.get("strides"), pads=attrs.get("pads"),
              dilations=attrs.get("dilations"), p=attrs.get("p", 2),
              ceil_mode=attrs.get("ceil_mode", 0), auto_pad=attrs.get("auto_pad", "NOTSET"))
    return Spec([node("LpPool", ["x"], ["y"], **attrs)], [("x", x)], [("y", F32)], opset,
                numpy_ref=lambda f: [lppool_ref(f["x"], **kw)])


@case
def lppool2_p2_default_2d_pads():
    return lppool_case("lppool2_p2_default_2d_pads", 2, (1, 3, 5, 6), kernel_shape=[2, 3],
                       pads=[1, 0, 0, 1])


@case
def lppool11_p1_same_upper_strides():
    return lppool_case("lppool11_p1_same_upper_strides", 11, (2, 2, 7, 5), kernel_shape=[3, 2],
                       strides=[2, 2], auto_pad="SAME_UPPER", p=1)


@case
def lppool18_ceil_mode_dilations_p3():
    return lppool_case("lppool18_ceil_mode_dilations_p3", 18, (1, 2, 8, 7), kernel_shape=[2, 2],
                       strides=[3, 2], dilations=[2, 2], pads=[1, 0, 1, 1], ceil_mode=1, p=3)


@case
def lppool18_ceil_window_in_right_pad():
    # padded 8, kernel 3, stride 3: the third ceil window would start in the
    # right padding and is dropped
    return lppool_case("lppool18_ceil_window_in_right_pad", 18, (1, 2, 6, 6),
                       kernel_shape=[3, 3], strides=[3, 3], pads=[0, 0, 2, 2], ceil_mode=1)


@case
def lppool22_1d_valid_p4():
    return lppool_case("lppool22_1d_valid_p4", 22, (2, 3, 9), kernel_shape=[3], strides=[2],
                       auto_pad="VALID", p=4)


@case
def lppool22_3d_same_lower():
    return lppool_case("lppool22_3d_same_lower", 22, (1, 2, 4, 5, 3), kernel_shape=[2, 3, 2],
                       auto_pad="SAME_LOWER")


# --- MaxRoiPool 1/22 -------------------------------------------------------------
def max_roi_pool_case(name, opset, scale):
    r = rng(name)
    x = r.standard_normal((2, 3, 8, 10)).astype(np.float32)
    rois = np.array([[0, 0, 0, 9, 7], [1, 2.4, 1.6, 6.5, 5.2], [0, 8, 6, 20, 12],
                     [1, 5, 5, 4, 4], [0, -3, -2, 3, 2]], np.float32)
    rois[:, 1:] /= scale
    return Spec([node("MaxRoiPool", ["x", "rois"], ["y"], pooled_shape=[3, 2],
                      spatial_scale=scale)], [("x", x), ("rois", rois)], [("y", F32)], opset)


@case
def maxroipool1_scale_half():
    """Rois inside, partly outside, reversed and at the edge of the image."""
    return max_roi_pool_case("maxroipool1_scale_half", 1, 0.5)


@case
def maxroipool21_scale_one():
    # MaxRoiPool-22 adds types only; onnxruntime-node 1.30 has no MaxRoiPool-22 kernel
    return max_roi_pool_case("maxroipool21_scale_one", 21, 1.0)


@case
def averagepool19_dilations_count_include_pad():
    return pool_case("AveragePool", 19, kernel_shape=[2, 3], strides=[1, 2],
                     dilations=[2, 2], pads=[1, 0, 1, 2], count_include_pad=1)


@case
def averagepool19_dilations_ceil_exclude_pad():
    return pool_case("AveragePool", 19, kernel_shape=[3, 2], strides=[2, 2],
                     dilations=[1, 3], pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=0)


@case
def averagepool19_dilations_1d_same_upper():
    x = rng("avgpool19_1d").standard_normal((2, 3, 11)).astype(np.float32)
    spec = Spec([node("AveragePool", ["x"], ["y"], kernel_shape=[3], strides=[2],
                      dilations=[2], auto_pad="SAME_UPPER")], [("x", x)], [("y", F32)], 19)

    def ref(f):
        # SAME_UPPER: out = floor((11 - 1) / 2) + 1 = 6; total pad = (6-1)*2 + (3-1)*2 + 1
        # - 11 = 4, split 2/2; the average counts only positions inside the input.
        xin = f["x"].astype(np.float64)
        y = np.zeros((2, 3, 6))
        for o in range(6):
            pos = [o * 2 - 2 + k * 2 for k in range(3)]
            pos = [p for p in pos if 0 <= p < 11]
            y[:, :, o] = xin[:, :, pos].mean(axis=2)
        return [y.astype(np.float32)]

    spec.numpy_ref = ref
    spec.why = ("AveragePool-19 with auto_pad SAME_UPPER gives output_spatial_shape = "
                "floor((input - 1) / stride) + 1 = 6 whatever the dilation (the spec's "
                "formula, and the ONNX reference's); onnxruntime-node 1.30 returns 5 columns for this "
                "dilated kernel (MaxPool too). "
                "The expected output is a numpy reference of the spec.")
    return spec


@case
def averagepool19_pads_count_include_pad():
    return pool_case("AveragePool", 19, kernel_shape=[3, 3], strides=[2, 2],
                     pads=[1, 1, 1, 1], count_include_pad=1)


# --- Ops unchanged since opset <= 17, run at 21 and 26 ------------------------
@case
def unchanged21_gemm_relu_softmax():
    r = rng("unchanged21")
    x = r.standard_normal((2, 8)).astype(np.float32)
    w = r.standard_normal((8, 5)).astype(np.float32)
    b = r.standard_normal((5,)).astype(np.float32)
    return Spec([node("Gemm", ["x", "w", "b"], ["g"]), node("Relu", ["g"], ["h"]),
                 node("Softmax", ["h"], ["y"], axis=-1)], [("x", x)], [("y", F32)], 21,
                [("w", w), ("b", b)])


@case
def unchanged26_reshape_transpose_concat():
    r = rng("unchanged26")
    x = r.standard_normal((2, 3, 4)).astype(np.float32)
    return Spec([node("Reshape", ["x", "shape"], ["r"]), node("Transpose", ["r"], ["t"],
                                                                perm=[1, 0]),
                 node("Concat", ["t", "t"], ["y"], axis=0)], [("x", x)], [("y", F32)], 26,
                [("shape", np.array([6, 4], dtype=np.int64))])


# --- New elementwise ops: Bitwise* 18, Mish 18, Gelu 20, Swish 24 ---------------
@case
def bitwise18_and_or_xor_not_int32():
    r = rng("bitwise18_i32")
    a = r.integers(-2**31, 2**31 - 1, size=(3, 4), dtype=np.int64).astype(np.int32)
    b = r.integers(-2**31, 2**31 - 1, size=(4,), dtype=np.int64).astype(np.int32)  # broadcast
    return Spec([node("BitwiseAnd", ["a", "b"], ["and"]), node("BitwiseOr", ["a", "b"], ["or"]),
                 node("BitwiseXor", ["a", "b"], ["xor"]), node("BitwiseNot", ["a"], ["not"])],
                [("a", a), ("b", b)], [("and", I32), ("or", I32), ("xor", I32), ("not", I32)], 18)


@case
def bitwise18_uint8_int64():
    r = rng("bitwise18_u8")
    a = r.integers(0, 256, size=(2, 5), dtype=np.int64).astype(np.uint8)
    b = r.integers(0, 256, size=(2, 5), dtype=np.int64).astype(np.uint8)
    c = r.integers(-2**62, 2**62, size=(6,), dtype=np.int64)
    return Spec([node("BitwiseXor", ["a", "b"], ["x"]), node("BitwiseNot", ["b"], ["n"]),
                 node("BitwiseNot", ["c"], ["nc"])],
                [("a", a), ("b", b), ("c", c)], [("x", U8), ("n", U8), ("nc", I64)], 18)


def unary_case(name, op, opset, **attrs):
    x = np.concatenate([np.linspace(-8, 8, 33), [-30.0, -0.0, 0.0, 30.0]]).astype(np.float32)
    x = (x + rng(name).standard_normal(x.shape).astype(np.float32) * 0.01).reshape(1, -1)
    return Spec([node(op, ["x"], ["y"], **attrs)], [("x", x)], [("y", F32)], opset)


CASES["mish18"] = lambda: unary_case("mish18", "Mish", 18)
CASES["mish22"] = lambda: unary_case("mish22", "Mish", 22)
CASES["gelu20_none"] = lambda: unary_case("gelu20_none", "Gelu", 20)
CASES["gelu20_tanh"] = lambda: unary_case("gelu20_tanh", "Gelu", 20, approximate="tanh")
CASES["swish24_alpha"] = lambda: unary_case("swish24_alpha", "Swish", 24, alpha=1.702)


@case
def gelu20_fused_after_matmul():
    # Gelu as the elementwise epilogue of a MatMul (the transformer FFN shape)
    r = rng("gelu20_mm")
    x = r.standard_normal((4, 16)).astype(np.float32)
    w = (r.standard_normal((16, 32)) / 4).astype(np.float32)
    return Spec([node("MatMul", ["x", "w"], ["h"]), node("Gelu", ["h"], ["y"])], [("x", x)],
                [("y", F32)], 20, [("w", w)])


# --- Pad 18 (axes input) and 19 (wrap) ----------------------------------------
def pad_case(name, opset, mode, pads, axes=None, value=None):
    x = rng(name).standard_normal((2, 3, 4)).astype(np.float32)
    ins = ["x", "pads"]
    inits = [("pads", np.array(pads, dtype=np.int64))]
    if value is not None or axes is not None:
        ins.append("value" if value is not None else "")
        if value is not None:
            inits.append(("value", np.array(value, dtype=np.float32)))
    if axes is not None:
        ins.append("axes")
        inits.append(("axes", np.array(axes, dtype=np.int64)))
    return Spec([node("Pad", ins, ["y"], mode=mode)], [("x", x)], [("y", F32)], opset, inits)


CASES["pad18_axes_constant"] = lambda: pad_case("pad18_axes_constant", 18, "constant",
                                                [1, 0, 2, 3], axes=[-1, 1], value=1.5)
CASES["pad18_axes_reflect_no_value"] = lambda: pad_case("pad18_axes_reflect_no_value", 18,
                                                        "reflect", [2, 1], axes=[2])
CASES["pad18_axes_edge_crop"] = lambda: pad_case("pad18_axes_edge_crop", 18, "edge",
                                                 [-1, 2, 1, -1], axes=[0, 2])
CASES["pad19_wrap"] = lambda: pad_case("pad19_wrap", 19, "wrap", [0, 2, 1, 1, 1, 3])
def pad19_wrap_axes_larger_than_dim():
    spec = pad_case("pad19_wrap_axes_larger_than_dim", 19, "wrap", [5, 7], axes=[1])
    spec.numpy_ref = lambda f: [np.pad(f["x"], [(0, 0), (5, 7), (0, 0)], mode="wrap")]
    spec.why = ("Pad-19 'wrap' pads 'as if the data tensor forms a torus' (the ONNX reference "
                "is numpy.pad mode='wrap'), so pads larger than the dim wrap around more than "
                "once. onnxruntime-node 1.30 wraps only once and leaves the first "
                "pads_begin - dim rows 0; the expected output is numpy.pad's.")
    return spec


CASES["pad19_wrap_axes_larger_than_dim"] = pad19_wrap_axes_larger_than_dim


def pad_wrap_crop_ref(x, pads):
    """Pad-19 'wrap' with negative pads: the negative ones crop first, then
    numpy.pad mode='wrap' pads the cropped tensor (onnxruntime's order; the
    ONNX reference's numpy.pad has no negative widths)."""
    r = x.ndim
    crop = tuple(slice(max(0, -pads[d]), x.shape[d] - max(0, -pads[d + r])) for d in range(r))
    return np.pad(x[crop], [(max(0, pads[d]), max(0, pads[d + r])) for d in range(r)],
                  mode="wrap")


def pad19_wrap_negative(name, pads, axes=None):
    spec = pad_case(name, 19, "wrap", pads, axes=axes)
    full = list(pads)
    if axes is not None:  # scatter the per-axis pads over all 3 dims
        full = [0] * 6
        for k, a in enumerate(axes):
            full[a % 3], full[a % 3 + 3] = pads[k], pads[k + len(axes)]
    spec.numpy_ref = lambda f: [pad_wrap_crop_ref(f["x"], full)]
    return spec


# Crop one side, wrap the other, per axis.
CASES["pad19_wrap_negative_pads"] = lambda: pad19_wrap_negative(
    "pad19_wrap_negative_pads", [0, -1, 2, 0, 2, -1])
CASES["pad19_wrap_negative_pads_axes"] = lambda: pad19_wrap_negative(
    "pad19_wrap_negative_pads_axes", [1, -2, -1, 3], axes=[1, 2])


# --- ScatterElements / ScatterND 18: reduction max and min ----------------------
@case
def scatterelements18_max_min():
    r = rng("scatterelements18")
    data = r.standard_normal((3, 4)).astype(np.float32)
    idx = np.array([[1, 0, 2, 0], [1, 2, 2, 0]], dtype=np.int64)  # repeated targets
    upd = r.standard_normal((2, 4)).astype(np.float32) * 2
    return Spec([node("ScatterElements", ["d", "i", "u"], ["mx"], axis=0, reduction="max"),
                 node("ScatterElements", ["d", "i", "u"], ["mn"], axis=0, reduction="min")],
                [("d", data), ("u", upd)], [("mx", F32), ("mn", F32)], 18, [("i", idx)])


@case
def scatternd18_max_min_int64():
    r = rng("scatternd18")
    data = r.integers(-50, 50, size=(4, 3), dtype=np.int64)
    idx = np.array([[0], [2], [0]], dtype=np.int64)  # row 0 twice
    upd = r.integers(-60, 60, size=(3, 3), dtype=np.int64)
    return Spec([node("ScatterND", ["d", "i", "u"], ["mx"], reduction="max"),
                 node("ScatterND", ["d", "i", "u"], ["mn"], reduction="min")],
                [("d", data), ("u", upd)], [("mx", I64), ("mn", I64)], 18, [("i", idx)])


# --- Resize 18/19 with the default new attributes ------------------------------
def resize_case(name, opset, scales=None, sizes=None, **attrs):
    x = rng(name).standard_normal((1, 2, 3, 4)).astype(np.float32)
    ins, inits = ["x", "", ""], []
    if scales is not None:
        ins[2] = "scales"
        inits.append(("scales", np.array(scales, dtype=np.float32)))
    else:
        ins.append("sizes")
        inits.append(("sizes", np.array(sizes, dtype=np.int64)))
    return Spec([node("Resize", ins, ["y"], **attrs)], [("x", x)], [("y", F32)], opset, inits)


CASES["resize18_linear_scales_axes_all"] = lambda: resize_case(
    "resize18_linear_scales_axes_all", 18, scales=[1, 1, 2, 1.5], mode="linear",
    axes=[0, 1, 2, 3], antialias=0)
CASES["resize19_nearest_sizes_stretch"] = lambda: resize_case(
    "resize19_nearest_sizes_stretch", 19, sizes=[1, 2, 5, 7], mode="nearest",
    keep_aspect_ratio_policy="stretch", nearest_mode="floor",
    coordinate_transformation_mode="asymmetric")


# --- Resize 18 (antialias, axes, keep_aspect_ratio_policy), 19 (half_pixel_symmetric)
def resize_taps(ratio, scale, mode, antialias, a=-0.75):
    """Weights and first tap (relative to the base pixel) of one output:
    the ONNX reference's linear/cubic coefficients; with antialias the
    filter is stretched by 1/scale when downscaling and normalized."""
    s = min(scale, 1.0) if antialias else 1.0
    start = int(np.floor((-1.0 if mode == "linear" else -2.0) / s) + 1)
    n = 2 - 2 * start
    args = s * (np.arange(start, start + n) - ratio)
    if mode == "linear":
        c = np.clip(1 - np.abs(args), 0, 1)
    else:
        x = np.abs(args)
        c = np.where(x <= 1, (a + 2) * x ** 3 - (a + 3) * x ** 2 + 1,
                     np.where(x < 2, a * x ** 3 - 5 * a * x ** 2 + 8 * a * x - 4 * a, 0.0))
    return (c / c.sum() if antialias else c), start


def resize_1d_ref(x, axis, out_len, scale, mode, ctm, antialias, exclude=False, roi=(0, 1),
                  extrapolation=0.0):
    """Resizes |x| along |axis| (float64) as the ONNX reference's
    _interpolate_1d_with_x does (round_prefer_floor for nearest)."""
    x = np.moveaxis(x.astype(np.float64), axis, -1)
    n_in = x.shape[-1]
    y = np.zeros(x.shape[:-1] + (out_len,))
    out_w = scale * n_in
    for o in range(out_len):
        if ctm == "half_pixel":
            xo = (o + 0.5) / scale - 0.5
        elif ctm == "half_pixel_symmetric":
            xo = n_in / 2 * (1 - out_len / out_w) + (o + 0.5) / scale - 0.5
        elif ctm == "asymmetric":
            xo = o / scale
        elif ctm == "pytorch_half_pixel":
            xo = (o + 0.5) / scale - 0.5 if out_w > 1 else -0.5
        elif ctm == "tf_crop_and_resize":
            xo = (roi[0] * (n_in - 1) + o * (roi[1] - roi[0]) * (n_in - 1) / (out_w - 1)
                  if out_w > 1 else (roi[1] - roi[0]) * (n_in - 1) / 2 + roi[0] * (n_in - 1))
            if xo < 0 or xo > n_in - 1:
                y[..., o] = extrapolation
                continue
        else:
            raise ValueError(ctm)
        if mode == "nearest":
            i = int(np.floor(xo)) + (1 if xo - np.floor(xo) > 0.5 else 0)
            y[..., o] = x[..., min(max(i, 0), n_in - 1)]
            continue
        fl = np.floor(xo)
        ratio, base = (1.0, int(fl) - 1) if xo == fl else (xo - fl, int(fl))
        c, start = resize_taps(ratio, scale, mode, antialias)
        idx = [base + start + t for t in range(len(c))]
        if exclude:
            c = np.array([0.0 if (i < 0 or i >= n_in) else w for i, w in zip(idx, c)])
            c = c / c.sum()
        y[..., o] = sum(w * x[..., min(max(i, 0), n_in - 1)] for i, w in zip(idx, c))
    return np.moveaxis(y, -1, axis)


def resize_geometry_ref(shape, scales, sizes, axes, policy):
    """Output dims and per-dim scales of Resize-18: values per entry of axes;
    keep_aspect_ratio_policy uses one scale (min/max of sizes/shape) and
    rounds the output dims half up."""
    r = len(shape)
    axes = list(range(r)) if axes is None else [a % r for a in axes]
    out, sc = list(shape), [1.0] * r
    if scales is not None:
        for k, a in enumerate(axes):
            sc[a] = float(np.float32(scales[k]))
            out[a] = int(np.floor(shape[a] * sc[a]))
    elif policy == "stretch":
        for k, a in enumerate(axes):
            out[a], sc[a] = sizes[k], sizes[k] / shape[a]
    else:
        pick = min if policy == "not_larger" else max
        common = pick(sizes[k] / shape[a] for k, a in enumerate(axes))
        for a in axes:
            sc[a], out[a] = common, int(np.floor(common * shape[a] + 0.5))
    return out, sc, axes


def resize18_case(name, opset, shape, mode, scales=None, sizes=None, axes=None,
                  policy="stretch", ctm="half_pixel", antialias=0, exclude=0, roi=None,
                  extrapolation=None):
    x = rng(name).standard_normal(shape).astype(np.float32)
    ins, inits = ["x", "", ""], []
    if roi is not None:
        ins[1] = "roi"
        inits.append(("roi", np.array(roi, dtype=np.float32)))
    if scales is not None:
        ins[2] = "scales"
        inits.append(("scales", np.array(scales, dtype=np.float32)))
    else:
        ins.append("sizes")
        inits.append(("sizes", np.array(sizes, dtype=np.int64)))
    attrs = dict(mode=mode, coordinate_transformation_mode=ctm)
    if antialias:
        attrs["antialias"] = antialias
    if exclude:
        attrs["exclude_outside"] = exclude
    if axes is not None:
        attrs["axes"] = axes
    if policy != "stretch":
        attrs["keep_aspect_ratio_policy"] = policy
    if extrapolation is not None:
        attrs["extrapolation_value"] = extrapolation
    out, sc, dims = resize_geometry_ref(shape, scales, sizes, axes, policy)
    box = {}
    if roi is not None:
        box = {a: (roi[k], roi[len(dims) + k]) for k, a in enumerate(dims)}

    def ref(f):
        y = f["x"]
        for d in range(len(shape)):
            if out[d] != shape[d] or sc[d] != 1 or d in box:
                y = resize_1d_ref(y, d, out[d], sc[d], mode, ctm, antialias, exclude,
                                  box.get(d, (0, 1)), extrapolation or 0.0)
        return [y.astype(np.float32)]

    return Spec([node("Resize", ins, ["y"], **attrs)], [("x", x)], [("y", F32)], opset, inits,
                numpy_ref=ref)


CASES["resize18_antialias_linear_downscale"] = lambda: resize18_case(
    "resize18_antialias_linear_downscale", 18, (1, 2, 8, 9), "linear",
    scales=[1, 1, 0.5, 0.4], antialias=1)
CASES["resize18_antialias_cubic_exclude_outside"] = lambda: resize18_case(
    "resize18_antialias_cubic_exclude_outside", 18, (1, 2, 8, 9), "cubic",
    scales=[1, 1, 0.6, 0.3], antialias=1, exclude=1, ctm="asymmetric")
# Up in one dim, down in the other: antialias only widens the downscaled one.
CASES["resize18_antialias_cubic_up_down"] = lambda: resize18_case(
    "resize18_antialias_cubic_up_down", 18, (1, 1, 5, 9), "cubic",
    scales=[1, 1, 1.7, 0.45], antialias=1, ctm="pytorch_half_pixel")
# 8 x 10 taps per output element: the kernel loops over the taps.
CASES["resize18_antialias_linear_many_taps"] = lambda: resize18_case(
    "resize18_antialias_linear_many_taps", 18, (1, 1, 16, 20), "linear",
    scales=[1, 1, 0.25, 0.2], antialias=1)
CASES["resize18_not_larger_sizes_axes"] = lambda: resize18_case(
    "resize18_not_larger_sizes_axes", 18, (1, 2, 8, 9), "linear", sizes=[5, 7], axes=[2, 3],
    policy="not_larger")
CASES["resize18_not_smaller_cubic_axes"] = lambda: resize18_case(
    "resize18_not_smaller_cubic_axes", 18, (1, 2, 8, 9), "cubic", sizes=[12, 5],
    axes=[2, 3], policy="not_smaller")
CASES["resize18_not_larger_nearest_permuted_axes"] = lambda: resize18_case(
    "resize18_not_larger_nearest_permuted_axes", 18, (1, 2, 8, 9), "nearest", sizes=[3, 13],
    axes=[3, 2], policy="not_larger")
CASES["resize18_scales_negative_axes_subset"] = lambda: resize18_case(
    "resize18_scales_negative_axes_subset", 18, (1, 2, 8, 9), "linear", scales=[0.7, 1.6],
    axes=[-1, 2])
# roi lists the starts, then the ends, of the axes. Sizes, not scales: with
# scales the resized length of tf_crop_and_resize is scale * length in the
# ONNX reference but the output length in onnxruntime (an older question,
# not an opset-18 change).
CASES["resize18_crop_and_resize_axes"] = lambda: resize18_case(
    "resize18_crop_and_resize_axes", 18, (1, 2, 8, 9), "linear", sizes=[6, 11],
    axes=[2, 3], roi=[0.1, 0.2, 0.9, 1.1], ctm="tf_crop_and_resize", extrapolation=-2.0)
CASES["resize19_half_pixel_symmetric_cubic_axis"] = lambda: resize18_case(
    "resize19_half_pixel_symmetric_cubic_axis", 19, (1, 2, 8, 9), "cubic", scales=[0.7],
    axes=[2], ctm="half_pixel_symmetric")
CASES["resize19_half_pixel_symmetric_linear"] = lambda: resize18_case(
    "resize19_half_pixel_symmetric_linear", 19, (1, 2, 8, 9), "linear",
    scales=[1, 1, 0.6, 1.7], ctm="half_pixel_symmetric")
CASES["resize19_half_pixel_symmetric_antialias_not_larger"] = lambda: resize18_case(
    "resize19_half_pixel_symmetric_antialias_not_larger", 19, (1, 2, 8, 9), "linear",
    sizes=[5, 7], axes=[2, 3], policy="not_larger", ctm="half_pixel_symmetric", antialias=1)


# --- GroupNormalization 18 (scale/bias per group) and 21 (per channel) ---------
def groupnorm_case(name, opset, groups, per, eps=None):
    r = rng(name)
    x = (r.standard_normal((2, 6, 3, 2)) * 3 + 1).astype(np.float32)
    scale = r.standard_normal((per,)).astype(np.float32)
    bias = r.standard_normal((per,)).astype(np.float32)
    attrs = {"num_groups": groups}
    if eps is not None:
        attrs["epsilon"] = eps
    return Spec([node("GroupNormalization", ["x", "s", "b"], ["y"], **attrs)], [("x", x)],
                [("y", F32)], opset, [("s", scale), ("b", bias)])


def groupnorm18_per_group():
    spec = groupnorm_case("groupnorm18_per_group", 18, 3, 3)

    def ref(f):
        x = f["x"].astype(np.float64)
        g = x.reshape(2, 3, -1)
        mean = g.mean(axis=2, keepdims=True)
        var = g.var(axis=2, keepdims=True)
        norm = ((g - mean) / np.sqrt(var + 1e-5)).reshape(x.shape)
        s = np.repeat(spec.inits[0][1], 2).reshape(1, 6, 1, 1)
        b = np.repeat(spec.inits[1][1], 2).reshape(1, 6, 1, 1)
        return [(norm * s + b).astype(np.float32)]

    spec.numpy_ref = ref  # cross-checks onnxruntime's opset-18 (per-group) semantics
    return spec


CASES["groupnorm18_per_group"] = groupnorm18_per_group
CASES["groupnorm21_per_channel"] = lambda: groupnorm_case("groupnorm21_per_channel", 21, 2, 6,
                                                          eps=1e-3)
def groupnorm21_stash(name, stash, dtype):
    spec = groupnorm_case(name, 21, 3, 6)
    spec.nodes[0].attribute.append(helper.make_attribute("stash_type", stash))
    spec.feeds = [(n, a.astype(dtype)) for n, a in spec.feeds]
    spec.inits = [(n, a.astype(dtype)) for n, a in spec.inits]
    spec.outputs = [("y", F32 if dtype == np.float32 else TensorProto.DOUBLE)]
    return spec


# stash_type 11: float32 X with the statistics in double; 1 on double X:
# the statistics in float32 (the function body casts X to the stash type).
CASES["groupnorm21_stash_double"] = lambda: groupnorm21_stash(
    "groupnorm21_stash_double", 11, np.float32)
CASES["groupnorm21_double_x_stash_float"] = lambda: groupnorm21_stash(
    "groupnorm21_double_x_stash_float", 1, np.float64)
CASES["groupnorm21_groups_eq_channels"] = lambda: groupnorm_case(
    "groupnorm21_groups_eq_channels", 21, 6, 6)


# --- QuantizeLinear / DequantizeLinear 19-25 and QLinearMatMul 21 at their ------
# opset-13 semantics (float32 scales, 8-bit types, no blocking) ---------------
@case
def quantize19_per_axis_int8():
    r = rng("quantize19")
    x = (r.standard_normal((2, 3, 4)) * 20).astype(np.float32)
    x[0, 0, :2] = [1e6, -1e6]  # saturation
    return Spec([node("QuantizeLinear", ["x", "s", "zp"], ["y"], axis=1, saturate=1)],
                [("x", x)], [("y", TensorProto.INT8)], 19,
                [("s", np.array([0.5, 0.25, 1.0], np.float32)),
                 ("zp", np.array([0, -3, 5], np.int8))])


@case
def quantize21_output_dtype_no_zero_point():
    x = (rng("quantize21").standard_normal((3, 5)) * 40).astype(np.float32)
    return Spec([node("QuantizeLinear", ["x", "s"], ["y"], output_dtype=TensorProto.INT8,
                      block_size=0)],
                [("x", x)], [("y", TensorProto.INT8)], 21,
                [("s", np.array(0.5, np.float32))])


@case
def quantize23_precision_float_uint8():
    x = (rng("quantize23").standard_normal((4, 4)) * 30 + 60).astype(np.float32)
    return Spec([node("QuantizeLinear", ["x", "s", "zp"], ["y"], precision=TensorProto.FLOAT)],
                [("x", x)], [("y", U8)], 23,
                [("s", np.array(0.75, np.float32)), ("zp", np.array(10, np.uint8))])


@case
def dequantize21_per_axis_uint8():
    x = rng("dequantize21").integers(0, 256, size=(2, 4, 3), dtype=np.int64).astype(np.uint8)
    return Spec([node("DequantizeLinear", ["x", "s", "zp"], ["y"], axis=-1, block_size=0)],
                [("x", x)], [("y", F32)], 21,
                [("s", np.array([0.1, 0.2, 0.3], np.float32)),
                 ("zp", np.array([128, 0, 255], np.uint8))])


def quant_ref(x, s, zp, qdt, axis=1, block=0):
    """numpy QuantizeLinear-21 (round half to even, saturate to |qdt|'s
    range) with per-tensor, per-axis or blocked (|block| > 0: s and zp of
    x's rank, dim axis ceil(n / block), repeated over each block) params."""
    s, zp = expand_qparams(x, s, zp, axis, block)
    info = np.iinfo(qdt)
    return np.clip(np.rint(x / s) + zp, info.min, info.max).astype(qdt)


def expand_qparams(x, s, zp, axis, block):
    s = np.asarray(s, np.float32)
    zp = np.zeros(s.shape, np.int64) if zp is None else np.asarray(zp).astype(np.int64)
    if block:
        s = np.repeat(s, block, axis).take(range(x.shape[axis]), axis)
        zp = np.repeat(zp, block, axis).take(range(x.shape[axis]), axis)
    elif s.ndim == 1 and s.size > 1:
        shape = [1] * x.ndim
        shape[axis] = s.size
        s, zp = s.reshape(shape), zp.reshape(shape)
    return s, zp


def dequant_ref(x, s, zp, axis=1, block=0):
    s, zp = expand_qparams(x, s, zp, axis, block)
    return ((x.astype(np.int64) - zp) * s).astype(np.float32)


@case
def quantize21_int16_uint16_per_axis():
    """QuantizeLinear-21 to int16 (per axis 0) and uint16 (per tensor), with
    saturation at both ends."""
    r = rng("quantize21_int16")
    x = (r.standard_normal((3, 5)) * 3000).astype(np.float32)
    x[0, :2] = [1e7, -1e7]
    s = np.array([0.5, 0.25, 2.0], np.float32)
    zp = np.array([0, -300, 1000], np.int16)
    s2, zp2 = np.array(0.125, np.float32), np.array(30000, np.uint16)
    return Spec([node("QuantizeLinear", ["x", "s", "zp"], ["y"], axis=0),
                 node("QuantizeLinear", ["x", "s2", "zp2"], ["z"])],
                [("x", x)], [("y", TensorProto.INT16), ("z", TensorProto.UINT16)], 21,
                [("s", s), ("zp", zp), ("s2", s2), ("zp2", zp2)],
                numpy_ref=lambda f: [quant_ref(f["x"], s, zp, np.int16, axis=0),
                                     quant_ref(f["x"], s2, zp2, np.uint16)])


@case
def dequantize21_int16_uint16():
    """DequantizeLinear-21 from int16 (per axis 1, a run-time input) and
    uint16 (per tensor, a constant)."""
    r = rng("dequantize21_int16")
    x = r.integers(-32768, 32767, (2, 3, 4)).astype(np.int16)
    u = r.integers(0, 65535, (5,)).astype(np.uint16)
    s = np.array([0.5, 0.01, 3.0], np.float32)
    zp = np.array([0, 1234, -32768], np.int16)
    return Spec([node("DequantizeLinear", ["x", "s", "zp"], ["y"], axis=1),
                 node("DequantizeLinear", ["u", "s2", "zp2"], ["z"])],
                [("x", x)], [("y", F32), ("z", F32)], 21,
                [("s", s), ("zp", zp), ("u", u), ("s2", np.array(0.25, np.float32)),
                 ("zp2", np.array(40000, np.uint16))],
                numpy_ref=lambda f: [dequant_ref(f["x"], s, zp, axis=1),
                                     dequant_ref(u, np.array(0.25, np.float32),
                                                 np.array(40000, np.uint16))])


@case
def quantize21_block_size_axis1_uneven():
    """Blocked QuantizeLinear-21: block_size 3 along axis 1 of 7 (the last
    block holds one element), int8 zero points of x's rank."""
    r = rng("quantize21_block")
    x = (r.standard_normal((2, 7, 3)) * 10).astype(np.float32)
    s = r.uniform(0.05, 0.5, (2, 3, 3)).astype(np.float32)
    zp = r.integers(-5, 5, (2, 3, 3)).astype(np.int8)
    return Spec([node("QuantizeLinear", ["x", "s", "zp"], ["y"], axis=1, block_size=3)],
                [("x", x)], [("y", TensorProto.INT8)], 21, [("s", s), ("zp", zp)],
                numpy_ref=lambda f: [quant_ref(f["x"], s, zp, np.int8, axis=1, block=3)])


@case
def dequantize21_block_size_weights_matmul():
    """Blocked DequantizeLinear-21 of constant uint8 weights [K=8, N=3]
    along axis 0 with block_size 4 (scale and zero point [2, 3]), feeding a
    MatMul: the weight-only quantization exporters write."""
    r = rng("dequantize21_block")
    w = r.integers(0, 255, (8, 3)).astype(np.uint8)
    s = r.uniform(0.01, 0.05, (2, 3)).astype(np.float32)
    zp = r.integers(100, 150, (2, 3)).astype(np.uint8)
    a = r.standard_normal((2, 8)).astype(np.float32)
    return Spec([node("DequantizeLinear", ["w", "s", "zp"], ["wf"], axis=0, block_size=4),
                 node("MatMul", ["a", "wf"], ["y"])],
                [("a", a)], [("y", F32)], 21, [("w", w), ("s", s), ("zp", zp)],
                numpy_ref=lambda f: [(f["a"].astype(np.float64) @ dequant_ref(
                    w, s, zp, axis=0, block=4)).astype(np.float32)])


@case
def dequantize24_output_dtype_float_int32():
    x = rng("dequantize24").integers(-10**6, 10**6, size=(6,), dtype=np.int64).astype(np.int32)
    return Spec([node("DequantizeLinear", ["x", "s"], ["y"], output_dtype=TensorProto.FLOAT)],
                [("x", x)], [("y", F32)], 24, [("s", np.array(0.001, np.float32))])


# --- int4/uint4 (IR 10, opset 21+): storage, Q/DQ, Cast, data movement ---------
def i2(name, values, elem=None, int32_data=False):
    """An int2 (default for signed values) or uint2 TensorProto of |values|."""
    v = np.asarray(values)
    return onnx_case.subbyte_tensor(name, v, elem or (I2 if v.dtype.kind == "i" else U2),
                                    int32_data)


def i4(name, values, elem=None, int32_data=False):
    """An int4 (default) or uint4 TensorProto of |values| (onnx_case.subbyte_tensor)."""
    v = np.asarray(values)
    if elem is None:
        elem = I4 if v.dtype.kind == "i" else U4
    return onnx_case.subbyte_tensor(name, v, elem, int32_data)


@case
def int4_storage21_initializers_constant_io():
    """int4/uint4 storage: an int4 initializer of odd size (raw_data, the
    last byte's high nibble unused), a uint4 initializer in int32_data (one
    packed byte per value), a Constant node's int4 value, each widened by
    Cast to float32; a run-time int4 input (one element per byte in mlcc's
    API) transposed to an int4 output and widened to int32."""
    r = rng("int4_storage21")
    w = r.integers(-8, 8, (3, 5)).astype(np.int8)
    w[0, :2] = [-8, 7]
    u = r.integers(0, 16, (2, 3)).astype(np.uint8)
    u[0, :2] = [0, 15]
    c = np.array([-8, -1, 0, 1, 7], np.int8)
    x = r.integers(-8, 8, (2, 3)).astype(np.int8)
    const = helper.make_node("Constant", [], ["c"], value=i4("cv", c))
    return Spec([const,
                 node("Cast", ["w"], ["wf"], to=F32), node("Cast", ["u"], ["uf"], to=F32),
                 node("Cast", ["c"], ["cf"], to=F32), node("Transpose", ["x"], ["xt"]),
                 node("Cast", ["x"], ["xi"], to=I32)],
                [("x", i4("x", x))],
                [("wf", F32), ("uf", F32), ("cf", F32), ("xt", I4), ("xi", I32)], 21,
                [("w", i4("w", w)), ("u", i4("u", u, int32_data=True))],
                numpy_ref=lambda f: [w.astype(np.float32), u.astype(np.float32),
                                     c.astype(np.float32), f["x"].T, f["x"].astype(np.int32)])


def dq4_matmul_case(name, opset, elem, k, n, block, zero_point=True, int32_data=False):
    """Weight-only 4-bit quantization as exporters write it: a constant
    int4/uint4 weight [K, N] -> DequantizeLinear(axis 0, block_size) ->
    MatMul with a run-time float activation [2, K]."""
    r = rng(name)
    lo, hi = (-8, 8) if elem == I4 else (0, 16)
    w = r.integers(lo, hi, (k, n)).astype(NP_OF[elem])
    w[0, 0], w[1, 0] = lo, hi - 1
    nb = -(-k // block)
    s = r.uniform(0.01, 0.1, (nb, n)).astype(np.float32)
    zp = r.integers(lo, hi, (nb, n)).astype(NP_OF[elem]) if zero_point else None
    a = r.standard_normal((2, k)).astype(np.float32)
    ins = ["w", "s"] + (["zp"] if zero_point else [])
    inits = [("w", i4("w", w, elem, int32_data)), ("s", s)]
    if zero_point:
        inits.append(("zp", i4("zp", zp, elem)))
    return Spec([node("DequantizeLinear", ins, ["wf"], axis=0, block_size=block),
                 node("MatMul", ["a", "wf"], ["y"])],
                [("a", a)], [("y", F32)], opset, inits,
                numpy_ref=lambda f: [(f["a"].astype(np.float64) @ dequant_ref(
                    w, s, zp, axis=0, block=block)).astype(np.float32)])


CASES["dequantize21_int4_block32_weights_matmul"] = lambda: dq4_matmul_case(
    "dequantize21_int4_block32_weights_matmul", 21, I4, 96, 5, 32)
# uint4 with block_size 64 over K = 100 (the last block holds 36 rows).
CASES["dequantize23_uint4_block64_uneven_weights_matmul"] = lambda: dq4_matmul_case(
    "dequantize23_uint4_block64_uneven_weights_matmul", 23, U4, 100, 3, 64)
# block_size 128, no zero point (0), the weight in int32_data.
CASES["dequantize25_int4_block128_no_zero_point_int32_data"] = lambda: dq4_matmul_case(
    "dequantize25_int4_block128_no_zero_point_int32_data", 25, I4, 256, 4, 128,
    zero_point=False, int32_data=True)


@case
def dequantize24_int4_uint4_runtime_per_tensor_per_axis():
    """DequantizeLinear-24 of run-time int4 (per axis 1, int4 zero points)
    and uint4 (per tensor) inputs, held one element per byte."""
    r = rng("dequantize24_int4")
    x = r.integers(-8, 8, (2, 3, 5)).astype(np.int8)
    u = r.integers(0, 16, (7,)).astype(np.uint8)
    s = np.array([0.5, 0.125, 2.0], np.float32)
    zp = np.array([-8, 0, 7], np.int8)
    s2, zp2 = np.array(0.25, np.float32), np.array(9, np.uint8)
    return Spec([node("DequantizeLinear", ["x", "s", "zp"], ["y"], axis=1),
                 node("DequantizeLinear", ["u", "s2", "zp2"], ["z"])],
                [("x", i4("x", x)), ("u", i4("u", u))], [("y", F32), ("z", F32)], 24,
                [("s", s), ("zp", i4("zp", zp)), ("s2", s2), ("zp2", i4("zp2", zp2))],
                numpy_ref=lambda f: [dequant_ref(f["x"], s, zp, axis=1),
                                     dequant_ref(f["u"], s2, zp2)])


@case
def quantize21_int4_uint4_per_tensor_per_axis_saturate():
    """QuantizeLinear-21 to int4 (per axis 0, int4 zero points) and uint4
    (per tensor, output_dtype without a zero point): round half to even,
    saturation to [-8, 7] and [0, 15], ties at .5."""
    r = rng("quantize21_int4")
    x = (r.standard_normal((3, 6)) * 4).astype(np.float32)
    x[0, :4] = [100, -100, 2.5, -2.5]
    x[1, :2] = [0.75, -0.75]
    s = np.array([0.5, 1.0, 0.25], np.float32)
    zp = np.array([0, -2, 3], np.int8)
    s2 = np.array(0.5, np.float32)
    return Spec([node("QuantizeLinear", ["x", "s", "zp"], ["y"], axis=0),
                 node("QuantizeLinear", ["x", "s2"], ["z"], output_dtype=U4)],
                [("x", x)], [("y", I4), ("z", U4)], 21,
                [("s", s), ("zp", i4("zp", zp)), ("s2", s2)],
                numpy_ref=lambda f: [q4_ref(f["x"], s, zp, -8, 7, axis=0),
                                     q4_ref(f["x"], s2, None, 0, 15)])


@case
def quantize21_int4_block_size_axis1():
    """Blocked QuantizeLinear-21 to int4 along axis 1 (block_size 4 over 10:
    the last block holds 2), scale and int4 zero point [2, 3, 3]."""
    r = rng("quantize21_int4_block")
    x = (r.standard_normal((2, 10, 3)) * 3).astype(np.float32)
    s = r.uniform(0.2, 1.0, (2, 3, 3)).astype(np.float32)
    zp = r.integers(-3, 4, (2, 3, 3)).astype(np.int8)
    return Spec([node("QuantizeLinear", ["x", "s", "zp"], ["y"], axis=1, block_size=4)],
                [("x", x)], [("y", I4)], 21, [("s", s), ("zp", i4("zp", zp))],
                numpy_ref=lambda f: [q4_ref(f["x"], s, zp, -8, 7, axis=1, block=4)])


def q4_ref(x, s, zp, lo, hi, axis=1, block=0):
    """numpy QuantizeLinear-21 to a 4-bit type (range [lo, hi])."""
    s, zp = expand_qparams(x, s, zp, axis, block)
    return np.clip(np.rint(x / s) + zp, lo, hi).astype(np.int8 if lo < 0 else np.uint8)


def to4_ref(x, elem):
    """Cast to int4/uint4 (int2/uint2) as mlcc and onnxruntime 1.30 do:
    integers keep their low 4 (2) bits (the spec: discard higher bits,
    reinterpret); floats are rounded half away from zero first (NaN gives 0;
    the spec leaves fractional and out-of-range floats open)."""
    x = np.asarray(x)
    if x.dtype.kind == "f":
        f = np.nan_to_num(x.astype(np.float64), nan=0.0)
        i = np.trunc(f)
        i = i + (f - i >= 0.5) - (f - i <= -0.5)
        x = i.astype(np.int64)
    bits = onnx_case.SUBBYTE_BITS[elem]
    nib = x.astype(np.int64) & ((1 << bits) - 1)
    if elem in (I4, I2):
        return np.where(nib >= (1 << (bits - 1)), nib - (1 << bits), nib).astype(np.int8)
    return nib.astype(np.uint8)


@case
def cast21_int4_uint4_to_from():
    """Cast-21 to int4/uint4 from float32 (ties, fractions, out of range,
    NaN), int32 (wraps to the low 4 bits), float16 and double, and back from
    them to float32, uint4 (wraps), int8, int64 and bool; CastLike-21 to an
    int4 'target_type'."""
    f = np.array([-20.5, -8.6, -8.4, -7.5, -2.5, -1.5, -0.5, -0.25, 0, 0.5, 1.5, 2.5, 6.5,
                  7.4, 7.6, 15.5, 100, np.nan], np.float32)
    i = np.array([-129, -20, -9, -8, -1, 0, 7, 8, 15, 16, 200, 2**31 - 1, -2**31], np.int32)
    h = np.array([-3.5, -0.5, 0.5, 3.49, 9.0, 14.5], np.float16)
    d = np.array([-8.5, -0.5000001, 0.4999999, 7.5, 31.0], np.float64)
    like = i4("like", np.array([0], np.int8))
    return Spec([node("Cast", ["f"], ["fi"], to=I4), node("Cast", ["f"], ["fu"], to=U4),
                 node("Cast", ["i"], ["ii"], to=I4), node("Cast", ["i"], ["iu"], to=U4),
                 node("Cast", ["h"], ["hi"], to=I4), node("Cast", ["d"], ["du"], to=U4),
                 node("Cast", ["ii"], ["back_f"], to=F32), node("Cast", ["ii"], ["back_u"], to=U4),
                 node("Cast", ["iu"], ["back_i8"], to=TensorProto.INT8),
                 node("Cast", ["ii"], ["back_i64"], to=I64),
                 node("Cast", ["ii"], ["back_b"], to=BOOL),
                 node("CastLike", ["f", "like"], ["cl"])],
                [("f", f), ("i", i), ("h", h), ("d", d)],
                [("fi", I4), ("fu", U4), ("ii", I4), ("iu", U4), ("hi", I4), ("du", U4),
                 ("back_f", F32), ("back_u", U4), ("back_i8", TensorProto.INT8),
                 ("back_i64", I64), ("back_b", BOOL), ("cl", I4)], 21, [("like", like)],
                numpy_ref=lambda fd: [
                    to4_ref(f, I4), to4_ref(f, U4), to4_ref(i, I4), to4_ref(i, U4),
                    to4_ref(h, I4), to4_ref(d, U4), to4_ref(i, I4).astype(np.float32),
                    to4_ref(to4_ref(i, I4), U4), to4_ref(i, U4).astype(np.int8),
                    to4_ref(i, I4).astype(np.int64), to4_ref(i, I4) != 0, to4_ref(f, I4)])


ORT_NO_4BIT_MOVES = ("onnxruntime-node 1.30 has no CPU kernel for Reshape, Flatten, Squeeze, "
                     "Unsqueeze, Identity, Pad, Shape, Size or ConstantOfShape on int4/uint4 "
                     "(it refuses the model: \"Could not find an implementation for "
                     "Reshape(21) node\"; it has Cast, CastLike, Transpose, QuantizeLinear "
                     "and DequantizeLinear), so the reference is numpy; the ops only move "
                     "elements.")


@case
def movement21_int4_reshape_flatten_squeeze_unsqueeze_identity():
    """The data-movement ops of opset 21 on a run-time int4 tensor [2, 1, 6]:
    Reshape, Flatten, Squeeze, Unsqueeze, Identity, Transpose, outputs int4."""
    x = rng("movement21_int4").integers(-8, 8, (2, 1, 6)).astype(np.int8)
    x[0, 0, :2] = [-8, 7]
    return Spec([node("Reshape", ["x", "shape"], ["r"]), node("Flatten", ["x"], ["fl"], axis=2),
                 node("Squeeze", ["x", "ax1"], ["sq"]), node("Unsqueeze", ["x", "ax0"], ["un"]),
                 node("Identity", ["x"], ["id"]), node("Transpose", ["r"], ["tr"], perm=[1, 0])],
                [("x", i4("x", x))], [("r", I4), ("fl", I4), ("sq", I4), ("un", I4),
                                      ("id", I4), ("tr", I4)], 21,
                [("shape", np.array([3, 4], np.int64)), ("ax1", np.array([1], np.int64)),
                 ("ax0", np.array([0], np.int64))],
                numpy_ref=lambda f: [f["x"].reshape(3, 4), f["x"].reshape(2, 6), f["x"].reshape(2, 6),
                                     f["x"][None], f["x"], f["x"].reshape(3, 4).T],
                ort_refuses=ORT_NO_4BIT_MOVES)


@case
def movement21_uint4_pad_shape_size_constantofshape():
    """Pad-21 on uint4 (constant mode with a uint4 constant_value, edge
    mode), Shape-21 and Size-21 of a uint4 tensor, ConstantOfShape-21 with
    an int4 value."""
    x = rng("movement21_uint4").integers(0, 16, (2, 3)).astype(np.uint8)
    cos_v = i4("v", np.array([-5], np.int8))
    return Spec([node("Pad", ["x", "pads", "cv"], ["pc"]),
                 node("Pad", ["x", "pads"], ["pe"], mode="edge"),
                 node("Shape", ["x"], ["sh"]), node("Size", ["x"], ["sz"]),
                 node("ConstantOfShape", ["cs"], ["co"], value=cos_v)],
                [("x", i4("x", x))],
                [("pc", U4), ("pe", U4), ("sh", I64), ("sz", I64), ("co", I4)], 21,
                [("pads", np.array([1, 0, 0, 2], np.int64)), ("cv", i4("cv", np.array(13, np.uint8))),
                 ("cs", np.array([2, 3], np.int64))],
                numpy_ref=lambda f: [np.pad(f["x"], ((1, 0), (0, 2)), constant_values=13),
                                     np.pad(f["x"], ((1, 0), (0, 2)), mode="edge"),
                                     np.array([2, 3], np.int64), np.array(6, np.int64),
                                     np.full((2, 3), -5, np.int8)],
                ort_refuses=ORT_NO_4BIT_MOVES)


@case
def if21_int4_branches():
    """If-21 with a run-time condition whose branches yield int4 (a
    Transpose + Reshape of an outer int4 input, or Casts to int32 and back):
    one If on c (true) and one on Not(c), so both branches are checked."""
    x = rng("if21_int4").integers(-8, 8, (2, 3)).astype(np.int8)
    then_g = onnx_case.graph([node("Transpose", ["x"], ["t"], perm=[1, 0]),
                              node("Reshape", ["t", "shp"], ["o"])], "then", [],
                             [onnx_case.value_info("o", I4, [2, 3])],
                             [("shp", np.array([2, 3], np.int64))])
    else_g = onnx_case.graph([node("Cast", ["x"], ["w"], to=I32),
                              node("Cast", ["w"], ["o2"], to=I4)], "else", [],
                             [onnx_case.value_info("o2", I4, [2, 3])])
    return Spec([node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
                 node("Not", ["c"], ["nc"]),
                 node("If", ["nc"], ["z"], then_branch=then_g, else_branch=else_g)],
                [("c", np.array(True)), ("x", i4("x", x))], [("y", I4), ("z", I4)], 21,
                numpy_ref=lambda f: [f["x"].T.reshape(2, 3), f["x"]],
                ort_refuses=ORT_NO_4BIT_MOVES.replace("Reshape, ", "Reshape (in the If's "
                                                      "branch), "))


@case
def loop21_int4_carried_and_scan_output():
    """Loop-21 (trip count 3) carrying an int4 tensor: each iteration adds 3
    through int32 and Casts back to int4 (wrapping past 7), and emits the
    carried value as a scan output (int4 [3, 4])."""
    x = np.array([-8, 0, 5, 7], np.int8)
    body = onnx_case.graph(
        [node("Cast", ["v"], ["w"], to=I32), node("Add", ["w", "three"], ["w3"]),
         node("Cast", ["w3"], ["v_out"], to=I4), node("Identity", ["v"], ["scan"]),
         node("Identity", ["cond"], ["cond_out"])],
        "body", [onnx_case.value_info("i", I64, []), onnx_case.value_info("cond", BOOL, []),
                 onnx_case.value_info("v", I4, [4])],
        [onnx_case.value_info("cond_out", BOOL, []), onnx_case.value_info("v_out", I4, [4]),
         onnx_case.value_info("scan", I4, [4])],
        [("three", np.array(3, np.int32))])

    def ref(f):
        v, rows = f["x"].astype(np.int64), []
        for _ in range(3):
            rows.append(to4_ref(v, I4))
            v = to4_ref(v + 3, I4).astype(np.int64)
        return [to4_ref(v, I4), np.stack(rows)]
    return Spec([node("Loop", ["m", "c", "x"], ["y", "ys"], body=body)],
                [("x", i4("x", x))], [("y", I4), ("ys", I4)], 21,
                [("m", np.array(3, np.int64)), ("c", np.array(True))], numpy_ref=ref,
                ort_refuses=ORT_NO_4BIT_MOVES.replace("Reshape, ", "Loop, Identity (in the "
                                                      "body), Reshape, "))


@case
def int2_25_storage_cast_transpose():
    """int2/uint2 (IR 11, opset 25): an int2 initializer of 7 elements
    (raw_data, four per byte), a uint2 initializer in int32_data, Cast to
    and from int2/uint2 (float32 rounded half away from zero, int32 keeping
    the low 2 bits), a run-time int2 input (one element per byte) through
    Transpose to an int2 output."""
    w = np.array([-2, -1, 0, 1, 1, -2, 0], np.int8)
    u = np.array([[0, 3, 2], [1, 2, 3]], np.uint8)
    f = np.array([-2.5, -1.5, -0.5, 0.5, 1.49, 1.5, 2.0, 5.0, np.nan], np.float32)
    i = np.array([-5, -3, -2, -1, 0, 1, 2, 3, 4, 7], np.int32)
    x = np.array([[-2, 1, 0], [-1, 1, -2]], np.int8)
    return Spec([node("Cast", ["w"], ["wf"], to=F32), node("Cast", ["u"], ["ui"], to=I32),
                 node("Cast", ["f"], ["fi"], to=I2), node("Cast", ["i"], ["iu"], to=U2),
                 node("Cast", ["fi"], ["back_f"], to=F32), node("Transpose", ["x"], ["xt"])],
                [("f", f), ("i", i), ("x", i2("x", x))],
                [("wf", F32), ("ui", I32), ("fi", I2), ("iu", U2), ("back_f", F32), ("xt", I2)],
                25, [("w", i2("w", w)), ("u", i2("u", u, int32_data=True))],
                numpy_ref=lambda fd: [w.astype(np.float32), u.astype(np.int32), to4_ref(f, I2),
                                      to4_ref(i, U2), to4_ref(f, I2).astype(np.float32),
                                      fd["x"].T])


@case
def qdq25_int2_uint2_block_weights_matmul():
    """DequantizeLinear-25 of a constant int2 weight [K=40, N=3] blocked
    along axis 0 (block_size 16, int2 zero points) -> MatMul, and
    QuantizeLinear-25 of the activation to uint2 (per tensor, saturating to
    [0, 3]) widened back by DequantizeLinear."""
    r = rng("qdq25_int2")
    w = r.integers(-2, 2, (40, 3)).astype(np.int8)
    s = r.uniform(0.05, 0.2, (3, 3)).astype(np.float32)
    zp = r.integers(-2, 2, (3, 3)).astype(np.int8)
    a = r.standard_normal((2, 40)).astype(np.float32)
    s2, zp2 = np.array(0.5, np.float32), np.array(1, np.uint8)
    return Spec([node("DequantizeLinear", ["w", "s", "zp"], ["wf"], axis=0, block_size=16),
                 node("MatMul", ["a", "wf"], ["y"]),
                 node("QuantizeLinear", ["a", "s2", "zp2"], ["q"]),
                 node("DequantizeLinear", ["q", "s2", "zp2"], ["aq"])],
                [("a", a)], [("y", F32), ("q", U2), ("aq", F32)], 25,
                [("w", i2("w", w)), ("s", s), ("zp", i2("zp", zp)), ("s2", s2),
                 ("zp2", i2("zp2", zp2))],
                numpy_ref=lambda f: [
                    (f["a"].astype(np.float64) @ dequant_ref(w, s, zp, axis=0, block=16)
                     ).astype(np.float32),
                    q4_ref(f["a"], s2, zp2, 0, 3),
                    dequant_ref(q4_ref(f["a"], s2, zp2, 0, 3), s2, zp2)])


@case
def qlinearmatmul21_uint8():
    r = rng("qlinearmatmul21")
    a = r.integers(0, 256, size=(2, 3, 4), dtype=np.int64).astype(np.uint8)
    b = r.integers(0, 256, size=(4, 5), dtype=np.int64).astype(np.uint8)
    f = lambda v: np.array(v, np.float32)
    u = lambda v: np.array(v, np.uint8)
    return Spec([node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])],
                [("a", a)], [("y", U8)], 21,
                [("as", f(0.02)), ("az", u(120)), ("b", b), ("bs", f(0.03)), ("bz", u(130)),
                 ("ys", f(0.05)), ("yz", u(100))])


# --- DFT 20: axis as input 2 (default -2) --------------------------------------
@case
def dft20_default_axis_real():
    x = rng("dft20_default").standard_normal((2, 8, 1)).astype(np.float32)
    return Spec([node("DFT", ["x"], ["y"])], [("x", x)], [("y", F32)], 20)


@case
def dft20_axis0_complex_inverse():
    # axis 0: DFT-20 has no batch dim (DFT-17 required axis >= 1)
    x = rng("dft20_axis0").standard_normal((6, 3, 2)).astype(np.float32)
    return Spec([node("DFT", ["x", "", "axis"], ["y"], inverse=1)], [("x", x)], [("y", F32)],
                20, [("axis", np.array(0, np.int64))])


@case
def dft20_onesided_length_axis_neg():
    x = rng("dft20_onesided").standard_normal((2, 5, 7, 1)).astype(np.float32)
    return Spec([node("DFT", ["x", "n", "axis"], ["y"], onesided=1)], [("x", x)], [("y", F32)],
                20, [("n", np.array(10, np.int64)), ("axis", np.array(-3, np.int64))])


# --- CenterCropPad 18 --------------------------------------------------------------
@case
def centercroppad18_crop_and_pad_odd():
    # axis 1: 7 -> 4 (crop 3: start rounded down), axis 2: 3 -> 6 (pad 3: extra on the right)
    x = rng("ccp18_a").standard_normal((2, 7, 3)).astype(np.float32)
    return Spec([node("CenterCropPad", ["x", "shape"], ["y"], axes=[1, -1])], [("x", x)],
                [("y", F32)], 18, [("shape", np.array([4, 6], np.int64))])


@case
def centercroppad18_all_axes_int64_data():
    x = rng("ccp18_b").integers(-100, 100, size=(4, 5), dtype=np.int64)
    return Spec([node("CenterCropPad", ["x", "shape"], ["y"])], [("x", x)], [("y", I64)], 18,
                [("shape", np.array([6, 2], np.int64))])  # int32: onnxruntime 1.30 refuses it


# --- RMSNormalization 23 --------------------------------------------------------
@case
def rmsnorm23_last_axis():
    r = rng("rmsnorm23_last")
    x = (r.standard_normal((2, 5, 64)) * 2 + 0.5).astype(np.float32)
    scale = r.standard_normal((64,)).astype(np.float32)
    return Spec([node("RMSNormalization", ["x", "s"], ["y"], epsilon=1e-6)], [("x", x)],
                [("y", F32)], 23, [("s", scale)])


@case
def rmsnorm23_axis1_broadcast_scale():
    # normalize over [axis=1, rank) = dims (3, 7); scale [1, 7] broadcasts over them
    r = rng("rmsnorm23_axis1")
    x = r.standard_normal((4, 3, 7)).astype(np.float32)
    scale = r.standard_normal((1, 7)).astype(np.float32)
    return Spec([node("RMSNormalization", ["x", "s"], ["y"], axis=1)], [("x", x)],
                [("y", F32)], 23, [("s", scale)])


# --- GridSample 20 (modes renamed linear/cubic) --------------------------------
def gridsample_case(name, opset, **attrs):
    r = rng(name)
    x = r.standard_normal((1, 2, 4, 5)).astype(np.float32)
    g = r.uniform(-1.2, 1.2, size=(1, 3, 6, 2)).astype(np.float32)
    return Spec([node("GridSample", ["x", "g"], ["y"], **attrs)], [("x", x), ("g", g)],
                [("y", F32)], opset)


CASES["gridsample20_linear_default"] = lambda: gridsample_case("gridsample20_linear", 20)
# cubic with padding_mode border disagrees with onnxruntime at opset 16 already
# (mlcc issue, not an opset-20 change): not covered here.
CASES["gridsample20_cubic_zeros_align"] = lambda: gridsample_case(
    "gridsample20_cubic", 20, mode="cubic", padding_mode="zeros", align_corners=1)
CASES["gridsample22_nearest_reflection"] = lambda: gridsample_case(
    "gridsample22_nearest", 22, mode="nearest", padding_mode="reflection")


# --- GridSample 20 on 5-D inputs (trilinear / nearest) -------------------------
def gs_reflect_ref(x, lo, hi):
    span = hi - lo
    if lo <= x <= hi:
        return x
    d = lo - x if x < lo else x - hi
    n = int(d // span)
    r = d - n * span
    if x < lo:
        return lo + r if n % 2 == 0 else hi - r
    return hi - r if n % 2 == 0 else lo + r


def gridsample_nd_ref(x, g, mode, pad, align):
    """The ONNX GridSample reference for linear/nearest on N-d inputs:
    grid component k addresses axis -1-k; denormalize, round half to even
    (nearest), clamp every coordinate when any is outside (border) or
    reflect (reflection); taps outside read 0 (zeros)."""
    sp = x.shape[2:]
    s_ = len(sp)
    lens = sp[::-1]
    lo = [0.0 if align else -0.5] * s_
    hi = [(n - 1.0) if align else n - 0.5 for n in lens]
    y = np.zeros(x.shape[:2] + g.shape[1:-1])
    for n in range(x.shape[0]):
        for o in itertools.product(*[range(k) for k in g.shape[1:-1]]):
            p = [((float(g[(n,) + o + (k,)]) + 1) / 2 * (lens[k] - 1)) if align else
                 (((float(g[(n,) + o + (k,)]) + 1) * lens[k] - 1) / 2) for k in range(s_)]
            if mode == "nearest":
                p = [float(np.rint(v)) for v in p]
            if pad == "border" and any(not (lo[k] <= p[k] <= hi[k]) for k in range(s_)):
                p = [min(max(p[k], 0.0), lens[k] - 1.0) for k in range(s_)]
            elif pad == "reflection":
                p = [gs_reflect_ref(p[k], lo[k], hi[k]) for k in range(s_)]
            taps = [[(int(p[k]), 1.0)] if mode == "nearest" else
                    [(int(np.floor(p[k])), 1 - (p[k] - np.floor(p[k]))),
                     (int(np.floor(p[k])) + 1, p[k] - np.floor(p[k]))] for k in range(s_)]
            for combo in itertools.product(*taps):
                w, idx, inside = 1.0, [], True
                for k, (i, wk) in enumerate(combo):
                    if pad == "zeros":
                        inside = inside and 0 <= i < lens[k]
                    elif pad == "reflection":
                        i = int(gs_reflect_ref(float(i), lo[k], hi[k]))
                    idx.append(min(max(i, 0), lens[k] - 1))
                    w *= wk
                if inside:
                    y[(n, slice(None)) + o] += w * x[(n, slice(None)) + tuple(idx[::-1])]
    return y.astype(x.dtype)


def gridsample5d_case(name, opset, mode, pad, align):
    r = rng(name)
    x = r.standard_normal((2, 3, 3, 4, 5)).astype(np.float32)
    g = r.uniform(-1.25, 1.25, size=(2, 2, 3, 4, 3)).astype(np.float32)
    return Spec([node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=pad,
                      align_corners=align)], [("x", x), ("g", g)], [("y", F32)], opset,
                numpy_ref=lambda f: [gridsample_nd_ref(f["x"], f["g"], mode, pad, align)])


CASES["gridsample20_5d_linear_zeros"] = lambda: gridsample5d_case(
    "gridsample20_5d_linear_zeros", 20, "linear", "zeros", 0)
CASES["gridsample20_5d_linear_border_align"] = lambda: gridsample5d_case(
    "gridsample20_5d_linear_border_align", 20, "linear", "border", 1)
CASES["gridsample20_5d_linear_reflection"] = lambda: gridsample5d_case(
    "gridsample20_5d_linear_reflection", 20, "linear", "reflection", 0)
CASES["gridsample22_5d_nearest_zeros_align"] = lambda: gridsample5d_case(
    "gridsample22_5d_nearest_zeros_align", 22, "nearest", "zeros", 1)
CASES["gridsample20_5d_nearest_reflection_align"] = lambda: gridsample5d_case(
    "gridsample20_5d_nearest_reflection_align", 20, "nearest", "reflection", 1)
CASES["gridsample20_5d_nearest_border"] = lambda: gridsample5d_case(
    "gridsample20_5d_nearest_border", 20, "nearest", "border", 0)


# --- CumProd 26 -----------------------------------------------------------------
@case
def cumprod26_exclusive_reverse():
    x = rng("cumprod26_a").uniform(0.5, 1.5, size=(3, 5)).astype(np.float32)
    return Spec([node("CumProd", ["x", "axis"], ["y"], exclusive=1, reverse=1),
                 node("CumProd", ["x", "axis"], ["z"])], [("x", x)], [("y", F32), ("z", F32)],
                26, [("axis", np.array(1, np.int64))])


@case
def cumprod26_int64_axis_input():
    x = rng("cumprod26_b").integers(-3, 4, size=(4, 3), dtype=np.int64)
    a = np.array(0, np.int64)
    return Spec([node("CumProd", ["x", "axis"], ["y"])], [("x", x), ("axis", a)],
                [("y", I64)], 26)


# --- RotaryEmbedding 23 ---------------------------------------------------------
def rotary_caches(r, rows, half, prefix=()):
    theta = r.uniform(0, 6.3, size=tuple(prefix) + (rows, half))
    return np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32)


@case
def rotary23_4d_position_ids():
    r = rng("rotary23_4d")
    x = r.standard_normal((2, 3, 5, 8)).astype(np.float32)  # [B, H, S, D]
    cos, sin = rotary_caches(r, 12, 4)
    pos = r.integers(0, 12, size=(2, 5), dtype=np.int64)
    return Spec([node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"])],
                [("x", x), ("pos", pos)], [("y", F32)], 23, [("cos", cos), ("sin", sin)])


@case
def rotary23_3d_interleaved_partial():
    r = rng("rotary23_3d")
    x = r.standard_normal((2, 4, 2 * 10)).astype(np.float32)  # [B, S, H*D], H=2, D=10
    cos, sin = rotary_caches(r, 4, 3, prefix=(2,))  # [B, S, rot/2], rot = 6
    return Spec([node("RotaryEmbedding", ["x", "cos", "sin"], ["y"], num_heads=2,
                      interleaved=1, rotary_embedding_dim=6)],
                [("x", x)], [("y", F32)], 23, [("cos", cos), ("sin", sin)])


@case
def rotary23_3d_half_split_cache_inputs():
    r = rng("rotary23_split")
    x = r.standard_normal((1, 6, 4 * 4)).astype(np.float32)
    cos, sin = rotary_caches(r, 8, 2)
    pos = np.array([[0, 1, 2, 3, 4, 5]], np.int64)
    return Spec([node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], num_heads=4)],
                [("x", x), ("cos", cos), ("sin", sin), ("pos", pos)], [("y", F32)], 23)


# --- Attention 23 ---------------------------------------------------------------
@case
def attention23_4d_mha():
    r = rng("attention23_mha")
    q = r.standard_normal((2, 3, 4, 8)).astype(np.float32)
    k = r.standard_normal((2, 3, 6, 8)).astype(np.float32)
    v = r.standard_normal((2, 3, 6, 5)).astype(np.float32)
    return Spec([node("Attention", ["q", "k", "v"], ["y"])], [("q", q), ("k", k), ("v", v)],
                [("y", F32)], 23)


@case
def attention23_3d_gqa_causal_scale():
    r = rng("attention23_gqa")
    q = r.standard_normal((1, 5, 4 * 6)).astype(np.float32)   # Hq = 4, D = 6
    k = r.standard_normal((1, 5, 2 * 6)).astype(np.float32)   # Hkv = 2
    v = r.standard_normal((1, 5, 2 * 3)).astype(np.float32)   # Dv = 3
    return Spec([node("Attention", ["q", "k", "v"], ["y"], q_num_heads=4, kv_num_heads=2,
                      is_causal=1, scale=0.3)],
                [("q", q), ("k", k), ("v", v)], [("y", F32)], 23)


@case
def attention23_bool_mask_softcap_mqa():
    r = rng("attention23_mask")
    q = r.standard_normal((2, 4, 3, 8)).astype(np.float32) * 3
    k = r.standard_normal((2, 1, 7, 8)).astype(np.float32) * 3
    v = r.standard_normal((2, 1, 7, 4)).astype(np.float32)
    mask = r.random((3, 7)) < 0.7
    mask[:, 0] = True  # no fully masked row
    return Spec([node("Attention", ["q", "k", "v", "m"], ["y"], softcap=5.0)],
                [("q", q), ("k", k), ("v", v)], [("y", F32)], 23, [("m", mask)])


@case
def attention23_past_kv_float_mask_causal():
    r = rng("attention23_past")
    q = r.standard_normal((1, 2, 3, 4)).astype(np.float32)
    k = r.standard_normal((1, 2, 3, 4)).astype(np.float32)
    v = r.standard_normal((1, 2, 3, 4)).astype(np.float32)
    pk = r.standard_normal((1, 2, 5, 4)).astype(np.float32)
    pv = r.standard_normal((1, 2, 5, 4)).astype(np.float32)
    mask = (r.standard_normal((1, 2, 3, 8)) * 2).astype(np.float32)
    return Spec([node("Attention", ["q", "k", "v", "m", "pk", "pv"], ["y", "pko", "pvo"],
                      is_causal=1)],
                [("q", q), ("k", k), ("v", v), ("m", mask), ("pk", pk), ("pv", pv)],
                [("y", F32), ("pko", F32), ("pvo", F32)], 23)


def attention_ref(q, k, v, mask=None, causal=False, scale=None, softcap=0.0, hq=None, hkv=None,
                  pk=None, pv=None, nonpad=None, mode=None, precision=None, pad_mask=False,
                  left=-1, right=-1):
    """numpy Attention-23/24 (onnx/defs/nn/old.cc, Attention_ver23_doc and
    Attention_ver24_doc): bias = mask (bool: 0 / -inf; any other type is
    cast to Q's type and added; |pad_mask| (24): a shorter key axis is padded
    with -inf) + causal frontier (j <= i + offset, offset = past, or
    nonpad - Sq for an external cache) + the nonpad padding mask; softcap
    before the bias; a query row whose bias is -inf at every key is 0 in Y
    and in the mode-3 output (the fully-masked-row errata). |precision|:
    the softmax_precision numpy type (scores cast to it, probabilities cast
    back). |left|, |right| (Attention-25's left_window_size and
    right_window_size, -1 unbounded): only keys j with p - left <= j <= p +
    right are visible to the query at absolute position p = i + offset.
    Returns Y, or (Y, qk_matmul_output) when |mode| is given."""
    three = q.ndim == 3
    out_t = q.dtype
    if three:
        heads = lambda t, h: t.reshape(t.shape[0], t.shape[1], h, -1).transpose(0, 2, 1, 3)
        q, k, v = heads(q, hq), heads(k, hkv), heads(v, hkv)
    if pk is not None:
        k, v = np.concatenate([pk, k], 2), np.concatenate([pv, v], 2)
    past = 0 if pk is None else pk.shape[2]
    b, sq, t = q.shape[0], q.shape[2], k.shape[2]
    scale = 1 / np.sqrt(q.shape[3]) if scale is None else scale
    rep = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, rep, 1), np.repeat(v, rep, 1)
    s = (q.astype(np.float64) @ k.transpose(0, 1, 3, 2).astype(np.float64)) * scale
    stages = [s]
    if softcap > 0:
        s = softcap * np.tanh(s / softcap)
    stages.append(s)
    bias = np.zeros((1, 1, sq, t))
    if mask is not None:
        mb = np.where(mask, 0, -np.inf) if mask.dtype == np.bool_ else mask.astype(np.float64)
        if pad_mask and mb.shape[-1] < t:
            widths = [(0, 0)] * (mb.ndim - 1) + [(0, t - mb.shape[-1])]
            mb = np.pad(mb, widths, constant_values=-np.inf)
        bias = bias + mb
    jj, ii = np.arange(t)[None, None, None, :], np.arange(sq)[None, None, :, None]
    off = past if (pk is not None or nonpad is None) else \
        (np.asarray(nonpad) - sq).reshape(-1, 1, 1, 1)
    if causal:
        bias = bias + np.where(jj > ii + off, -np.inf, 0)
    if left >= 0:
        bias = bias + np.where(jj < ii + off - left, -np.inf, 0)
    if right >= 0:
        bias = bias + np.where(jj > ii + off + right, -np.inf, 0)
    if nonpad is not None:
        bias = bias + np.where(jj < np.asarray(nonpad).reshape(-1, 1, 1, 1), 0, -np.inf)
    bias = np.broadcast_to(bias, s.shape)
    s = s + bias
    stages.append(s)
    if precision is not None:
        s = s.astype(precision).astype(np.float64)
    dead = np.isneginf(bias.max(-1, keepdims=True))
    mx = np.where(dead, 0, s.max(-1, keepdims=True))
    e = np.where(dead, 0, np.exp(s - mx))
    p = e / np.where(dead, 1, e.sum(-1, keepdims=True))
    if precision is not None:
        p = p.astype(precision).astype(np.float64)
    stages.append(p)
    y = p @ v
    if three:
        y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], sq, -1)
    if mode is None:
        return y.astype(out_t)
    return y.astype(out_t), stages[mode].astype(out_t)


@case
def attention23_bool_mask_fully_masked_row():
    """A constant bool mask [Sq, T] with an all-false row (row 1) and a row
    open at one key only; MHA 4-D."""
    r = rng("attention23_fully_masked")
    q = r.standard_normal((2, 2, 4, 8)).astype(np.float32)
    k = r.standard_normal((2, 2, 6, 8)).astype(np.float32)
    v = r.standard_normal((2, 2, 6, 3)).astype(np.float32)
    mask = r.random((4, 6)) < 0.6
    mask[0, 0] = True
    mask[1] = False
    mask[2] = False
    mask[2, 5] = True
    mask[3, 1] = True
    return Spec([node("Attention", ["q", "k", "v", "m"], ["y"])],
                [("q", q), ("k", k), ("v", v)], [("y", F32)], 23, [("m", mask)],
                numpy_ref=lambda f: [attention_ref(f["q"], f["k"], f["v"], mask)])


@case
def attention23_bool_mask_input_causal_gqa():
    """A bool mask fed at run time [B, 1, Sq, T], causal, 3-D GQA; batch 1
    row 0 is closed by the mask at key 0, the only key causality leaves it."""
    r = rng("attention23_mask_input")
    q = r.standard_normal((2, 4, 4 * 4)).astype(np.float32)
    k = r.standard_normal((2, 4, 2 * 4)).astype(np.float32)
    v = r.standard_normal((2, 4, 2 * 5)).astype(np.float32)
    mask = r.random((2, 1, 4, 4)) < 0.7
    mask[:, :, :, 0] = True
    mask[1, 0, 0, 0] = False
    return Spec([node("Attention", ["q", "k", "v", "m"], ["y"], q_num_heads=4, kv_num_heads=2,
                      is_causal=1)],
                [("q", q), ("k", k), ("v", v), ("m", mask)], [("y", F32)], 23,
                numpy_ref=lambda f: [attention_ref(f["q"], f["k"], f["v"], f["m"], True,
                                                   hq=4, hkv=2)])


@case
def attention23_float_mask_input_neg_inf_rows():
    """A float mask fed at run time [Hq, Sq, T] (rank 3, broadcast over B)
    with -inf entries, one row -inf at every key; softcap and scale."""
    r = rng("attention23_float_mask_input")
    q = r.standard_normal((2, 3, 5, 4)).astype(np.float32) * 2
    k = r.standard_normal((2, 3, 7, 4)).astype(np.float32) * 2
    v = r.standard_normal((2, 3, 7, 4)).astype(np.float32)
    mask = (r.standard_normal((3, 5, 7)) * 1.5).astype(np.float32)
    mask[r.random(mask.shape) < 0.3] = -np.inf
    mask[:, :, 3] = 0.5
    mask[1, 2] = -np.inf
    return Spec([node("Attention", ["q", "k", "v", "m"], ["y"], softcap=4.0, scale=0.4)],
                [("q", q), ("k", k), ("v", v), ("m", mask)], [("y", F32)], 23,
                numpy_ref=lambda f: [attention_ref(f["q"], f["k"], f["v"], f["m"], scale=0.4,
                                                   softcap=4.0)])


@case
def attention23_float_mask_const_causal_past():
    """A constant float mask [Sq, T] (onnxruntime refuses rank 1 and a
    broadcast query axis) with causality over a past cache;
    no row fully masked, so the expansion needs no zero-row guard."""
    r = rng("attention23_float_mask_const")
    q = r.standard_normal((1, 2, 3, 4)).astype(np.float32)
    k = r.standard_normal((1, 2, 3, 4)).astype(np.float32)
    v = r.standard_normal((1, 2, 3, 4)).astype(np.float32)
    pk = r.standard_normal((1, 2, 2, 4)).astype(np.float32)
    pv = r.standard_normal((1, 2, 2, 4)).astype(np.float32)
    mask = (r.standard_normal((3, 5)) * 2).astype(np.float32)
    mask[:, 1] = -np.inf
    return Spec([node("Attention", ["q", "k", "v", "m", "pk", "pv"], ["y", "pko", "pvo"],
                      is_causal=1)],
                [("q", q), ("k", k), ("v", v), ("pk", pk), ("pv", pv)],
                [("y", F32), ("pko", F32), ("pvo", F32)], 23, [("m", mask)],
                numpy_ref=lambda f: [attention_ref(f["q"], f["k"], f["v"], mask, True,
                                                   pk=f["pk"], pv=f["pv"]),
                                     np.concatenate([f["pk"], f["k"]], 2),
                                     np.concatenate([f["pv"], f["v"]], 2)])


def attention_qkv(name, b, hq, hkv, sq, skv, d, dv, mul=1.0, dtype=np.float32):
    r = rng(name)
    q = (r.standard_normal((b, hq, sq, d)) * mul).astype(dtype)
    k = (r.standard_normal((b, hkv, skv, d)) * mul).astype(dtype)
    v = r.standard_normal((b, hkv, skv, dv)).astype(dtype)
    return r, q, k, v


@case
def attention23_qk_mode0_float_mask_softcap():
    """qk_matmul_output_mode 0 (default): the scaled Q*K^T before softcap
    and mask; a float mask fed at run time [B, 1, Sq, T]."""
    r, q, k, v = attention_qkv("attention23_mode0", 2, 2, 2, 3, 5, 4, 3, 2.0)
    mask = (r.standard_normal((2, 1, 3, 5)) * 1.5).astype(np.float32)
    return Spec([node("Attention", ["q", "k", "v", "m"], ["y", "", "", "qk"], softcap=3.0)],
                [("q", q), ("k", k), ("v", v), ("m", mask)], [("y", F32), ("qk", F32)], 23,
                numpy_ref=lambda f: list(attention_ref(f["q"], f["k"], f["v"], f["m"],
                                                       softcap=3.0, mode=0)))


@case
def attention23_qk_mode1_softcap_causal_3d_gqa():
    """qk_matmul_output_mode 1: after softcap, before the (causal) bias;
    3-D inputs, GQA."""
    r = rng("attention23_mode1")
    q = (r.standard_normal((1, 4, 4 * 4)) * 2).astype(np.float32)
    k = (r.standard_normal((1, 4, 2 * 4)) * 2).astype(np.float32)
    v = r.standard_normal((1, 4, 2 * 3)).astype(np.float32)
    return Spec([node("Attention", ["q", "k", "v"], ["y", "", "", "qk"], q_num_heads=4,
                      kv_num_heads=2, is_causal=1, softcap=2.5, qk_matmul_output_mode=1)],
                [("q", q), ("k", k), ("v", v)], [("y", F32), ("qk", F32)], 23,
                numpy_ref=lambda f: list(attention_ref(f["q"], f["k"], f["v"], causal=True,
                                                       softcap=2.5, hq=4, hkv=2, mode=1)))


@case
def attention23_qk_mode2_bool_mask_past_present():
    """qk_matmul_output_mode 2: softcap + bias (a constant bool mask and the
    causal frontier over a past cache: -inf entries); present outputs too."""
    r, q, k, v = attention_qkv("attention23_mode2", 1, 2, 1, 3, 3, 4, 4)
    pk = r.standard_normal((1, 1, 2, 4)).astype(np.float32)
    pv = r.standard_normal((1, 1, 2, 4)).astype(np.float32)
    mask = r.random((3, 5)) < 0.7
    mask[:, 0] = True
    return Spec([node("Attention", ["q", "k", "v", "m", "pk", "pv"], ["y", "pko", "pvo", "qk"],
                      is_causal=1, softcap=4.0, qk_matmul_output_mode=2)],
                [("q", q), ("k", k), ("v", v), ("pk", pk), ("pv", pv)],
                [("y", F32), ("pko", F32), ("pvo", F32), ("qk", F32)], 23, [("m", mask)],
                why="onnxruntime 1.30 writes the lowest float32 (-3.4028235e+38) for the masked "
                    "entries of the mode-2 qk_matmul_output; the spec's bias is -inf there "
                    "(Where(attn_mask, 0, -inf) and the causal Where(.., -inf, 0)).",
                numpy_ref=lambda f: [*attention_ref(f["q"], f["k"], f["v"], mask, True,
                                                    softcap=4.0, pk=f["pk"], pv=f["pv"],
                                                    mode=2)[:1],
                                     np.concatenate([f["pk"], f["k"]], 2),
                                     np.concatenate([f["pv"], f["v"]], 2),
                                     attention_ref(f["q"], f["k"], f["v"], mask, True,
                                                   softcap=4.0, pk=f["pk"], pv=f["pv"],
                                                   mode=2)[1]])


@case
def attention23_qk_mode3_fully_masked_row_input():
    """qk_matmul_output_mode 3: the softmax probabilities, a zero row where
    the run-time bool mask closes every key (the errata: Y and the mode-3
    output are 0 there, not NaN)."""
    r, q, k, v = attention_qkv("attention23_mode3", 1, 2, 2, 4, 5, 4, 3)
    mask = r.random((1, 2, 4, 5)) < 0.6
    mask[..., 0] = True
    mask[0, 1, 2] = False
    return Spec([node("Attention", ["q", "k", "v", "m"], ["y", "", "", "qk"],
                      qk_matmul_output_mode=3)],
                [("q", q), ("k", k), ("v", v), ("m", mask)], [("y", F32), ("qk", F32)], 23,
                numpy_ref=lambda f: list(attention_ref(f["q"], f["k"], f["v"], f["m"], mode=3)))


@case
def attention23_int_masks_additive():
    """Integer attn_mask (the U constraint admits every numeric type): the
    function body casts it to Q's type and adds it; an int32 mask fed at
    run time and a constant int8 one (two nodes). (With is_causal the
    function body's Add(int mask, float causal bias) is ill-typed and
    onnxruntime refuses it; mlcc adds the cast mask to the causal bias.)"""
    r, q, k, v = attention_qkv("attention23_int_mask", 1, 2, 2, 3, 4, 4, 2)
    mi = r.integers(-3, 3, (3, 4)).astype(np.int32)
    m8 = r.integers(-4, 2, (1, 2, 3, 4)).astype(np.int8)
    return Spec([node("Attention", ["q", "k", "v", "mi"], ["y"]),
                 node("Attention", ["q", "k", "v", "m8"], ["z"], scale=0.7)],
                [("q", q), ("k", k), ("v", v), ("mi", mi)], [("y", F32), ("z", F32)], 23,
                [("m8", m8)],
                numpy_ref=lambda f: [attention_ref(f["q"], f["k"], f["v"], f["mi"]),
                                     attention_ref(f["q"], f["k"], f["v"], m8, scale=0.7)])


@case
def attention23_softmax_precision_double_and_half():
    """softmax_precision 11 (double) and 10 (float16) on float32 inputs: the
    scores are cast to that type for the softmax and the probabilities cast
    back (float16 rounds both)."""
    r, q, k, v = attention_qkv("attention23_precision", 1, 2, 2, 3, 6, 4, 3, 2.0)
    return Spec([node("Attention", ["q", "k", "v"], ["y"], softmax_precision=11),
                 node("Attention", ["q", "k", "v"], ["z", "", "", "qk"], softmax_precision=10,
                      is_causal=1, qk_matmul_output_mode=3)],
                [("q", q), ("k", k), ("v", v)], [("y", F32), ("z", F32), ("qk", F32)], 23,
                why="onnxruntime 1.30 ignores softmax_precision 10 on float32 inputs (its "
                    "softmax runs in float32); the spec casts the scores to float16 for the "
                    "softmax and the probabilities back (SoftmaxCast, SoftmaxOut).",
                numpy_ref=lambda f: [attention_ref(f["q"], f["k"], f["v"], precision=np.float64),
                                     *attention_ref(f["q"], f["k"], f["v"], causal=True,
                                                    precision=np.float16, mode=3)])


@case
def attention23_float16_softmax_precision_float():
    """float16 Q/K/V with softmax_precision 1 (float32) and a float16
    additive mask; GQA, qk_matmul_output mode 2 (the reference kernel)."""
    r, q, k, v = attention_qkv("attention23_f16", 1, 4, 2, 3, 5, 8, 4, 1.0, np.float16)
    mask = (r.standard_normal((3, 5))).astype(np.float16)
    return Spec([node("Attention", ["q", "k", "v", "m"], ["y", "", "", "qk"], softmax_precision=1,
                      qk_matmul_output_mode=2)],
                [("q", q), ("k", k), ("v", v), ("m", mask)],
                [("y", TensorProto.FLOAT16), ("qk", TensorProto.FLOAT16)], 23,
                numpy_ref=lambda f: list(attention_ref(f["q"], f["k"], f["v"], f["m"], mode=2)))


# --- Attention 24: nonpad_kv_seqlen, a shorter mask ----------------------------------
@case
def attention24_nonpad_kv_seqlen_causal_gqa():
    """An external (static) KV cache: K/V hold 6 slots, nonpad_kv_seqlen
    says how many are valid per batch (run time); with is_causal the
    frontier is bottom-right, j <= i + nonpad[b] - Sq; batch 1's 2 valid keys
    are fewer than Sq = 3, so its first row is fully masked (0)."""
    r, q, k, v = attention_qkv("attention24_nonpad", 2, 4, 2, 3, 6, 4, 5)
    n = np.array([5, 2], np.int64)
    return Spec([node("Attention", ["q", "k", "v", "", "", "", "n"], ["y", "", "", "qk"],
                      is_causal=1, qk_matmul_output_mode=3)],
                [("q", q), ("k", k), ("v", v), ("n", n)], [("y", F32), ("qk", F32)], 24,
                numpy_ref=lambda f: list(attention_ref(f["q"], f["k"], f["v"], causal=True,
                                                       nonpad=f["n"], mode=3)))


@case
def attention24_nonpad_short_float_mask_3d():
    """nonpad_kv_seqlen without is_causal, and a float mask whose key axis
    (4) is shorter than K's 6: Attention-24 pads it with -inf."""
    r = rng("attention24_short_mask")
    q = r.standard_normal((2, 3, 2 * 4)).astype(np.float32)
    k = r.standard_normal((2, 6, 2 * 4)).astype(np.float32)
    v = r.standard_normal((2, 6, 2 * 3)).astype(np.float32)
    mask = (r.standard_normal((2, 1, 3, 4))).astype(np.float32)
    n = np.array([4, 3], np.int64)
    return Spec([node("Attention", ["q", "k", "v", "m", "", "", "n"], ["y"], q_num_heads=2,
                      kv_num_heads=2)],
                [("q", q), ("k", k), ("v", v), ("m", mask), ("n", n)], [("y", F32)], 24,
                ort_refuses="onnxruntime 1.30 refuses an attn_mask whose key axis is shorter "
                            "than total_sequence_length (attention_helper.h: 'inconsistent "
                            "total_sequence_length'); Attention-24 pads it with -inf.",
                numpy_ref=lambda f: [attention_ref(f["q"], f["k"], f["v"], f["m"], hq=2, hkv=2,
                                                   nonpad=f["n"], pad_mask=True)])


@case
def attention24_short_bool_mask_const_past():
    """Attention-24 with a past cache and a constant bool mask covering 4 of
    the 6 keys (the rest padded with false); expanded onto MatMul/Softmax."""
    r, q, k, v = attention_qkv("attention24_short_bool", 1, 2, 2, 2, 2, 4, 4)
    pk = r.standard_normal((1, 2, 4, 4)).astype(np.float32)
    pv = r.standard_normal((1, 2, 4, 4)).astype(np.float32)
    mask = r.random((2, 4)) < 0.7
    mask[:, 0] = True
    return Spec([node("Attention", ["q", "k", "v", "m", "pk", "pv"], ["y", "pko", "pvo"])],
                [("q", q), ("k", k), ("v", v), ("pk", pk), ("pv", pv)],
                [("y", F32), ("pko", F32), ("pvo", F32)], 24, [("m", mask)],
                ort_refuses="onnxruntime 1.30 refuses an attn_mask whose key axis is shorter "
                            "than total_sequence_length (attention_helper.h: 'inconsistent "
                            "total_sequence_length'); Attention-24 pads it with false.",
                numpy_ref=lambda f: [attention_ref(f["q"], f["k"], f["v"], mask, pk=f["pk"],
                                                   pv=f["pv"], pad_mask=True),
                                     np.concatenate([f["pk"], f["k"]], 2),
                                     np.concatenate([f["pv"], f["v"]], 2)])


# --- Attention 25: sliding windows (left_window_size, right_window_size) ----------
ORT_NO_WINDOW = ("onnxruntime 1.30 refuses Attention-25's window attributes ('Unrecognized "
                 "attribute: left_window_size for operator Attention'); the numpy reference "
                 "follows the Attention-25 text (p - left <= j <= p + right, p = offset + i).")


@case
def attention25_window_causal_left():
    """A causal left-looking window (the current key and two before it),
    4-D MHA without a mask: a constant frontier, expanded onto
    MatMul/Softmax."""
    r, q, k, v = attention_qkv("attention25_causal_left", 2, 2, 2, 5, 5, 4, 3)
    return Spec([node("Attention", ["q", "k", "v"], ["y"], is_causal=1, left_window_size=2)],
                [("q", q), ("k", k), ("v", v)], [("y", F32)], 25,
                ort_refuses=ORT_NO_WINDOW,
                numpy_ref=lambda f: [attention_ref(f["q"], f["k"], f["v"], causal=True,
                                                   left=2)])


@case
def attention25_window_bidir_mask_input_gqa():
    """The spec's asymmetric window (left 2, right 1) without is_causal,
    composed with a run-time bool mask input; 3-D GQA."""
    r = rng("attention25_bidir")
    q = r.standard_normal((2, 4, 4 * 4)).astype(np.float32)
    k = r.standard_normal((2, 6, 2 * 4)).astype(np.float32)
    v = r.standard_normal((2, 6, 2 * 3)).astype(np.float32)
    mask = r.random((2, 1, 4, 6)) < 0.8
    return Spec([node("Attention", ["q", "k", "v", "m"], ["y"], q_num_heads=4, kv_num_heads=2,
                      left_window_size=2, right_window_size=1)],
                [("q", q), ("k", k), ("v", v), ("m", mask)], [("y", F32)], 25,
                ort_refuses=ORT_NO_WINDOW,
                numpy_ref=lambda f: [attention_ref(f["q"], f["k"], f["v"], f["m"], hq=4, hkv=2,
                                                   left=2, right=1)])


@case
def attention25_window_past_kv_mode3():
    """A KV cache (past 4, new 2): the window counts from the query's
    absolute position past + i; right window 0 without is_causal; the
    mode-3 qk_matmul_output (probabilities) and the present outputs."""
    r, q, k, v = attention_qkv("attention25_past", 1, 2, 1, 2, 2, 4, 4)
    pk = r.standard_normal((1, 1, 4, 4)).astype(np.float32)
    pv = r.standard_normal((1, 1, 4, 4)).astype(np.float32)
    return Spec([node("Attention", ["q", "k", "v", "", "pk", "pv"], ["y", "pko", "pvo", "qk"],
                      left_window_size=3, right_window_size=0, qk_matmul_output_mode=3)],
                [("q", q), ("k", k), ("v", v), ("pk", pk), ("pv", pv)],
                [("y", F32), ("pko", F32), ("pvo", F32), ("qk", F32)], 25,
                ort_refuses=ORT_NO_WINDOW,
                numpy_ref=lambda f: (lambda yq: [yq[0], np.concatenate([f["pk"], f["k"]], 2),
                                                 np.concatenate([f["pv"], f["v"]], 2), yq[1]])(
                    attention_ref(f["q"], f["k"], f["v"], pk=f["pk"], pv=f["pv"], left=3,
                                  right=0, mode=3)))


@case
def attention25_window_rows_past_keys():
    """Sq = 5 queries on 3 keys with a window of just the current position
    (left 0, right 0): queries 3 and 4 see no key, so their rows are 0
    (the fully-masked-row rule); a float mask is added on the open keys."""
    r, q, k, v = attention_qkv("attention25_rows", 1, 2, 2, 5, 3, 4, 3)
    mask = r.standard_normal((5, 3)).astype(np.float32)
    return Spec([node("Attention", ["q", "k", "v", "m"], ["y"], left_window_size=0,
                      right_window_size=0)],
                [("q", q), ("k", k), ("v", v)], [("y", F32)], 25, [("m", mask)],
                ort_refuses=ORT_NO_WINDOW,
                numpy_ref=lambda f: [attention_ref(f["q"], f["k"], f["v"], mask, left=0,
                                                   right=0)])


@case
def attention25_window_nonpad_causal():
    """An external KV cache (nonpad_kv_seqlen, run time) with is_causal and a
    left window of 1: the window's offset is nonpad[b] - Sq, like the causal
    frontier's; the reference kernel runs it."""
    r, q, k, v = attention_qkv("attention25_nonpad", 2, 2, 2, 3, 6, 4, 4)
    n = np.array([6, 4], np.int64)
    return Spec([node("Attention", ["q", "k", "v", "", "", "", "n"], ["y"], is_causal=1,
                      left_window_size=1)],
                [("q", q), ("k", k), ("v", v), ("n", n)], [("y", F32)], 25,
                ort_refuses=ORT_NO_WINDOW,
                numpy_ref=lambda f: [attention_ref(f["q"], f["k"], f["v"], causal=True,
                                                   nonpad=f["n"], left=1)])


@case
def attention25_window_float64():
    """float64 Q/K/V (the reference kernel, not the float32 expansion) with
    a right-only window (left unbounded, right 1) and softcap."""
    r, q, k, v = attention_qkv("attention25_f64", 1, 2, 2, 4, 4, 4, 2, dtype=np.float64)
    return Spec([node("Attention", ["q", "k", "v"], ["y"], right_window_size=1, softcap=2.0)],
                [("q", q), ("k", k), ("v", v)], [("y", TensorProto.DOUBLE)], 25,
                ort_refuses=ORT_NO_WINDOW,
                numpy_ref=lambda f: [attention_ref(f["q"], f["k"], f["v"], right=1,
                                                   softcap=2.0)])


# --- A Llama-style transformer block at opset 23 (seeded weights) ----------------
@case
def llama_block23():
    """RMSNorm -> Q/K/V projections -> RotaryEmbedding (Q, K) -> causal GQA
    Attention -> output projection + residual -> RMSNorm -> SwiGLU MLP
    (SiLU(x W1) * (x W3)) W2 + residual (SiLU as x*Sigmoid(x): Swish is
    opset 24, Attention-23 only). Batch 1, 8 tokens, hidden 32,
    4 query heads and 2 kv heads of 8, MLP 64."""
    r = rng("llama_block23")
    S, E, Hq, Hkv, D, F = 8, 32, 4, 2, 8, 64
    w = lambda *shape: (r.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
    x = r.standard_normal((1, S, E)).astype(np.float32)
    inv = 1.0 / (10000 ** (np.arange(0, D, 2) / D))
    ang = np.arange(16)[:, None] * inv[None, :]
    inits = [("g1", (1 + 0.1 * r.standard_normal(E)).astype(np.float32)),
             ("g2", (1 + 0.1 * r.standard_normal(E)).astype(np.float32)),
             ("wq", w(E, Hq * D)), ("wk", w(E, Hkv * D)), ("wv", w(E, Hkv * D)),
             ("wo", w(Hq * D, E)), ("w1", w(E, F)), ("w3", w(E, F)), ("w2", w(F, E)),
             ("cos", np.cos(ang).astype(np.float32)), ("sin", np.sin(ang).astype(np.float32)),
             ("pos", np.arange(S, dtype=np.int64)[None, :])]
    nodes = [
        node("RMSNormalization", ["x", "g1"], ["n1"], epsilon=1e-6),
        node("MatMul", ["n1", "wq"], ["q"]), node("MatMul", ["n1", "wk"], ["k"]),
        node("MatMul", ["n1", "wv"], ["v"]),
        node("RotaryEmbedding", ["q", "cos", "sin", "pos"], ["qr"], num_heads=Hq),
        node("RotaryEmbedding", ["k", "cos", "sin", "pos"], ["kr"], num_heads=Hkv),
        node("Attention", ["qr", "kr", "v"], ["a"], q_num_heads=Hq, kv_num_heads=Hkv,
             is_causal=1),
        node("MatMul", ["a", "wo"], ["o"]), node("Add", ["x", "o"], ["h"]),
        node("RMSNormalization", ["h", "g2"], ["n2"], epsilon=1e-6),
        node("MatMul", ["n2", "w1"], ["u"]), node("Sigmoid", ["u"], ["sg"]),
        node("Mul", ["u", "sg"], ["su"]),
        node("MatMul", ["n2", "w3"], ["gt"]), node("Mul", ["su", "gt"], ["m"]),
        node("MatMul", ["m", "w2"], ["dn"]), node("Add", ["h", "dn"], ["y"]),
    ]
    return Spec(nodes, [("x", x)], [("y", F32)], 23, inits)


# --- BitCast 26 --------------------------------------------------------------------
@case
def bitcast26_float_int_half():
    r = rng("bitcast26")
    x = np.concatenate([r.standard_normal(6), [0.0, -0.0, np.inf, -np.inf]]).astype(np.float32)
    u = r.integers(0, 2**16, size=(5,), dtype=np.int64).astype(np.uint16)
    return Spec([node("BitCast", ["x"], ["i"], to=TensorProto.INT32),
                 node("BitCast", ["x"], ["u"], to=TensorProto.UINT32),
                 node("BitCast", ["h"], ["f"], to=TensorProto.INT16)],
                [("x", x), ("h", u)], [("i", I32), ("u", TensorProto.UINT32),
                                       ("f", TensorProto.INT16)], 26)


@case
def bitcast26_int64_to_double():
    x = np.array([0, 1, -1, 4607182418800017408, 9218868437227405312], np.int64)
    return Spec([node("BitCast", ["x"], ["y"], to=TensorProto.DOUBLE)], [("x", x)],
                [("y", TensorProto.DOUBLE)], 26)


# --- AffineGrid 20 --------------------------------------------------------------
@case
def affinegrid20_2d_both_alignments():
    theta = rng("affinegrid20_2d").standard_normal((2, 2, 3)).astype(np.float32)
    size = np.array([2, 3, 4, 5], np.int64)
    return Spec([node("AffineGrid", ["t", "s"], ["g0"], align_corners=0),
                 node("AffineGrid", ["t", "s"], ["g1"], align_corners=1)], [("t", theta)],
                [("g0", F32), ("g1", F32)], 20, [("s", size)])


@case
def affinegrid20_3d_with_gridsample():
    theta = (rng("affinegrid20_3d").standard_normal((1, 3, 4)) * 0.5).astype(np.float32)
    size = np.array([1, 1, 2, 3, 4], np.int64)
    x = rng("affinegrid20_3d_x").standard_normal((1, 2, 4, 5)).astype(np.float32)
    theta2 = np.array([[[0.8, -0.2, 0.1], [0.3, 0.9, -0.2]]], np.float32)
    return Spec([node("AffineGrid", ["t", "s"], ["g"], align_corners=1),
                 node("AffineGrid", ["t2", "s2"], ["g2"]),
                 node("GridSample", ["x", "g2"], ["y"])],
                [("t", theta), ("x", x)], [("g", F32), ("y", F32)], 20,
                [("s", size), ("t2", theta2), ("s2", np.array([1, 2, 3, 3], np.int64))])


# --- LpNormalization 22, GlobalLpPool 22 ------------------------------------------
@case
def lpnormalization22_p1_p2_zero_row():
    x = rng("lpnorm22").standard_normal((3, 4, 5)).astype(np.float32)
    x[1, :, 2] = 0  # a zero vector along axis 1: output 0
    return Spec([node("LpNormalization", ["x"], ["a"], axis=1, p=1),
                 node("LpNormalization", ["x"], ["b"])], [("x", x)],
                [("a", F32), ("b", F32)], 22)


@case
def globallppool21_p1_p2_p3():
    x = rng("globallppool22").standard_normal((2, 3, 4, 5)).astype(np.float32)
    return Spec([node("GlobalLpPool", ["x"], ["a"], p=1), node("GlobalLpPool", ["x"], ["b"]),
                 node("GlobalLpPool", ["x"], ["c"], p=3)], [("x", x)],
                [("a", F32), ("b", F32), ("c", F32)], 21)  # onnxruntime 1.30 has no GlobalLpPool-22


# --- TensorScatter 24 -------------------------------------------------------------
@case
def tensorscatter24_linear_write_indices():
    r = rng("tensorscatter24_lin")
    past = r.standard_normal((2, 3, 6, 4)).astype(np.float32)   # [B, H, max_seq, D]
    upd = r.standard_normal((2, 3, 2, 4)).astype(np.float32)
    wi = np.array([1, 4], np.int64)
    return Spec([node("TensorScatter", ["p", "u", "w"], ["y"])],
                [("p", past), ("u", upd), ("w", wi)], [("y", F32)], 24)


@case
def tensorscatter24_circular_axis1_no_indices():
    r = rng("tensorscatter24_circ")
    past = r.standard_normal((2, 5, 3)).astype(np.float32)
    upd = r.standard_normal((2, 3, 3)).astype(np.float32)
    wi = np.array([3, 0], np.int64)
    return Spec([node("TensorScatter", ["p", "u", "w"], ["y"], axis=1, mode="circular"),
                 node("TensorScatter", ["p", "u"], ["z"], axis=1)],
                [("p", past), ("u", upd)], [("y", F32), ("z", F32)], 24, [("w", wi)])


# --- Col2Im 18 ------------------------------------------------------------------------
@case
def col2im18_2d_strides_pads_dilations():
    # image 5x6, block 2x3, strides (1, 2), pads (1, 0, 0, 1), dilations (2, 1):
    # L = ((5+1+0-2*1-1)/1+1) * ((6+0+1-1*2-1)/2+1) = 4 * 3
    x = rng("col2im18_a").standard_normal((2, 3 * 6, 12)).astype(np.float32)
    return Spec([node("Col2Im", ["x", "img", "blk"], ["y"], strides=[1, 2], pads=[1, 0, 0, 1],
                      dilations=[2, 1])],
                [("x", x)], [("y", F32)], 18,
                [("img", np.array([5, 6], np.int64)), ("blk", np.array([2, 3], np.int64))])


@case
def col2im18_3d_defaults():
    x = rng("col2im18_b").standard_normal((1, 2 * 8, 2 * 3 * 2)).astype(np.float32)
    return Spec([node("Col2Im", ["x", "img", "blk"], ["y"])], [("x", x)], [("y", F32)], 18,
                [("img", np.array([3, 4, 3], np.int64)), ("blk", np.array([2, 2, 2], np.int64))])


# --- DeformConv 19/22 (2-D) ----------------------------------------------------
def bilinear_zero_ref(img, h, w):
    """Bilinear sample of the 2-D |img| at (h, w), 0 outside (DeformConv's rule:
    a point with h <= -1, h >= H, w <= -1 or w >= W samples 0; taps outside
    the image weigh 0)."""
    H, W = img.shape
    if not (-1 < h < H and -1 < w < W):
        return 0.0
    h0, w0 = int(np.floor(h)), int(np.floor(w))
    v = 0.0
    for y, wy in ((h0, 1 - (h - h0)), (h0 + 1, h - h0)):
        for x, wx in ((w0, 1 - (w - w0)), (w0 + 1, w - w0)):
            if 0 <= y < H and 0 <= x < W:
                v += wy * wx * img[y, x]
    return v


def deform_conv_ref(x, w, off, b=None, mask=None, group=1, offset_group=1, pads=(0, 0, 0, 0),
                    strides=(1, 1), dilations=(1, 1)):
    """The ONNX DeformConv reference, 2-D, in float64: offset is
    [N, offset_group, kH, kW, 2 (h, w), oH, oW], mask [N, offset_group, kH, kW, oH, oW]."""
    n_, c_, _, _ = x.shape
    oc, cg, kh, kw = w.shape
    oh, ow = off.shape[2:]
    off = off.reshape(n_, offset_group, kh, kw, 2, oh, ow).astype(np.float64)
    mask = (np.ones((n_, offset_group, kh, kw, oh, ow)) if mask is None else
            mask.reshape(n_, offset_group, kh, kw, oh, ow).astype(np.float64))
    cols = np.zeros((n_, c_, kh, kw, oh, ow))
    for n in range(n_):
        for c in range(c_):
            g = c // (c_ // offset_group)
            img = x[n, c].astype(np.float64)
            for i in range(kh):
                for j in range(kw):
                    for p in range(oh):
                        for q in range(ow):
                            hh = p * strides[0] - pads[0] + i * dilations[0] + off[n, g, i, j, 0, p, q]
                            ww = q * strides[1] - pads[1] + j * dilations[1] + off[n, g, i, j, 1, p, q]
                            cols[n, c, i, j, p, q] = (bilinear_zero_ref(img, hh, ww)
                                                      * mask[n, g, i, j, p, q])
    y = np.zeros((n_, oc, oh, ow))
    ocg = oc // group
    for o in range(oc):
        gi = o // ocg
        y[:, o] = np.einsum("nckpq,ck->npq",
                            cols[:, gi * cg:(gi + 1) * cg].reshape(n_, cg, kh * kw, oh, ow),
                            w[o].reshape(cg, kh * kw).astype(np.float64))
        if b is not None:
            y[:, o] += b[o]
    return y.astype(x.dtype)


def deformconv_case(name, opset, xs, ws, out_hw, group=1, offset_group=1, bias=True,
                    mask=True, spread=1.5, dtype=np.float32, **attrs):
    r = rng(name)
    x = r.standard_normal(xs).astype(dtype)
    w = (r.standard_normal(ws) / np.sqrt(ws[1] * ws[2] * ws[3])).astype(dtype)
    taps = offset_group * ws[2] * ws[3]
    off = (r.standard_normal((xs[0], 2 * taps) + out_hw) * spread).astype(dtype)
    ins, feeds, inits = ["x", "w", "off"], [("x", x), ("off", off)], [("w", w)]
    b = m = None
    if bias:
        b = r.standard_normal((ws[0],)).astype(dtype)
        ins.append("b")
        inits.append(("b", b))
    if mask:
        m = r.uniform(0, 1, (xs[0], taps) + out_hw).astype(dtype)
        if not bias:
            ins.append("")
        ins.append("mask")
        feeds.append(("mask", m))
    pads = attrs.get("pads", (0, 0, 0, 0))
    ref_kw = dict(group=group, offset_group=offset_group, pads=pads,
                  strides=attrs.get("strides", (1, 1)), dilations=attrs.get("dilations", (1, 1)))
    ref = lambda f: [deform_conv_ref(f["x"], w, f["off"], b, f.get("mask"), **ref_kw)]
    if group != 1:
        attrs["group"] = group
    if offset_group != 1:
        attrs["offset_group"] = offset_group
    ty = {np.float32: F32, np.float64: TensorProto.DOUBLE}[dtype]
    return Spec([node("DeformConv", ins, ["y"], **attrs)], feeds, [("y", ty)], opset, inits,
                numpy_ref=ref)


# group 2 and offset_group 2, asymmetric pads, strides, dilations, B and mask.
CASES["deformconv19_groups_mask_bias"] = lambda: deformconv_case(
    "deformconv19_groups_mask_bias", 19, (2, 4, 5, 6), (6, 2, 3, 3), (2, 2), group=2,
    offset_group=2, pads=[1, 0, 0, 1], strides=[2, 2], dilations=[1, 2])
# No B, no mask, kernel_shape given; offsets up to +-12 pixels push many taps
# outside the image (they sample 0).
CASES["deformconv22_far_offsets_no_bias_no_mask"] = lambda: deformconv_case(
    "deformconv22_far_offsets", 22, (1, 3, 6, 5), (4, 3, 2, 3), (7, 5), bias=False,
    mask=False, spread=4.0, kernel_shape=[2, 3], pads=[1, 1, 1, 1])
# mask without B; offset_group 4 of 8 channels (2 per offset group).
CASES["deformconv19_mask_offset_group4"] = lambda: deformconv_case(
    "deformconv19_mask_offset_group4", 19, (1, 8, 4, 4), (3, 8, 3, 3), (4, 4), bias=False,
    offset_group=4, pads=[1, 1, 1, 1])
# C/group*kH*kW = 1152 > the kernel's 1024-sample stack column: the
# resampling path.
CASES["deformconv19_wide_input_resample"] = lambda: deformconv_case(
    "deformconv19_wide_input_resample", 19, (1, 128, 4, 4), (2, 128, 3, 3), (2, 2),
    strides=[2, 2], pads=[1, 1, 1, 1], spread=0.7)
CASES["deformconv22_double"] = lambda: deformconv_case(
    "deformconv22_double", 22, (1, 2, 4, 5), (3, 2, 2, 2), (3, 4), dtype=np.float64)


# --- float8 types (opset 19+): Cast/CastLike with 'saturate' --------------------
# float8 tensors are uint8 arrays of their bits here (onnx 1.12 has no float8
# numpy type); Spec.types declares the ONNX element type of such a feed,
# output or initializer. The reference below is written from the Cast-19..25
# spec tables (round to nearest even with an unbounded exponent, then the
# saturate / inf / NaN rules), independently of mlcc's bit manipulation.
F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ = 17, 18, 19, 20
F8_TYPES = (F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ)
F8_TYPES_ALL = F8_TYPES + (24,)  # with float8e8m0 (24+)
F8_NAME = {17: "e4m3fn", 18: "e4m3fnuz", 19: "e5m2", 20: "e5m2fnuz"}
# mantissa bits, exponent bias, code of the largest finite magnitude, fnuz, has inf
F8_FMT = {17: (3, 7, 0x7e, False, False), 18: (3, 8, 0x7f, True, False),
          19: (2, 15, 0x7b, False, True), 20: (2, 16, 0x7f, True, False)}


def f8_decode(codes, t):
    """float64 values of float8 codes (NaN codes give NaN with the code's
    sign, e5m2 +-inf)."""
    man, bias, _, fnuz, has_inf = F8_FMT[t]
    c = np.asarray(codes, np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    e = (c >> man) & ((1 << (7 - man)) - 1)
    m = c & ((1 << man) - 1)
    v = sign * np.where(e == 0, m * 2.0 ** (1 - bias - man),
                        (1 + m / 2.0 ** man) * 2.0 ** (e - bias))
    nan = np.copysign(np.nan, sign)  # -NaN codes stay negative (Cast's -NaN row)
    if fnuz:
        return np.where(c == 0x80, np.nan, v)
    if has_inf:
        top = e == (1 << (7 - man)) - 1
        return np.where(top & (m == 0), sign * np.inf, np.where(top, nan, v))
    return np.where((c & 0x7f) == 0x7f, nan, v)


def f8_encode(x, t, saturate=True, fnuz_inf_saturates=False):
    """uint8 codes of float values |x| (Cast-19..25 tables; Cast-24 made
    +-inf saturate in the fnuz types too: |fnuz_inf_saturates|)."""
    man, bias, max_mag, fnuz, has_inf = F8_FMT[t]
    mags = f8_decode(np.arange(max_mag + 1), t)
    # the unbounded format's next value above the largest finite one
    cand = np.append(mags, mags[-1] + (mags[-1] - mags[-2]))
    x = np.asarray(x, np.float64)
    out = np.zeros(x.shape, np.uint8)
    nan_code = lambda s: 0x80 if fnuz else s | 0x7f
    ovf_code = lambda s: s | max_mag if saturate else \
        (0x80 if fnuz else s | (0x7c if has_inf else 0x7f))
    for i, v in np.ndenumerate(x):
        s = 0x80 if np.signbit(v) else 0
        if np.isnan(v):
            out[i] = nan_code(s)
        elif np.isinf(v):
            if saturate and (not fnuz or fnuz_inf_saturates):
                out[i] = s | max_mag
            else:
                out[i] = 0x80 if fnuz else s | (0x7c if has_inf else 0x7f)
        else:
            a = abs(v)
            k = len(cand) - 1 if a > cand[-1] else int(np.searchsorted(cand, a))
            if 0 < k < len(cand) and cand[k] != a:  # between cand[k-1] and cand[k]
                lo, hi = cand[k - 1], cand[k]
                if a - lo < hi - a or (a - lo == hi - a and (k - 1) % 2 == 0):
                    k -= 1  # nearer the lower one, or a tie and its code is even
            if k > max_mag:
                out[i] = ovf_code(s)
            elif k == 0 and fnuz:
                out[i] = 0  # no -0
            else:
                out[i] = s | k
    return out


def f8_tensor(name, codes, t):
    """A float8 TensorProto of type |t| holding |codes| (raw bytes)."""
    codes = np.asarray(codes, np.uint8)
    tp = TensorProto(name=name, data_type=t, dims=list(codes.shape))
    tp.raw_data = codes.tobytes()
    return tp


def f8_sweep(t):
    """float32 values that exercise every rounding of float8 type |t|: every
    finite value, the ties between neighbours and one float32 step either
    side of them, the subnormal range, the overflow thresholds, +-inf, NaN,
    +-0, float32 subnormals and random values over the whole range."""
    _, _, max_mag, _, _ = F8_FMT[t]
    mags = f8_decode(np.arange(max_mag + 1), t)
    nxt = mags[-1] + (mags[-1] - mags[-2])
    cand = np.append(mags, [nxt, 2 * nxt])
    mids = ((cand[:-1] + cand[1:]) / 2).astype(np.float32)
    v = [mags.astype(np.float32), mids, np.nextafter(mids, np.float32(np.inf)),
         np.nextafter(mids, np.float32(0)), mags.astype(np.float32) * np.float32(1.0625),
         np.array([mags[1] / 4, mags[1] / 2, mags[1] * 0.75, 1e-30, 1.4e-45, 1e-40,
                   3e38, np.finfo(np.float32).max, 1e10, 65504, 65520, 1e5],
                  np.float32),
         (rng("f8_sweep%d" % t).standard_normal(64) *
          2.0 ** rng("f8_exp%d" % t).integers(-20, 20, 64)).astype(np.float32)]
    v = np.concatenate(v).astype(np.float32)
    v = np.concatenate([v, -v, np.array([np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0],
                                        np.float32)])
    return v.astype(np.float32)


# Where onnxruntime 1.30 departs from the spec tables (the spec decides):
F8_WHY_FNUZ_INF = (
    "onnxruntime 1.30 casts +-inf to +-max in the fnuz types with saturate=1 at every "
    "opset; the tables of Cast-19, -21 and -23 say NaN (0x80), only Cast-24 changed "
    "the row to +-FLT_MAX (cast24_float8*_inf_saturates)")
F8_WHY_E5M2_OVF = (
    "onnxruntime 1.30 gives NaN for float8e5m2 with saturate=0 when |x| rounds to "
    "just above the largest finite value (61440 <= |x| <= 65520, the rounding carries "
    "into the NaN codes); the table says [x] > FLT_MAX -> Inf and [x] < -FLT_MAX -> -Inf")
F8_WHY_DOUBLE = (
    "onnxruntime 1.30 casts double to float8 through float32, rounding twice: a double "
    "a hair above (or below) a float8 tie becomes the tie in float32 and then rounds "
    "to even; the spec rounds the value itself to the float8 mantissa ([x], RNE)")


def f8_roundtrip_case(t, saturate, opset=19, why=None):
    """x float32 -> Cast(float8, saturate) -> Cast(float32): onnxruntime runs
    it (float32 at both ends), the numpy tables cross-check."""
    x = f8_sweep(t)
    fnuz_inf = opset >= 24
    ref = lambda f: [f8_decode(f8_encode(f["x"], t, saturate, fnuz_inf), t).astype(np.float32)]
    return Spec([node("Cast", ["x"], ["q"], to=t, saturate=saturate),
                 node("Cast", ["q"], ["y"], to=F32)], [("x", x)], [("y", F32)], opset,
                numpy_ref=ref, why=why)


for _t in F8_TYPES:
    for _s in (1, 0):
        _why = (F8_WHY_FNUZ_INF if _s and _t in (F8E4M3FNUZ, F8E5M2FNUZ) else
                F8_WHY_E5M2_OVF if not _s and _t == F8E5M2 else None)
        CASES["cast19_float8%s_roundtrip_saturate%d" % (F8_NAME[_t], _s)] = (
            lambda t=_t, s=_s, w=_why: f8_roundtrip_case(t, s, why=w))
for _t in (F8E4M3FNUZ, F8E5M2FNUZ):
    # Cast-24: +-inf saturates to +-max in the fnuz types (NaN at 19-23)
    CASES["cast24_float8%s_inf_saturates" % F8_NAME[_t]] = (
        lambda t=_t: f8_roundtrip_case(t, 1, opset=24))


@case
def cast19_float8_all_codes_to_float():
    # every code of every float8 type (initializers) to float32, float16 and
    # double: the decoding, exact
    nodes, outs, inits = [], [], []
    for t in F8_TYPES:
        n = F8_NAME[t]
        inits.append(("c_" + n, f8_tensor("c_" + n, np.arange(256, dtype=np.uint8), t)))
        for dt, suffix in ((F32, "f32"), (TensorProto.FLOAT16, "f16"),
                           (TensorProto.DOUBLE, "f64")):
            nodes.append(node("Cast", ["c_" + n], ["%s_%s" % (n, suffix)], to=dt))
            outs.append(("%s_%s" % (n, suffix), dt))
    x = np.zeros(1, np.float32)  # a dummy feed: onnxruntime needs no input, mlcc one
    nodes.append(node("Identity", ["x"], ["x_out"]))
    outs.append(("x_out", F32))
    ref = lambda f: [f8_decode(np.arange(256), t).astype(NP_OF[dt])
                     for t in F8_TYPES for dt in (F32, TensorProto.FLOAT16, TensorProto.DOUBLE)] \
        + [f["x"]]
    return Spec(nodes, [("x", x)], outs, 19, inits, numpy_ref=ref)


@case
def cast19_double_int_to_float8():
    # double (rounded once, no double rounding through float: values a hair
    # above a float8 tie whose float32 rounding is the tie itself) and int32
    # sources, saturating, back to float32
    ties = f8_decode(np.arange(0x70), F8E4M3FN)
    ties = (ties[:-1] + ties[1:]) / 2
    d = np.concatenate([ties * (1 + 2.0 ** -40), ties * (1 - 2.0 ** -40), ties,
                        [1e300, -1e300, 5e-324]]).astype(np.float64)
    i = np.array([0, 1, -1, 7, 17, 100, 255, 447, 464, 465, 1000, -100000, 2 ** 31 - 1,
                  -2 ** 31], np.int32)
    ref = lambda f: [f8_decode(f8_encode(f["d"], F8E4M3FN), F8E4M3FN).astype(np.float32),
                     f8_decode(f8_encode(f["i"].astype(np.float64), F8E5M2, False),
                               F8E5M2).astype(np.float32)]
    return Spec([node("Cast", ["d"], ["dq"], to=F8E4M3FN),
                 node("Cast", ["dq"], ["yd"], to=F32),
                 node("Cast", ["i"], ["iq"], to=F8E5M2, saturate=0),
                 node("Cast", ["iq"], ["yi"], to=F32)],
                [("d", d), ("i", i)], [("yd", F32), ("yi", F32)], 19, numpy_ref=ref,
                why=F8_WHY_DOUBLE)


@case
def castlike19_float8_saturate0():
    x = f8_sweep(F8E5M2)
    like = ("like", f8_tensor("like", np.zeros(1, np.uint8), F8E5M2))
    ref = lambda f: [f8_decode(f8_encode(f["x"], F8E5M2, False), F8E5M2).astype(np.float32)]
    return Spec([node("CastLike", ["x", "like"], ["q"], saturate=0),
                 node("Cast", ["q"], ["y"], to=F32)], [("x", x)], [("y", F32)], 19, [like],
                numpy_ref=ref, why=F8_WHY_E5M2_OVF)


F8_IO_WHY = ("onnxruntime-node's JavaScript Tensor (and so ort_run.js) has no float8 "
             "type, so a model with float8 graph inputs or outputs cannot be fed to it; "
             "the numpy tables above are the reference")


@case
def cast21_float8_io_bits():
    # float8 graph inputs and outputs (uint8_t bits in the generated API):
    # every code of e4m3fn in, to float32 and to e5m2 (saturate=0); the
    # float32 sweep out as e4m3fnuz bits with and without saturate
    codes = np.arange(256, dtype=np.uint8)
    x = f8_sweep(F8E4M3FNUZ)
    dec = f8_decode(codes, F8E4M3FN)
    ref = lambda f: [dec.astype(np.float32), f8_encode(dec, F8E5M2, False),
                     f8_encode(f["x"], F8E4M3FNUZ, True), f8_encode(f["x"], F8E4M3FNUZ, False)]
    return Spec([node("Cast", ["c"], ["c_f32"], to=F32),
                 node("Cast", ["c"], ["c_e5m2"], to=F8E5M2, saturate=0),
                 node("Cast", ["x"], ["x_sat"], to=F8E4M3FNUZ),
                 node("Cast", ["x"], ["x_nosat"], to=F8E4M3FNUZ, saturate=0)],
                [("c", codes), ("x", x)],
                [("c_f32", F32), ("c_e5m2", F8E5M2), ("x_sat", F8E4M3FNUZ),
                 ("x_nosat", F8E4M3FNUZ)], 21, numpy_ref=ref, ort_refuses=F8_IO_WHY,
                types={"c": F8E4M3FN})


# --- float4e2m1 (TensorProto 23, opset 23+) --------------------------------------
# docs/docsgen/source/technical/float4.md: S.EE.M, bias 1, magnitudes 0, 0.5,
# 1, 1.5, 2, 3, 4, 6; no inf, no NaN. Cast to it rounds to nearest even
# within [-6, 6], saturates beyond (+-inf too; 'saturate' is for float8
# only), NaN -> 6; +-0 -> +-0. Packed two per byte like uint4.
F4 = onnx_case.FLOAT4E2M1
F4_MAGS = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float64)


def f4_decode(codes):
    c = np.asarray(codes, np.int64)
    return np.where(c & 8, -1.0, 1.0) * F4_MAGS[c & 7]


def f4_encode(x):
    """uint8 float4e2m1 codes of float values |x| (the table above): the
    nearest magnitude, a tie to the even code."""
    x = np.asarray(x, np.float64)
    out = np.zeros(x.shape, np.uint8)
    for i, v in np.ndenumerate(x):
        if np.isnan(v):
            out[i] = 7
            continue
        s = 8 if np.signbit(v) else 0
        a = min(abs(v), 6.0)
        d = np.abs(F4_MAGS - a)
        k = [j for j in range(8) if d[j] == d.min()]
        out[i] = s | (k[0] if len(k) == 1 or k[0] % 2 == 0 else k[1])
    return out


def f4_sweep():
    """float32 values through every float4 rounding: the eight magnitudes,
    the midpoints (ties) and one float32 step either side of each, beyond 6,
    huge, tiny, subnormal, +-inf, NaN, +-0, random ones, both signs."""
    mids = ((F4_MAGS[:-1] + F4_MAGS[1:]) / 2).astype(np.float32)
    v = [F4_MAGS.astype(np.float32), mids, np.nextafter(mids, np.float32(np.inf)),
         np.nextafter(mids, np.float32(0)),
         np.array([0.1, 0.2, 5.5, 5.9, 6.0001, 7, 8, 1e10, 3e38,
                   np.finfo(np.float32).max, 1e-30, 1.4e-45], np.float32),
         (rng("f4_sweep").standard_normal(40) * 3).astype(np.float32)]
    v = np.concatenate(v).astype(np.float32)
    return np.concatenate([v, -v, np.array([np.inf, -np.inf, np.nan, -np.nan, 0.0, -0.0],
                                           np.float32)]).astype(np.float32)


F4_ORT_WHY = ("onnxruntime 1.30 has no CPU kernel of Cast-23 (nor QuantizeLinear-23) for "
              "float4e2m1 in either direction ('Could not find an implementation for "
              "Cast(23)'), and onnxruntime-node's JavaScript Tensor has no float4e2m1 type; "
              "the numpy reference of the ONNX float4 Cast table "
              "(docs/docsgen/source/technical/float4.md) is used")


@case
def cast23_float4e2m1_all_codes_and_sweep():
    # every code (a packed initializer) to float32, float16, double and
    # float8e4m3fn; the float32 sweep to float4e2m1 and back, and through
    # CastLike (saturate=0 is ignored: float4 always saturates)
    codes = np.arange(16, dtype=np.uint8)
    x = f4_sweep()
    like = ("like", onnx_case.subbyte_tensor("like", np.zeros(1, np.uint8), F4))
    dec = f4_decode(codes)
    ref = lambda f: [dec.astype(np.float32), dec.astype(np.float16), dec,
                     f8_decode(f8_encode(dec, F8E4M3FN), F8E4M3FN).astype(np.float32),
                     f4_decode(f4_encode(f["x"])).astype(np.float32),
                     f4_decode(f4_encode(f["x"])).astype(np.float32)]
    return Spec([node("Cast", ["c"], ["c_f32"], to=F32),
                 node("Cast", ["c"], ["c_f16"], to=TensorProto.FLOAT16),
                 node("Cast", ["c"], ["c_f64"], to=TensorProto.DOUBLE),
                 node("Cast", ["c"], ["c_e4m3"], to=F8E4M3FN),
                 node("Cast", ["c_e4m3"], ["c_e4m3_f32"], to=F32),
                 node("Cast", ["x"], ["q"], to=F4),
                 node("Cast", ["q"], ["y"], to=F32),
                 node("CastLike", ["x", "like"], ["q2"], saturate=0),
                 node("Cast", ["q2"], ["y2"], to=F32)],
                [("x", x)],
                [("c_f32", F32), ("c_f16", TensorProto.FLOAT16), ("c_f64", TensorProto.DOUBLE),
                 ("c_e4m3_f32", F32), ("y", F32), ("y2", F32)], 23,
                [("c", onnx_case.subbyte_tensor("c", codes, F4)), like], numpy_ref=ref,
                ort_refuses=F4_ORT_WHY)


@case
def cast23_float4e2m1_io_bits_sources_movement():
    # float4e2m1 graph input (one code per byte in the generated API) and
    # outputs: codes to float32 and int32 (Cast float -> int truncates), the
    # float32 sweep, a double sweep (one rounding: values a hair off the ties)
    # and int32 to float4e2m1 codes, and the codes through Reshape, Transpose,
    # Flatten, Unsqueeze, Squeeze, Identity, Shape and Size (opset 23 lists
    # float4e2m1 in them)
    codes = np.tile(np.arange(16, dtype=np.uint8), 4)
    x = f4_sweep()
    ties = (F4_MAGS[:-1] + F4_MAGS[1:]) / 2
    d = np.concatenate([ties * (1 + 2.0 ** -40), ties * (1 - 2.0 ** -40), ties,
                        -ties * (1 + 2.0 ** -40), [1e300, -1e300, 5e-324, -5e-324]])
    i = np.array([0, 1, -1, 2, 3, 4, 5, 6, 7, -5, 100, -2 ** 31, 2 ** 31 - 1], np.int32)
    dec = f4_decode(codes)
    mv = codes.reshape(4, 4, 4).transpose(2, 0, 1)
    ref = lambda f: [dec.astype(np.float32), np.trunc(dec).astype(np.int32),
                     f4_encode(f["x"]), f4_encode(f["d"]), f4_encode(f["i"].astype(np.float64)),
                     mv.reshape(4 * 4, 4), np.array(mv.shape, np.int64),
                     np.array(mv.size, np.int64)]
    cin = onnx_case.subbyte_tensor("c", codes, F4)
    nodes = [node("Cast", ["c"], ["c_f32"], to=F32), node("Cast", ["c"], ["c_i32"], to=I32),
             node("Cast", ["x"], ["x_f4"], to=F4), node("Cast", ["d"], ["d_f4"], to=F4),
             node("Cast", ["i"], ["i_f4"], to=F4),
             node("Reshape", ["c", "shp"], ["r"]), node("Transpose", ["r"], ["t"], perm=[2, 0, 1]),
             node("Flatten", ["t"], ["fl"], axis=2), node("Unsqueeze", ["fl", "ax"], ["u"]),
             node("Squeeze", ["u", "ax"], ["s"]), node("Identity", ["s"], ["m"]),
             node("Shape", ["t"], ["m_shape"]), node("Size", ["t"], ["m_size"])]
    return Spec(nodes, [("c", cin), ("x", x), ("d", d), ("i", i)],
                [("c_f32", F32), ("c_i32", I32), ("x_f4", F4), ("d_f4", F4), ("i_f4", F4),
                 ("m", F4), ("m_shape", I64), ("m_size", I64)], 23,
                [("shp", np.array([4, 4, 4], np.int64)), ("ax", np.array([1], np.int64))],
                numpy_ref=ref, ort_refuses=F4_ORT_WHY)


@case
def qdq23_float4e2m1_per_axis():
    # QuantizeLinear-23 to float4e2m1 per axis (zero point float4 0 and -0)
    # and DequantizeLinear back: y = float4(x / scale + zp) by the Cast
    # table (ties to even, saturating at +-6, NaN 6), x' = float(q) * scale
    x = (rng("qdq23_f4").standard_normal((3, 8)) * 4).astype(np.float32)
    x[0, :4] = [0.25, 0.75, 13, -np.inf]
    x[1, :3] = [np.nan, 2.5 * 0.5, -100]
    s = np.array([1.0, 0.5, 2.0], np.float32)
    zp = onnx_case.subbyte_tensor("zp", np.array([0, 8, 0], np.uint8), F4)
    q = lambda f: f4_encode(f["x"] / s[:, None])
    ref = lambda f: [(f4_decode(q(f)) * s[:, None]).astype(np.float32)]
    return Spec([node("QuantizeLinear", ["x", "s", "zp"], ["q"], axis=0),
                 node("DequantizeLinear", ["q", "s", "zp"], ["y"], axis=0)],
                [("x", x)], [("y", F32)], 23, [("s", s), ("zp", zp)], numpy_ref=ref,
                ort_refuses=F4_ORT_WHY)


def ir_version(opset):
    return IR_OF_OPSET.get(opset, 10)


def f8_movement_nodes(src, all_ops=True):
    # Reshape-21, Transpose-21, Flatten-21, Unsqueeze-21, Squeeze-21,
    # Identity-21, Shape-21, Size-21 on float8 data. onnxruntime 1.30 has no
    # float8 kernel of Flatten, Squeeze, Unsqueeze, Shape and Size (nor of
    # Reshape-19): with all_ops False the first three are Reshapes to the same
    # shapes and the last two are left out.
    mid = ([node("Flatten", ["t"], ["f"], axis=2), node("Unsqueeze", ["f", "ax"], ["u"]),
            node("Squeeze", ["u", "ax"], ["s"])] if all_ops else
           [node("Reshape", ["t", "shp2"], ["f"]), node("Reshape", ["f", "shp3"], ["u"]),
            node("Reshape", ["u", "shp2"], ["s"])])
    return [node("Reshape", [src, "shp"], ["r"]),
            node("Transpose", ["r"], ["t"], perm=[2, 0, 1])] + mid + [
            node("Identity", ["s"], ["y"])] + (
            [node("Shape", ["t"], ["y_shape"]), node("Size", ["t"], ["y_size"])]
            if all_ops else [])


def f8_movement_ref(codes):
    t = codes.reshape(4, 8, 8).transpose(2, 0, 1)
    return t.reshape(8 * 4, 8), np.array(t.shape, np.int64), np.array(t.size, np.int64)


F8_MOVE_INITS = [("shp", np.array([4, 8, 8], np.int64)), ("ax", np.array([1], np.int64))]


@case
def float8_data_movement21_ort():
    # float8 initializer and Constant -> data movement -> Cast to float32
    # (onnxruntime runs it: float32 at the edges)
    codes = np.arange(256, dtype=np.uint8)
    nodes = [node("Constant", [], ["k"], value=f8_tensor("k", codes[::-1].copy(), F8E4M3FN))]
    nodes += f8_movement_nodes("c", all_ops=False)
    nodes += [node("Cast", ["y"], ["y_f32"], to=F32), node("Cast", ["k"], ["k_f32"], to=F32),
              node("Identity", ["x"], ["x_out"])]
    x = np.zeros(1, np.float32)
    y, shp, size = f8_movement_ref(codes)
    ref = lambda f: [f8_decode(y, F8E5M2).astype(np.float32),
                     f8_decode(codes[::-1], F8E4M3FN).astype(np.float32), f["x"]]
    return Spec(nodes, [("x", x)], [("y_f32", F32), ("k_f32", F32), ("x_out", F32)], 21,
                F8_MOVE_INITS + [("c", f8_tensor("c", codes, F8E5M2)),
                                 ("shp2", np.array([32, 8], np.int64)),
                                 ("shp3", np.array([32, 1, 8], np.int64))], numpy_ref=ref)


@case
def float8_data_movement21_io_bits():
    # the same on a float8e5m2 graph input to a float8 output: the bytes are
    # copied as they are (NaN payloads 0x7d/0x7e/0xfd/0xfe included)
    codes = np.arange(256, dtype=np.uint8)
    y, shp, size = f8_movement_ref(codes)
    return Spec(f8_movement_nodes("c"), [("c", codes)],
                [("y", F8E5M2), ("y_shape", I64), ("y_size", I64)], 21, F8_MOVE_INITS,
                numpy_ref=lambda f: [y, shp, size], ort_refuses=F8_IO_WHY,
                types={"c": F8E5M2})


# --- QuantizeLinear / DequantizeLinear 19+ with float8 --------------------------
# y = float8(x / y_scale + y_zero_point) by Cast's tables under 'saturate' (in
# float32, no integer rounding), x = (float(xq) - float(zero point)) * scale.
def f8_quant_ref(x, s, zp, t, saturate, axis=1, block=0, opset=19):
    """numpy QuantizeLinear to float8 |t| and DequantizeLinear back: returns
    (codes, dequantized float32). |s|/|zp| broadcast per tensor, per axis
    (1-D along |axis|) or blocked (|block| > 0, shape of x with
    ceil(dim / block) along |axis|); zp None is an absent zero point."""
    x = np.asarray(x, np.float32)

    def expand(p):
        p = np.asarray(p)
        if p.ndim == 0:
            return p
        if block:
            return np.repeat(p, block, axis=axis).take(range(x.shape[axis]), axis=axis)
        shape = [1] * x.ndim
        shape[axis] = -1
        return p.reshape(shape)
    se = expand(np.asarray(s, np.float32)).astype(np.float32)
    v = (x / se).astype(np.float32)
    zf = None
    if zp is not None:
        zf = expand(f8_decode(zp, t).astype(np.float32)).astype(np.float32)
        v = (v + zf).astype(np.float32)
    q = f8_encode(v, t, saturate, fnuz_inf_saturates=opset >= 24)  # Cast-24's inf row
    d = f8_decode(q, t).astype(np.float32)
    if zf is not None:
        d = (d - zf).astype(np.float32)
    return q, (d * se).astype(np.float32)


F8_WHY_ZP = ("onnxruntime 1.30's QuantizeLinear/DequantizeLinear refuse a float8 zero point "
             "other than 0 (quantize_linear.cc: 'should have no zero point or all zero'); the "
             "spec keeps the formula, y = float8(x / scale + zero point)")


def f8_qdq_case(name, t, opset, shape, scales, zps, saturate=1, axis=1, block=0, why=None,
                ort_refuses=None):
    r = rng(name)
    x = (r.standard_normal(shape) * 3).astype(np.float32)
    big = f8_decode(F8_FMT[t][2], t)
    flat = x.reshape(-1)
    flat[:8] = [big * 0.9, big * 1.5, -big * 3, np.inf, -np.inf, np.nan, 0.0, -0.0]
    s = np.asarray(scales, np.float32)
    qa = {"saturate": saturate}
    da = {}
    if s.ndim:
        qa["axis"] = da["axis"] = axis
    if block:
        qa["block_size"] = da["block_size"] = block
    ins = ["x", "s"] + (["zp"] if zps is not None else [])
    dins = ["q", "s"] + (["zp"] if zps is not None else [])
    inits = [("s", s)]
    if zps is not None:
        inits.append(("zp", f8_tensor("zp", np.asarray(zps, np.uint8), t)))
    else:
        # no zero point: output_dtype says the float8 type (21+)
        qa["output_dtype"] = t
    ref = lambda f: [f8_quant_ref(f["x"], s, zps, t, saturate, axis, block, opset)[1]]
    return Spec([node("QuantizeLinear", ins, ["q"], **qa),
                 node("DequantizeLinear", dins, ["y"], **da)],
                [("x", x)], [("y", F32)], opset, inits, numpy_ref=ref, why=why,
                ort_refuses=ort_refuses)


# Zero points of 0 where onnxruntime checks the case (it refuses others);
# nonzero ones (e4m3fn 0x38 = 1.0, 0xb0 = -0.5; e4m3fnuz 0x40 = 1.0; e5m2fnuz
# 0x44 = 1.5, 0xc0 = NaN would be the fnuz NaN, so not used) in the numpy cases.
CASES["qdq19_float8e4m3fn_per_tensor"] = lambda: f8_qdq_case(
    "qdq19_float8e4m3fn_per_tensor", F8E4M3FN, 19, (3, 40), 0.05, 0)
CASES["qdq19_float8e5m2_per_tensor_saturate0"] = lambda: f8_qdq_case(
    "qdq19_float8e5m2_per_tensor_saturate0", F8E5M2, 19, (3, 40), 1e-4, 0, saturate=0)
CASES["qdq19_float8e4m3fnuz_per_axis"] = lambda: f8_qdq_case(
    "qdq19_float8e4m3fnuz_per_axis", F8E4M3FNUZ, 19, (2, 3, 16), [0.02, 0.5, 3.0],
    [0, 0, 0], why=F8_WHY_FNUZ_INF)
CASES["qdq19_float8e5m2fnuz_per_axis_saturate0"] = lambda: f8_qdq_case(
    "qdq19_float8e5m2fnuz_per_axis_saturate0", F8E5M2FNUZ, 19, (4, 24), [1e-3, 1e-2, 1.0, 8.0],
    [0, 0, 0, 0], axis=0, saturate=0)
CASES["qdq21_float8e4m3fn_block_size_output_dtype"] = lambda: f8_qdq_case(
    "qdq21_float8e4m3fn_block_size_output_dtype", F8E4M3FN, 21, (3, 10),
    np.array([[0.1, 0.2, 0.4], [1.0, 2.0, 4.0], [0.01, 0.02, 0.03]], np.float32), None,
    axis=1, block=4)
CASES["qdq24_float8e5m2fnuz_inf_saturates"] = lambda: f8_qdq_case(
    "qdq24_float8e5m2fnuz_inf_saturates", F8E5M2FNUZ, 24, (2, 20), 0.5, 0)
CASES["qdq19_float8e4m3fn_nonzero_zero_points"] = lambda: f8_qdq_case(
    "qdq19_float8e4m3fn_nonzero_zero_points", F8E4M3FN, 19, (2, 3, 16), [0.02, 0.5, 3.0],
    [0x38, 0xb0, 0], ort_refuses=F8_WHY_ZP)
CASES["qdq21_float8e5m2fnuz_nonzero_zero_point_saturate0"] = lambda: f8_qdq_case(
    "qdq21_float8e5m2fnuz_nonzero_zero_point_saturate0", F8E5M2FNUZ, 21, (3, 20), 0.01, 0x44,
    saturate=0, ort_refuses=F8_WHY_ZP)


@case
def qdq21_float8_io_bits():
    # float8 output of QuantizeLinear and float8 input of DequantizeLinear as
    # graph I/O (uint8_t bits): every e4m3fn code dequantized per axis, and a
    # float32 input quantized to e5m2 bits
    codes = np.arange(256, dtype=np.uint8).reshape(4, 64)
    s = np.array([0.5, 1.0, 2.0, 0.25], np.float32)
    x = (rng("qdq21_f8_io").standard_normal((2, 32)) * 20).astype(np.float32)
    x[0, :4] = [1e6, -1e6, np.inf, np.nan]
    dq = ((f8_decode(codes, F8E4M3FN).astype(np.float32)) * s[:, None]).astype(np.float32)
    ref = lambda f: [dq, f8_quant_ref(f["x"], np.float32(0.1), None, F8E5M2, 1)[0]]
    return Spec([node("DequantizeLinear", ["c", "s"], ["y"], axis=0),
                 node("QuantizeLinear", ["x", "s1"], ["q"], output_dtype=F8E5M2)],
                [("c", codes), ("x", x)], [("y", F32), ("q", F8E5M2)], 21,
                [("s", s), ("s1", np.array(0.1, np.float32))], numpy_ref=ref,
                ort_refuses=F8_IO_WHY, types={"c": F8E4M3FN})


# --- float8e8m0 (opset 24): Cast with round_mode and saturate ------------------
def e8m0_decode(codes):
    c = np.asarray(codes, np.int64)
    return np.where(c == 0xff, np.nan, 2.0 ** (c - 127.0))


def e8m0_encode(x, saturate=True, mode="up"):
    """Cast-24's float8e8m0 rules on float64 values |x| (the sign ignored:
    negative inputs are unspecified): NaN -> 0xff; +-inf and x > 2^127 ->
    0xfe with saturate, else 0xff; x < 2^-127 (0 too) -> 0x00 with saturate,
    else 0xff; otherwise round to a power of two: up (away from zero),
    down, nearest (the midpoint of 2^k and 2^(k+1) is 1.5 * 2^k; ties up)."""
    out = np.zeros(np.shape(x), np.uint8)
    for i, v in np.ndenumerate(np.asarray(x, np.float64)):
        a = abs(v)
        if np.isnan(a):
            out[i] = 0xff
        elif a > 2.0 ** 127:
            out[i] = 0xfe if saturate else 0xff
        elif a < 2.0 ** -127:
            out[i] = 0x00 if saturate else 0xff
        else:
            k = int(np.floor(np.log2(a)))
            while 2.0 ** k > a:  # log2 rounding
                k -= 1
            while 2.0 ** (k + 1) <= a:
                k += 1
            lo = 2.0 ** k
            if mode == "up":
                k += a > lo
            elif mode == "nearest":
                k += a >= 1.5 * lo
            out[i] = k + 127
    return out


def e8m0_sweep():
    p = 2.0 ** np.arange(-127, 128, dtype=np.float64)
    v = np.concatenate([p, p * 1.5, p * 1.25, p * 1.75,
                        np.nextafter(p.astype(np.float32), np.float32(np.inf)),
                        np.nextafter((p * 1.5).astype(np.float32), np.float32(0))])
    v = np.concatenate([v.astype(np.float32),
                        np.array([0.0, 1e-45, 2.0 ** -128, 2.0 ** -127 * 0.75, np.inf, np.nan,
                                  3.4e38, np.finfo(np.float32).max], np.float32)])
    return v.astype(np.float32)


F8E8M0 = 24
E8M0_MODES = [(m, s) for m in ("up", "down", "nearest") for s in (1, 0)]


@case
def cast24_float8e8m0_round_modes():
    # every round_mode x saturate on powers of two, their midpoints (ties of
    # nearest) and one float step around them, 2^-127, zero, the float32
    # subnormals, overflow, inf and NaN; back to float32
    x = e8m0_sweep()
    nodes, outs = [], []
    for m, s in E8M0_MODES:
        n = "%s_sat%d" % (m, s)
        nodes += [node("Cast", ["x"], ["q_" + n], to=F8E8M0, round_mode=m, saturate=s),
                  node("Cast", ["q_" + n], ["y_" + n], to=F32)]
        outs.append(("y_" + n, F32))
    ref = lambda f: [e8m0_decode(e8m0_encode(f["x"], s, m)).astype(np.float32)
                     for m, s in E8M0_MODES]
    return Spec(nodes, [("x", x)], outs, 24, numpy_ref=ref)


@case
def cast24_float8e8m0_io_bits():
    # float8e8m0 graph input (every code) to float32 and float16 and through
    # Reshape-24/Transpose-24 as bits, double and
    # int64 inputs to float8e8m0 bits (rounded once: a double a hair above a
    # power of two rounds up; 2^40 + 1 is not 2^40)
    codes = np.arange(256, dtype=np.uint8)
    d = np.array([1.0, 1.0 + 2.0 ** -40, 1.5 - 2.0 ** -40, 1.5, 2.0 ** 127 * 1.5, 1e300,
                  1e-300, 2.0 ** -127], np.float64)
    i = np.array([1, 2, 3, 2 ** 40, 2 ** 40 + 1, 2 ** 62 - 1, 0], np.int64)
    ref = lambda f: [e8m0_decode(codes).astype(np.float32),
                     e8m0_decode(codes).astype(np.float16),
                     e8m0_encode(f["d"], True, "up"), e8m0_encode(f["i"], True, "up"),
                     e8m0_encode(f["d"], False, "nearest"),
                     codes.reshape(16, 16).T.copy()]
    return Spec([node("Cast", ["c"], ["c_f32"], to=F32),
                 node("Reshape", ["c", "shp"], ["c_r"]),
                 node("Transpose", ["c_r"], ["c_t"]),
                 node("Cast", ["c"], ["c_f16"], to=TensorProto.FLOAT16),
                 node("Cast", ["d"], ["d_up"], to=F8E8M0),
                 node("Cast", ["i"], ["i_up"], to=F8E8M0),
                 node("Cast", ["d"], ["d_nearest"], to=F8E8M0, round_mode="nearest",
                      saturate=0)],
                [("c", codes), ("d", d), ("i", i)],
                [("c_f32", F32), ("c_f16", TensorProto.FLOAT16), ("d_up", F8E8M0),
                 ("i_up", F8E8M0), ("d_nearest", F8E8M0), ("c_t", F8E8M0)], 24,
                [("shp", np.array([16, 16], np.int64))], numpy_ref=ref,
                ort_refuses=F8_IO_WHY, types={"c": F8E8M0})


def feed_arrays(spec):
    """The feeds as numpy arrays (int4/uint4 TensorProtos as int8/uint8)."""
    return {n: onnx_case.subbyte_array(a) if isinstance(a, TensorProto) else a
            for n, a in spec.feeds}


def run_ort(spec, work):
    """Runs |spec| with onnxruntime-node; returns [(name, array)] outputs.
    onnxruntime-node 1.30 cannot pass int4/uint4 (nor int2/uint2) tensors in or out of a
    session, so the oracle's copy of the model takes such an input as
    int8/uint8 and Casts it to the 4-bit type first, and Casts a 4-bit output
    to int8/uint8 last (in range, both Casts keep the values); the case's own
    model has the 4-bit inputs and outputs."""
    import onnx
    vi = lambda n, t, shape=None: helper.make_tensor_value_info(n, t, shape)
    wide = {I4: TensorProto.INT8, U4: TensorProto.UINT8, I2: TensorProto.INT8,
            U2: TensorProto.UINT8}
    arrays = feed_arrays(spec)
    pre, post, ins_vi, outs_vi = [], [], [], []
    for n, a in spec.feeds:
        if isinstance(a, TensorProto) and a.data_type not in wide:
            ins_vi.append(vi(n, a.data_type, list(a.dims)))  # float4e2m1: as it is
        elif isinstance(a, TensorProto):
            pre.append(helper.make_node("Cast", [n + "__wide"], [n], to=a.data_type))
            ins_vi.append(vi(n + "__wide", wide[a.data_type], list(a.dims)))
        else:
            ins_vi.append(vi(n, spec.types.get(n, onnx_case.NP2ONNX[a.dtype]), a.shape))
    for n, t in spec.outputs:
        if t in wide:
            post.append(helper.make_node("Cast", [n], [n + "__wide"], to=wide[t]))
            outs_vi.append(vi(n + "__wide", wide[t]))
        else:
            outs_vi.append(vi(n, t))
    g = helper.make_graph(
        pre + list(spec.nodes) + post, "oracle", ins_vi, outs_vi,
        initializer=[onnx_case.tensor(n, a) for n, a in spec.inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", spec.opset)])
    m.ir_version = ir_version(spec.opset)
    model = os.path.join(work, "model.onnx")
    onnx.save(m, model)
    ins = []
    for i, (n, a) in enumerate(spec.feeds):
        p = os.path.join(work, "input_%d.pb" % i)
        wname = n + "__wide" if isinstance(a, TensorProto) else n
        with open(p, "wb") as f:
            if isinstance(a, TensorProto) and a.data_type not in wide:
                f.write(a.SerializeToString())
            else:
                f.write(numpy_helper.from_array(arrays[n], wname).SerializeToString())
        ins.append(p)
    out_dir = os.path.join(work, "out")
    env = dict(os.environ, NODE_PATH=ORT_MODULES)
    p = subprocess.run(["node", os.path.join(HERE, "ort_run.js"), model, out_dir] + ins,
                       env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("onnxruntime-node: " + p.stderr.strip())
    outs = []
    for i, (n, t) in enumerate(spec.outputs):
        tp = TensorProto()
        with open(os.path.join(out_dir, "output_%d.pb" % i), "rb") as f:
            tp.ParseFromString(f.read())
        outs.append((n, numpy_helper.to_array(tp)))
    return outs


def generate(names, out):
    for name in names:
        spec = CASES[name]()
        why = None
        with tempfile.TemporaryDirectory(prefix="mlcc-opset-") as work:
            if spec.ort_refuses:
                try:
                    run_ort(spec, work)
                except RuntimeError:
                    outs = None
                else:
                    raise RuntimeError("%s: onnxruntime now runs it; drop ort_refuses" % name)
                ref = spec.numpy_ref(feed_arrays(spec))
                outs = [(n, np.asarray(b, dtype=NP_OF[t]))
                        for (n, t), b in zip(spec.outputs, ref)]
                why = spec.ort_refuses
            else:
                outs = run_ort(spec, work)
        if spec.numpy_ref is not None and not spec.ort_refuses:
            # A numpy reference cross-checks onnxruntime; where they disagree
            # the spec decides (the numpy reference) and the case says why.
            ref = spec.numpy_ref(feed_arrays(spec))
            # float16 outputs: within 2 float16 steps (the two round differently).
            tol = lambda a: (2e-3, 2e-3) if a.dtype == np.float16 else (1e-4, 1e-5)
            agree = all(np.shape(a) == np.shape(b) and
                        np.allclose(a, b, rtol=tol(a)[0], atol=tol(a)[1], equal_nan=True)
                        for (_, a), b in zip(outs, ref))
            if not agree:
                if not spec.why:
                    raise RuntimeError("%s: onnxruntime and the numpy reference disagree and "
                                       "the case gives no reason" % name)
                why = spec.why
                outs = [(n, np.asarray(b, dtype=a.dtype)) for (n, a), b in zip(outs, ref)]
            elif spec.why:
                raise RuntimeError("%s: onnxruntime now matches the numpy reference; drop "
                                   "the reason" % name)
        # int4/uint4 references are written packed, as ONNX stores them.
        types = dict(spec.outputs)
        outs = [(n, onnx_case.subbyte_tensor(n, a, types[n]) if types.get(n) in onnx_case.SUBBYTE
                 else a)
                for n, a in outs]
        d = os.path.join(out, name)
        shutil.rmtree(d, ignore_errors=True)
        if spec.types or any(t in F8_TYPES_ALL for _, t in spec.outputs):
            # declared types that the arrays do not carry (float8 bits)
            vi = onnx_case.value_info
            g = onnx_case.graph(
                spec.nodes, name,
                [vi(n, spec.types.get(n, onnx_case.elem_type(a.dtype)), list(a.shape))
                 for n, a in spec.feeds],
                [vi(n, t, list(np.shape(a))) for (n, t), (_, a) in zip(spec.outputs, outs)],
                spec.inits)
            onnx_case.save_case(d, onnx_case.model(g, spec.opset, ir_version(spec.opset)),
                                [(spec.feeds, outs)])
        else:
            onnx_case.write_case(d, spec.nodes, spec.feeds, outs, inits=spec.inits,
                                 opset=spec.opset, ir_version=ir_version(spec.opset))
        if why:
            with open(os.path.join(d, "REFERENCE.txt"), "w") as f:
                f.write("Expected outputs from a numpy reference, not onnxruntime-node:\n"
                        + why + "\n")


def same_tree(a, b):
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    if mismatch or errors:
        return False
    return all(same_tree(os.path.join(a, s), os.path.join(b, s)) for s in cmp.common_dirs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=CASES_DIR)
    ap.add_argument("--only", default=None, help="comma-separated case names")
    ap.add_argument("--check", action="store_true",
                    help="regenerate into a temporary folder and compare with --out; "
                         "exit 77 when onnxruntime-node is not installed")
    ap.add_argument("--list", action="store_true", help="print the case names")
    args = ap.parse_args()
    names = sorted(CASES) if not args.only else args.only.split(",")
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print("unknown case(s): " + ", ".join(unknown), file=sys.stderr)
        return 2
    if args.list:
        print("\n".join(names))
        return 0
    if not os.path.isdir(os.path.join(ORT_MODULES, "onnxruntime-node")):
        print("SKIP: onnxruntime-node is not installed in %s (scripts/setup.sh installs it)"
              % ORT_MODULES)
        return 77
    if args.check:
        with tempfile.TemporaryDirectory(prefix="mlcc-opset-check-") as tmp:
            generate(names, tmp)
            bad = [n for n in names if not os.path.isdir(os.path.join(args.out, n))
                   or not same_tree(os.path.join(tmp, n), os.path.join(args.out, n))]
            extra = sorted(set(os.listdir(args.out)) - set(CASES)) if not args.only else []
        if bad or extra:
            print("FAIL: committed cases differ from a fresh generation: %s%s; rerun "
                  "tests/onnx/opset_cases/make_opset_cases.py" %
                  (", ".join(bad), (" (not generated: %s)" % ", ".join(extra)) if extra else ""))
            return 1
        print("PASS: %d cases match a fresh onnxruntime-node generation" % len(names))
        return 0
    os.makedirs(args.out, exist_ok=True)
    generate(names, args.out)
    print("wrote %d cases to %s" % (len(names), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
