# SPDX-License-Identifier: Apache-2.0
"""Writes test cases in the ONNX backend-test layout, the one writer of every
case generator (tests/e2e/make_*_cases.py, tests/mcu/make_sum_cases.py,
tests/onnx/opset_cases/make_opset_cases.py):

  CASE_DIR/model.onnx
  CASE_DIR/test_data_set_<k>/input_<i>.pb    graph inputs in order
  CASE_DIR/test_data_set_<k>/output_<i>.pb   references in order

read by tests/e2e/run_case.py (every data set of a case runs against one
compiled library, so data sets whose output shapes differ test the dynamic
shapes too).

Pieces, from the simplest:
  write_case(case_dir, nodes, feeds, outputs, ...)   a one-graph model whose
      input and output types and shapes come from the arrays
  graph(nodes, name, inputs, outputs, inits)   a GraphProto, for a model or for
      the body of an If/Loop/Scan: inputs/outputs are value infos or
      (name, array) pairs, inits arrays or TensorProtos
  value_info(name, elem, shape) / value_info_of(name, array)
  tensor(name, array), external_tensor(folder, name, array, location)
  model(graph, opset, ir_version, opsets=..., functions=...)   a ModelProto
  save_case(case_dir, model, datasets)   model.onnx plus the data sets
  write_data_sets(case_dir, datasets)    the data sets alone

A data set is a (feeds, outputs) pair of [(name, array)] lists. Models are
written with SerializeToString and never passed through onnx.checker: Debian's
onnx 1.12 does not know opsets above 17 or IR versions above 8, and some cases
are meant to be unusual.
"""
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


# ONNX IR 10's 4-bit integers (TensorProto UINT4 = 21, INT4 = 22), which
# Debian's onnx 1.12 and numpy do not know: a case holds them as a
# TensorProto made by subbyte_tensor() (values in an int8/uint8 array, packed
# two per byte, low nibble first, as the IR spec stores them) and
# subbyte_array() reads one back.
UINT4, INT4 = 21, 22
UINT2, INT2 = 25, 26  # IR 11: four per byte, the first in bits 0-1
FLOAT4E2M1 = 23  # IR 11: packed like uint4; a value is its code 0..15 (bit 3 the sign)
SUBBYTE = {UINT4: np.uint8, INT4: np.int8, UINT2: np.uint8, INT2: np.int8,
           FLOAT4E2M1: np.uint8}
SUBBYTE_BITS = {UINT4: 4, INT4: 4, UINT2: 2, INT2: 2, FLOAT4E2M1: 4}


def subbyte_tensor(name, values, elem, int32_data=False):
    """A TensorProto of int4 (|elem| INT4, values -8..7), uint4 (UINT4,
    0..15), int2 (INT2, -2..1), uint2 (UINT2, 0..3) or float4e2m1
    (FLOAT4E2M1, codes 0..15) with the shape of
    |values|: raw_data of ceil(n/2) (ceil(n/4)) bytes, or int32_data (one
    packed byte per value) with |int32_data|."""
    v = np.asarray(values)
    bits = SUBBYTE_BITS[elem]
    per = 8 // bits
    signed = elem in (INT4, INT2)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if v.size and (v.min() < lo or v.max() > hi):
        raise ValueError("%s: values outside [%d, %d]" % (name, lo, hi))
    nib = (v.reshape(-1).astype(np.int64) & ((1 << bits) - 1)).astype(np.uint8)
    if nib.size % per:
        nib = np.append(nib, np.zeros(per - nib.size % per, np.uint8))
    packed = np.zeros(nib.size // per, np.uint8)
    for k in range(per):
        packed |= (nib[k::per] << (k * bits)).astype(np.uint8)
    t = TensorProto(name=name, data_type=elem, dims=list(v.shape))
    if int32_data:
        t.int32_data.extend(int(b) for b in packed)
    else:
        t.raw_data = packed.tobytes()
    return t


def subbyte_array(t):
    """The values of an int4/uint4/int2/uint2 TensorProto |t| as an
    int8/uint8 array."""
    n = int(np.prod(t.dims)) if len(t.dims) else 1
    bits = SUBBYTE_BITS[t.data_type]
    per = 8 // bits
    packed = (np.frombuffer(t.raw_data, np.uint8) if t.raw_data else
              np.array(t.int32_data, np.int64).astype(np.uint8))
    nib = np.empty(packed.size * per, np.int16)
    for k in range(per):
        nib[k::per] = (packed >> (k * bits)) & ((1 << bits) - 1)
    nib = nib[:n]
    if t.data_type in (INT4, INT2):
        nib = np.where(nib >= (1 << (bits - 1)), nib - (1 << bits), nib)
    return nib.astype(SUBBYTE[t.data_type]).reshape(list(t.dims))


def elem_type(dtype):
    """The TensorProto element type of a numpy dtype (KeyError if mlcc's
    cases have no use for it)."""
    return NP2ONNX[np.dtype(dtype)]


def value_info(name, elem=None, shape=None):
    """A ValueInfoProto: typed (elem, shape; shape None = unknown rank) or, with
    elem None, a bare name (a subgraph value whose type the importer infers)."""
    if elem is None:
        return onnx.ValueInfoProto(name=name)
    return helper.make_tensor_value_info(name, elem, shape)


def value_info_of(name, array, shape=True):
    """The value info of |array| (or of a TensorProto): its dtype, and its shape (shape=True), no
    shape (None: the output shape is data-dependent) or the given dims."""
    if isinstance(array, TensorProto):  # e.g. a subbyte_tensor()
        return value_info(name, array.data_type, list(array.dims) if shape is True else shape)
    a = np.asarray(array)
    return value_info(name, elem_type(a.dtype), list(a.shape) if shape is True else shape)


def _as_value_infos(items, shape=True):
    out = []
    for it in items:
        if isinstance(it, onnx.ValueInfoProto):
            out.append(it)
        else:
            name, a = it
            out.append(value_info_of(name, a, shape))
    return out


def tensor(name, array):
    """A TensorProto named |name| holding |array| (a numpy array or scalar, or
    a TensorProto made by hand, e.g. a bfloat16 reference stored as uint16)."""
    if isinstance(array, TensorProto):
        if array.name == name:
            return array
        t = TensorProto()
        t.CopyFrom(array)
        t.name = name
        return t
    return numpy_helper.from_array(np.asarray(array), name)


def external_tensor(folder, name, array, location, offsets=True):
    """A TensorProto named |name| whose bytes (|array|'s, little-endian raw
    data) are written to folder/location and referenced as ONNX external data:
    location, then offset 0 and the length with |offsets| (else location
    alone)."""
    t = tensor(name, array)
    with open(os.path.join(folder, location), "wb") as f:
        f.write(t.raw_data)
    n = len(t.raw_data)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    keys = (("location", location), ("offset", "0"), ("length", str(n))) if offsets else \
        (("location", location),)
    for k, v in keys:
        t.external_data.add(key=k, value=v)
    return t


def graph(nodes, name, inputs, outputs, inits=(), output_shapes=True):
    """A GraphProto. inputs/outputs: ValueInfoProtos or (name, array) pairs
    (typed from the array; output_shapes=False leaves the outputs' shapes
    unknown); inits: TensorProtos or (name, array) pairs."""
    return helper.make_graph(
        list(nodes), name, _as_value_infos(inputs),
        _as_value_infos(outputs, True if output_shapes else None),
        initializer=[t if isinstance(t, TensorProto) else tensor(*t) for t in inits])


def model(g, opset=13, ir_version=8, opsets=None, functions=(), **kw):
    """A ModelProto over graph |g| importing the default domain at |opset|, or
    the (domain, version) pairs |opsets|; |functions| are model-local
    FunctionProtos; keyword arguments go to helper.make_model (producer_name)."""
    imports = [helper.make_opsetid(d, v) for d, v in (opsets or [("", opset)])]
    m = helper.make_model(g, opset_imports=imports, **kw)
    m.ir_version = ir_version
    for f in functions:
        m.functions.append(f)
    return m


def write_data_sets(case_dir, datasets):
    """Writes CASE_DIR/test_data_set_<k>/{input,output}_<i>.pb for each
    (feeds, outputs) pair of |datasets|, each a [(name, array)] list."""
    for k, (feeds, outputs) in enumerate(datasets):
        ds = os.path.join(case_dir, "test_data_set_%d" % k)
        os.makedirs(ds, exist_ok=True)
        for kind, pairs in (("input", feeds), ("output", outputs)):
            for i, (n, a) in enumerate(pairs):
                with open(os.path.join(ds, "%s_%d.pb" % (kind, i)), "wb") as f:
                    f.write(tensor(n, a).SerializeToString())


def save_case(case_dir, m, datasets):
    """Writes CASE_DIR/model.onnx (model |m|, no checker) and |datasets|."""
    os.makedirs(case_dir, exist_ok=True)
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(m.SerializeToString())
    write_data_sets(case_dir, datasets)


def write_case(case_dir, nodes, feeds, outputs, inits=(), opset=13, ir_version=8,
               datasets=None, name=None, output_shapes=True):
    """One graph of |nodes|: feeds [(name, array)] are its inputs (one data
    set), outputs [(name, reference array)] its outputs, inits [(name, array)]
    its initializers. Types and shapes are declared from the arrays (outputs
    without shapes with output_shapes=False). More data sets: |datasets| as
    [(feeds, outputs)], which replaces (feeds, outputs) as the data. The graph
    is named |name| or after the case folder."""
    g = graph(nodes, name or os.path.basename(case_dir), feeds, outputs, inits, output_shapes)
    save_case(case_dir, model(g, opset, ir_version), datasets or [(feeds, outputs)])
