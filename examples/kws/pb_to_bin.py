#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the raw little-endian bytes of an ONNX TensorProto file (.pb, as in
../shared/models/tiny/*/test_data_set_0) to a .bin file: the data files app.c
reads.

  pb_to_bin.py IN.pb OUT.bin
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

if len(sys.argv) != 3:
    sys.exit(__doc__)
t = onnx.TensorProto()
with open(sys.argv[1], "rb") as f:
    t.ParseFromString(f.read())
a = numpy_helper.to_array(t)
if a.dtype != np.float32:
    sys.exit("pb_to_bin: %s is %s, not float32" % (sys.argv[1], a.dtype))
np.ascontiguousarray(a).astype("<f4").tofile(sys.argv[2])
