#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Model-local functions (FunctionProto, ONNX IR >= 8) and IR versions up to 11
(issue 15 item 2), with numpy references.

  make_function_cases.py OUT_DIR               writes the cases below
  make_function_cases.py OUT_DIR --check-bad MLCC
                                               also compiles the bad models and
                                               checks each exits 1 with its message

Debian's onnx 1.12 knows FunctionProto without attribute_proto (defaults, IR 9)
and NodeProto without overload (IR 10), so those fields are appended as raw
protobuf fields (field numbers from ONNX's onnx.proto) and kept by python's
protobuf as unknown fields.

Cases (each a folder in the ONNX backend-test layout, read by run_case.py):
  fn_attr_default    ScaledRelu(x; alpha) called with alpha=2 and with the
                     function's default alpha=0.5 (attribute_proto)
  fn_nested_opset    Outer calls Inner; the model imports opset 11 (ReduceSum's
                     axes an attribute) and Inner imports 13 (axes an input):
                     each body node binds to its function's opset
  fn_outputs_optional a two-output function whose caller keeps one output, and
                     an omitted optional input (Clip without max)
  fn_overload        two functions 'Act' told apart by overload (IR 10)
  ir11_plain         an IR 11 model
Bad models (OUT_DIR/bad/<name>.onnx) and the message each must give:
  fn_recursive, fn_undeclared_attr, fn_duplicate, ir12
"""
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_case  # noqa: E402

RNG = np.random.default_rng(15)


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def raw_field(number, payload):
    """A length-delimited protobuf field."""
    return varint((number << 3) | 2) + varint(len(payload)) + payload


def with_raw(msg, *fields):
    """|msg| with raw (number, bytes) fields appended, as a message of its type."""
    data = msg.SerializeToString() + b"".join(raw_field(n, p) for n, p in fields)
    out = type(msg)()
    out.ParseFromString(data)
    return out


def function(domain, name, inputs, outputs, nodes, opsets, attributes=(), defaults=(),
             overload=None):
    f = helper.make_function(domain, name, inputs, outputs, nodes,
                             [helper.make_opsetid(d, v) for d, v in opsets], list(attributes))
    raw = [(11, a.SerializeToString()) for a in defaults]  # attribute_proto
    if overload is not None:
        raw.append((13, overload.encode()))
    return with_raw(f, *raw) if raw else f


def model(nodes, inputs, outputs, opsets, functions=(), ir_version=8, inits=()):
    vi = lambda n, a: helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape)
    g = onnx_case.graph(nodes, "g", [vi(n, a) for n, a in inputs], [vi(n, a) for n, a in outputs],
                        inits)
    return onnx_case.model(g, ir_version=ir_version, opsets=opsets, functions=functions)


def save_case(out, name, m, inputs, outputs):
    # no checker: IR 10/11 fields onnx 1.12 lacks
    onnx_case.save_case(os.path.join(out, name), m, [(inputs, outputs)])


def scaled_relu():
    body = [helper.make_node("Constant", [], ["a"], value_float=0.0),
            helper.make_node("Mul", ["x", "a"], ["m"]),
            helper.make_node("Relu", ["m"], ["y"])]
    ref = helper.make_attribute("value_float", 0.0)
    ref.ref_attr_name = "alpha"
    del body[0].attribute[:]
    body[0].attribute.extend([ref])
    return function("local", "ScaledRelu", ["x"], ["y"], body, [("", 17)],
                    defaults=[helper.make_attribute("alpha", 0.5)])


def case_attr_default(out):
    x = RNG.standard_normal((2, 5)).astype(np.float32)
    nodes = [helper.make_node("ScaledRelu", ["x"], ["t"], domain="local", name="call1", alpha=2.0),
             helper.make_node("ScaledRelu", ["t"], ["y"], domain="local", name="call2")]
    y = np.maximum(np.maximum(x * 2.0, 0) * 0.5, 0).astype(np.float32)
    m = model(nodes, [("x", x)], [("y", y)], [("", 17), ("local", 1)], [scaled_relu()], 9)
    save_case(out, "fn_attr_default", m, [("x", x)], [("y", y)])


def case_nested_opset(out):
    inner = function("local", "Inner", ["v"], ["s"],
                     [helper.make_node("Constant", [], ["ax"],
                                       value=numpy_helper.from_array(np.array([1], np.int64))),
                      helper.make_node("ReduceSum", ["v", "ax"], ["s"], keepdims=1)],
                     [("", 13)])
    outer = function("local", "Outer", ["x"], ["y"],
                     [helper.make_node("Inner", ["x"], ["s"], domain="local", name="in"),
                      helper.make_node("Sub", ["x", "s"], ["y"])],
                     [("local", 1)])
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    nodes = [helper.make_node("Outer", ["x"], ["o"], domain="local", name="out"),
             helper.make_node("ReduceSum", ["o"], ["y"], axes=[0], keepdims=0)]  # opset 11
    o = x - x.sum(axis=1, keepdims=True)
    y = o.sum(axis=0).astype(np.float32)
    m = model(nodes, [("x", x)], [("y", y)], [("", 11), ("local", 1)], [inner, outer])
    save_case(out, "fn_nested_opset", m, [("x", x)], [("y", y)])


def case_outputs_optional(out):
    f = function("local", "SumDiffClip", ["a", "b", "lo", "hi"], ["s", "d"],
                 [helper.make_node("Add", ["a", "b"], ["t"]),
                  helper.make_node("Clip", ["t", "lo", "hi"], ["s"]),
                  helper.make_node("Sub", ["a", "b"], ["d"])], [("", 13)])
    a = RNG.standard_normal((6,)).astype(np.float32)
    b = RNG.standard_normal((6,)).astype(np.float32)
    lo = np.array(-0.25, np.float32)
    nodes = [helper.make_node("SumDiffClip", ["a", "b", "lo"], ["y"], domain="local", name="c")]
    y = np.maximum(a + b, lo).astype(np.float32)
    m = model(nodes, [("a", a), ("b", b)], [("y", y)], [("", 13), ("local", 1)], [f],
              inits=[("lo", lo)])
    save_case(out, "fn_outputs_optional", m, [("a", a), ("b", b)], [("y", y)])


def case_overload(out):
    relu = function("local", "Act", ["x"], ["y"], [helper.make_node("Relu", ["x"], ["y"])],
                    [("", 14)], overload="relu")
    neg = function("local", "Act", ["x"], ["y"], [helper.make_node("Neg", ["x"], ["y"])],
                   [("", 14)], overload="neg")
    n1 = with_raw(helper.make_node("Act", ["x"], ["t"], domain="local", name="a"), (8, b"neg"))
    n2 = with_raw(helper.make_node("Act", ["t"], ["y"], domain="local", name="b"), (8, b"relu"))
    x = RNG.standard_normal((7,)).astype(np.float32)
    y = np.maximum(-x, 0).astype(np.float32)
    m = model([n1, n2], [("x", x)], [("y", y)], [("", 14), ("local", 1)], [relu, neg], 10)
    save_case(out, "fn_overload", m, [("x", x)], [("y", y)])


def case_ir11(out):
    x = RNG.standard_normal((4,)).astype(np.float32)
    y = np.tanh(x).astype(np.float32)
    m = model([helper.make_node("Tanh", ["x"], ["y"])], [("x", x)], [("y", y)], [("", 21)],
              ir_version=11)
    save_case(out, "ir11_plain", m, [("x", x)], [("y", y)])


BAD = {}


def bad_models(out):
    d = os.path.join(out, "bad")
    os.makedirs(d, exist_ok=True)
    x = np.zeros((2,), np.float32)

    def put(name, m, message):
        with open(os.path.join(d, name + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())
        BAD[name] = message

    f = function("local", "F", ["x"], ["y"],
                 [helper.make_node("G", ["x"], ["y"], domain="local", name="g")], [("local", 1)])
    g = function("local", "G", ["x"], ["y"],
                 [helper.make_node("F", ["x"], ["y"], domain="local", name="f")], [("local", 1)])
    put("fn_recursive", model([helper.make_node("F", ["x"], ["y"], domain="local", name="top")],
                              [("x", x)], [("y", x)], [("", 17), ("local", 1)], [f, g]),
        "function 'local.F' calls itself: local.F -> local.G -> local.F")
    body = helper.make_node("LeakyRelu", ["x"], ["y"])
    ref = helper.make_attribute("alpha", 0.1)
    ref.ref_attr_name = "slope"
    body.attribute.extend([ref])
    h = function("local", "H", ["x"], ["y"], [body], [("", 17)], attributes=["gain"])
    put("fn_undeclared_attr",
        model([helper.make_node("H", ["x"], ["y"], domain="local", name="top")], [("x", x)],
              [("y", x)], [("", 17), ("local", 1)], [h]),
        "attribute 'alpha' refers to 'slope', which the function does not declare")
    r = function("local", "R", ["x"], ["y"], [helper.make_node("Relu", ["x"], ["y"])], [("", 17)])
    put("fn_duplicate", model([helper.make_node("R", ["x"], ["y"], domain="local", name="top")],
                              [("x", x)], [("y", x)], [("", 17), ("local", 1)], [r, r]),
        "functions #0 and #1 are both 'local.R'")
    put("ir12", model([helper.make_node("Relu", ["x"], ["y"])], [("x", x)], [("y", x)],
                      [("", 21)], ir_version=12),
        "has ONNX IR version 12; mlcc reads IR versions 3 to 11")


def check_bad(out, mlcc):
    failed = 0
    for name, message in sorted(BAD.items()):
        path = os.path.join(out, "bad", name + ".onnx")
        lib = os.path.join(out, "bad", "lib%s.a" % name)
        p = subprocess.run([mlcc, path, "-o", lib], capture_output=True, text=True, timeout=120)
        ok = p.returncode == 1 and message in p.stderr and path in p.stderr and \
            not os.path.exists(lib)
        print("%s %s: exit %d: %s" % ("PASS" if ok else "FAIL", name, p.returncode,
                                      p.stderr.strip()[:400]))
        failed += not ok
    return failed


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for make in (case_attr_default, case_nested_opset, case_outputs_optional, case_overload,
                 case_ir11):
        make(out)
    bad_models(out)
    if len(sys.argv) > 3 and sys.argv[2] == "--check-bad":
        sys.exit(1 if check_bad(out, sys.argv[3]) else 0)


if __name__ == "__main__":
    main()
