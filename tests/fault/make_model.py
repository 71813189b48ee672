#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
# Writes tests/fault/small.onnx, the model of the allocation-failure sweep:
# a small CNN touching most import and pass paths (initializers in raw and
# typed form, a Constant node, Conv+BatchNormalization folding, fusion of a
# Relu/Add epilogue, a Reshape of a constant shape, Gemm, Softmax, an
# Identity to remove). Deterministic. Run with /usr/bin/python3.
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT
rng = np.random.default_rng(5)


def arr(name, shape):
    return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)


nodes = [
    helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["bn"]),
    helper.make_node("Relu", ["bn"], ["r"]),
    helper.make_node("Constant", [], ["k"], value=helper.make_tensor("k", F, [1], [0.5])),
    helper.make_node("Add", ["r", "k"], ["a"]),
    helper.make_node("MaxPool", ["a"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
    helper.make_node("Identity", ["p"], ["pi"]),
    helper.make_node("Reshape", ["pi", "shape"], ["f"]),
    helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["g"], transB=1),
    helper.make_node("Softmax", ["g"], ["y"], axis=1),
]
inits = [
    arr("w", (4, 2, 3, 3)),
    helper.make_tensor("s", F, [4], [1.0, 0.5, 2.0, 1.5]),
    arr("b", (4,)), arr("m", (4,)),
    helper.make_tensor("v", F, [4], [1.0, 2.0, 0.5, 1.0]),
    numpy_helper.from_array(np.array([1, -1], np.int64), "shape"),
    arr("fc_w", (3, 16)), arr("fc_b", (3,)),
]
g = helper.make_graph(nodes, "small", [helper.make_tensor_value_info("x", F, [1, 2, 4, 4])],
                      [helper.make_tensor_value_info("y", F, [1, 3])], initializer=inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], producer_name="mlcc-fault")
m.ir_version = 8
with open(os.path.join(HERE, "small.onnx"), "wb") as f:
    f.write(m.SerializeToString())
