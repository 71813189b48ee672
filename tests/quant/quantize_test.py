#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks scripts/quantize.py: the layout of the models it wrote for the quant.*
tests, and its errors on bad input.

    quantize_test.py --quant-dir BUILD/tests/quant [--models resnet18,...]

Layout, for each <quant-dir>/<model>/{qdq,qop}.onnx present (docs/quantization.md):
  * opset 13, ONNX domain only;
  * every activation QuantizeLinear/DequantizeLinear has a float32 scalar scale
    and a uint8 zero point, and scale = (max - min) / 255 means the zero point
    is in [0, 255] with scale > 0;
  * every weight DequantizeLinear (QDQ) or QLinearConv/QLinearMatMul weight
    (QOperator) is int8 with zero point 0, values in [-127, 127], one scale per
    output channel, and some value at +-127 in each channel whose scale is not 1;
  * every int32 bias has scale x_scale * w_scale[c] (float32) and zero point 0;
  * QDQ: no QuantizeLinear between a Conv and the Relu/Clip it feeds alone;
  * the QDQ and QOperator models share their activation parameters.
Gemm + BatchNormalization folding (quantize.prepare), against float64 numpy.
Errors (no onnxruntime needed): a missing file, a file that is not ONNX, a model
with two inputs, a model with a symbolic input dim exit 1 with a message naming
the problem; no output flag exits 2.
Exit status: 0 pass, 1 fail.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
QUANTIZE = os.path.join(HERE, "..", "..", "scripts", "quantize.py")


def check_layout(path, fails):
    m = onnx.load(path)
    g = m.graph
    name = os.path.relpath(path)
    if [(o.domain, o.version) for o in m.opset_import] != [("", 13)]:
        fails.append("%s: opset imports %s, want ai.onnx 13" % (name, list(m.opset_import)))
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    consumers = {}
    for n in g.node:
        if n.domain not in ("", "ai.onnx"):
            fails.append("%s: node %s has domain %s" % (name, n.name, n.domain))
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    act = {}

    def weight(node, wq, ws, wz, channels_axis):
        q, s, z = inits[wq], inits[ws], inits[wz]
        if q.dtype != np.int8 or z.dtype != np.int8 or np.any(z != 0):
            fails.append("%s: %s: weight %s is %s with zero point %s, want int8 / 0" %
                         (name, node.name, wq, q.dtype, z.reshape(-1)[:3]))
            return
        if q.min() < -127:
            fails.append("%s: %s: weight %s has -128 (symmetric range is [-127, 127])" %
                         (name, node.name, wq))
        if s.size != q.shape[channels_axis]:
            fails.append("%s: %s: %d weight scales for %d channels" %
                         (name, node.name, s.size, q.shape[channels_axis]))
            return
        amax = np.abs(np.moveaxis(q.astype(np.int64), channels_axis, 0).reshape(s.size, -1)).max(1)
        if np.any((amax != 127) & (s != 1.0)):
            fails.append("%s: %s: weight %s: a channel does not reach +-127 (not max|w|/127)" %
                         (name, node.name, wq))

    for n in g.node:
        if n.op_type in ("QuantizeLinear", "DequantizeLinear"):
            s, z = inits.get(n.input[1]), inits.get(n.input[2]) if len(n.input) > 2 else None
            if s is None or z is None:
                fails.append("%s: %s lacks constant scale/zero point" % (name, n.name))
                continue
            if z.dtype == np.uint8:
                if s.dtype != np.float32 or s.ndim != 0 or not s > 0:
                    fails.append("%s: %s: activation scale %r" % (name, n.name, s))
                act.setdefault(n.input[0] if n.op_type == "QuantizeLinear" else n.output[0],
                               (float(s), int(z)))
            elif z.dtype == np.int8 and n.op_type == "DequantizeLinear":
                q = inits.get(n.input[0])
                ax = next((a.i for a in n.attribute if a.name == "axis"), 1)
                if q is None:
                    fails.append("%s: %s: int8 DequantizeLinear of a non-constant" % (name, n.name))
                else:
                    weight(n, n.input[0], n.input[1], n.input[2], ax)
            elif z.dtype == np.int32:
                if np.any(z != 0):
                    fails.append("%s: %s: int32 bias zero point not 0" % (name, n.name))
            else:
                fails.append("%s: %s: zero point dtype %s" % (name, n.name, z.dtype))
        if n.op_type == "QLinearConv":
            weight(n, n.input[3], n.input[4], n.input[5], 0)
            if len(n.input) > 8:
                if inits[n.input[8]].dtype != np.int32:
                    fails.append("%s: %s: bias is not int32" % (name, n.name))
        if n.op_type in ("Conv", "Gemm") and len(n.input) > 2 and n.input[2]:
            # QDQ: bias DQ scale must be x_scale * w_scale
            b = next((p for p in g.node if n.input[2] in p.output), None)
            x = next((p for p in g.node if n.input[0] in p.output), None)
            w = next((p for p in g.node if n.input[1] in p.output), None)
            if b is not None and x is not None and w is not None and \
                    b.op_type == x.op_type == w.op_type == "DequantizeLinear":
                want = (np.float32(inits[x.input[1]]) * inits[w.input[1]]).astype(np.float32)
                got = inits[b.input[1]]
                if got.shape != want.shape or not np.array_equal(got, want):
                    fails.append("%s: %s: bias scale is not x_scale * w_scale" % (name, n.name))
        if n.op_type in ("Conv", "Gemm", "MatMul", "Add"):
            cs = consumers.get(n.output[0], [])
            if len(cs) == 1 and cs[0].op_type == "QuantizeLinear":
                # fine unless a Relu/Clip follows the DequantizeLinear alone
                dq = consumers.get(cs[0].output[0], [])
                nxt = consumers.get(dq[0].output[0], []) if len(dq) == 1 else []
                if len(nxt) == 1 and nxt[0].op_type in ("Relu", "Clip"):
                    fails.append("%s: Q/DQ between %s and its activation %s" %
                                 (name, n.name, nxt[0].name))
    return act


def check_gemm_batchnorm_fold(fails):
    """quantize.prepare folds a BatchNormalization fed only by a Gemm into it
    (transB 0 and 1, alpha and beta not 1, C of shape [M] and [1, M], none);
    the folded Gemm computes the same as Gemm then BatchNormalization in float64
    (rtol 1e-5); a Gemm whose output has a second reader keeps its
    BatchNormalization."""
    sys.path.insert(0, os.path.dirname(QUANTIZE))
    import quantize
    rng = np.random.default_rng(7)
    n_rows, k, m = 3, 5, 4
    x = rng.standard_normal((n_rows, k))
    for trans_b, c_shape, alpha, beta in ((1, (m,), 0.5, 2.0), (0, (1, m), 1.0, 1.0),
                                          (1, None, 1.5, 1.0)):
        b = rng.standard_normal((m, k) if trans_b else (k, m))
        c = rng.standard_normal(c_shape) if c_shape else None
        bn = [rng.standard_normal(m), rng.standard_normal(m), rng.standard_normal(m),
              rng.uniform(0.5, 2.0, m)]
        inits = [numpy_helper.from_array(b.astype(np.float32), "B")]
        gemm_in = ["x", "B"]
        if c is not None:
            inits.append(numpy_helper.from_array(c.astype(np.float32), "C"))
            gemm_in.append("C")
        for nm, v in zip(("g", "bb", "mu", "var"), bn):
            inits.append(numpy_helper.from_array(v.astype(np.float32), nm))
        nodes = [helper.make_node("Gemm", gemm_in, ["t"], transB=trans_b, alpha=alpha, beta=beta),
                 helper.make_node("BatchNormalization", ["t", "g", "bb", "mu", "var"], ["u"],
                                  epsilon=1e-3),
                 helper.make_node("Relu", ["u"], ["y"])]
        g = helper.make_graph(nodes, "t", [helper.make_tensor_value_info(
            "x", TensorProto.FLOAT, [n_rows, k])], [helper.make_tensor_value_info(
                "y", TensorProto.FLOAT, [n_rows, m])], inits)
        folded = quantize.prepare(helper.make_model(g))
        ops = [nd.op_type for nd in folded.graph.node]
        what = "Gemm+BatchNormalization fold (transB %d, C %s)" % (trans_b, c_shape)
        if ops != ["Gemm", "Relu"]:
            fails.append("%s: ops %s, want ['Gemm', 'Relu']" % (what, ops))
            continue
        f = {i.name: numpy_helper.to_array(i).astype(np.float64) for i in folded.graph.initializer}
        gm = folded.graph.node[0]
        fb = f[gm.input[1]]
        got = np.maximum(x @ (fb.T if trans_b else fb) + f[gm.input[2]].reshape(1, m), 0)
        b32 = b.astype(np.float32).astype(np.float64)
        t = alpha * (x @ (b32.T if trans_b else b32))
        if c is not None:
            t = t + beta * c.astype(np.float32).astype(np.float64).reshape(1, m)
        g32, bb32, mu32, var32 = (v.astype(np.float32).astype(np.float64) for v in bn)
        want = np.maximum((t - mu32) * g32 / np.sqrt(var32 + 1e-3) + bb32, 0)
        if not np.allclose(got, want, rtol=1e-5, atol=1e-6):
            fails.append("%s: max abs diff %g" % (what, np.abs(got - want).max()))
    nodes = [helper.make_node("Gemm", ["x", "B"], ["t"], transB=1),
             helper.make_node("BatchNormalization", ["t", "g", "bb", "mu", "var"], ["u"]),
             helper.make_node("Add", ["u", "t"], ["y"])]
    inits = [numpy_helper.from_array(np.ones((m, k), np.float32), "B")] + [
        numpy_helper.from_array(np.ones(m, np.float32), nm) for nm in ("g", "bb", "mu", "var")]
    g = helper.make_graph(nodes, "t", [helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, [n_rows, k])], [helper.make_tensor_value_info(
            "y", TensorProto.FLOAT, [n_rows, m])], inits)
    ops = [nd.op_type for nd in quantize.prepare(helper.make_model(g)).graph.node]
    if ops != ["Gemm", "BatchNormalization", "Add"]:
        fails.append("Gemm with two readers: ops %s, want the BatchNormalization kept" % ops)


def run_quantize(args, expect_rc, expect_text, fails, what):
    p = subprocess.run([sys.executable, QUANTIZE] + args, capture_output=True, text=True)
    if p.returncode != expect_rc or expect_text not in p.stderr:
        fails.append("%s: exit %d (want %d), stderr %r (want it to contain %r)" % (
            what, p.returncode, expect_rc, p.stderr.strip()[-300:], expect_text))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quant-dir", required=True)
    ap.add_argument("--models", default="resnet18,mobilenet_v2,squeezenet1_1,detector,transformer")
    ap.add_argument("--ort-dir", default=None)
    args = ap.parse_args()
    fails = []
    checked = 0
    for m in args.models.split(","):
        d = os.path.join(args.quant_dir, m)
        if not os.path.exists(os.path.join(d, "qdq.onnx")):
            continue
        a = check_layout(os.path.join(d, "qdq.onnx"), fails)
        b = check_layout(os.path.join(d, "qop.onnx"), fails)
        shared = set(a) & set(b)
        diff = [t for t in shared if a[t] != b[t]]
        if not shared or diff:
            fails.append("%s: QDQ and QOperator parameters differ for %s" % (m, diff[:3]))
        checked += 1

    check_gemm_batchnorm_fold(fails)
    work = tempfile.mkdtemp(prefix="mlcc-qtest-")
    out = os.path.join(work, "o.onnx")
    ort = ["--ort-dir", args.ort_dir] if args.ort_dir else []
    garbage = os.path.join(work, "garbage.onnx")
    with open(garbage, "wb") as f:
        f.write(b"\xff\xff\xff\xffnot a model")
    two = os.path.join(work, "two.onnx")
    g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "t",
                          [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in "ab"],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), two)
    sym = os.path.join(work, "sym.onnx")
    g = helper.make_graph([helper.make_node("Relu", ["a"], ["y"])], "t",
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N", 2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), sym)
    have_ort = os.path.isdir(os.path.join(args.ort_dir or os.path.join(HERE, "..", "..", "tools",
                                                                       "ort"),
                                          "node_modules", "onnxruntime-node"))
    run_quantize([two, "--qdq", out] + ort, 1, "one input" if have_ort else "onnxruntime-node",
                 fails, "two inputs")
    if have_ort:
        run_quantize([os.path.join(work, "missing.onnx"), "--qdq", out] + ort, 1, "missing.onnx",
                     fails, "missing file")
        run_quantize([garbage, "--qdq", out] + ort, 1, "not an ONNX model", fails, "garbage")
        run_quantize([sym, "--qdq", out, "--calib-random", "1"] + ort, 1, "static shape", fails,
                     "symbolic dim")
    run_quantize([two], 2, "at least one of", fails, "no output flag")
    for f in fails:
        print("FAIL quant.quantize: " + f)
    if not fails:
        print("PASS quant.quantize: layout of %d quantized models, Gemm + BatchNormalization "
              "fold, error handling" % checked)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
