#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes test_data_set_0/ for detector.onnx: an input and the output of an
independent numpy implementation of the graph (not mlcc, not onnxruntime).

The layout is the ONNX backend-test one, so tests/e2e/run_case.py can check
the compiled example on every target:  /usr/bin/python3 reference.py
"""
import os

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def conv(x, w, b, stride, pad):
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    cols = np.empty((c, kh, kw, oh, ow), np.float64)
    for i in range(kh):
        for j in range(kw):
            cols[:, i, j] = xp[0, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
    y = w.reshape(m, -1).astype(np.float64) @ cols.reshape(c * kh * kw, -1)
    y = y.reshape(1, m, oh, ow)
    if b is not None:
        y += b.reshape(1, m, 1, 1)
    return y


def main():
    model = onnx.load(os.path.join(HERE, "detector.onnx"))
    env = {t.name: numpy_helper.to_array(t).astype(np.float64)
           if numpy_helper.to_array(t).dtype == np.float32 else numpy_helper.to_array(t)
           for t in model.graph.initializer}
    rng = np.random.default_rng(1)
    x = rng.normal(0, 1, (1, 3, 128, 128)).astype(np.float32)
    env["input"] = x.astype(np.float64)
    for node in model.graph.node:
        a = {at.name: onnx.helper.get_attribute_value(at) for at in node.attribute}
        ins = [env[i] if i else None for i in node.input]
        op = node.op_type
        if op == "Conv":
            k = a["kernel_shape"][0]
            y = conv(ins[0], ins[1], ins[2] if len(ins) > 2 else None,
                     a.get("strides", [1, 1])[0], a.get("pads", [0] * 4)[0])
        elif op == "BatchNormalization":
            xx, s, bb, mean, var = ins
            sh = (1, -1, 1, 1)
            y = (xx - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + a["epsilon"]) \
                * s.reshape(sh) + bb.reshape(sh)
        elif op == "Sigmoid":
            y = 1 / (1 + np.exp(-ins[0]))
        elif op == "Mul":
            y = ins[0] * ins[1]
        elif op == "MaxPool":
            xp = np.pad(ins[0], ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
            h, w = ins[0].shape[2:]
            y = np.full(ins[0].shape, -np.inf)
            for i in range(3):
                for j in range(3):
                    y = np.maximum(y, xp[:, :, i:i + h, j:j + w])
        elif op == "Resize":  # nearest, asymmetric, floor, integer scale 2
            y = ins[0].repeat(2, axis=2).repeat(2, axis=3)
        elif op == "Concat":
            y = np.concatenate(ins, axis=a["axis"])
        elif op == "Reshape":
            y = ins[0].reshape(ins[1])
        elif op == "Transpose":
            y = ins[0].transpose(a["perm"])
        else:
            raise SystemExit("reference.py: no reference for " + op)
        env[node.output[0]] = y
    out = env["output"].astype(np.float32)
    d = os.path.join(HERE, "test_data_set_0")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "input").SerializeToString())
    with open(os.path.join(d, "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(out, "output").SerializeToString())
    print("wrote", d, "output range", float(out.min()), float(out.max()))


if __name__ == "__main__":
    main()
