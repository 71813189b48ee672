#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Writes the hand-made bad models of tests/bad/ (one .onnx per case, plus the
# external-data side files). Deterministic: re-running gives byte-identical
# files. Run with
#   /usr/bin/python3 tests/bad/make_bad_models.py
# Needs onnx + numpy; no checker is run on purpose: every model is broken.
# The expected exit code and first line of error of each case are in
# expected.txt (checked by run_bad.py; `run_bad.py --update` rewrites it,
# review the diff before committing).
import os
import struct

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT
I64 = TensorProto.INT64


def model(nodes, inputs, outputs, inits=(), opsets=(("", 13),), ir_version=8):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          producer_name="mlcc-bad")
    m.ir_version = ir_version
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def i64(name, vals, dims=None):
    return helper.make_tensor(name, I64, [len(vals)] if dims is None else dims, vals)


def relu_model(shape=(1, 4), elem=F):
    return model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", elem, list(shape))],
                 [vi("y", elem, list(shape))])


def conv_model(x_shape, w_shape, y_shape=None, **attrs):
    w = numpy_helper.from_array(np.ones(w_shape, np.float32), "w")
    return model([helper.make_node("Conv", ["x", "w"], ["y"], **attrs)],
                 [vi("x", F, list(x_shape))], [vi("y", F, y_shape)], inits=[w])


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


# -- broken bytes --------------------------------------------------------------
@case
def empty_file():
    return b""


@case
def truncated():
    good = relu_model().SerializeToString()
    return good[: len(good) // 2]


@case
def garbage():
    return bytes((i * 131 + 7) % 256 for i in range(200))


@case
def wrong_field_type():
    # ModelProto.graph (field 7) sent as a varint instead of a message.
    return bytes([0x08, 0x08, 0x38, 0x05])


@case
def bad_varint():
    # ir_version with an 11-byte varint (never terminated properly).
    return bytes([0x08] + [0xFF] * 11)


@case
def wrong_nested_type():
    # GraphProto.node (field 1) given as a fixed64.
    graph = bytes([0x09]) + b"\x00" * 8
    opset = bytes([0x10, 13])
    return bytes([0x08, 0x08, 0x3A, len(graph)]) + graph + bytes([0x42, len(opset)]) + opset


# -- structure -----------------------------------------------------------------
@case
def no_graph():
    m = relu_model()
    m.ClearField("graph")
    return m


@case
def no_opset():
    m = relu_model()
    del m.opset_import[:]
    return m


@case
def cycle():
    return model([helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"]),
                  helper.make_node("Add", ["x", "a"], ["y"])],
                 [vi("x", F, [1, 4])], [vi("y", F, [1, 4])])


@case
def self_loop():
    return model([helper.make_node("Add", ["x", "y"], ["y"])],
                 [vi("x", F, [1, 4])], [vi("y", F, [1, 4])])


@case
def dup_output():
    return model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"])],
                 [vi("x", F, [1, 4])], [vi("y", F, [1, 4])])


@case
def dup_graph_output():
    return model([helper.make_node("Relu", ["x"], ["y"])],
                 [vi("x", F, [1, 4])], [vi("y", F, [1, 4]), vi("y", F, [1, 4])])


@case
def dangling_input():
    return model([helper.make_node("Add", ["x", "nowhere"], ["y"])],
                 [vi("x", F, [1, 4])], [vi("y", F, [1, 4])])


@case
def output_not_produced():
    return model([helper.make_node("Relu", ["x"], ["y"])],
                 [vi("x", F, [1, 4])], [vi("z", F, [1, 4])])


@case
def no_outputs():
    return model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [1, 4])], [])


@case
def input_is_output_of_node():
    return model([helper.make_node("Relu", ["y"], ["x"]), helper.make_node("Relu", ["x"], ["y"])],
                 [vi("x", F, [1, 4])], [vi("y", F, [1, 4])])


@case
def empty_op_type():
    return model([helper.make_node("", ["x"], ["y"])], [vi("x", F, [1, 4])], [vi("y", F, [1, 4])])


# -- dims and tensors ----------------------------------------------------------
@case
def negative_dim():
    return relu_model((1, -3))


@case
def overflow_dims():
    # 2^31 * 2^31 * 2^31 elements: the product overflows int64.
    return relu_model((1 << 31, 1 << 31, 1 << 31))


@case
def huge_input_2p40():
    # A 2^40-element input (4 TiB of float32).
    return relu_model((1 << 20, 1 << 20))


@case
def huge_initializer_2p40():
    t = TensorProto(name="w", data_type=F, dims=[1 << 20, 1 << 20], raw_data=b"\0" * 16)
    return model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", F, [1, 1])],
                 [vi("y", F, [1 << 20, 1 << 20])], inits=[t])


@case
def raw_data_short():
    t = TensorProto(name="w", data_type=F, dims=[4, 4], raw_data=b"\0" * 12)
    return model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", F, [4, 4])],
                 [vi("y", F, [4, 4])], inits=[t])


@case
def typed_data_count_mismatch():
    t = TensorProto(name="w", data_type=F, dims=[2, 3], float_data=[1.0, 2.0])
    return model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", F, [2, 3])],
                 [vi("y", F, [2, 3])], inits=[t])


@case
def unknown_elem_type():
    return relu_model((1, 4), elem=999)


@case
def rank_too_big():
    return relu_model(tuple([1] * 40))


@case
def zero_size_dim():
    # Valid ONNX (an empty tensor): mlcc must compile it, not crash.
    return relu_model((0, 4))


@case
def symbolic_dim_unpinned():
    return relu_model(("batch", 4))


# Declared graph output types against inference (ONNX Runtime's rules).
def relu_declared(elem, shape):
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [vi("x", F, [1, 4])], [vi("y", elem, shape)])


@case
def output_dtype_mismatch():
    # Relu of float32 declared int64: an error (ORT: "Type Error").
    return relu_declared(I64, [1, 4])


@case
def output_dim_mismatch():
    # A declared static dim that differs: a warning, the inferred [1,4] is kept.
    return relu_declared(F, [1, 5])


@case
def output_rank_mismatch():
    return relu_declared(F, [4])


@case
def output_initializer_dtype_mismatch():
    # An initializer listed as an output is checked too (no producing node).
    w = numpy_helper.from_array(np.ones(2, np.float32), "w")
    return model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [1, 4])],
                 [vi("y", F, [1, 4]), vi("w", TensorProto.INT32, [2])], inits=[w])


@case
def output_symbolic_dim():
    # Symbolic declared dims match anything: compiles with no diagnostic.
    return relu_declared(F, ["n", 4])


# -- external data ---------------------------------------------------------------
def ext_model(location, offset=None, length=None):
    t = TensorProto(name="w", data_type=F, dims=[4])
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", F, [4])],
                 [vi("y", F, [4])], inits=[t])


@case
def ext_outside_folder():
    return ext_model("../ext_weights.bin")


@case
def ext_absolute():
    return ext_model("/etc/passwd")


@case
def ext_missing():
    return ext_model("does_not_exist.bin")


@case
def ext_past_end():
    return ext_model("ext_weights.bin", offset=8, length=16)


@case
def ext_negative_offset():
    return ext_model("ext_weights.bin", offset=-4)


# -- operators and opsets --------------------------------------------------------
@case
def wrong_opset_domain():
    return model([helper.make_node("Relu", ["x"], ["y"], domain="com.example")],
                 [vi("x", F, [1, 4])], [vi("y", F, [1, 4])],
                 opsets=(("", 13), ("com.example", 1)))


@case
def domain_without_opset():
    return model([helper.make_node("Relu", ["x"], ["y"], domain="ai.onnx.ml")],
                 [vi("x", F, [1, 4])], [vi("y", F, [1, 4])])


@case
def opset_from_future():
    return model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", F, [1, 4])],
                 [vi("y", F, [1, 4])], opsets=(("", 999),))


@case
def opset27_named_nodes():
    # opset 27 is past mlcc's 26: every op is listed with its supported range
    return model([helper.make_node("Gemm", ["x", "w"], ["g"], name="fc1"),
                  helper.make_node("Relu", ["g"], ["y"], name="act1")],
                 [vi("x", F, [1, 4]), vi("w", F, [4, 4])], [vi("y", F, [1, 4])],
                 opsets=(("", 27),))


@case
def opset18_cast_to_float8():
    # the float8 types are Cast targets from opset 19
    return model([helper.make_node("Cast", ["x"], ["y"], name="to_f8", to=17)],
                 [vi("x", F, [1, 4])], [vi("y", 17, [1, 4])], opsets=(("", 18),))


@case
def opset21_float8_in_add():
    # Add's type constraint has no float8 type at any opset
    return model([helper.make_node("Add", ["x", "x"], ["y"], name="add_f8")],
                 [vi("x", 17, [1, 4])], [vi("y", 17, [1, 4])], opsets=(("", 21),))


@case
def opset21_float8_in_conv():
    return model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv_f8")],
                 [vi("x", 19, [1, 1, 3, 3]), vi("w", 19, [1, 1, 1, 1])],
                 [vi("y", 19, [1, 1, 3, 3])], opsets=(("", 21),))


@case
def opset19_float8_transpose():
    # Transpose allows float8 from Transpose-21; at opset 19 it is Transpose-13
    return model([helper.make_node("Transpose", ["x"], ["y"], name="tr_f8")],
                 [vi("x", 18, [2, 4])], [vi("y", 18, [4, 2])], opsets=(("", 19),))


@case
def opset23_cast_to_float8e8m0():
    # float8e8m0 is a Cast target from opset 24
    return model([helper.make_node("Cast", ["x"], ["y"], name="to_e8m0", to=24)],
                 [vi("x", F, [1, 4])], [vi("y", 24, [1, 4])], opsets=(("", 23),))


@case
def opset24_cast_bad_round_mode():
    return model([helper.make_node("Cast", ["x"], ["y"], name="to_e8m0", to=24,
                                   round_mode="even")],
                 [vi("x", F, [1, 4])], [vi("y", 24, [1, 4])], opsets=(("", 24),))


@case
def opset21_int4_add():
    # Add's type constraint (opset 14+) has no int4: refused naming the type
    return model([helper.make_node("Add", ["a", "b"], ["y"], name="add4")],
                 [vi("a", 22, [2, 3]), vi("b", 22, [2, 3])], [vi("y", 22, [2, 3])],
                 opsets=(("", 21),), ir_version=10)


@case
def opset21_int4_weight_matmul():
    # an int4 initializer straight into MatMul (without DequantizeLinear)
    w = TensorProto(name="w", data_type=22, dims=[2, 2], raw_data=bytes([0x21, 0xf7]))
    return model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                 [vi("x", F, [1, 2])], [vi("y", F, [1, 2])], inits=[w], opsets=(("", 21),),
                 ir_version=10)


@case
def opset19_int4_identity():
    # Identity lists int4 from opset 21: an int4 graph input at opset 19
    return model([helper.make_node("Identity", ["x"], ["y"], name="id4")],
                 [vi("x", 22, [4])], [vi("y", 22, [4])], opsets=(("", 19),), ir_version=10)


@case
def opset26_int4_bitcast():
    # BitCast-26 lists int4, mlcc does not implement it on 4-bit types
    return model([helper.make_node("BitCast", ["x"], ["y"], name="bc4", to=3)],
                 [vi("x", 22, [4])], [vi("y", 3, [2])], opsets=(("", 26),), ir_version=10)


@case
def opset24_int2_identity():
    # int2 (IR 11) is listed by Identity from opset 25 only
    return model([helper.make_node("Identity", ["x"], ["y"], name="id2")],
                 [vi("x", 26, [4])], [vi("y", 26, [4])], opsets=(("", 24),), ir_version=11)


@case
def opset25_uint2_mul():
    # Mul's type constraint has no uint2
    return model([helper.make_node("Mul", ["a", "b"], ["y"], name="mul2")],
                 [vi("a", 25, [3]), vi("b", 25, [3])], [vi("y", 25, [3])],
                 opsets=(("", 25),), ir_version=11)


@case
def opset20_cast_to_int4():
    # int4 is a Cast target from opset 21 only
    return model([helper.make_node("Cast", ["x"], ["y"], name="to_i4", to=22)],
                 [vi("x", F, [1, 4])], [vi("y", 22, [1, 4])], opsets=(("", 20),),
                 ir_version=9)


@case
def int4_raw_data_short():
    # 5 int4 elements need ceil(5/2) = 3 bytes of raw_data; 2 given
    w = TensorProto(name="w", data_type=22, dims=[5], raw_data=bytes([0x21, 0x43]))
    return model([helper.make_node("DequantizeLinear", ["w", "s"], ["y"], name="dq")],
                 [], [vi("y", F, [5])], inits=[w, helper.make_tensor("s", F, [], [0.5])],
                 opsets=(("", 21),), ir_version=10)


@case
def opset21_quantize_output_dtype_99():
    # output_dtype names no ONNX type: refused with the y types QuantizeLinear-21 takes
    return model([helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q",
                                   output_dtype=99)],
                 [vi("x", F, [4])], [vi("y", TensorProto.INT8, [4])],
                 inits=[helper.make_tensor("s", F, [], [0.5])], opsets=(("", 21),),
                 ir_version=10)


@case
def int4_int32_data_out_of_byte():
    # each int32_data value of an int4 tensor is one packed byte: 300 is none
    w = TensorProto(name="w", data_type=22, dims=[4], int32_data=[300, 0x43])
    return model([helper.make_node("DequantizeLinear", ["w", "s"], ["y"], name="dq")],
                 [], [vi("y", F, [4])], inits=[w, helper.make_tensor("s", F, [], [0.5])],
                 opsets=(("", 21),), ir_version=10)


@case
def float8_int32_data_out_of_code():
    # a float8e4m3fn code is one byte (0..255): int32_data 300 is none
    w = TensorProto(name="w", data_type=17, dims=[3], int32_data=[0x38, 0x40, 300])
    return model([helper.make_node("Cast", ["w"], ["y"], name="cast", to=1)],
                 [], [vi("y", F, [3])], inits=[w], opsets=(("", 21),), ir_version=9)


@case
def opset23_float4e2m1_in_add():
    # Add's type constraint has no float4e2m1 at any opset
    return model([helper.make_node("Add", ["x", "x"], ["y"], name="add_f4")],
                 [vi("x", 23, [1, 4])], [vi("y", 23, [1, 4])], opsets=(("", 23),),
                 ir_version=10)


@case
def opset22_cast_to_float4e2m1():
    # float4e2m1 is a Cast target from opset 23 only
    return model([helper.make_node("Cast", ["x"], ["y"], name="to_f4", to=23)],
                 [vi("x", F, [1, 4])], [vi("y", 23, [1, 4])], opsets=(("", 22),))


@case
def opset23_float4e2m1_pad():
    # Pad-23 lists float4e2m1, mlcc does not pad it yet: UNIMPLEMENTED
    return model([helper.make_node("Pad", ["x", "p"], ["y"], name="pad_f4")],
                 [vi("x", 23, [4])], [vi("y", 23, [6])],
                 inits=[helper.make_tensor("p", TensorProto.INT64, [2], [1, 1])],
                 opsets=(("", 23),), ir_version=10)


@case
def opset18_reduce_axes_attribute():
    # ReduceMean-18 takes axes as input 1; the attribute form is opset <= 17
    return model([helper.make_node("ReduceMean", ["x"], ["y"], name="mean", axes=[1])],
                 [vi("x", F, [2, 4])], [vi("y", F, [2, 1])], opsets=(("", 18),))


@case
def opset18_resize_bad_aspect_policy():
    # Resize-18 antialias is supported since session 9; an unknown
    # keep_aspect_ratio_policy is still a bad model.
    sz = numpy_helper.from_array(np.array([1, 1, 2, 2], np.int64), "sizes")
    return model([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="down",
                                   mode="linear", keep_aspect_ratio_policy="bogus")],
                 [vi("x", F, [1, 1, 4, 4])], [vi("y", F, [1, 1, 2, 2])], opsets=(("", 18),),
                 inits=[sz])


@case
def opset21_quantize_block_size_scale_shape():
    # block_size 4 along axis 1 of 4 needs a [2, 1] scale
    sc = numpy_helper.from_array(np.full((2, 2), 0.5, np.float32), "s")
    return model([helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q", axis=1,
                                   block_size=4)],
                 [vi("x", F, [2, 4])], [vi("y", TensorProto.UINT8, [2, 4])],
                 opsets=(("", 21),), inits=[sc])


@case
def opset19_dequantize_f16_scale():
    sc = numpy_helper.from_array(np.array(0.5, np.float16), "s")
    return model([helper.make_node("DequantizeLinear", ["x", "s"], ["y"], name="dq")],
                 [vi("x", TensorProto.INT8, [4])], [vi("y", TensorProto.FLOAT16, [4])],
                 opsets=(("", 19),), inits=[sc])


@case
def opset23_attention_qk_mode_out_of_range():
    return model([helper.make_node("Attention", ["q", "k", "v"], ["y", "", "", "qk"],
                                   name="attn", qk_matmul_output_mode=4)],
                 [vi("q", F, [1, 2, 3, 4]), vi("k", F, [1, 2, 3, 4]), vi("v", F, [1, 2, 3, 4])],
                 [vi("y", F, [1, 2, 3, 4]), vi("qk", F, [1, 2, 3, 3])], opsets=(("", 23),),
                 ir_version=10)


@case
def opset23_attention_is_causal_2():
    return model([helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn",
                                   is_causal=2)],
                 [vi("q", F, [1, 2, 3, 4]), vi("k", F, [1, 2, 3, 4]), vi("v", F, [1, 2, 3, 4])],
                 [vi("y", F, [1, 2, 3, 4])], opsets=(("", 23),), ir_version=10)


@case
def opset23_attention_nonpad_kv_seqlen():
    return model([helper.make_node("Attention", ["q", "k", "v", "", "", "", "n"], ["y"],
                                   name="attn")],
                 [vi("q", F, [1, 2, 3, 4]), vi("k", F, [1, 2, 3, 4]), vi("v", F, [1, 2, 3, 4]),
                  vi("n", TensorProto.INT64, [1])],
                 [vi("y", F, [1, 2, 3, 4])], opsets=(("", 23),), ir_version=10)


@case
def opset24_attention_left_window():
    """left_window_size is Attention-25's; at opset 24 it is refused, not
    silently applied."""
    return model([helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn",
                                   left_window_size=2)],
                 [vi("q", F, [1, 2, 3, 4]), vi("k", F, [1, 2, 3, 4]), vi("v", F, [1, 2, 3, 4])],
                 [vi("y", F, [1, 2, 3, 4])], opsets=(("", 24),), ir_version=10)


@case
def opset25_attention_right_window_minus_2():
    return model([helper.make_node("Attention", ["q", "k", "v"], ["y"], name="attn",
                                   right_window_size=-2)],
                 [vi("q", F, [1, 2, 3, 4]), vi("k", F, [1, 2, 3, 4]), vi("v", F, [1, 2, 3, 4])],
                 [vi("y", F, [1, 2, 3, 4])], opsets=(("", 25),), ir_version=10)


@case
def unsupported_op():
    return model([helper.make_node("FooBarOp", ["x"], ["y"])], [vi("x", F, [1, 4])],
                 [vi("y", F, [1, 4])])


@case
def too_many_inputs():
    return model([helper.make_node("Relu", ["x", "x", "x"], ["y"])], [vi("x", F, [1, 4])],
                 [vi("y", F, [1, 4])])


@case
def missing_required_input():
    return model([helper.make_node("Add", ["x"], ["y"])], [vi("x", F, [1, 4])],
                 [vi("y", F, [1, 4])])


# -- attribute values -----------------------------------------------------------
@case
def conv_kernel_shape_mismatch():
    return conv_model([1, 1, 5, 5], [1, 1, 3, 3], kernel_shape=[3])


@case
def conv_negative_strides():
    return conv_model([1, 1, 5, 5], [1, 1, 3, 3], strides=[-1, -1])


@case
def conv_zero_dilation():
    return conv_model([1, 1, 5, 5], [1, 1, 3, 3], dilations=[0, 0])


@case
def conv_negative_pads():
    return conv_model([1, 1, 5, 5], [1, 1, 3, 3], pads=[-9, -9, -9, -9])


@case
def conv_group_not_dividing():
    return conv_model([1, 4, 5, 5], [3, 1, 3, 3], group=3)


@case
def conv_group_zero():
    return conv_model([1, 4, 5, 5], [4, 4, 3, 3], group=0)


@case
def conv_kernel_larger_than_input():
    return conv_model([1, 1, 2, 2], [1, 1, 5, 5])


@case
def conv_channel_mismatch():
    return conv_model([1, 3, 5, 5], [2, 4, 3, 3])


@case
def conv_wrong_attr_type():
    return conv_model([1, 1, 5, 5], [1, 1, 3, 3], strides=1.5)


@case
def conv_huge_pads():
    return conv_model([1, 1, 5, 5], [1, 1, 3, 3], pads=[1 << 62] * 4)


@case
def softmax_axis_out_of_range():
    return model([helper.make_node("Softmax", ["x"], ["y"], axis=7)], [vi("x", F, [1, 4])],
                 [vi("y", F, [1, 4])])


@case
def transpose_bad_perm():
    return model([helper.make_node("Transpose", ["x"], ["y"], perm=[0, 0])],
                 [vi("x", F, [2, 3])], [vi("y", F, [3, 2])])


@case
def reshape_absurd():
    return model([helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", F, [2, 3])],
                 [vi("y", F, None)], inits=[i64("s", [7, 11])])


@case
def reshape_two_minus_one():
    return model([helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", F, [2, 3])],
                 [vi("y", F, None)], inits=[i64("s", [-1, -1])])


@case
def reshape_huge():
    return model([helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", F, [2, 3])],
                 [vi("y", F, None)], inits=[i64("s", [1 << 62, 1 << 62, -1])])


@case
def reshape_negative():
    return model([helper.make_node("Reshape", ["x", "s"], ["y"])], [vi("x", F, [2, 3])],
                 [vi("y", F, None)], inits=[i64("s", [-6])])


@case
def concat_rank_mismatch():
    return model([helper.make_node("Concat", ["x", "z"], ["y"], axis=0)],
                 [vi("x", F, [2, 3]), vi("z", F, [2, 3, 1])], [vi("y", F, None)])


@case
def concat_axis_out_of_range():
    return model([helper.make_node("Concat", ["x", "x"], ["y"], axis=5)],
                 [vi("x", F, [2, 3])], [vi("y", F, None)])


@case
def matmul_mismatch():
    return model([helper.make_node("MatMul", ["x", "z"], ["y"])],
                 [vi("x", F, [2, 3]), vi("z", F, [4, 5])], [vi("y", F, None)])


@case
def gemm_mismatch():
    w = numpy_helper.from_array(np.ones((5, 2), np.float32), "w")
    return model([helper.make_node("Gemm", ["x", "w"], ["y"])], [vi("x", F, [2, 3])],
                 [vi("y", F, None)], inits=[w])


@case
def add_broadcast_mismatch():
    return model([helper.make_node("Add", ["x", "z"], ["y"])],
                 [vi("x", F, [2, 3]), vi("z", F, [4])], [vi("y", F, None)])


@case
def add_dtype_mismatch():
    return model([helper.make_node("Add", ["x", "z"], ["y"])],
                 [vi("x", F, [2, 3]), vi("z", I64, [2, 3])], [vi("y", F, None)])


@case
def maxpool_negative_kernel():
    return model([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[-2, -2])],
                 [vi("x", F, [1, 1, 4, 4])], [vi("y", F, None)])


@case
def split_sizes_wrong():
    return model([helper.make_node("Split", ["x", "s"], ["a", "b"], axis=1)],
                 [vi("x", F, [2, 6])], [vi("a", F, None), vi("b", F, None)],
                 inits=[i64("s", [4, 4])])


@case
def slice_zero_step():
    return model([helper.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"])],
                 [vi("x", F, [2, 6])], [vi("y", F, None)],
                 inits=[i64("st", [0]), i64("en", [4]), i64("ax", [1]), i64("sp", [0])])


@case
def gather_index_out_of_range():
    return model([helper.make_node("Gather", ["x", "i"], ["y"], axis=0)],
                 [vi("x", F, [2, 3])], [vi("y", F, None)], inits=[i64("i", [5])])


@case
def expand_huge():
    return model([helper.make_node("Expand", ["x", "s"], ["y"])], [vi("x", F, [1, 1])],
                 [vi("y", F, None)], inits=[i64("s", [1 << 40, 1 << 40])])


@case
def pad_huge():
    return model([helper.make_node("Pad", ["x", "p"], ["y"])], [vi("x", F, [1, 1])],
                 [vi("y", F, None)], inits=[i64("p", [0, 0, 1 << 62, 1 << 62])])


@case
def constant_of_shape_huge():
    return model([helper.make_node("ConstantOfShape", ["s"], ["c"]),
                  helper.make_node("Add", ["x", "c"], ["y"])], [vi("x", F, [1])],
                 [vi("y", F, None)], inits=[i64("s", [1 << 41])])


@case
def range_huge():
    mk = lambda n, v: helper.make_tensor(n, F, [], [v])
    return model([helper.make_node("Range", ["a", "b", "d"], ["r"]),
                  helper.make_node("Add", ["x", "r"], ["y"])], [vi("x", F, [1])],
                 [vi("y", F, None)], inits=[mk("a", 0.0), mk("b", 1e30), mk("d", 1e-30)])


# -- more structure ----------------------------------------------------------------
@case
def ir_version_from_future():
    m = relu_model()
    m.ir_version = 99
    return m


@case
def duplicate_initializer():
    a = numpy_helper.from_array(np.ones((1, 4), np.float32), "w")
    b = numpy_helper.from_array(np.zeros((1, 4), np.float32), "w")
    return model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", F, [1, 4])],
                 [vi("y", F, [1, 4])], inits=[a, b])


@case
def duplicate_graph_input():
    return model([helper.make_node("Relu", ["x"], ["y"])],
                 [vi("x", F, [1, 4]), vi("x", F, [1, 4])], [vi("y", F, [1, 4])])


@case
def string_input():
    return model([helper.make_node("Identity", ["x"], ["y"])], [vi("x", TensorProto.STRING, [2])],
                 [vi("y", TensorProto.STRING, [2])])


@case
def sum_many_inputs():
    return model([helper.make_node("Sum", ["x"] * 5000, ["y"])], [vi("x", F, [1, 4])],
                 [vi("y", F, [1, 4])])


@case
def if_subgraph():
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                               [vi("t", F, [1, 4])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                               [vi("e", F, [1, 4])])
    return model([helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                 [vi("c", TensorProto.BOOL, []), vi("x", F, [1, 4])], [vi("y", F, [1, 4])])


def loop_model(body, n_carried=1, trip=3):
    # Loop(M=trip, cond omitted, x) -> y: |body| decides what is broken.
    m_init = numpy_helper.from_array(np.array(trip, np.int64), "M")
    outs = ["y"] + ["s%d" % i for i in range(len(body.output) - 1 - n_carried)]
    return model([helper.make_node("Loop", ["M", "", "x"], outs, body=body)],
                 [vi("x", F, [1, 4])], [vi(o, F, None) for o in outs], inits=[m_init])


def loop_body(nodes, inputs=("i", "c_in", "x_in"), outputs=("c_out", "x_out")):
    return helper.make_graph(nodes, "body", [helper.make_tensor_value_info(n, 0, None)
                                             for n in inputs],
                             [helper.make_tensor_value_info(n, 0, None) for n in outputs])


@case
def if_missing_then_branch():
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                               [vi("e", F, [1, 4])])
    return model([helper.make_node("If", ["c"], ["y"], else_branch=else_g)],
                 [vi("c", TensorProto.BOOL, []), vi("x", F, [1, 4])], [vi("y", F, [1, 4])])


@case
def loop_body_wrong_arity():
    # One loop-carried value, but the body takes 2 inputs (needs 3).
    body = loop_body([helper.make_node("Identity", ["c_in"], ["c_out"]),
                      helper.make_node("Neg", ["c_in"], ["x_out"])], inputs=("i", "c_in"))
    return loop_model(body)


@case
def subgraph_unknown_outer_name():
    # The body reads 'nowhere', which no scope defines.
    body = loop_body([helper.make_node("Identity", ["c_in"], ["c_out"]),
                      helper.make_node("Add", ["x_in", "nowhere"], ["x_out"])])
    return loop_model(body)


@case
def subgraph_nested_too_deep():
    # 40 Ifs nested in each other's then_branch.
    leaf = helper.make_graph([helper.make_node("Neg", ["x"], ["t"])], "leaf", [],
                             [vi("t", F, [1, 4])])
    g = leaf
    for d in range(40):
        g = helper.make_graph([helper.make_node("If", ["c"], ["t%d" % d], then_branch=g,
                                                else_branch=leaf)],
                              "level%d" % d, [], [vi("t%d" % d, F, [1, 4])])
    return model(list(g.node), [vi("c", TensorProto.BOOL, []), vi("x", F, [1, 4])],
                 [vi("t39", F, [1, 4])])


@case
def loop_unroll_limit():
    # A constant trip count of 10^9: unrolling stops with an error, not a hang.
    body = loop_body([helper.make_node("Identity", ["c_in"], ["c_out"]),
                      helper.make_node("Neg", ["x_in"], ["x_out"])])
    return loop_model(body, trip=10 ** 9)


@case
def huge_attribute_list():
    return conv_model([1, 1, 5, 5], [1, 1, 3, 3], strides=[1] * 10000)


@case
def long_chain():
    # 3000 nodes in a chain: no recursion depth or quadratic blow-up may hang mlcc.
    nodes = [helper.make_node("Neg", ["x" if i == 0 else "t%d" % (i - 1)],
                              ["y" if i == 2999 else "t%d" % i]) for i in range(3000)]
    m = model(nodes, [vi("x", F, [1, 4])], [vi("y", F, [1, 4])])
    # ... ending in an unsupported op, so the run stops before code generation.
    m.graph.node[-1].op_type = "NotAnOp"
    return m


@case
def qlinear_matmul_9_inputs():
    # ONNX QLinearMatMul has 8 inputs; the 9th (int32 bias) is mlcc-internal
    # (quant-fuse, attribute mlcc.qbias) and refused in a model.
    inits = [numpy_helper.from_array(np.array(0.1, np.float32), "s"),
             numpy_helper.from_array(np.array(3, np.uint8), "z"),
             numpy_helper.from_array(np.ones((4, 2), np.int8), "b"),
             numpy_helper.from_array(np.array(0, np.int8), "bz"),
             numpy_helper.from_array(np.zeros(2, np.int32), "bias")]
    n = helper.make_node("QLinearMatMul", ["x", "s", "z", "b", "s", "bz", "s", "z", "bias"], ["y"])
    return model([n], [vi("x", TensorProto.UINT8, [3, 4])], [vi("y", TensorProto.UINT8, [3, 2])],
                 inits=inits)


def main():
    with open(os.path.join(HERE, "ext_weights.bin"), "wb") as f:
        f.write(struct.pack("<4f", 1, 2, 3, 4))
    names = []
    for name, fn in CASES.items():
        m = fn()
        data = m if isinstance(m, bytes) else m.SerializeToString()
        with open(os.path.join(HERE, name + ".onnx"), "wb") as f:
            f.write(data)
        names.append(name)
    print("wrote %d bad models to %s" % (len(names), HERE))


if __name__ == "__main__":
    main()
