# SPDX-License-Identifier: Apache-2.0
"""Writes one test case in the ONNX backend-test layout, for the generators
tests/e2e/make_*_cases.py: CASE_DIR/model.onnx and CASE_DIR/test_data_set_0/
input_<i>.pb (graph inputs in order) and output_<i>.pb (references in order),
read by tests/e2e/run_case.py."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

NP2ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
           np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(np.int32): TensorProto.INT32,
           np.dtype(np.int64): TensorProto.INT64, np.dtype(np.bool_): TensorProto.BOOL,
           np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int8): TensorProto.INT8,
           np.dtype(np.uint16): TensorProto.UINT16, np.dtype(np.int16): TensorProto.INT16,
           np.dtype(np.uint32): TensorProto.UINT32, np.dtype(np.uint64): TensorProto.UINT64}


def write_case(case_dir, nodes, feeds, outputs, inits=(), opset=13, ir_version=8):
    """nodes: ONNX NodeProtos; feeds: [(name, array)] graph inputs (one data
    set); outputs: [(name, reference array)]; inits: [(name, array)]
    initializers. Types and shapes are declared from the arrays."""
    os.makedirs(os.path.join(case_dir, "test_data_set_0"), exist_ok=True)
    vi = lambda n, a: helper.make_tensor_value_info(n, NP2ONNX[a.dtype], a.shape)
    g = helper.make_graph(nodes, os.path.basename(case_dir), [vi(n, a) for n, a in feeds],
                          [vi(n, a) for n, a in outputs],
                          initializer=[numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir_version
    onnx.save(m, os.path.join(case_dir, "model.onnx"))
    for kind, pairs in (("input", feeds), ("output", outputs)):
        for i, (n, a) in enumerate(pairs):
            with open(os.path.join(case_dir, "test_data_set_0", "%s_%d.pb" % (kind, i)),
                      "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
