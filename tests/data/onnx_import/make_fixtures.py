#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Writes the tiny ONNX fixtures read by ir/onnx/onnx_import_test.c.
# Deterministic: re-running gives byte-identical files. Run with
#   /usr/bin/python3 tests/data/onnx_import/make_fixtures.py
# (needs the onnx and numpy packages; no checker is run on purpose: several
# fixtures are deliberately invalid).
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT


def model(nodes, inputs, outputs, inits=(), opsets=(("", 13),), ir_version=8, name="g"):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(
        g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
        producer_name="mlcc-fixtures")
    m.ir_version = ir_version
    return m


def save(m, name):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(m.SerializeToString())


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def typed(name, dtype, dims, vals):
    # helper.make_tensor with raw=False puts values in the typed field.
    return helper.make_tensor(name, dtype, dims, vals, raw=False)


def main():
    # raw_data vs typed fields -------------------------------------------
    w_raw = numpy_helper.from_array(np.array([[1, 2], [3, 4]], np.float32), "w_raw")
    w_typed = typed("w_typed", F, [2, 2], [10, 20, 30, 40])
    inits = [
        w_raw, w_typed,
        typed("i64", TensorProto.INT64, [3], [-1, 0, 1 << 40]),
        typed("i8", TensorProto.INT8, [3], [-128, 5, 127]),
        typed("u8", TensorProto.UINT8, [2], [0, 255]),
        typed("i16", TensorProto.INT16, [2], [-300, 300]),
        typed("b", TensorProto.BOOL, [3], [True, False, True]),
        typed("f64", TensorProto.DOUBLE, [2], [0.5, -2.25]),
        typed("u32", TensorProto.UINT32, [2], [7, 4000000000]),
        typed("u64", TensorProto.UINT64, [1], [1 << 63]),
        typed("i32", TensorProto.INT32, [2], [-7, 70000]),
        # float16 in int32_data holds the IEEE half bits: 1.0 = 0x3c00
        TensorProto(name="f16", data_type=TensorProto.FLOAT16, dims=[2],
                    int32_data=[0x3C00, 0xC000]),
        typed("scalar", F, [], [3.5]),
        typed("empty", F, [0, 4], []),
    ]
    nodes = [helper.make_node("Add", ["x", "w_raw"], ["a"], name="add_raw"),
             helper.make_node("Add", ["a", "w_typed"], ["y"], name="add_typed")]
    save(model(nodes, [vi("x", F, [2, 2])], [vi("y", F, [2, 2])], inits), "tensors.onnx")

    # Constant nodes ------------------------------------------------------
    nodes = [
        helper.make_node("Constant", [], ["c_tensor"], name="k0",
                         value=typed("t", TensorProto.INT64, [2], [4, 2])),
        helper.make_node("Constant", [], ["c_float"], name="k1", value_float=1.5),
        helper.make_node("Constant", [], ["c_floats"], name="k2", value_floats=[1.0, 2.0, 3.0]),
        helper.make_node("Constant", [], ["c_int"], name="k3", value_int=-9),
        helper.make_node("Constant", [], ["c_ints"], name="k4", value_ints=[5, 6]),
        helper.make_node("Mul", ["x", "c_float"], ["y"], name="mul"),
    ]
    save(model(nodes, [vi("x", F, [3])], [vi("y", F, [3]), vi("c_ints", TensorProto.INT64, [2])]),
         "constants.onnx")
    nodes = [helper.make_node("Constant", [], ["c"], name="ks", value_string="hi"),
             helper.make_node("Identity", ["x"], ["y"])]
    save(model(nodes, [vi("x", F, [1])], [vi("y", F, [1])]), "constant_string.onnx")

    # Initializer that is also a graph input (IR 8: the fed value wins) ---
    inits = [numpy_helper.from_array(np.array([1, 2, 3], np.float32), "bias"),
             numpy_helper.from_array(np.ones((2, 3), np.float32), "noshape"),
             numpy_helper.from_array(np.array([9], np.float32), "weight")]
    inputs = [vi("x", F, [2, 3]), vi("bias", F, [3]),
              helper.make_value_info("noshape", helper.make_tensor_type_proto(F, None))]
    nodes = [helper.make_node("Add", ["x", "bias"], ["a"]),
             helper.make_node("Add", ["a", "noshape"], ["b"]),
             helper.make_node("Mul", ["b", "weight"], ["y"])]
    save(model(nodes, inputs, [vi("y", F, [2, 3])], inits), "init_as_input.onnx")
    # The same with IR 3, where every initializer had to be listed as input.
    save(model(nodes, inputs, [vi("y", F, [2, 3])], inits, ir_version=3),
         "init_as_input_ir3.onnx")

    # Symbolic input dim --------------------------------------------------
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    save(model(nodes, [vi("x", F, ["N", 3])], [vi("y", F, ["N", 3])]), "symbolic.onnx")
    save(model(nodes, [helper.make_value_info("x", helper.make_tensor_type_proto(F, None))],
               [vi("y", F, None)]), "noshape.onnx")

    # Unsupported ops, all reported together ------------------------------
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="ok"),
        helper.make_node("FancyOp", ["a"], ["b"], name="fancy"),
        helper.make_node("FusedGemm", ["b"], ["c"], name="fused", domain="com.microsoft"),
        helper.make_node("HardSwish", ["c"], ["y"], name="hs"),
    ]
    save(model(nodes, [vi("x", F, [2])], [vi("y", F, [2])],
               opsets=(("", 13), ("com.microsoft", 1))), "unsupported.onnx")
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r", domain="my.domain")]
    save(model(nodes, [vi("x", F, [2])], [vi("y", F, [2])]), "no_opset.onnx")

    # Graph errors --------------------------------------------------------
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="r0"),
             helper.make_node("Add", ["a", "nope"], ["y"], name="add1")]
    save(model(nodes, [vi("x", F, [2])], [vi("y", F, [2])]), "dangling.onnx")
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="r0"),
             helper.make_node("Relu", ["x"], ["y"], name="r1")]
    save(model(nodes, [vi("x", F, [2])], [vi("y", F, [2])]), "dup_output.onnx")
    nodes = [helper.make_node("Add", ["x", "b"], ["a"], name="p"),
             helper.make_node("Relu", ["a"], ["b"], name="q")]
    save(model(nodes, [vi("x", F, [2])], [vi("a", F, [2])]), "cycle.onnx")
    nodes = [helper.make_node("Relu", ["x"], ["y"])]
    save(model(nodes, [vi("x", F, [2])], [vi("zzz", F, [2])]), "bad_output.onnx")
    # Out of order nodes + an omitted optional input/output + attributes.
    nodes = [
        helper.make_node("Relu", ["c"], ["y"], name="late"),
        helper.make_node("Clip", ["x", "", "hi"], ["c"], name="clip"),
        helper.make_node("Dropout", ["x"], ["d", ""], name="drop"),
        helper.make_node("Softmax", ["x"], ["s"], name="sm", axis=-1),
        helper.make_node("Transpose", ["x2"], ["t"], name="tr", perm=[1, 0]),
        helper.make_node("Resize", ["x2", "", "scales"], ["r"], name="rs",
                         mode="nearest", coordinate_transformation_mode="asymmetric"),
        helper.make_node("ConstantOfShape", ["shp"], ["cs"], name="cos",
                         value=typed("v", F, [1], [0.25])),
        helper.make_node("Pad", ["x2", "pads"], ["pd"], name="pad",
                         mode="constant"),
    ]
    inits = [numpy_helper.from_array(np.array(6.0, np.float32), "hi"),
             numpy_helper.from_array(np.array([1, 2], np.float32), "scales"),
             numpy_helper.from_array(np.array([2, 2], np.int64), "shp"),
             numpy_helper.from_array(np.array([0, 0, 1, 1], np.int64), "pads")]
    save(model(nodes, [vi("x", F, [4]), vi("x2", F, [2, 3])],
               [vi("y", F, [4]), vi("d", F, [4])], inits), "order_attrs.onnx")
    # A GRAPH attribute on an op that has none (ignored like any extra attribute).
    body = helper.make_graph([], "body", [], [])
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="withgraph", body=body)]
    save(model(nodes, [vi("x", F, [2])], [vi("y", F, [2])]), "graph_attr.onnx")

    # Subgraphs -----------------------------------------------------------
    # Loop body: nodes out of order ('add2' reads 't' of the later 'mul1'), an
    # initializer and a Constant node, a nested If whose then_branch reads the
    # body's 't' and the graph input 'a' (captured through both levels).
    def sub_vi(n):
        return onnx.ValueInfoProto(name=n)

    def loop_fixture(body, fname):
        m_init = numpy_helper.from_array(np.array(2, np.int64), "M")
        nodes = [helper.make_node("Loop", ["M", "", "x"], ["y"], name="loop", body=body)]
        save(model(nodes, [vi("x", F, [2]), vi("a", F, [2])], [vi("y", F, [2])], [m_init]),
             fname)

    then_g = helper.make_graph([helper.make_node("Add", ["t", "a"], ["th"])], "then_g", [],
                               [sub_vi("th")])
    else_g = helper.make_graph([helper.make_node("Neg", ["x_in"], ["el"])], "else_g", [],
                               [sub_vi("el")])
    body_nodes = [
        helper.make_node("Add", ["t", "k"], ["x_out"], name="add2"),
        helper.make_node("Mul", ["x_in", "kc"], ["t"], name="mul1"),
        helper.make_node("Constant", [], ["kc"], value=numpy_helper.from_array(
            np.array(3, np.float32), "kc")),
        helper.make_node("Identity", ["c_in"], ["c_out"], name="cond"),
        helper.make_node("If", ["c_in"], ["unused"], name="nested", then_branch=then_g,
                         else_branch=else_g),
    ]
    body = helper.make_graph(body_nodes, "loop_body",
                             [vi("i", TensorProto.INT64, []), vi("c_in", TensorProto.BOOL, []),
                              sub_vi("x_in")], [sub_vi("c_out"), sub_vi("x_out")],
                             initializer=[numpy_helper.from_array(np.array(2, np.float32),
                                                                  "k")])
    loop_fixture(body, "subgraph_loop.onnx")

    def bad_body(nodes, fname, inputs=("i", "c_in", "x_in")):
        loop_fixture(helper.make_graph(nodes, "bad_body", [sub_vi(n) for n in inputs],
                                       [sub_vi("c_out"), sub_vi("x_out")]), fname)

    bad_body([helper.make_node("Identity", ["c_in"], ["c_out"]),
              helper.make_node("Add", ["x_in", "nowhere"], ["x_out"])], "subgraph_bad_name.onnx")
    bad_body([helper.make_node("Identity", ["c_in"], ["c_out"]),
              helper.make_node("Neg", ["t"], ["x_out"]),
              helper.make_node("Neg", ["x_out"], ["t"])], "subgraph_cycle.onnx")
    bad_body([helper.make_node("Identity", ["c_in"], ["c_out"]),
              helper.make_node("Neg", ["x_in"], ["x_out"]),
              helper.make_node("Neg", ["x_in"], ["c_in"])], "subgraph_dup.onnx")
    bad_body([helper.make_node("Identity", ["c_in"], ["c_out"]),
              helper.make_node("NotAnOp", ["x_in"], ["x_out"])], "subgraph_bad_op.onnx")

    # Bad tensors ---------------------------------------------------------
    def one_init(t, fname):
        nodes = [helper.make_node("Add", ["x", t.name], ["y"])]
        save(model(nodes, [vi("x", F, [2])], [vi("y", F, [2])], [t]), fname)

    t = numpy_helper.from_array(np.array([1, 2, 3], np.float32), "short")
    t.dims[:] = [4]
    one_init(t, "bad_raw_size.onnx")
    t = typed("neg", F, [2], [1, 2])
    t.dims[:] = [-2]
    one_init(t, "bad_neg_dim.onnx")
    t = typed("huge", F, [2], [1, 2])
    t.dims[:] = [1 << 20, 1 << 20, 1 << 20]
    one_init(t, "bad_huge.onnx")
    t = typed("ovf", F, [2], [1, 2])
    t.dims[:] = [1 << 62, 1 << 62, 4]
    one_init(t, "bad_overflow.onnx")
    t = typed("few", F, [2], [1, 2])
    t.dims[:] = [3]
    one_init(t, "bad_typed_count.onnx")
    one_init(helper.make_tensor("str", TensorProto.STRING, [1], [b"a"]), "bad_string.onnx")
    t = TensorProto(name="bf", data_type=TensorProto.BFLOAT16, dims=[1], raw_data=b"\0\0")
    one_init(t, "bad_bf16.onnx")

    # Truncated file: tensors.onnx cut inside w_raw's bytes ---------------
    data = open(os.path.join(HERE, "tensors.onnx"), "rb").read()
    with open(os.path.join(HERE, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])
    with open(os.path.join(HERE, "garbage.onnx"), "wb") as f:
        f.write(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")

    # External data -------------------------------------------------------
    payload = np.arange(4, dtype=np.float32)
    with open(os.path.join(HERE, "ext_data.bin"), "wb") as f:
        f.write(b"HEADER!!" + payload.tobytes() + b"TAIL")

    def ext_model(location, fname, offset="8", length="16"):
        t = TensorProto(name="w", data_type=F, dims=[4])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", offset), ("length", length)):
            if v is not None:
                e = t.external_data.add()
                e.key, e.value = k, v
        nodes = [helper.make_node("Add", ["x", "w"], ["y"])]
        save(model(nodes, [vi("x", F, [4])], [vi("y", F, [4])], [t]), fname)

    ext_model("ext_data.bin", "ext_good.onnx")
    ext_model("missing.bin", "ext_missing.onnx")
    ext_model("../x", "ext_escape.onnx")
    ext_model("/etc/hostname", "ext_absolute.onnx")
    ext_model("ext_link.bin", "ext_symlink.onnx")
    ext_model("ext_data.bin", "ext_past_end.onnx", offset="20", length="16")
    ext_model("ext_data.bin", "ext_bad_length.onnx", offset="0", length="12")
    link = os.path.join(HERE, "ext_link.bin")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink("../../test.h", link)  # tests/test.h: outside this folder

    # A serialized TensorProto (like ONNX test data input_0.pb) -----------
    t = numpy_helper.from_array(np.array([[1.5, -2], [0, 8]], np.float32), "input")
    with open(os.path.join(HERE, "tensor.pb"), "wb") as f:
        f.write(t.SerializeToString())
    t = typed("ints", TensorProto.INT64, [3], [7, -8, 9])
    with open(os.path.join(HERE, "tensor_i64.pb"), "wb") as f:
        f.write(t.SerializeToString())


if __name__ == "__main__":
    main()
