#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes small Conv test cases (ONNX backend-test layout) with numpy references.

They cover the AVX-512 Conv kernels (vectorized over output channels and over
pixels), the depthwise kernel (cases h-l, group == C == M), their packed and
unpacked weight paths and fused epilogues: stride 2,
dilation 2, uneven pads, non-square kernels, batch 2, no bias, weights as a
graph input, fused Relu and residual Add, and (case n) the channel-vector
kernel's prefetch of the next weight block. Usage: make_conv_cases.py OUT_DIR
"""
import os
import sys

import numpy as np
from onnx import helper, numpy_helper, TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_case  # noqa: E402

def conv_ref(x, w, b, kk, s, pads, d, group=1):
    N, C, H, W = x.shape; M = w.shape[0]
    if group > 1:
        cg, mg = C // group, M // group
        return np.concatenate([conv_ref(x[:, i*cg:(i+1)*cg], w[i*mg:(i+1)*mg], None if b is None else b[i*mg:(i+1)*mg], kk, s, pads, d)
                               for i in range(group)], axis=1)
    xp = np.pad(x, ((0,0),(0,0),(pads[0],pads[2]),(pads[1],pads[3]))).astype(np.float64)
    oh = (H + pads[0] + pads[2] - d*(kk[0]-1) - 1)//s + 1
    ow = (W + pads[1] + pads[3] - d*(kk[1]-1) - 1)//s + 1
    y = np.zeros((N, M, oh, ow))
    for i in range(kk[0]):
        for j in range(kk[1]):
            patch = xp[:, :, i*d:i*d+s*(oh-1)+1:s, j*d:j*d+s*(ow-1)+1:s]
            y += np.einsum('nchw,mc->nmhw', patch, w[:, :, i, j].astype(np.float64))
    if b is not None: y += b[None, :, None, None]
    return y
rng = np.random.default_rng(1)
cases = [
 # name, N,C,H,W, M, k, s, p, d, bias, winit, post
 ("a", 1, 32, 7, 7, 64, 3, 1, 1, 1, True, True, "relu"),
 ("b", 2, 16, 14, 14, 32, 3, 2, 1, 1, False, True, "add"),
 ("c", 1, 8, 9, 5, 48, 3, 1, (2,0,1,1), 2, True, True, None),
 ("d", 1, 16, 6, 6, 16, (1,3), 1, 0, 1, True, False, None),
 ("e", 1, 24, 12, 12, 32, 1, 2, 0, 1, True, True, "relu"),
 ("f", 1, 5, 8, 8, 64, 5, 2, 2, 1, True, True, None),
 ("g", 1, 16, 3, 4, 32, 3, 1, 1, 1, True, True, None),
]
cases = [c + (1,) for c in cases] + [
 # depthwise (group == C == M): edge tiles, partial tiles, strides 2 and 3, dilation
 ("h", 1, 24, 14, 14, 24, 3, 1, 1, 1, True, True, "relu", 24),
 ("i", 2, 16, 15, 17, 16, 3, 2, 1, 1, False, True, None, 16),
 ("j", 1, 8, 23, 40, 8, 5, 1, 2, 1, True, True, "add", 8),
 ("k", 1, 12, 20, 37, 12, 3, 3, 0, 1, True, True, None, 12),
 ("l", 1, 10, 9, 9, 10, 3, 1, 2, 2, True, False, "relu", 10),
 ("m", 2, 6, 9, 1, 6, (3, 1), 1, (1, 0, 1, 0), 1, True, True, "add", 6),
] + [
 # channel-vector kernel with blocks of 147 KB of packed weights (128 x 9 x 32 floats) and
 # 7 rows per unit: it prefetches the next block's weights (resnet18 layer4, scaled down)
 ("n", 1, 128, 7, 7, 512, 3, 1, 1, 1, True, True, "add", 1),
]
for name, N, C, H, W, M, k, s, p, d, bias, winit, post, group in cases:
    kk = k if isinstance(k, tuple) else (k, k)
    pads = list(p) if isinstance(p, tuple) else [p]*4
    x = rng.standard_normal((N, C, H, W)).astype(np.float32)
    w = rng.standard_normal((M, C // group) + kk).astype(np.float32)
    if name == "n":
        # 1152-term dot products: unit-variance outputs keep float32's rounding
        # within the elementwise tolerance (atol 1e-5) near zero.
        w = (w / np.sqrt(C * kk[0] * kk[1])).astype(np.float32)
    b = rng.standard_normal((M,)).astype(np.float32)
    inits, inputs = [], [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)]
    feeds = {"x": x}
    if winit: inits.append(numpy_helper.from_array(w, "w"))
    else:
        inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, w.shape)); feeds["w"] = w
    ins = ["x", "w"]
    if bias: inits.append(numpy_helper.from_array(b, "b")); ins.append("b")
    nodes = [helper.make_node("Conv", ins, ["c"], kernel_shape=list(kk), strides=[s, s], pads=pads, dilations=[d, d], group=group)]
    oh = (H + pads[0] + pads[2] - d*(kk[0]-1) - 1)//s + 1
    ow = (W + pads[1] + pads[3] - d*(kk[1]-1) - 1)//s + 1
    out = "c"
    if post == "relu": nodes.append(helper.make_node("Relu", ["c"], ["y"])); out = "y"
    if post == "add":
        r = rng.standard_normal((N, M, oh, ow)).astype(np.float32)
        inits.append(numpy_helper.from_array(r, "r")); nodes.append(helper.make_node("Add", ["c", "r"], ["y"])); out = "y"
    g = helper.make_graph(nodes, name, inputs, [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], inits)
    m = onnx_case.model(g, opset=13, ir_version=7)
    ref = conv_ref(x, w, b if bias else None, kk, s, pads, d, group)
    if post == "relu": ref = np.maximum(ref, 0)
    if post == "add": ref = ref + r
    ref = ref.astype(np.float32)
    onnx_case.save_case(os.path.join(sys.argv[1], "conv_" + name), m,
                        [(list(feeds.items()), [(out, ref)])])
    print(name, ref.shape)
