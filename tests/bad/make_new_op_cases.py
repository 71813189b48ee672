#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Adversarial models for the operator families added with issue 5
# (quantization, RNN/GRU/LSTM, DFT/STFT/windows/MelWeightMatrix, NonZero/
# Compress/Unique/NonMaxSuppression, If/Loop/Scan, GridSample/RoiAlign/
# MaxUnpool/Upsample/ReverseSequence/Det, TfIdfVectorizer, legacy opsets,
# bfloat16 Cast): wrong arity/dtypes/ranks, zero-size dims, out-of-range or
# huge attributes, constants with NaN/Inf.
#
#   make_new_op_cases.py --all DIR     writes every case to DIR (for a sweep
#                                      with --check; most are not kept)
#   make_new_op_cases.py --check MLCC DIR
#                                      runs MLCC over DIR's cases and flags a
#                                      crash, signal, sanitizer report,
#                                      timeout, an exit code other than the
#                                      case's expectation, or a first error
#                                      line that does not name file, node, op
#                                      and opset (--known adds the cases of
#                                      known, unfixed problems)
#   make_new_op_cases.py               writes the regression subset (REGRESSION,
#                                      cases that once crashed, hung or failed
#                                      with the wrong error) into tests/bad/ as
#                                      new_<case>.onnx; expected.txt lists them
#
# Deterministic: re-running gives byte-identical files. Needs onnx + numpy
# (/usr/bin/python3); no checker is run on purpose.
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT
D = TensorProto.DOUBLE
H = TensorProto.FLOAT16
BF = TensorProto.BFLOAT16
I64 = TensorProto.INT64
I32 = TensorProto.INT32
I8 = TensorProto.INT8
U8 = TensorProto.UINT8
I16 = TensorProto.INT16
B = TensorProto.BOOL
BIG = 1 << 40

CASES = {}  # name -> (builder, expectation: "error" | "ok" | "any" | "known")


def case(expect="error"):
    def wrap(fn):
        CASES[fn.__name__] = (fn, expect)
        return fn
    return wrap


def many(prefix, expect, table):
    """Registers one case per (suffix, builder) of |table|."""
    for suffix, fn in table:
        name = prefix + "_" + suffix
        assert name not in CASES, name
        CASES[name] = (fn, expect)


def model(nodes, inputs, outputs, inits=(), opset=13, extra_opsets=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    ops = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=ops, producer_name="mlcc-bad")
    m.ir_version = 8
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def one(op, ins, outs, inputs, outputs, inits=(), opset=13, **attrs):
    """A single-node model."""
    return model([helper.make_node(op, ins, outs, **attrs)], inputs, outputs, inits, opset)


# ----------------------------------------------------------------------------
# Quantization
# ----------------------------------------------------------------------------
def q(x_shape=(2, 3), x_elem=F, s=np.float32(0.5), zp=np.uint8(3), opset=13, op="QuantizeLinear",
      out_elem=None, **attrs):
    inits = [const("s", s)]
    ins = ["x", "s"]
    if zp is not None:
        inits.append(const("zp", zp))
        ins.append("zp")
    oe = out_elem if out_elem is not None else (U8 if op == "QuantizeLinear" else F)
    return one(op, ins, ["y"], [vi("x", x_elem, list(x_shape))], [vi("y", oe, None)], inits,
               opset, **attrs)


many("quant", "error", [
    ("q_one_input", lambda: one("QuantizeLinear", ["x"], ["y"], [vi("x", F, [2])],
                                [vi("y", U8, None)])),
    ("q_four_inputs", lambda: one("QuantizeLinear", ["x", "s", "zp", "zp"], ["y"],
                                  [vi("x", F, [2])], [vi("y", U8, None)],
                                  [const("s", np.float32(1)), const("zp", np.uint8(0))])),
    ("q_x_int8", lambda: q(x_elem=I8)),
    ("q_x_f16", lambda: q(x_elem=H)),
    ("q_scale_int", lambda: q(s=np.int64(1))),
    ("q_scale_f64", lambda: q(s=np.float64(1))),
    ("q_scale_2d", lambda: q(s=np.ones((2, 3), np.float32), zp=np.zeros((2, 3), np.uint8))),
    ("q_axis_oob", lambda: q(s=np.ones(3, np.float32), zp=np.zeros(3, np.uint8), axis=5)),
    ("q_axis_oob_neg", lambda: q(s=np.ones(3, np.float32), zp=np.zeros(3, np.uint8), axis=-3)),
    ("q_axis_huge", lambda: q(s=np.ones(3, np.float32), zp=np.zeros(3, np.uint8), axis=1 << 62)),
    ("q_axis_wrong_len", lambda: q(s=np.ones(2, np.float32), zp=np.zeros(2, np.uint8), axis=1)),
    ("q_per_axis_opset10", lambda: q(s=np.ones(3, np.float32), zp=np.zeros(3, np.uint8),
                                     opset=10)),
    ("q_zp_shape_mismatch", lambda: q(s=np.ones(3, np.float32), zp=np.uint8(0))),
    ("q_zp_int16", lambda: q(zp=np.int16(0))),
    ("q_zp_int32", lambda: q(zp=np.int32(0))),
    ("q_scalar_x_per_axis", lambda: q(x_shape=(), s=np.ones(3, np.float32),
                                      zp=np.zeros(3, np.uint8))),
    ("q_empty_scale_nonempty_x", lambda: q(x_shape=(2,), s=np.ones(0, np.float32),
                                           zp=np.zeros(0, np.uint8), axis=0)),
    ("dq_x_float", lambda: q(op="DequantizeLinear", x_elem=F)),
    ("dq_zp_sign_mismatch", lambda: q(op="DequantizeLinear", x_elem=U8, zp=np.int8(0))),
    ("dq_axis_oob", lambda: q(op="DequantizeLinear", x_elem=U8, s=np.ones(3, np.float32),
                              zp=np.zeros(3, np.uint8), axis=2)),
    ("dq_scale_wrong_shape", lambda: q(op="DequantizeLinear", x_elem=U8,
                                       s=np.ones((3, 1), np.float32),
                                       zp=np.zeros((3, 1), np.uint8))),
    ("dyn_x_int", lambda: one("DynamicQuantizeLinear", ["x"], ["y", "s", "z"],
                              [vi("x", I32, [4])],
                              [vi("y", U8, None), vi("s", F, None), vi("z", U8, None)],
                              opset=11)),
    ("dyn_two_outputs", lambda: one("DynamicQuantizeLinear", ["x"], ["y", "s"],
                                    [vi("x", F, [4])], [vi("y", U8, None), vi("s", F, None)],
                                    opset=11)),
])

many("quant", "ok", [
    ("q_axis_neg", lambda: q(s=np.ones(3, np.float32), zp=np.zeros(3, np.uint8), axis=-1)),
    ("q_empty_x", lambda: q(x_shape=(0, 3))),
    ("q_empty_per_axis", lambda: q(x_shape=(0, 3), s=np.ones(0, np.float32),
                                   zp=np.zeros(0, np.uint8), axis=0)),
    ("q_scalar_x", lambda: q(x_shape=())),
    ("q_scale_nan", lambda: q(s=np.float32(np.nan))),
    ("q_scale_zero", lambda: q(s=np.float32(0))),
    ("q_scale_inf", lambda: q(s=np.float32(np.inf))),
    ("q_no_zp", lambda: q(zp=None)),
    ("q_int8", lambda: q(zp=np.int8(-3), out_elem=I8)),
    ("q_x_int32", lambda: q(x_elem=I32)),
    ("dq_int32", lambda: q(op="DequantizeLinear", x_elem=I32, zp=np.int32(0))),
    ("dq_scale_nan", lambda: q(op="DequantizeLinear", x_elem=U8, s=np.float32(np.nan))),
    ("dyn_empty", lambda: one("DynamicQuantizeLinear", ["x"], ["y", "s", "z"],
                              [vi("x", F, [0])],
                              [vi("y", U8, None), vi("s", F, None), vi("z", U8, None)],
                              opset=11)),
    ("dyn_const_zero", lambda: one("DynamicQuantizeLinear", ["c"], ["y", "s", "z"], [],
                                   [vi("y", U8, None), vi("s", F, None), vi("z", U8, None)],
                                   [const("c", np.zeros(4, np.float32))], opset=11)),
    ("dyn_const_nan", lambda: one("DynamicQuantizeLinear", ["c"], ["y", "s", "z"], [],
                                  [vi("y", U8, None), vi("s", F, None), vi("z", U8, None)],
                                  [const("c", np.array([np.nan, 1, -np.inf, 2], np.float32))],
                                  opset=11)),
    ("q_const_x_nan", lambda: one("QuantizeLinear", ["c", "s", "zp"], ["y"], [],
                                  [vi("y", U8, None)],
                                  [const("c", np.array([np.nan, np.inf, -np.inf, 1e30],
                                                       np.float32)),
                                   const("s", np.float32(0.5)), const("zp", np.uint8(3))])),
])


def qconv(x_shape=(1, 2, 5, 5), w_shape=(4, 2, 3, 3), x_elem=U8, w_elem=U8, xs=np.float32(.5),
          xz=np.uint8(1), ws=np.float32(.25), wz=np.uint8(2), ys=np.float32(.1),
          yz=np.uint8(4), bias=None, n_inputs=None, **attrs):
    w = np.ones(w_shape, {U8: np.uint8, I8: np.int8, F: np.float32}[w_elem])
    inits = [const("xs", xs), const("xz", xz), const("w", w), const("ws", ws), const("wz", wz),
             const("ys", ys), const("yz", yz)]
    ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    if bias is not None:
        inits.append(const("b", bias))
        ins.append("b")
    if n_inputs is not None:
        ins = ins[:n_inputs]
    return one("QLinearConv", ins, ["y"], [vi("x", x_elem, list(x_shape))],
               [vi("y", U8, None)], inits, 13, **attrs)


def convint(x_shape=(1, 2, 5, 5), w_shape=(4, 2, 3, 3), xz=np.uint8(1), wz=np.uint8(2),
            x_elem=U8, **attrs):
    inits = [const("w", np.ones(w_shape, np.uint8))]
    ins = ["x", "w"]
    if xz is not None:
        inits.append(const("xz", xz))
        ins.append("xz")
    if wz is not None:
        inits.append(const("wz", wz))
        ins.append("wz")
    return one("ConvInteger", ins, ["y"], [vi("x", x_elem, list(x_shape))], [vi("y", I32, None)],
               inits, 13, **attrs)


many("qconv", "error", [
    ("seven_inputs", lambda: qconv(n_inputs=7)),
    ("x_float", lambda: qconv(x_elem=F)),
    ("w_float", lambda: qconv(w_elem=F)),
    ("xz_dtype_mismatch", lambda: qconv(xz=np.int8(1))),
    ("x_scale_per_channel", lambda: qconv(xs=np.ones(2, np.float32))),
    ("w_scale_wrong_len", lambda: qconv(ws=np.ones(5, np.float32))),
    ("w_zp_wrong_len", lambda: qconv(wz=np.ones(3, np.uint8))),
    ("y_scale_int", lambda: qconv(ys=np.int32(1))),
    ("bias_int8", lambda: qconv(bias=np.zeros(4, np.int8))),
    ("bias_wrong_len", lambda: qconv(bias=np.zeros(3, np.int32))),
    ("group_not_dividing", lambda: qconv(x_shape=(1, 3, 5, 5), w_shape=(4, 1, 3, 3), group=2)),
    ("group_zero", lambda: qconv(group=0)),
    ("group_negative", lambda: qconv(group=-2)),
    ("group_huge", lambda: qconv(group=1 << 40)),
    ("m_not_multiple_of_group", lambda: qconv(x_shape=(1, 4, 5, 5), w_shape=(3, 2, 3, 3),
                                              group=2)),
    ("kernel_too_big", lambda: qconv(w_shape=(4, 2, 7, 7))),
    ("negative_pads", lambda: qconv(pads=[-1, 0, 0, 0])),
    ("huge_pads", lambda: qconv(pads=[1 << 62, 0, 1 << 62, 0])),
    ("zero_stride", lambda: qconv(strides=[0, 1])),
    ("zero_dilation", lambda: qconv(dilations=[0, 1])),
    ("huge_dilation", lambda: qconv(dilations=[1 << 62, 1])),
    ("rank2_x", lambda: qconv(x_shape=(1, 2), w_shape=(4, 2))),
    ("kernel_shape_mismatch", lambda: qconv(kernel_shape=[2, 2])),
    ("auto_pad_bogus", lambda: qconv(auto_pad="SOMETIMES")),
    ("ci_x_float", lambda: convint(x_elem=F)),
    ("ci_wz_wrong_len", lambda: convint(wz=np.zeros(3, np.uint8))),
    ("ci_xz_per_channel", lambda: convint(xz=np.zeros(2, np.uint8))),
    ("ci_group_not_dividing", lambda: convint(x_shape=(1, 3, 5, 5), w_shape=(4, 1, 3, 3),
                                              group=2)),
])

many("qconv", "ok", [
    ("empty_batch", lambda: qconv(x_shape=(0, 2, 5, 5))),
    ("one_by_one", lambda: qconv(x_shape=(1, 2, 1, 1), w_shape=(4, 2, 1, 1))),
    ("per_channel", lambda: qconv(ws=np.ones(4, np.float32), wz=np.zeros(4, np.uint8))),
    ("int8_mixed", lambda: qconv(w_elem=I8, wz=np.int8(0))),
    ("depthwise", lambda: qconv(x_shape=(1, 4, 5, 5), w_shape=(4, 1, 3, 3), group=4)),
    ("bias", lambda: qconv(bias=np.array([1, -2, 3, 1 << 30], np.int32))),
    ("ys_nan", lambda: qconv(ys=np.float32(np.nan))),
    ("ys_zero", lambda: qconv(ys=np.float32(0))),
    ("conv1d", lambda: qconv(x_shape=(1, 2, 7), w_shape=(4, 2, 3))),
    ("ci_no_zp", lambda: convint(xz=None, wz=None)),
    ("ci_empty", lambda: convint(x_shape=(0, 2, 5, 5))),
])


def qmm(a_shape=(2, 3), b_shape=(3, 4), a_elem=U8, b_elem=U8, as_=np.float32(.5),
        az=np.uint8(1), bs=np.float32(.25), bz=np.uint8(2), ys=np.float32(.1), yz=np.uint8(4),
        n_inputs=None):
    inits = [const("as", as_), const("az", az), const("bs", bs), const("bz", bz),
             const("ys", ys), const("yz", yz)]
    ins = ["a", "as", "az", "b", "bs", "bz", "ys", "yz"]
    if n_inputs is not None:
        ins = ins[:n_inputs]
    return one("QLinearMatMul", ins, ["y"], [vi("a", a_elem, list(a_shape)),
                                            vi("b", b_elem, list(b_shape))],
               [vi("y", U8, None)], inits, 13)


def mmi(a_shape=(2, 3), b_shape=(3, 4), az=np.uint8(1), bz=np.uint8(2), a_elem=U8):
    ins = ["a", "b"]
    inits = []
    if az is not None or bz is not None:
        ins.append("az" if az is not None else "")
        if az is not None:
            inits.append(const("az", az))
    if bz is not None:
        ins.append("bz")
        inits.append(const("bz", bz))
    return one("MatMulInteger", ins, ["y"], [vi("a", a_elem, list(a_shape)),
                                            vi("b", U8, list(b_shape))],
               [vi("y", I32, None)], inits, 13)


many("qmm", "error", [
    ("seven_inputs", lambda: qmm(n_inputs=7)),
    ("k_mismatch", lambda: qmm(b_shape=(4, 4))),
    ("a_scalar", lambda: qmm(a_shape=())),
    ("a_float", lambda: qmm(a_elem=F)),
    ("a_scale_wrong", lambda: qmm(as_=np.ones(3, np.float32), az=np.ones(3, np.uint8))),
    ("b_scale_rows", lambda: qmm(bs=np.ones(3, np.float32), bz=np.ones(3, np.uint8))),
    ("scale_zp_shape_mismatch", lambda: qmm(as_=np.ones(2, np.float32))),
    ("y_scale_vector", lambda: qmm(ys=np.ones(2, np.float32))),
    ("yz_int32", lambda: qmm(yz=np.int32(0))),
    ("batch_mismatch", lambda: qmm(a_shape=(2, 2, 3), b_shape=(3, 3, 4))),
    ("mmi_az_wrong", lambda: mmi(az=np.ones(5, np.uint8))),
    ("mmi_a_int16", lambda: mmi(a_elem=I16)),
    ("mmi_bz_sign", lambda: mmi(bz=np.int8(0))),
])

many("qmm", "ok", [
    ("vec_vec", lambda: qmm(a_shape=(3,), b_shape=(3,))),
    ("k_zero", lambda: qmm(a_shape=(2, 0), b_shape=(0, 4))),
    ("m_zero", lambda: qmm(a_shape=(0, 3))),
    ("batch_bcast", lambda: qmm(a_shape=(2, 1, 2, 3), b_shape=(5, 3, 4))),
    ("per_row", lambda: qmm(as_=np.ones(2, np.float32), az=np.ones(2, np.uint8))),
    ("per_col", lambda: qmm(bs=np.ones(4, np.float32), bz=np.ones(4, np.uint8))),
    ("mmi_per_row", lambda: mmi(az=np.ones(2, np.uint8))),
    ("mmi_no_zp", lambda: mmi(az=None, bz=None)),
    ("mmi_k_zero", lambda: mmi(a_shape=(2, 0), b_shape=(0, 4))),
])


# ----------------------------------------------------------------------------
# RNN / GRU / LSTM
# ----------------------------------------------------------------------------
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def rnn(op="LSTM", S=3, Bt=2, I=4, Hs=5, dirs=1, elem=F, w_shape=None, r_shape=None,
        extra=(), n_out=3, x_shape=None, opset=14, inputs_override=None, **attrs):
    g = GATES[op]
    dt = {F: np.float32, D: np.float64, H: np.float16}.get(elem, np.float32)
    w = np.full(w_shape or (dirs, g * Hs, I), 0.1, dt)
    r = np.full(r_shape or (dirs, g * Hs, Hs), 0.1, dt)
    inits = [const("W", w), const("R", r)]
    ins = ["X", "W", "R"]
    for name, arr in extra:  # (input name or "", array) in slot order from B on
        if name:
            inits.append(const(name, arr))
        ins.append(name)
    if inputs_override is not None:
        ins = inputs_override
    outs = ["Y", "Y_h", "Y_c"][:n_out]
    if "hidden_size" not in attrs:
        attrs["hidden_size"] = Hs
    return one(op, ins, outs, [vi("X", elem, list(x_shape or (S, Bt, I)))],
               [vi(o, elem, None) for o in outs], inits, opset, **attrs)


def rnn_cases(op):
    g = GATES[op]
    n_out = 3 if op == "LSTM" else 2
    R = lambda **kw: rnn(op=op, **{"n_out": n_out, **kw})  # noqa: E731
    err = [
        ("x_rank2", lambda: R(x_shape=(3, 4))),
        ("x_int", lambda: R(elem=I32)),
        ("w_wrong", lambda: R(w_shape=(1, g * 5, 3))),
        ("r_wrong", lambda: R(r_shape=(1, g * 5, 4))),
        ("r_rank2", lambda: R(r_shape=(g * 5, 5))),
        ("hidden_zero", lambda: R(hidden_size=0)),
        ("hidden_negative", lambda: R(hidden_size=-5)),
        ("hidden_huge", lambda: R(hidden_size=1 << 40)),
        ("hidden_mismatch", lambda: R(hidden_size=6)),
        ("direction_bogus", lambda: R(direction="sideways")),
        ("layout_2", lambda: R(layout=2)),
        ("layout_1_opset7", lambda: R(layout=1, opset=7)),
        ("bidi_w_one_dir", lambda: R(direction="bidirectional")),
        ("acts_wrong_count", lambda: R(activations=["Tanh"] * 7)),
        ("acts_unknown", lambda: R(activations=(["Bogus"] + ["Tanh"] * 2)[:[1, 1, 2, 3][g - 1]])),
        ("acts_ints", lambda: R(activations=[1, 2, 3][:[1, 1, 2, 3][g - 1]])),
        ("clip_negative", lambda: R(clip=-1.0)),
        ("clip_nan", lambda: R(clip=float("nan"))),
        ("b_wrong", lambda: R(extra=[("B", np.zeros((1, g * 5), np.float32))])),
        ("b_int", lambda: R(extra=[("B", np.zeros((1, 2 * g * 5), np.int32))])),
        ("seq_lens_float", lambda: R(extra=[("", None), ("sl", np.ones(2, np.float32))])),
        ("seq_lens_wrong_len", lambda: R(extra=[("", None), ("sl", np.ones(3, np.int32))])),
        ("init_h_wrong", lambda: R(extra=[("", None), ("", None),
                                          ("h0", np.zeros((1, 2, 4), np.float32))])),
        ("too_many_outputs", lambda: R(n_out=n_out + 1) if op != "LSTM" else
         one("LSTM", ["X", "W", "R"], ["a", "b", "c", "d"], [vi("X", F, [3, 2, 4])],
             [vi("a", F, None)], [const("W", np.zeros((1, 20, 4), np.float32)),
                                  const("R", np.zeros((1, 20, 5), np.float32))],
             14, hidden_size=5)),
        ("too_many_inputs", lambda: R(inputs_override=["X", "W", "R"] + [""] * 6 + ["X"])),
        ("missing_r", lambda: R(inputs_override=["X", "W", ""])),
    ]
    if op == "LSTM":
        err += [
            ("p_wrong", lambda: R(extra=[("", None)] * 4 + [("P", np.zeros((1, 14), np.float32))])),
            ("init_c_wrong", lambda: R(extra=[("", None)] * 3 +
                                       [("c0", np.zeros((1, 3, 5), np.float32))])),
        ]
    ok = [
        ("seq_zero", lambda: R(S=0)),
        ("batch_zero", lambda: R(Bt=0)),
        ("input_zero", lambda: R(I=0)),
        ("f16", lambda: R(elem=H)),
        ("f64", lambda: R(elem=D)),
        ("no_outputs_used", lambda: R(n_out=1)),
        ("bidi", lambda: R(dirs=2, direction="bidirectional")),
        ("layout1", lambda: R(layout=1, x_shape=(2, 3, 4))),
        ("seq_lens_const_bad", lambda: R(extra=[("", None),
                                                ("sl", np.array([-5, 1 << 40], np.int64))])),
        ("acts_alpha_extra", lambda: R(activations=["LeakyRelu", "Affine", "ScaledTanh"][:[1, 1, 2, 3][g - 1]],
                                       activation_alpha=[0.1] * 10, activation_beta=[0.2] * 10)),
        ("clip_tiny", lambda: R(clip=1e-30)),
    ]
    many(op.lower(), "error", err)
    many(op.lower(), "ok", ok)


for _op in ("RNN", "GRU", "LSTM"):
    rnn_cases(_op)


@case("error")
def lstm_hidden_above_limit():
    # hidden_size 16385 with W/R shapes that agree, built from small inputs.
    Hs = 16385
    nodes = [helper.make_node("ConstantOfShape", ["ws"], ["W"],
                              value=helper.make_tensor("v", F, [1], [0.0])),
             helper.make_node("ConstantOfShape", ["rs"], ["R"],
                              value=helper.make_tensor("v", F, [1], [0.0])),
             helper.make_node("RNN", ["X", "W", "R"], ["Y"], hidden_size=Hs)]
    return model(nodes, [vi("X", F, [1, 1, 1])], [vi("Y", F, None)],
                 [const("ws", np.array([1, Hs, 1], np.int64)),
                  const("rs", np.array([1, Hs, Hs], np.int64))], 14)


# ----------------------------------------------------------------------------
# Signal
# ----------------------------------------------------------------------------
def dft(x_shape=(1, 8, 1), elem=F, length=None, length_input=None, opset=17, **attrs):
    ins = ["x"]
    inits = []
    inputs = [vi("x", elem, list(x_shape))]
    if length is not None:
        inits.append(const("n", length))
        ins.append("n")
    elif length_input is not None:
        inputs.append(vi("n", length_input, []))
        ins.append("n")
    return one("DFT", ins, ["y"], inputs, [vi("y", elem, None)], inits, opset, **attrs)


many("dft", "error", [
    ("rank2", lambda: dft(x_shape=(8, 1))),
    ("last_dim3", lambda: dft(x_shape=(1, 8, 3))),
    ("int_input", lambda: dft(elem=I32)),
    ("axis0", lambda: dft(axis=0)),
    ("axis_last", lambda: dft(axis=-1)),
    ("axis_oob", lambda: dft(axis=5)),
    ("axis_huge_neg", lambda: dft(axis=-(1 << 62))),
    ("len_zero", lambda: dft(length=np.int64(0))),
    ("len_negative", lambda: dft(length=np.int64(-3))),
    ("len_huge", lambda: dft(length=np.int64(1 << 41))),
    ("len_float", lambda: dft(length=np.float32(4))),
    ("len_vector", lambda: dft(length=np.array([4, 4], np.int64))),
    ("len_runtime", lambda: dft(length_input=I64)),
    ("onesided_complex", lambda: dft(x_shape=(1, 8, 2), onesided=1)),
    ("inverse_2", lambda: dft(inverse=2)),
    ("empty_axis", lambda: dft(x_shape=(1, 0, 1))),
    ("opset16", lambda: dft(opset=16)),
])

many("dft", "ok", [
    ("len_longer", lambda: dft(length=np.int64(13))),
    ("len_shorter", lambda: dft(length=np.int64(3))),
    ("len_one", lambda: dft(length=np.int64(1))),
    ("empty_batch", lambda: dft(x_shape=(0, 8, 1))),
    ("f64", lambda: dft(elem=D)),
    ("f16", lambda: dft(elem=H)),
    ("axis_neg2", lambda: dft(x_shape=(1, 3, 8, 2), axis=-2)),
    ("onesided_inverse", lambda: dft(onesided=1, inverse=1)),
    ("len_i32", lambda: dft(length=np.int32(5))),
])


@case("any")
def dft_const_fold_huge_work():
    # A constant signal of 4096 samples transformed at 2^22 points: the output
    # (32 MiB) fits the folding limit but the naive O(n * terms) work does not.
    x = np.ones((1, 4096, 1), np.float32)
    return one("DFT", ["x", "n"], ["y"], [], [vi("y", F, None)],
               [const("x", x), const("n", np.int64(1 << 22))], 17)


def stft(sig=(1, 16, 1), step=np.int64(4), window=np.ones(8, np.float32), flen=None, elem=F,
         **attrs):
    ins = ["s", "step", "w" if window is not None else "", "fl" if flen is not None else ""]
    inits = [const("step", step)]
    if window is not None:
        inits.append(const("w", window))
    if flen is not None:
        inits.append(const("fl", flen))
    while ins and ins[-1] == "":
        ins.pop()
    return one("STFT", ins, ["y"], [vi("s", elem, list(sig))], [vi("y", elem, None)], inits,
               17, **attrs)


many("stft", "error", [
    ("step_zero", lambda: stft(step=np.int64(0))),
    ("step_negative", lambda: stft(step=np.int64(-1))),
    ("step_float", lambda: stft(step=np.float32(1))),
    ("frame_longer", lambda: stft(window=np.ones(32, np.float32))),
    ("window_rank2", lambda: stft(window=np.ones((2, 4), np.float32))),
    ("window_int", lambda: stft(window=np.ones(8, np.int32))),
    ("window_empty", lambda: stft(window=np.ones(0, np.float32))),
    ("flen_mismatch", lambda: stft(flen=np.int64(4))),
    ("flen_negative", lambda: stft(window=None, flen=np.int64(-4))),
    ("no_window_no_flen", lambda: stft(window=None)),
    ("signal_rank2", lambda: stft(sig=(16, 1))),
    ("signal_rank4", lambda: stft(sig=(1, 16, 1, 1))),
    ("complex_onesided", lambda: stft(sig=(1, 16, 2))),
    ("onesided_7", lambda: stft(onesided=7)),
])

many("stft", "ok", [
    ("flen_only", lambda: stft(window=None, flen=np.int64(8))),
    ("step_huge", lambda: stft(step=np.int64(1 << 62))),
    ("frame_whole", lambda: stft(window=np.ones(16, np.float32))),
    ("complex", lambda: stft(sig=(1, 16, 2), onesided=0)),
    ("empty_batch", lambda: stft(sig=(0, 16, 1))),
])


def window(op="HannWindow", size=np.int64(8), **attrs):
    return one(op, ["n"], ["y"], [], [vi("y", F, None)], [const("n", size)], 17, **attrs)


def window_rt(op="HannWindow"):
    return one(op, ["n"], ["y"], [vi("n", I64, [])], [vi("y", F, None)], [], 17)


for _w in ("HannWindow", "HammingWindow", "BlackmanWindow"):
    _p = _w.lower()
    many(_p, "error", [
        ("size_negative", lambda w=_w: window(w, np.int64(-1))),
        ("size_huge", lambda w=_w: window(w, np.int64(1 << 41))),
        ("size_float", lambda w=_w: window(w, np.float32(8))),
        ("size_vector", lambda w=_w: window(w, np.array([8, 8], np.int64))),
        ("runtime_size", lambda w=_w: window_rt(w)),
        ("periodic_2", lambda w=_w: window(w, periodic=2)),
        ("dtype_string", lambda w=_w: window(w, output_datatype=8)),
        ("dtype_bool", lambda w=_w: window(w, output_datatype=9)),
        ("dtype_bf16", lambda w=_w: window(w, output_datatype=16)),
        ("dtype_zero", lambda w=_w: window(w, output_datatype=0)),
        ("dtype_huge", lambda w=_w: window(w, output_datatype=1 << 40)),
    ])
    many(_p, "ok", [
        ("size_zero", lambda w=_w: window(w, np.int64(0))),
        ("size_one", lambda w=_w: window(w, np.int64(1))),
        ("size_one_symmetric", lambda w=_w: window(w, np.int64(1), periodic=0)),
        ("dtype_int8", lambda w=_w: window(w, output_datatype=3)),
        ("dtype_f16", lambda w=_w: window(w, output_datatype=10)),
        ("size_i32", lambda w=_w: window(w, np.int32(5))),
    ])


@case("any")
def hannwindow_size_2p40():
    # A 2^40-sample window: too big to fold; the output alone is 4 TiB.
    return window("HannWindow", np.int64(1 << 40))


@case("any")
def hannwindow_size_2p30():
    return window("HannWindow", np.int64(1 << 30))


def mel(bins=np.int64(8), dft_len=np.int64(16), sr=np.int64(8000), lo=np.float32(0),
        hi=np.float32(4000), **attrs):
    inits = [const("b", bins), const("d", dft_len), const("sr", sr), const("lo", lo),
             const("hi", hi)]
    return one("MelWeightMatrix", ["b", "d", "sr", "lo", "hi"], ["y"], [], [vi("y", F, None)],
               inits, 17, **attrs)


many("mel", "error", [
    ("bins_negative", lambda: mel(bins=np.int64(-1))),
    ("dft_zero", lambda: mel(dft_len=np.int64(0))),
    ("dft_huge", lambda: mel(dft_len=np.int64(1 << 50))),
    ("sr_zero", lambda: mel(sr=np.int64(0))),
    ("sr_float", lambda: mel(sr=np.float32(8000))),
    ("edges_mixed_dtypes", lambda: mel(hi=np.float64(4000))),
    ("edges_int", lambda: mel(lo=np.int64(0), hi=np.int64(4000))),
    ("bins_vector", lambda: mel(bins=np.array([1, 2], np.int64))),
    ("dtype_bool", lambda: mel(output_datatype=9)),
])

many("mel", "ok", [
    ("bins_zero", lambda: mel(bins=np.int64(0))),
    ("lo_gt_hi", lambda: mel(lo=np.float32(4000), hi=np.float32(0))),
    ("lo_eq_hi", lambda: mel(lo=np.float32(100), hi=np.float32(100))),
    ("edges_nan", lambda: mel(lo=np.float32(np.nan))),
    ("edges_inf", lambda: mel(hi=np.float32(np.inf))),
    ("many_bins", lambda: mel(bins=np.int64(64))),
    ("dft_one", lambda: mel(dft_len=np.int64(1))),
    ("hi_above_nyquist", lambda: mel(hi=np.float32(1e6))),
    ("lo_negative", lambda: mel(lo=np.float32(-100))),
])


@case("any")
def mel_huge_output():
    return mel(bins=np.int64(1 << 20), dft_len=np.int64(1 << 21))


# ----------------------------------------------------------------------------
# Data-dependent outputs
# ----------------------------------------------------------------------------
def nz(x_shape=(2, 3), elem=F, c=None, use=False, opset=13):
    nodes = [helper.make_node("NonZero", ["c" if c is not None else "x"], ["y"])]
    outs = [vi("y", I64, None)]
    if use:
        nodes.append(helper.make_node("Identity", ["y"], ["z"]))
        outs = [vi("z", I64, None)]
    inputs = [] if c is not None else [vi("x", elem, list(x_shape))]
    return model(nodes, inputs, outs, [const("c", c)] if c is not None else [], opset)


many("nonzero", "error", [
    ("used_downstream", lambda: nz(use=True)),
])
many("nonzero", "ok", [
    ("scalar", lambda: nz(x_shape=())),
    ("empty", lambda: nz(x_shape=(0, 3))),
    ("rank6", lambda: nz(x_shape=(1, 2, 1, 2, 1, 2))),
    ("bool", lambda: nz(elem=B)),
    ("const_nan", lambda: nz(c=np.array([np.nan, 0, -0.0, np.inf], np.float32))),
    ("const_scalar", lambda: nz(c=np.float32(3))),
    ("const_empty", lambda: nz(c=np.zeros((0, 2), np.float32))),
    ("const_used", lambda: nz(c=np.array([1, 0, 2], np.int64), use=True)),
])


def compress(x_shape=(3, 4), cond_shape=(3,), cond_elem=B, cond=None, **attrs):
    inputs = [vi("x", F, list(x_shape))]
    inits = []
    if cond is not None:
        inits.append(const("cond", cond))
    else:
        inputs.append(vi("cond", cond_elem, list(cond_shape)))
    return one("Compress", ["x", "cond"], ["y"], inputs, [vi("y", F, None)], inits, 13, **attrs)


many("compress", "error", [
    ("cond_int", lambda: compress(cond_elem=I64, axis=0)),
    ("cond_rank2", lambda: compress(cond_shape=(3, 1), axis=0)),
    ("cond_too_long", lambda: compress(cond_shape=(5,), axis=0)),
    ("axis_oob", lambda: compress(axis=2)),
    ("axis_oob_neg", lambda: compress(axis=-3)),
    ("scalar_x", lambda: compress(x_shape=(), cond_shape=(1,))),
    ("no_axis_too_long", lambda: compress(cond_shape=(13,))),
])
many("compress", "ok", [
    ("no_axis", lambda: compress(cond_shape=(5,))),
    ("axis_neg", lambda: compress(cond_shape=(4,), axis=-1)),
    ("cond_short", lambda: compress(cond_shape=(1,), axis=0)),
    ("cond_empty", lambda: compress(cond_shape=(0,), axis=0)),
    ("x_empty", lambda: compress(x_shape=(0, 4), cond_shape=(0,), axis=0)),
    ("const_cond", lambda: compress(cond=np.array([True, False, True]), axis=0)),
    ("const_cond_none", lambda: compress(cond=np.array([False, False]), axis=0)),
])


def unique(x_shape=(6,), elem=F, n_out=4, c=None, **attrs):
    outs = ["y", "idx", "inv", "cnt"][:n_out]
    inputs = [vi("x", elem, list(x_shape))] if c is None else []
    inits = [const("x", c)] if c is not None else []
    return one("Unique", ["x"], outs, inputs,
               [vi(o, elem if o == "y" else I64, None) for o in outs], inits, 11, **attrs)


many("unique", "error", [
    ("sorted_2", lambda: unique(sorted=2)),
    ("axis_oob", lambda: unique(axis=1)),
    ("axis_oob_neg", lambda: unique(x_shape=(2, 3), axis=-3)),
    ("five_outputs", lambda: one("Unique", ["x"], ["a", "b", "c", "d", "e"], [vi("x", F, [3])],
                                 [vi("a", F, None)], [], 11)),
])
many("unique", "ok", [
    ("scalar", lambda: unique(x_shape=())),
    ("empty", lambda: unique(x_shape=(0,))),
    ("empty_axis", lambda: unique(x_shape=(0, 3), axis=0)),
    ("axis1", lambda: unique(x_shape=(2, 5, 3), axis=1)),
    ("unsorted", lambda: unique(sorted=0)),
    ("const_nan", lambda: unique(c=np.array([np.nan, 1, np.nan, -0.0, 0.0], np.float32))),
    ("bool", lambda: unique(elem=B)),
    ("one_output", lambda: unique(n_out=1)),
])


def nms(boxes=(1, 6, 4), scores=(1, 2, 6), max_out=np.int64(3), iou=np.float32(.5),
        score=np.float32(.1), n_in=5, max_runtime=False, **attrs):
    inputs = [vi("boxes", F, list(boxes)), vi("scores", F, list(scores))]
    inits = []
    ins = ["boxes", "scores", "m", "iou", "st"][:n_in]
    for name, v in (("m", max_out), ("iou", iou), ("st", score)):
        if name not in ins:
            continue
        if name == "m" and max_runtime:
            inputs.append(vi("m", I64, [1]))
        elif v is None:
            ins[ins.index(name)] = ""
        else:
            inits.append(const(name, v))
    return one("NonMaxSuppression", ins, ["sel"], inputs, [vi("sel", I64, None)], inits, 11,
               **attrs)


many("nms", "error", [
    ("boxes_rank2", lambda: nms(boxes=(6, 4))),
    ("boxes_last5", lambda: nms(boxes=(1, 6, 5))),
    ("scores_mismatch", lambda: nms(scores=(1, 2, 7))),
    ("batch_mismatch", lambda: nms(scores=(2, 2, 6))),
    ("max_float", lambda: nms(max_out=np.float32(3))),
    ("max_runtime", lambda: nms(max_runtime=True)),
    ("max_vector", lambda: nms(max_out=np.array([1, 2], np.int64))),
    ("iou_int", lambda: nms(iou=np.int64(0))),
    ("iou_vector", lambda: nms(iou=np.ones(2, np.float32))),
    ("center_2", lambda: nms(center_point_box=2)),
])
many("nms", "ok", [
    ("max_negative", lambda: nms(max_out=np.int64(-4))),
    ("max_huge", lambda: nms(max_out=np.int64(1 << 62))),
    ("max_zero", lambda: nms(max_out=np.int64(0))),
    ("no_boxes", lambda: nms(boxes=(1, 0, 4), scores=(1, 2, 0))),
    ("no_classes", lambda: nms(scores=(1, 0, 6))),
    ("two_inputs", lambda: nms(n_in=2)),
    ("iou_nan", lambda: nms(iou=np.float32(np.nan))),
    ("score_inf", lambda: nms(score=np.float32(np.inf))),
    ("center", lambda: nms(center_point_box=1)),
    ("max_scalar_i64", lambda: nms(max_out=np.int64(2))),
])


@case("any")
def nms_huge_bound():
    # 2^20 boxes x 2^10 classes: the bound alone is 2^30 rows x 3 int64.
    return nms(boxes=(1, 1 << 20, 4), scores=(1, 1 << 10, 1 << 20), max_out=np.int64(1 << 20))


# ----------------------------------------------------------------------------
# Control flow
# ----------------------------------------------------------------------------
def g(nodes, ins, outs, name="body", inits=()):
    return helper.make_graph(nodes, name, ins, outs, initializer=list(inits))


def branch(value, name, shape=(2,), elem=F, out="o"):
    return g([helper.make_node("Constant", [], [out], value=numpy_helper.from_array(
        np.full(shape, value, np.float32 if elem == F else np.int64)))], [],
        [vi(out, elem, list(shape))], name)


def if_model(then_b, else_b, cond_input=True, cond_elem=B, cond_shape=(), cond_value=None,
             n_out=1, opset=13):
    inputs = []
    inits = []
    if cond_value is not None:
        inits.append(const("c", cond_value))
    else:
        inputs.append(vi("c", cond_elem, list(cond_shape)))
    attrs = {}
    if then_b is not None:
        attrs["then_branch"] = then_b
    if else_b is not None:
        attrs["else_branch"] = else_b
    outs = ["y%d" % i for i in range(n_out)]
    return one("If", ["c"] if cond_input else [], outs, inputs, [vi(o, F, None) for o in outs],
               inits, opset, **attrs)


def nested_if(depth):
    """If nested |depth| levels deep in then_branch (else: a constant)."""
    inner = branch(1.0, "leaf_t")
    for d in range(depth):
        node = helper.make_node("If", ["c"], ["o"], then_branch=inner,
                                else_branch=branch(2.0, "e%d" % d))
        inner = g([node], [], [vi("o", F, [2])], "t%d" % d)
    return if_model(inner, branch(3.0, "e"))


many("if", "error", [
    ("cond_float", lambda: if_model(branch(1., "t"), branch(2., "e"), cond_elem=F)),
    ("cond_vector", lambda: if_model(branch(1., "t"), branch(2., "e"), cond_shape=(2,))),
    ("cond_empty", lambda: if_model(branch(1., "t"), branch(2., "e"), cond_shape=(0,))),
    ("no_inputs", lambda: if_model(branch(1., "t"), branch(2., "e"), cond_input=False)),
    ("missing_else", lambda: if_model(branch(1., "t"), None)),
    ("branch_int_attr", lambda: one("If", ["c"], ["y"], [vi("c", B, [])], [vi("y", F, None)],
                                    then_branch=3, else_branch=4)),
    ("arity_mismatch", lambda: if_model(branch(1., "t"), branch(2., "e"), n_out=2)),
    ("shape_mismatch_runtime", lambda: if_model(branch(1., "t"), branch(2., "e", shape=(3,)))),
    ("dtype_mismatch_runtime", lambda: if_model(branch(1., "t"),
                                               branch(2, "e", elem=I64))),
    ("deep_nest_20", lambda: nested_if(20)),
    ("branch_undefined_output", lambda: if_model(
        g([], [], [vi("nowhere", F, [2])], "t"), branch(2., "e"))),
    ("branch_reads_undefined", lambda: if_model(
        g([helper.make_node("Neg", ["ghost"], ["o"])], [], [vi("o", F, [2])], "t"),
        branch(2., "e"))),
    ("branch_declared_wrong_dtype", lambda: if_model(
        g([helper.make_node("Constant", [], ["o"], value=numpy_helper.from_array(
            np.ones(2, np.float32)))], [], [vi("o", I64, [2])], "t"), branch(2., "e"),
        cond_value=np.bool_(True))),
    ("branch_bad_op", lambda: if_model(
        g([helper.make_node("Conv", ["x"], ["o"])], [vi("x", F, [1])], [vi("o", F, [2])], "t"),
        branch(2., "e"))),
    ("branch_cycle", lambda: if_model(
        g([helper.make_node("Neg", ["b"], ["a"]), helper.make_node("Neg", ["a"], ["b"])], [],
          [vi("a", F, [2])], "t"), branch(2., "e"))),
    ("branch_dup_output", lambda: if_model(
        g([helper.make_node("Constant", [], ["o"], value=numpy_helper.from_array(
            np.ones(2, np.float32))),
           helper.make_node("Constant", [], ["o"], value=numpy_helper.from_array(
               np.ones(2, np.float32)))], [], [vi("o", F, [2])], "t"), branch(2., "e"))),
])


def nonzero_captured(op):
    """NonZero's output (data-dependent shape, graph output) read by an If
    branch or a Loop body through the outer scope."""
    reader = [helper.make_node("Identity", ["nz"], ["o"])]
    if op == "If":
        cf = helper.make_node("If", ["c"], ["z"],
                              then_branch=g(reader, [], [vi("o", I64, None)], "t"),
                              else_branch=g(reader, [], [vi("o", I64, None)], "e"))
        inits = [const("c", np.bool_(True))]
    else:
        body = g([helper.make_node("Identity", ["c_in"], ["c_out"]),
                  helper.make_node("Identity", ["nz"], ["s"])],
                 [vi("i", I64, []), vi("c_in", B, [])], [vi("c_out", B, []), vi("s", I64, None)])
        cf = helper.make_node("Loop", ["M", ""], ["z"], body=body)
        inits = [const("M", np.int64(2))]
    return model([helper.make_node("NonZero", ["x"], ["nz"]), cf], [vi("x", F, [4])],
                 [vi("nz", I64, None), vi("z", I64, None)], inits)


many("capture", "error", [
    ("bounded_if", lambda: nonzero_captured("If")),
    ("bounded_loop", lambda: nonzero_captured("Loop")),
])

many("if", "ok", [
    # A branch value named like the outer condition shadows it (ONNX wants
    # unique names; mlcc resolves the inner one, as a scope would).
    ("branch_shadows_outer", lambda: model(
        [helper.make_node("If", ["c"], ["y"], then_branch=g(
            [helper.make_node("Neg", ["x"], ["c"])], [], [vi("c", F, [2])], "t"),
            else_branch=branch(2., "e"))],
        [vi("c", B, []), vi("x", F, [2])], [vi("y", F, None)])),
    ("const_true", lambda: if_model(branch(1., "t"), branch(2., "e"),
                                    cond_value=np.bool_(True))),
    ("const_false_bad_then", lambda: if_model(branch(1., "t", shape=(3,)), branch(2., "e"),
                                              cond_value=np.bool_(False))),
    ("cond_one_elem", lambda: if_model(branch(1., "t"), branch(2., "e"), cond_shape=(1, 1))),
    ("nest_10", lambda: nested_if(10)),
    ("branch_reads_outer", lambda: model(
        [helper.make_node("If", ["c"], ["y"], then_branch=g(
            [helper.make_node("Neg", ["x"], ["o"])], [], [vi("o", F, [2])], "t"),
            else_branch=g([helper.make_node("Abs", ["x"], ["o"])], [], [vi("o", F, [2])], "e"))],
        [vi("c", B, []), vi("x", F, [2])], [vi("y", F, None)])),
    ("output_is_outer", lambda: model(
        [helper.make_node("If", ["c"], ["y"], then_branch=g([], [], [vi("x", F, [2])], "t"),
                          else_branch=g([helper.make_node("Neg", ["x"], ["o"])], [],
                                        [vi("o", F, [2])], "e"))],
        [vi("c", B, []), vi("x", F, [2])], [vi("y", F, None)])),
])


def loop_body(nodes, n_carried=1, n_scan=0, cond_out="c_out", inits=(), in_types=None):
    ins = [vi("i", I64, []), vi("c_in", B, [])] + [vi("v%d_in" % j, 0, None)
                                                  for j in range(n_carried)]
    if in_types is not None:
        ins = in_types
    outs = [vi(cond_out, B, [])] + [vi("v%d_out" % j, 0, None) for j in range(n_carried)] + \
        [vi("s%d" % k, 0, None) for k in range(n_scan)]
    return g(nodes, ins, outs, "body", inits)


def loop_model(body, trip=None, cond=None, n_carried=1, n_scan=0, trip_elem=I64,
               trip_runtime=False, cond_runtime=False, x_shape=(2,), n_outputs=None,
               extra_inputs=None):
    inits = []
    inputs = [vi("x", F, list(x_shape))]
    ins = []
    if trip_runtime:
        inputs.append(vi("M", I64, []))
        ins.append("M")
    elif trip is not None:
        inits.append(numpy_helper.from_array(np.array(trip, {I64: np.int64, F: np.float32,
                                                             I32: np.int32}[trip_elem]), "M"))
        ins.append("M")
    else:
        ins.append("")
    if cond_runtime:
        inputs.append(vi("C", B, []))
        ins.append("C")
    elif cond is not None:
        inits.append(const("C", np.bool_(cond)))
        ins.append("C")
    else:
        ins.append("")
    ins += ["x"] * n_carried
    if extra_inputs is not None:
        ins = extra_inputs
    n = n_outputs if n_outputs is not None else n_carried + n_scan
    outs = ["y%d" % k for k in range(n)]
    return one("Loop", ins, outs, inputs, [vi(o, F, None) for o in outs], inits, 13, body=body)


def neg_body(n_scan=0, extra=()):
    nodes = [helper.make_node("Identity", ["c_in"], ["c_out"]),
             helper.make_node("Neg", ["v0_in"], ["v0_out"])]
    nodes += [helper.make_node("Identity", ["v0_in"], ["s%d" % k]) for k in range(n_scan)]
    return loop_body(nodes + list(extra), n_scan=n_scan)


def nested_loop(outer, inner):
    inner_body = neg_body()
    inner_node = helper.make_node("Loop", ["Mi", "", "v0_in"], ["v0_out"], body=inner_body)
    outer_body = loop_body([helper.make_node("Identity", ["c_in"], ["c_out"]), inner_node],
                           inits=[const("Mi", np.int64(inner))])
    return loop_model(outer_body, trip=outer)


many("loop", "error", [
    ("trip_2p40", lambda: loop_model(neg_body(), trip=1 << 40)),
    ("trip_2p40_cond_true", lambda: loop_model(neg_body(), trip=1 << 40, cond=True)),
    ("no_trip_cond_true", lambda: loop_model(neg_body(), cond=True)),
    ("no_trip_no_cond", lambda: loop_model(neg_body())),
    ("trip_float", lambda: loop_model(neg_body(), trip=3.0, trip_elem=F)),
    ("trip_vector", lambda: loop_model(neg_body(), trip=[3, 3])),
    ("trip_runtime", lambda: loop_model(neg_body(), trip_runtime=True)),
    ("cond_runtime", lambda: loop_model(neg_body(), trip=3, cond_runtime=True)),
    ("one_input", lambda: loop_model(neg_body(), extra_inputs=["x"])),
    ("body_arity", lambda: loop_model(neg_body(), trip=3, n_carried=2)),
    ("carried_dtype_change", lambda: loop_model(loop_body([
        helper.make_node("Identity", ["c_in"], ["c_out"]),
        helper.make_node("Cast", ["v0_in"], ["v0_out"], to=I64)]), trip=3)),
    ("scan_shape_change", lambda: loop_model(loop_body([
        helper.make_node("Identity", ["c_in"], ["c_out"]),
        helper.make_node("Concat", ["v0_in", "v0_in"], ["v0_out"], axis=0),
        helper.make_node("Identity", ["v0_in"], ["s0"])], n_scan=1), trip=3, n_scan=1)),
    ("body_cond_int", lambda: loop_model(loop_body([
        helper.make_node("Constant", [], ["c_out"], value=numpy_helper.from_array(
            np.array(1, np.int64))),
        helper.make_node("Neg", ["v0_in"], ["v0_out"])]), trip=3, cond=True)),
    ("body_cond_runtime", lambda: loop_model(loop_body([
        helper.make_node("ReduceMax", ["v0_in"], ["m"], keepdims=0),
        helper.make_node("Greater", ["m", "zero"], ["c_out"]),
        helper.make_node("Neg", ["v0_in"], ["v0_out"])], inits=[const("zero", np.float32(0))]),
        trip=3, cond=True)),
    ("zero_trip_scan_untyped", lambda: loop_model(neg_body(n_scan=1), trip=0, n_scan=1)),
    ("nested_4096x4096", lambda: nested_loop(4096, 4096)),
    ("body_missing", lambda: one("Loop", ["", "", "x"], ["y"], [vi("x", F, [2])],
                                 [vi("y", F, None)])),
    ("body_is_int", lambda: one("Loop", ["", "", "x"], ["y"], [vi("x", F, [2])],
                                [vi("y", F, None)], body=5)),
])

many("loop", "ok", [
    ("trip_zero", lambda: loop_model(neg_body(), trip=0)),
    ("trip_negative", lambda: loop_model(neg_body(), trip=-5)),
    ("trip_i32", lambda: loop_model(neg_body(), trip=3, trip_elem=I32)),
    ("cond_false", lambda: loop_model(neg_body(), trip=5, cond=False)),
    ("trip_4096", lambda: loop_model(neg_body(), trip=4096)),
    ("scan_outputs", lambda: loop_model(neg_body(n_scan=2), trip=3, n_scan=2)),
    ("nested_small", lambda: nested_loop(3, 4)),
    ("empty_carried", lambda: loop_model(neg_body(), trip=3, x_shape=(0, 5))),
])


def scan_model(body, n_state=1, n_scan_in=1, x_shapes=((3, 2),), state_shape=(2,), opset=11,
               n_out=None, seq_lens=None, **attrs):
    inputs = [vi("s0", F, list(state_shape))] if n_state else []
    inputs += [vi("x%d" % i, F, list(x_shapes[i])) for i in range(len(x_shapes))]
    ins = (["s0"] if n_state else []) + ["x%d" % i for i in range(len(x_shapes))]
    inits = []
    if opset < 9:
        if seq_lens is not None:
            inits.append(const("sl", seq_lens))
            ins = ["sl"] + ins
        else:
            ins = [""] + ins
    n = n_out if n_out is not None else n_state + 1
    outs = ["o%d" % k for k in range(n)]
    if "num_scan_inputs" not in attrs:
        attrs["num_scan_inputs"] = n_scan_in
    elif attrs["num_scan_inputs"] is None:
        del attrs["num_scan_inputs"]
    return one("Scan", ins, outs, inputs, [vi(o, F, None) for o in outs], inits, opset,
               body=body, **attrs)


def add_body(n_scan_in=1):
    ins = [vi("st", F, None)] + [vi("e%d" % i, F, None) for i in range(n_scan_in)]
    nodes = [helper.make_node("Add", ["st", "e0"], ["st2"]),
             helper.make_node("Identity", ["st2"], ["out"])]
    return g(nodes, ins, [vi("st2", F, None), vi("out", F, None)])


many("scan", "error", [
    # UNIMPLEMENTED: no step runs and the body declares no output type.
    ("empty_seq_untyped", lambda: scan_model(add_body(), x_shapes=((0, 2),))),
    ("num_scan_inputs_zero", lambda: scan_model(add_body(), num_scan_inputs=0)),
    ("num_scan_inputs_huge", lambda: scan_model(add_body(), num_scan_inputs=1 << 40)),
    ("num_scan_inputs_missing", lambda: scan_model(add_body(), num_scan_inputs=None)),
    ("input_axis_oob", lambda: scan_model(add_body(), scan_input_axes=[2])),
    ("input_axis_neg_opset9", lambda: scan_model(add_body(), opset=9, scan_input_axes=[-1])),
    ("input_axes_count", lambda: scan_model(add_body(), scan_input_axes=[0, 0])),
    ("output_axis_oob", lambda: scan_model(add_body(), scan_output_axes=[5])),
    ("direction_2", lambda: scan_model(add_body(), scan_input_directions=[2])),
    ("out_direction_neg", lambda: scan_model(add_body(), scan_output_directions=[-1])),
    ("seq_len_mismatch", lambda: scan_model(add_body(2), n_scan_in=2,
                                            x_shapes=((3, 2), (4, 2)))),
    ("axes_mismatch", lambda: scan_model(add_body(2), n_scan_in=2, x_shapes=((3, 2), (2, 3)),
                                         scan_input_axes=[0, 0])),
    ("state_shape_change", lambda: scan_model(g(
        [helper.make_node("Concat", ["st", "e0"], ["st2"], axis=0),
         helper.make_node("Identity", ["e0"], ["out"])],
        [vi("st", F, None), vi("e0", F, None)], [vi("st2", F, None), vi("out", F, None)]))),
    ("body_arity", lambda: scan_model(add_body(), n_out=3)),
    ("scan_input_scalar", lambda: scan_model(add_body(), x_shapes=((),))),
    ("steps_5000", lambda: scan_model(add_body(), x_shapes=((5000, 2),))),
    ("opset8_rank1", lambda: scan_model(add_body(), opset=8, x_shapes=((3,),),
                                        state_shape=(1, 2))),
    ("opset8_batch_mismatch", lambda: scan_model(add_body(), opset=8, x_shapes=((2, 3, 2),),
                                                 state_shape=(1, 2))),
    ("opset8_seq_lens_short", lambda: scan_model(add_body(), opset=8, x_shapes=((1, 3, 2),),
                                                 state_shape=(1, 2),
                                                 seq_lens=np.array([2], np.int32))),
    ("opset8_seq_lens_float", lambda: scan_model(add_body(), opset=8, x_shapes=((1, 3, 2),),
                                                 state_shape=(1, 2),
                                                 seq_lens=np.array([3], np.float32))),
    ("opset8_big_batch", lambda: scan_model(add_body(), opset=8, x_shapes=((5000, 1, 2),),
                                            state_shape=(5000, 2))),
])

many("scan", "ok", [
    ("basic", lambda: scan_model(add_body())),
    ("reverse", lambda: scan_model(add_body(), scan_input_directions=[1],
                                   scan_output_directions=[1])),
    ("axis1", lambda: scan_model(add_body(), x_shapes=((2, 3),), scan_input_axes=[1])),
    ("neg_axes", lambda: scan_model(add_body(), x_shapes=((2, 3),), scan_input_axes=[-1],
                                    scan_output_axes=[-1])),
    ("opset8", lambda: scan_model(add_body(), opset=8, x_shapes=((2, 3, 2),),
                                  state_shape=(2, 2))),
])


# ----------------------------------------------------------------------------
# Spatial
# ----------------------------------------------------------------------------
def grid_sample(x=(1, 2, 4, 4), grid=(1, 3, 3, 2), elem=F, grid_elem=F, grid_const=None,
                **attrs):
    inputs = [vi("x", elem, list(x))]
    inits = []
    if grid_const is not None:
        inits.append(const("grid", grid_const))
    else:
        inputs.append(vi("grid", grid_elem, list(grid)))
    return one("GridSample", ["x", "grid"], ["y"], inputs, [vi("y", elem, None)], inits, 16,
               **attrs)


many("gridsample", "error", [
    ("x_rank5", lambda: grid_sample(x=(1, 2, 4, 4, 4), grid=(1, 3, 3, 3, 3))),
    ("x_rank3", lambda: grid_sample(x=(1, 2, 4), grid=(1, 3, 2))),
    ("grid_last3", lambda: grid_sample(grid=(1, 3, 3, 3))),
    ("batch_mismatch", lambda: grid_sample(grid=(2, 3, 3, 2))),
    ("mode_cubic", lambda: grid_sample(mode="cubic")),
    ("padding_wrap", lambda: grid_sample(padding_mode="wrap")),
    ("x_int", lambda: grid_sample(elem=I32)),
    ("grid_int", lambda: grid_sample(grid_elem=I64)),
    ("empty_image", lambda: grid_sample(x=(1, 2, 0, 4))),
    ("opset15", lambda: one("GridSample", ["x", "grid"], ["y"],
                            [vi("x", F, [1, 1, 2, 2]), vi("grid", F, [1, 1, 1, 2])],
                            [vi("y", F, None)], [], 15)),
])
many("gridsample20", "error", [
    ("x_rank5_cubic", lambda: one("GridSample", ["x", "grid"], ["y"],
                                  [vi("x", F, [1, 1, 2, 2, 2]), vi("grid", F, [1, 1, 1, 1, 3])],
                                  [vi("y", F, None)], [], 20, mode="cubic")),
    ("x_rank5_grid_last2", lambda: one("GridSample", ["x", "grid"], ["y"],
                                       [vi("x", F, [1, 1, 2, 2, 2]),
                                        vi("grid", F, [1, 1, 1, 1, 2])], [vi("y", F, None)], [],
                                       20)),
    ("x_rank6", lambda: one("GridSample", ["x", "grid"], ["y"],
                            [vi("x", F, [1, 1, 2, 2, 2, 2]), vi("grid", F, [1, 1, 1, 1, 1, 4])],
                            [vi("y", F, None)], [], 20)),
    ("x_rank5_empty_depth", lambda: one("GridSample", ["x", "grid"], ["y"],
                                        [vi("x", F, [1, 1, 0, 2, 2]),
                                         vi("grid", F, [1, 1, 1, 1, 3])], [vi("y", F, None)], [],
                                        20)),
])
many("gridsample20", "ok", [
    ("x_rank5_grid_nan", lambda: one("GridSample", ["x", "grid"], ["y"],
                                     [vi("x", F, [1, 1, 2, 2, 2])], [vi("y", F, None)],
                                     [const("grid", np.array([np.nan, np.inf, -1e30],
                                                             np.float32).reshape(1, 1, 1, 1, 3))],
                                     20, padding_mode="reflection")),
])
many("gridsample", "ok", [
    ("grid_nan_nearest", lambda: grid_sample(
        grid_const=np.array([[[[np.nan, 0], [np.inf, -np.inf]]]], np.float32), mode="nearest")),
    ("grid_nan_bilinear", lambda: grid_sample(
        grid_const=np.array([[[[np.nan, 0], [np.inf, -np.inf]]]], np.float32))),
    ("grid_nan_bicubic_reflect", lambda: grid_sample(
        grid_const=np.array([[[[np.nan, 0], [1e30, -1e30]]]], np.float32), mode="bicubic",
        padding_mode="reflection")),
    ("grid_huge_border", lambda: grid_sample(
        grid_const=np.array([[[[1e30, -1e30], [3e9, -3e9]]]], np.float32), mode="nearest",
        padding_mode="border")),
    ("empty_grid", lambda: grid_sample(grid=(1, 0, 3, 2))),
    ("empty_image_empty_grid", lambda: grid_sample(x=(1, 2, 0, 4), grid=(1, 0, 3, 2))),
    ("one_pixel_align", lambda: grid_sample(x=(1, 1, 1, 1), align_corners=1)),
    ("align_5", lambda: grid_sample(align_corners=5)),
])


def roi(x=(1, 2, 8, 8), rois=(3, 4), bi=(3,), bi_elem=I64, rois_const=None, bi_const=None,
        opset=16, **attrs):
    inputs = [vi("x", F, list(x))]
    inits = []
    if rois_const is not None:
        inits.append(const("rois", rois_const))
    else:
        inputs.append(vi("rois", F, list(rois)))
    if bi_const is not None:
        inits.append(const("bi", bi_const))
    else:
        inputs.append(vi("bi", bi_elem, list(bi)))
    return one("RoiAlign", ["x", "rois", "bi"], ["y"], inputs, [vi("y", F, None)], inits, opset,
               **attrs)


many("roialign", "error", [
    ("rois_5", lambda: roi(rois=(3, 5))),
    ("bi_float", lambda: roi(bi_elem=F)),
    ("bi_wrong_len", lambda: roi(bi=(2,))),
    ("x_rank3", lambda: roi(x=(1, 2, 8))),
    ("output_height_zero", lambda: roi(output_height=0)),
    ("output_width_huge", lambda: roi(output_width=1 << 41)),
    ("sampling_negative", lambda: roi(sampling_ratio=-1)),
    ("sampling_huge", lambda: roi(sampling_ratio=1 << 30)),
    ("scale_inf", lambda: roi(spatial_scale=float("inf"))),
    ("scale_nan", lambda: roi(spatial_scale=float("nan"))),
    ("mode_min", lambda: roi(mode="min")),
    ("ctm_bogus", lambda: roi(coordinate_transformation_mode="corner")),
    ("ctm_opset10", lambda: roi(opset=10, coordinate_transformation_mode="half_pixel")),
    ("empty_x", lambda: roi(x=(0, 2, 8, 8))),
])
many("roialign", "ok", [
    ("no_rois", lambda: roi(rois=(0, 4), bi=(0,))),
    ("bi_out_of_range", lambda: roi(rois_const=np.ones((2, 4), np.float32),
                                    bi_const=np.array([-7, 1 << 40], np.int64))),
    ("rois_nan", lambda: roi(rois_const=np.array([[np.nan, 0, np.inf, -np.inf],
                                                  [1e30, -1e30, 1e30, 1e30]], np.float32),
                             bi_const=np.array([0, 0], np.int64))),
    ("rois_nan_max", lambda: roi(rois_const=np.array([[np.nan, 0, np.inf, -np.inf],
                                                      [1e30, -1e30, 1e30, 1e30]], np.float32),
                                 bi_const=np.array([0, 0], np.int64), mode="max")),
    ("rois_huge_sampling_auto", lambda: roi(rois_const=np.array([[0, 0, 1e9, 1e9]], np.float32),
                                            bi_const=np.array([0], np.int64))),
    ("opset10", lambda: roi(opset=10)),
])


def unpool(x=(1, 1, 2, 2), i_shape=None, i_const=None, out_shape=None, **attrs):
    inputs = [vi("x", F, list(x))]
    inits = []
    if i_const is not None:
        inits.append(const("i", i_const))
    else:
        inputs.append(vi("i", I64, list(i_shape or x)))
    ins = ["x", "i"]
    if out_shape is not None:
        inits.append(const("os", out_shape))
        ins.append("os")
    if "kernel_shape" not in attrs:
        attrs["kernel_shape"] = [2] * (len(x) - 2)
    elif attrs["kernel_shape"] is None:
        del attrs["kernel_shape"]
    return one("MaxUnpool", ins, ["y"], inputs, [vi("y", F, None)], inits, 11, **attrs)


many("maxunpool", "error", [
    ("no_kernel", lambda: unpool(kernel_shape=None)),
    ("kernel_count", lambda: unpool(kernel_shape=[2])),
    ("stride_zero", lambda: unpool(strides=[0, 1])),
    ("pads_negative", lambda: unpool(pads=[-1, 0, 0, 0])),
    ("pads_too_big", lambda: unpool(pads=[3, 3, 3, 3])),
    ("stride_huge", lambda: unpool(strides=[1 << 62, 1])),
    ("i_shape", lambda: unpool(i_shape=(1, 1, 2, 3))),
    ("x_rank2", lambda: unpool(x=(1, 4), kernel_shape=[])),
    ("out_shape_smaller", lambda: unpool(out_shape=np.array([1, 1, 2, 3], np.int64))),
    ("out_shape_rank", lambda: unpool(out_shape=np.array([1, 1, 4], np.int64))),
    ("out_shape_nc", lambda: unpool(out_shape=np.array([2, 1, 4, 4], np.int64))),
    ("out_shape_huge", lambda: unpool(out_shape=np.array([1, 1, 1 << 30, 1 << 30], np.int64))),
])
many("maxunpool", "ok", [
    ("i_out_of_range", lambda: unpool(i_const=np.array([[[[-5, 1 << 40], [3, 100]]]],
                                                       np.int64))),
    ("out_shape_bigger", lambda: unpool(out_shape=np.array([1, 1, 5, 6], np.int64))),
    ("empty", lambda: unpool(x=(0, 1, 2, 2))),
    ("empty_spatial", lambda: unpool(x=(1, 1, 0, 2))),
])


def upsample(x=(1, 1, 2, 2), scales=(1, 1, 2, 2), opset=9, mode="nearest", elem=F,
             scales_attr=False):
    if opset < 9 or scales_attr:
        kw = {"scales": list(map(float, scales))} if scales is not None else {}
        ins, inits = ["x"], []
    else:
        kw = {}
        ins = ["x", "s"]
        inits = [const("s", np.asarray(scales, np.float32))]
    return one("Upsample", ins, ["y"], [vi("x", elem, list(x))], [vi("y", elem, None)], inits,
               opset, mode=mode, **kw)


many("upsample", "error", [
    ("scales_attr_opset9", lambda: upsample(scales_attr=True)),
    ("scales_input_opset7", lambda: one("Upsample", ["x", "s"], ["y"], [vi("x", F, [1, 1, 2, 2])],
                                        [vi("y", F, None)],
                                        [const("s", np.ones(4, np.float32))], 7)),
    ("no_scales_opset7", lambda: upsample(opset=7, scales=None)),
    ("scale_zero", lambda: upsample(scales=(1, 1, 0, 2))),
    ("scale_negative", lambda: upsample(scales=(1, 1, -2, 2))),
    ("scale_nan", lambda: upsample(scales=(1, 1, float("nan"), 2))),
    ("scale_inf", lambda: upsample(scales=(1, 1, float("inf"), 2))),
    ("scale_huge", lambda: upsample(scales=(1, 1, 1e30, 2))),
    ("scale_count", lambda: upsample(scales=(2, 2))),
    ("scale_count_opset7", lambda: upsample(opset=7, scales=(2, 2))),
    ("mode_cubic", lambda: upsample(mode="cubic")),
    ("linear_int", lambda: upsample(mode="linear", elem=I32)),
    ("opset10", lambda: upsample(opset=10)),
])
many("upsample", "ok", [
    ("downscale", lambda: upsample(scales=(1, 1, 0.5, 0.3))),
    ("to_zero", lambda: upsample(scales=(1, 1, 0.1, 1))),
    ("scalar", lambda: upsample(x=(), scales=())),
    ("linear_opset7", lambda: upsample(opset=7, mode="linear")),
    ("int_nearest", lambda: upsample(elem=I32)),
    ("linear_one_pixel", lambda: upsample(x=(1, 1, 1, 1), scales=(1, 1, 3, 3), mode="linear")),
    ("bool", lambda: upsample(elem=B)),
])


def revseq(x=(4, 3, 2), lens=(3,), lens_elem=I64, lens_const=None, **attrs):
    inputs = [vi("x", F, list(x))]
    inits = []
    if lens_const is not None:
        inits.append(const("l", lens_const))
    else:
        inputs.append(vi("l", lens_elem, list(lens)))
    return one("ReverseSequence", ["x", "l"], ["y"], inputs, [vi("y", F, None)], inits, 10,
               **attrs)


many("reversesequence", "error", [
    ("batch_axis_2", lambda: revseq(batch_axis=2)),
    ("same_axes", lambda: revseq(batch_axis=0, time_axis=0)),
    ("rank1", lambda: revseq(x=(4,))),
    ("lens_float", lambda: revseq(lens_elem=F)),
    ("lens_wrong_len", lambda: revseq(lens=(4,))),
    ("lens_rank2", lambda: revseq(lens=(3, 1))),
])
many("reversesequence", "ok", [
    ("lens_out_of_range", lambda: revseq(lens_const=np.array([-3, 0, 1 << 40], np.int64))),
    ("swapped_axes", lambda: revseq(x=(3, 4, 2), batch_axis=0, time_axis=1)),
    ("empty_time", lambda: revseq(x=(0, 3), lens_const=np.array([0, 0, 0], np.int64))),
    ("lens_i32", lambda: revseq(lens_elem=I32)),
])


def det(x=(3, 3), elem=F, c=None):
    if c is not None:
        return one("Det", ["x"], ["y"], [], [vi("y", F, None)], [const("x", c)], 11)
    return one("Det", ["x"], ["y"], [vi("x", elem, list(x))], [vi("y", elem, None)], [], 11)


many("det", "error", [
    ("rank1", lambda: det(x=(3,))),
    ("non_square", lambda: det(x=(2, 3))),
    ("int", lambda: det(elem=I32)),
    ("scalar", lambda: det(x=())),
])
many("det", "ok", [
    ("empty_matrix", lambda: det(x=(0, 0))),
    ("empty_batch", lambda: det(x=(0, 3, 3))),
    ("one_by_one", lambda: det(x=(1, 1))),
    ("const_singular", lambda: det(c=np.ones((3, 3), np.float32))),
    ("const_nan", lambda: det(c=np.array([[np.nan, 1], [1, np.inf]], np.float32))),
    ("f16", lambda: det(elem=H)),
    ("f64_batch", lambda: det(x=(2, 3, 4, 4), elem=D)),
])


# ----------------------------------------------------------------------------
# TfIdfVectorizer
# ----------------------------------------------------------------------------
def tfidf(x=(2, 6), elem=I64, **attrs):
    base = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=1,
                pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7], ngram_counts=[0, 4],
                ngram_indexes=[0, 1, 2, 3, 4, 5, 6])
    for k, v in attrs.items():
        if v is None:
            base.pop(k, None)
        else:
            base[k] = v
    return one("TfIdfVectorizer", ["x"], ["y"], [vi("x", elem, list(x))], [vi("y", F, None)],
               [], 13, **base)


many("tfidf", "error", [
    ("no_mode", lambda: tfidf(mode=None)),
    ("mode_bogus", lambda: tfidf(mode="BM25")),
    ("min_gram_zero", lambda: tfidf(min_gram_length=0)),
    ("max_lt_min", lambda: tfidf(min_gram_length=2, max_gram_length=1)),
    ("skip_negative", lambda: tfidf(max_skip_count=-1)),
    ("no_pool", lambda: tfidf(pool_int64s=None)),
    ("pool_strings", lambda: tfidf(pool_int64s=None, pool_strings=["a", "b"])),
    ("counts_decreasing", lambda: tfidf(ngram_counts=[0, 8, 4])),
    ("counts_past_pool", lambda: tfidf(ngram_counts=[0, 40])),
    ("counts_not_zero_first", lambda: tfidf(ngram_counts=[2, 4])),
    ("counts_negative", lambda: tfidf(ngram_counts=[-2, 4])),
    ("bigram_slice_odd", lambda: tfidf(ngram_counts=[0, 3])),
    ("indexes_count", lambda: tfidf(ngram_indexes=[0, 1, 2])),
    ("index_negative", lambda: tfidf(ngram_indexes=[0, 1, 2, 3, 4, 5, -6])),
    ("index_huge", lambda: tfidf(ngram_indexes=[0, 1, 2, 3, 4, 5, 1 << 41])),
    ("weights_count", lambda: tfidf(weights=[1.0, 2.0])),
    ("x_float", lambda: tfidf(elem=F)),
    ("x_rank3", lambda: tfidf(x=(1, 2, 6))),
    ("x_scalar", lambda: tfidf(x=())),
    ("no_counts", lambda: tfidf(ngram_counts=None)),
])
many("tfidf", "ok", [
    ("empty_rows", lambda: tfidf(x=(0, 6))),
    ("empty_cols", lambda: tfidf(x=(2, 0))),
    ("one_col", lambda: tfidf(x=(2, 1))),
    ("rank1", lambda: tfidf(x=(6,))),
    ("skip_huge", lambda: tfidf(max_skip_count=1 << 40)),
    ("i32", lambda: tfidf(elem=I32)),
    ("dup_ngrams", lambda: tfidf(pool_int64s=[2, 2, 5, 4, 5, 6, 7, 8, 5, 6],
                                 weights=[1., 2., 3., 4., 5., 6., 7.], mode="TFIDF")),
    ("sparse_index", lambda: tfidf(ngram_indexes=[0, 1, 2, 3, 4, 5, 100000])),
])


@case("any")
def tfidf_index_2p39():
    # One n-gram mapped to coordinate 2^39: the output row is 2^39 floats.
    return tfidf(x=(6,), ngram_indexes=[0, 1, 2, 3, 4, 5, 1 << 39])


@case("any")
def tfidf_index_2p28():
    return tfidf(x=(6,), ngram_indexes=[0, 1, 2, 3, 4, 5, 1 << 28])


@case("any")
def tfidf_100k_ngrams():
    # 100000 distinct 1-grams: parsing must not be quadratic.
    n = 100000
    return tfidf(x=(4,), pool_int64s=list(range(n)), ngram_counts=[0],
                 ngram_indexes=list(range(n)), max_gram_length=1)


# ----------------------------------------------------------------------------
# Legacy opsets, bfloat16
# ----------------------------------------------------------------------------
def legacy_bin(op="Add", a=(2, 3, 4), b=(3,), opset=6, **attrs):
    return one(op, ["a", "b"], ["y"], [vi("a", F, list(a)), vi("b", F, list(b))],
               [vi("y", F, None)], [], opset, **attrs)


many("legacy", "error", [
    ("axis_oob", lambda: legacy_bin(broadcast=1, axis=3)),
    ("axis_negative", lambda: legacy_bin(broadcast=1, axis=-1)),
    ("axis_float", lambda: legacy_bin(broadcast=1, axis=1.5)),
    ("b_rank_gt_a", lambda: legacy_bin(a=(3,), b=(2, 3), broadcast=1, axis=0)),
    ("dim_mismatch", lambda: legacy_bin(b=(5,), broadcast=1, axis=1)),
    ("no_broadcast_mismatch", lambda: legacy_bin(b=(2,), broadcast=0)),
    ("bn_training", lambda: one("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                [vi("x", F, [1, 2, 3])], [vi("y", F, None)],
                                [const(n, np.ones(2, np.float32)) for n in "sbmv"], 6,
                                is_test=0)),
    ("bn_spatial0", lambda: one("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"],
                                [vi("x", F, [1, 2, 3])], [vi("y", F, None)],
                                [const(n, np.ones(2, np.float32)) for n in "sbmv"], 7,
                                spatial=0)),
    ("prelu_wrong_slope", lambda: one("PRelu", ["x", "s"], ["y"], [vi("x", F, [1, 3, 4])],
                                      [vi("y", F, None)], [const("s", np.ones(5, np.float32))],
                                      6)),
    ("opset0", lambda: legacy_bin(opset=0)),
    ("axis_runtime_shape", lambda: model(
        [helper.make_node("Reshape", ["a", "shp"], ["r"]),
         helper.make_node("Add", ["r", "b"], ["y"], broadcast=1, axis=1)],
        [vi("a", F, [2, 3, 4]), vi("shp", I64, [3]), vi("b", F, [3])], [vi("y", F, None)],
        [], 5)),
])
many("legacy", "ok", [
    ("axis1", lambda: legacy_bin(broadcast=1, axis=1)),
    ("axis0_full", lambda: legacy_bin(b=(2, 3, 4), broadcast=1, axis=0)),
    ("scalar_b", lambda: legacy_bin(b=(1,), broadcast=1, axis=2)),
    ("suffix", lambda: legacy_bin(b=(4,), broadcast=1)),
    ("prelu_channel", lambda: one("PRelu", ["x", "s"], ["y"], [vi("x", F, [1, 3, 4])],
                                  [vi("y", F, None)], [const("s", np.ones(3, np.float32))], 6)),
    ("gemm_broadcast", lambda: one("Gemm", ["a", "b", "c"], ["y"], [vi("a", F, [2, 3])],
                                   [vi("y", F, None)],
                                   [const("b", np.ones((3, 4), np.float32)),
                                    const("c", np.ones(4, np.float32))], 6, broadcast=1)),
    ("chain_axis", lambda: model(
        [helper.make_node("Add", ["a", "b"], ["t"], broadcast=1, axis=1),
         helper.make_node("Mul", ["t", "b"], ["y"], broadcast=1, axis=1)],
        [vi("a", F, [2, 3, 4]), vi("b", F, [3])], [vi("y", F, None)], [], 6)),
    ("max_opset6", lambda: one("Max", ["a", "b"], ["y"], [vi("a", F, [2]), vi("b", F, [2])],
                               [vi("y", F, None)], [], 6, consumed_inputs=[0, 0])),
])


def cast(x_elem, to, shape=(4,), c=None):
    if c is not None:
        return one("Cast", ["x"], ["y"], [], [vi("y", to, None)], [c], 13, to=to)
    return one("Cast", ["x"], ["y"], [vi("x", x_elem, list(shape))], [vi("y", to, None)], [],
               13, to=to)


def bf16_const(vals):
    bits = np.array(vals, np.float32).view(np.uint32)
    return helper.make_tensor("x", BF, [len(vals)], (bits >> 16).astype(np.uint16).tolist())


many("bf16", "error", [
    ("relu", lambda: one("Relu", ["x"], ["y"], [vi("x", BF, [4])], [vi("y", BF, None)])),
    ("add", lambda: one("Add", ["x", "x"], ["y"], [vi("x", BF, [4])], [vi("y", BF, None)])),
    ("cast_to_string", lambda: cast(BF, TensorProto.STRING)),
])
many("bf16", "ok", [
    ("to_bf16", lambda: cast(F, BF)),
    ("from_bf16", lambda: cast(BF, F)),
    ("i64_to_bf16", lambda: cast(I64, BF)),
    ("bf16_to_i8", lambda: cast(BF, I8)),
    ("bf16_to_bool", lambda: cast(BF, B)),
    ("f16_to_bf16", lambda: cast(H, BF)),
    ("bf16_to_f64", lambda: cast(BF, D)),
    ("const_nan", lambda: cast(None, F, c=bf16_const([float("nan"), float("inf"), -0.0, 1e38]))),
    ("const_to_bf16", lambda: cast(None, BF, c=const("x", np.array(
        [np.nan, np.inf, 3.4e38, 1.0000001, -1e-45], np.float32)))),
    ("empty", lambda: cast(F, BF, shape=(0,))),
    ("castlike_bf16_target", lambda: one("CastLike", ["x", "t"], ["y"],
                                         [vi("x", F, [4]), vi("t", BF, [1])],
                                         [vi("y", BF, None)], [], 15)),
])

# ----------------------------------------------------------------------------
# Known, unfixed: constant folding (passes/fold_constants.c) has a per-node
# byte limit but no limit on work or on the total it keeps. --check skips
# these unless --known is given (they take minutes and gigabytes).
# ----------------------------------------------------------------------------
@case("known")
def known_fold_work_dft():
    # 256 KiB model: folding a 2^20-point DFT of 2^16 constant samples is
    # 2^36 complex multiply-adds at compile time (a hang).
    return model([helper.make_node("DFT", ["x", "n"], ["d"]), helper.make_node("Neg", ["d"], ["y"])],
                 [], [vi("y", F, None)],
                 [const("x", np.ones((1, 65536, 1), np.float32)), const("n", np.int64(1 << 20))],
                 17)


# ----------------------------------------------------------------------------
# DeformConv 19/22 (issue 15)
# ----------------------------------------------------------------------------
def deform_conv(x=(1, 4, 5, 5), w=(2, 4, 3, 3), off=None, b=None, mask=None, elem=F,
                off_const=None, opset=19, **attrs):
    """DeformConv with a default geometry (offset [N, 2*og*kH*kW, 3, 3])."""
    og = attrs.get("offset_group", 1)
    off = off if off is not None else (x[0], 2 * og * w[2] * w[3], 3, 3)
    ins, inputs, inits = ["x", "w", "off"], [vi("x", elem, list(x))], [
        const("w", np.ones(w, np.float32 if elem == F else np.float64))]
    if off_const is not None:
        inits.append(const("off", off_const))
    else:
        inputs.append(vi("off", elem, list(off)))
    if b is not None or mask is not None:
        ins.append("b" if b is not None else "")
        if b is not None:
            inputs.append(vi("b", elem, list(b)))
    if mask is not None:
        ins.append("mask")
        inputs.append(vi("mask", elem, list(mask)))
    return one("DeformConv", ins, ["y"], inputs, [vi("y", elem, None)], inits, opset, **attrs)


many("deformconv", "error", [
    ("x_rank5", lambda: deform_conv(x=(1, 4, 5, 5, 5), w=(2, 4, 3, 3, 3), off=(1, 54, 3, 3, 3))),
    ("x_rank2", lambda: deform_conv(x=(4, 5), w=(2, 4), off=(1, 2))),
    ("offset_channels", lambda: deform_conv(off=(1, 17, 3, 3))),
    ("offset_spatial", lambda: deform_conv(off=(1, 18, 4, 3))),
    ("mask_shape", lambda: deform_conv(mask=(1, 18, 3, 3))),
    ("bias_shape", lambda: deform_conv(b=(3,))),
    ("group_not_dividing", lambda: deform_conv(group=3)),
    ("group_zero", lambda: deform_conv(group=0)),
    ("offset_group_not_dividing", lambda: deform_conv(offset_group=3, off=(1, 54, 3, 3))),
    ("w_channels", lambda: deform_conv(w=(2, 3, 3, 3))),
    ("kernel_shape_mismatch", lambda: deform_conv(kernel_shape=[2, 2])),
    ("stride_zero", lambda: deform_conv(strides=[0, 1])),
    ("pads_negative", lambda: deform_conv(pads=[-1, 0, 0, 0])),
    ("pads_huge", lambda: deform_conv(pads=[BIG, 0, 0, 0])),
    ("dilations_length", lambda: deform_conv(dilations=[1])),
    ("kernel_larger_than_input", lambda: deform_conv(x=(1, 4, 2, 2), off=(1, 18, 1, 1))),
    ("x_int", lambda: deform_conv(elem=I32)),
    ("opset18", lambda: deform_conv(opset=18)),
])
many("deformconv", "ok", [
    ("offset_nan_inf", lambda: deform_conv(off_const=np.where(
        np.arange(18 * 9).reshape(1, 18, 3, 3) % 3 == 0, np.nan,
        np.where(np.arange(18 * 9).reshape(1, 18, 3, 3) % 3 == 1, np.inf, -1e30)
    ).astype(np.float32))),
    ("empty_batch", lambda: deform_conv(x=(0, 4, 5, 5), off=(0, 18, 3, 3))),
    ("double", lambda: deform_conv(elem=D)),
])


# ----------------------------------------------------------------------------
# Resize 18/19 options (issue 15)
# ----------------------------------------------------------------------------
def resize18(opset=18, scales=None, sizes=(3, 4), roi=None, **attrs):
    ins, inits = ["x", "roi" if roi is not None else "", ""], []
    if roi is not None:
        inits.append(const("roi", np.array(roi, np.float32)))
    if scales is not None:
        ins[2] = "scales"
        inits.append(const("scales", np.array(scales, np.float32)))
    else:
        ins.append("sizes")
        inits.append(const("sizes", np.array(sizes, np.int64)))
    attrs.setdefault("axes", [2, 3])
    return one("Resize", ins, ["y"], [vi("x", F, [1, 2, 6, 8])], [vi("y", F, None)], inits,
               opset, **attrs)


many("resize18", "error", [
    ("axes_repeated", lambda: resize18(axes=[2, 2])),
    ("axes_out_of_range", lambda: resize18(axes=[2, 4])),
    ("axes_too_many", lambda: resize18(axes=[0, 1, 2, 3, 0], sizes=(1, 2, 3, 4, 5))),
    ("sizes_count", lambda: resize18(sizes=(1, 2, 3, 4))),
    ("policy_unknown", lambda: resize18(keep_aspect_ratio_policy="fit")),
    ("antialias_2", lambda: resize18(antialias=2, mode="linear")),
    ("half_pixel_symmetric_at_18", lambda: resize18(
        coordinate_transformation_mode="half_pixel_symmetric")),
    ("axes_at_opset13", lambda: resize18(opset=13)),
    ("crop_roi_count", lambda: resize18(roi=[0, 0, 1, 1, 1, 1], mode="linear",
                                        coordinate_transformation_mode="tf_crop_and_resize")),
])
many("resize18", "ok", [
    ("not_larger_zero_size", lambda: resize18(sizes=(0, 4), keep_aspect_ratio_policy="not_larger")),
    ("antialias_nearest", lambda: resize18(antialias=1)),
    ("antialias_upscale", lambda: resize18(sizes=(12, 20), antialias=1, mode="cubic")),
    # 20 x 20 taps per output element (the tap loops).
    ("antialias_small_scale", lambda: resize18(scales=[0.2, 0.2], sizes=None, mode="cubic",
                                               antialias=1)),
])


def pad19_wrap(pads):
    return one("Pad", ["x", "pads"], ["y"], [vi("x", F, [2, 3])], [vi("y", F, None)],
               [const("pads", np.array(pads, np.int64))], 19, mode="wrap")


many("pad19_wrap", "error", [
    ("crop_all_then_pad", lambda: pad19_wrap([0, -3, 0, 2])),
    ("crop_beyond_dim", lambda: pad19_wrap([0, 1, 0, -5])),
])
many("pad19_wrap", "ok", [
    ("crop_only", lambda: pad19_wrap([0, -1, 0, -1])),
    ("crop_to_empty", lambda: pad19_wrap([0, -2, 0, -1])),
    ("crop_to_one_then_pad", lambda: pad19_wrap([0, 4, 0, -2])),
])


@case("known")
def known_fold_memory_loop():
    # Each of 4096 unrolled iterations folds a 32 MiB constant (Expand): the
    # arena keeps them all (128 GiB).
    body = g([helper.make_node("Identity", ["c_in"], ["c_out"]),
              helper.make_node("Expand", ["one", "shp"], ["big"]),
              helper.make_node("ReduceSum", ["big"], ["s"], keepdims=0),
              helper.make_node("Add", ["v0_in", "s"], ["v0_out"])],
             [vi("i", I64, []), vi("c_in", B, []), vi("v0_in", F, [])],
             [vi("c_out", B, []), vi("v0_out", F, [])], "body",
             [const("one", np.ones(1, np.float32)), const("shp", np.array([8 << 20], np.int64))])
    return model([helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)],
                 [vi("x", F, [])], [vi("y", F, None)], [const("M", np.int64(4096))])


# ----------------------------------------------------------------------------
# Regression subset kept in tests/bad/ (filled in as bugs are found and fixed).
# ----------------------------------------------------------------------------
REGRESSION = [
    # Before the fix: a calloc of 8 TiB for a per-coordinate table (ASan
    # abort); the tables now scale with the n-gram count.
    "tfidf_index_2p39",
    # Before the fix: INVALID_MODEL naming a node the unrolling created.
    "capture_bounded_if",
    "capture_bounded_loop",
]


def build(name):
    fn, _ = CASES[name]
    m = fn()
    return m if isinstance(m, bytes) else m.SerializeToString()


def write_all(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for name in CASES:
        with open(os.path.join(out_dir, name + ".onnx"), "wb") as f:
            f.write(build(name))
    print("wrote %d cases to %s" % (len(CASES), out_dir))


def check(mlcc, case_dir, names, timeout):
    """Runs |mlcc| over the cases; returns the number of problems."""
    problems = 0
    for name in names:
        expect = CASES[name][1]
        model_path = os.path.join(case_dir, name + ".onnx")
        out = tempfile.mkdtemp(prefix="mlcc-new-")
        cmd = [mlcc, model_path, "-o", os.path.join(out, "libm.a"), "--name=m", "--no-cache"]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout)
            code, err = p.returncode, p.stderr.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            code, err = None, ""
        left = os.listdir(out)
        subprocess.run(["rm", "-rf", out])
        first = err.splitlines()[0] if err else ""
        bad = []
        if code is None:
            bad.append("TIMEOUT")
        elif code < 0:
            bad.append("SIGNAL %d" % -code)
        if "Sanitizer" in err or "runtime error:" in err:
            bad.append("SANITIZER")
        if code is not None and code not in (0, 1):
            bad.append("EXIT %d" % code)
        if expect == "error" and code == 0:
            bad.append("ACCEPTED")
        if expect == "ok" and code == 1:
            bad.append("REJECTED")
        if code == 1:
            if (name + ".onnx") not in first:
                bad.append("NO-FILE")
            if " (" not in first or "opset" not in first:
                bad.append("NO-NODE/OP/OPSET")
            if left:
                bad.append("LEFT-OUTPUT")
        tag = ",".join(bad) if bad else "ok"
        print("%-44s %-7s exit=%s %s :: %s" % (name, expect, code, tag, first[:400]))
        if bad:
            problems += 1
            if "SANITIZER" in bad:
                print("\n".join(err.splitlines()[:30]))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--all", metavar="DIR")
    ap.add_argument("--check", nargs=2, metavar=("MLCC", "DIR"))
    ap.add_argument("--filter", default="")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--known", action="store_true", help="also run the known-issue cases")
    args = ap.parse_args()
    if args.all:
        write_all(args.all)
        return 0
    if args.check:
        names = [n for n in CASES if re.search(args.filter, n) and
                 (args.known or CASES[n][1] != "known")]
        n = check(os.path.abspath(args.check[0]), args.check[1], names, args.timeout)
        print("%d cases, %d with problems" % (len(names), n))
        return 1 if n else 0
    for name in REGRESSION:
        with open(os.path.join(HERE, "new_" + name + ".onnx"), "wb") as f:
            f.write(build(name))
    print("wrote %d regression models to %s" % (len(REGRESSION), HERE))
    return 0


if __name__ == "__main__":
    sys.exit(main())
