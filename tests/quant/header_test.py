#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""NAME.h and --describe show the quantization of integer inputs and outputs.

    header_test.py --mlcc build/mlcc [--model BUILD/quant/squeezenet1_1/int.onnx]

Builds small Q/DQ models with onnx.helper and checks mlcc's header comment
lines and the --describe JSON against the expected text:
  * a per-tensor uint8 input (DequantizeLinear scale 0.25, zero point 3) and a
    uint8 output (QuantizeLinear scale 0.125, zero point 7);
  * a per-axis int8 input (axis 1, scales 0.5/0.25/0.125, zero points 1/2/3);
  * an integer input read by a QLinearConv and its uint8 output;
  * a float model (no quantization text).
With --model (the integer-io squeezenet of tests/quant/run_quant_model.py), the
scale and zero point shown are those of the model's own Q/DQ initializers.
Exit status: 0 pass, 1 fail (an absent --model only skips its own check).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def make(path, nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, "q", inputs, outputs,
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, path)


def compile_header(mlcc, model, work, name):
    lib = os.path.join(work, "lib%s.a" % name)
    js = os.path.join(work, name + ".json")
    p = subprocess.run([mlcc, model, "-o", lib, "--name=" + name, "--describe=" + js],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("mlcc failed on %s: %s" % (model, p.stderr.strip()))
    lines = [ln for ln in open(os.path.join(work, name + ".h")).read().splitlines()
             if ln.startswith("/* input ") or ln.startswith("/* output ")]
    desc = json.load(open(js))
    return lines, desc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("--model", default=None)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="mlcc-qheader-")
    fails = []

    def expect(what, got, want):
        if got != want:
            fails.append("%s:\n  got  %r\n  want %r" % (what, got, want))

    # 1. per tensor
    p1 = os.path.join(work, "pt.onnx")
    make(p1, [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
              helper.make_node("Relu", ["xf"], ["r"]),
              helper.make_node("QuantizeLinear", ["r", "ys", "yz"], ["y"])],
         [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 4])],
         [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 4])],
         {"xs": np.float32(0.25), "xz": np.uint8(3), "ys": np.float32(0.125),
          "yz": np.uint8(7)})
    lines, desc = compile_header(args.mlcc, p1, work, "pt")
    expect("per-tensor header", lines, [
        '/* input  0 "x": uint8 [1,4], quantized: real = (q - 3) * 0.25 */',
        '/* output 0 "y": uint8 [1,4], quantized: real = (q - 7) * 0.125 */'])
    io = [desc["target"]["inputs"], desc["target"]["outputs"]]  # docs/bundle.md layout
    expect("per-tensor describe input", io[0][0].get("quantization"),
           {"scale": 0.25, "zero_point": 3})
    expect("per-tensor describe output", io[1][0].get("quantization"),
           {"scale": 0.125, "zero_point": 7})

    # 2. per axis, int8
    p2 = os.path.join(work, "pa.onnx")
    make(p2, [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["y"], axis=1)],
         [helper.make_tensor_value_info("x", TensorProto.INT8, [2, 3])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
         {"xs": np.array([0.5, 0.25, 0.125], np.float32), "xz": np.array([1, 2, 3], np.int8)})
    lines, desc = compile_header(args.mlcc, p2, work, "pa")
    expect("per-axis header", lines, [
        '/* input  0 "x": int8 [2,3], quantized per axis 1 (3 scales and zero points; '
        'the first: real = (q - 1) * 0.5) */',
        '/* output 0 "y": float32 [2,3] */'])
    ins = desc["target"]["inputs"]
    expect("per-axis describe", ins[0].get("quantization"),
           {"scale": 0.5, "zero_point": 1, "axis": 1, "count": 3})

    # 3. QLinearConv reads the input and writes the output
    p3 = os.path.join(work, "qc.onnx")
    make(p3, [helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"],
                               ["y"])],
         [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 2, 3, 3])],
         [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 1, 3, 3])],
         {"xs": np.float32(0.5), "xz": np.uint8(128), "w": np.ones((1, 2, 1, 1), np.int8),
          "ws": np.float32(0.01), "wz": np.int8(0), "ys": np.float32(0.75),
          "yz": np.uint8(255)})
    lines, _ = compile_header(args.mlcc, p3, work, "qc")
    expect("QLinearConv header", lines, [
        '/* input  0 "x": uint8 [1,2,3,3], quantized: real = (q - 128) * 0.5 */',
        '/* output 0 "y": uint8 [1,1,3,3], quantized: real = (q - 255) * 0.75 */'])

    # 4. float: nothing added
    p4 = os.path.join(work, "fl.onnx")
    make(p4, [helper.make_node("Relu", ["x"], ["y"])],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], {})
    lines, desc = compile_header(args.mlcc, p4, work, "fl")
    expect("float header", lines, ['/* input  0 "x": float32 [2] */',
                                   '/* output 0 "y": float32 [2] */'])
    ins = desc["target"]["inputs"]
    expect("float describe", "quantization" in ins[0], False)

    # 5. the integer-io squeezenet: the model's own parameters
    if args.model and not os.path.exists(args.model):
        print("note: %s absent (shared models or onnxruntime-node missing); its check skipped"
              % args.model)
    elif args.model:
        m = onnx.load(args.model)
        inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
        dq = next(n for n in m.graph.node if n.op_type == "DequantizeLinear" and
                  n.input[0] == m.graph.input[0].name)
        q = next(n for n in m.graph.node if n.output[0] == m.graph.output[0].name)
        lines, _ = compile_header(args.mlcc, args.model, work, "sq")
        want = ['/* input  0 "%s": uint8 [1,3,224,224], quantized: real = (q - %d) * %.9g */' % (
                    m.graph.input[0].name, int(inits[dq.input[2]]), float(inits[dq.input[1]])),
                '/* output 0 "%s": uint8 [1,1000], quantized: real = (q - %d) * %.9g */' % (
                    m.graph.output[0].name, int(inits[q.input[2]]), float(inits[q.input[1]]))]
        expect("integer-io squeezenet header", lines, want)

    for f in fails:
        print("FAIL quant.header: " + f)
    if not fails:
        print("PASS quant.header: header and --describe show scale and zero point")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
