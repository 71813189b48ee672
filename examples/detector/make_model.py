#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes detector.onnx: a small YOLO-style detector with seeded weights.

Run with Debian's Python (package python3-onnx): /usr/bin/python3 make_model.py
The output is deterministic (numpy seed 0), so re-running it reproduces the
committed file byte for byte.

Graph (opset 13, float32, NCHW), like an exporter would write it:
  input [1,3,128,128]
  stem   Conv 3->16 k3 s2 + BatchNormalization + SiLU (Sigmoid, Mul)   -> 64x64
  stage1 Conv 16->32 k3 s2 + BN + SiLU                                 -> 32x32
  stage2 Conv 32->64 k3 s2 + BN + SiLU                                 -> 16x16  (p3)
  stage3 Conv 64->64 k3 s2 + BN + SiLU, MaxPool k3 s1 p1               -> 8x8    (p4)
  neck   Resize nearest x2 of p4, Concat with p3, Conv 128->64 k1 + BN + SiLU
  head   Conv 64->27 k1 (3 anchors x (4 box + 1 objectness + 4 classes))
         Reshape [1,3,9,16,16], Transpose [1,3,16,16,9], Reshape [1,768,9], Sigmoid
  output [1,768,9]: per box (x, y, w, h, objectness, 4 class scores), all in (0,1)
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(0)
nodes, inits = [], []


def const(name, arr):
    inits.append(numpy_helper.from_array(np.asarray(arr), name))
    return name


def conv_bn_silu(x, cin, cout, k, stride, name):
    fan_in = cin * k * k
    w = rng.normal(0, np.sqrt(2.0 / fan_in), (cout, cin, k, k)).astype(np.float32)
    nodes.append(helper.make_node(
        "Conv", [x, const(name + ".w", w)], [name + ".conv"], name=name + "/Conv",
        kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4))
    scale = rng.uniform(0.5, 1.5, cout).astype(np.float32)
    bias = rng.normal(0, 0.1, cout).astype(np.float32)
    mean = rng.normal(0, 0.2, cout).astype(np.float32)
    var = rng.uniform(0.5, 2.0, cout).astype(np.float32)
    nodes.append(helper.make_node(
        "BatchNormalization",
        [name + ".conv", const(name + ".bn.scale", scale), const(name + ".bn.bias", bias),
         const(name + ".bn.mean", mean), const(name + ".bn.var", var)],
        [name + ".bn"], name=name + "/BatchNormalization", epsilon=1e-5))
    nodes.append(helper.make_node("Sigmoid", [name + ".bn"], [name + ".sig"],
                                  name=name + "/Sigmoid"))
    nodes.append(helper.make_node("Mul", [name + ".bn", name + ".sig"], [name + ".out"],
                                  name=name + "/Mul"))
    return name + ".out"


x = conv_bn_silu("input", 3, 16, 3, 2, "stem")
x = conv_bn_silu(x, 16, 32, 3, 2, "stage1")
p3 = conv_bn_silu(x, 32, 64, 3, 2, "stage2")
x = conv_bn_silu(p3, 64, 64, 3, 2, "stage3")
nodes.append(helper.make_node("MaxPool", [x], ["p4"], name="stage3/MaxPool",
                              kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]))
nodes.append(helper.make_node(
    "Resize", ["p4", "", const("neck.scales", np.array([1, 1, 2, 2], np.float32))], ["up"],
    name="neck/Resize", mode="nearest", coordinate_transformation_mode="asymmetric",
    nearest_mode="floor"))
nodes.append(helper.make_node("Concat", ["up", p3], ["cat"], name="neck/Concat", axis=1))
x = conv_bn_silu("cat", 128, 64, 1, 1, "neck")
wh = rng.normal(0, 0.05, (27, 64, 1, 1)).astype(np.float32)
bh = rng.normal(0, 0.5, 27).astype(np.float32)
nodes.append(helper.make_node("Conv", [x, const("head.w", wh), const("head.b", bh)], ["head"],
                              name="head/Conv", kernel_shape=[1, 1]))
nodes.append(helper.make_node("Reshape", ["head", const("shape5", np.array([1, 3, 9, 16, 16],
                                                                           np.int64))],
                              ["head5"], name="head/Reshape"))
nodes.append(helper.make_node("Transpose", ["head5"], ["headT"], name="head/Transpose",
                              perm=[0, 1, 3, 4, 2]))
nodes.append(helper.make_node("Reshape", ["headT", const("shape3", np.array([1, 768, 9],
                                                                            np.int64))],
                              ["head3"], name="head/Reshape2"))
nodes.append(helper.make_node("Sigmoid", ["head3"], ["output"], name="head/Sigmoid"))

graph = helper.make_graph(
    nodes, "detector",
    [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 128, 128])],
    [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 768, 9])], inits)
model = helper.make_model(graph, producer_name="mlcc-examples",
                          opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 7
onnx.checker.check_model(model)
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "detector.onnx")
onnx.save(model, out)
print("wrote", out, os.path.getsize(out), "bytes")
