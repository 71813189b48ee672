#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes two long-sum cases for the microcontroller targets (tests/mcu/tests.cmake,
mcu.sum.<case>.<target>) into OUT_DIR/<case>/{model.onnx,test_data_set_0/}:

  reduce_sum_64k   ReduceSum over 65,536 float32 values (blocked: 256 per block)
  global_avgpool_64k  GlobalAveragePool over a 256x256 plane

The data defeat a plain float32 accumulation of the partial sums: the first
256 values are 65536 (block sum 2^24), the other 65,280 are 1/256 (block sums
1.0). Every partial sum is exact, but 2^24 + 1 rounds back to 2^24 in float32,
so adding the block sums in float loses all 255 (relative error 1.5e-5). The
exact sum 2^24 + 255 is what double accumulation or the compensated float sum
(mlcc_fsum_t, docs/mcu.md) give, within one float32 rounding; the references
are computed in float64 and rounded once.

  make_sum_cases.py OUT_DIR
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import onnx_case  # noqa: E402


def data():
    x = np.full(65536, 1.0 / 256, dtype=np.float32)
    x[:256] = 65536.0
    return x


def write_case(out_dir, name, node, x, y_shape, y):
    graph = onnx_case.graph(
        [node], name, [("x", x)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)])
    onnx_case.save_case(os.path.join(out_dir, name), onnx_case.model(graph, 13, 7),
                        [([("x", x)], [("y", y)])])


def main():
    out_dir = sys.argv[1]
    x = data()
    exact = np.sum(x.astype(np.float64))
    write_case(out_dir, "reduce_sum_64k",
               helper.make_node("ReduceSum", ["x"], ["y"], keepdims=1),  # every axis
               x.reshape(1, 65536), [1, 1], np.array([[exact]], dtype=np.float32))
    write_case(out_dir, "global_avgpool_64k",
               helper.make_node("GlobalAveragePool", ["x"], ["y"]),
               x.reshape(1, 1, 256, 256), [1, 1, 1, 1],
               np.array(exact / 65536, dtype=np.float32).reshape(1, 1, 1, 1))


if __name__ == "__main__":
    main()
