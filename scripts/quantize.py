#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Static post-training quantization of a float32 ONNX model (docs/quantization.md).

    /usr/bin/python3 scripts/quantize.py MODEL.onnx --qdq OUT_QDQ.onnx [--qop OUT_QOP.onnx]
        [--calib FILE.pb ...] [--calib-random N] [--seed S] [--ort-dir tools/ort]
        [--integer-io OUT_INT.onnx]

Calibration runs the float model through onnxruntime-node 1.30 (scripts/setup.sh
installs it into tools/ort) with every float activation tensor added as a graph
output, and records each tensor's min and max (MinMax, like onnxruntime's
default). The calibration inputs are the given TensorProto files (.pb, e.g. the
model's test_data_set_0/input_0.pb) plus N inputs drawn from N(0,1) with a fixed
seed, so the result is deterministic.

Before calibration a BatchNormalization fed only by a Gemm is folded into the
Gemm's weights and bias (fold_gemm_batchnorm), so the Gemm, its Relu and the
tensors between them quantize as one layer (the MLPerf Tiny autoencoder).

Formats written (both opset 13, ONNX domain only; onnx.helper builds them, the
checker is not run):

QDQ (--qdq), the layout of onnxruntime's quantize_static(QuantFormat.QDQ):
  * activations uint8, asymmetric, per tensor: the range is widened to contain 0,
    scale = (max - min) / 255, zero point = round(-min / scale);
  * Conv / Gemm / MatMul weights int8, symmetric, per output channel
    (DequantizeLinear with axis; scale = max|w| / 127, zero point 0, values in
    [-127, 127]);
  * Conv / Gemm biases int32 with scale = x_scale * w_scale[c], zero point 0;
  * a Relu or Clip that is the only consumer of a Conv/Gemm/MatMul/Add output is
    fused: no Q/DQ between them, the Q/DQ pair follows the activation;
  * MaxPool, Flatten, Reshape, Transpose and Resize reuse their input's scale and
    zero point (pure data movement);
  * tensors read by ops outside the quantizable set (QUANT_OPS) stay float.
QOperator (--qop), the same quantization parameters with ONNX-domain ops only:
  * Conv (+ fused Relu/Clip, which the output's saturation at zero point 0
    implements) -> QLinearConv with per-channel int8 weights and int32 bias;
  * Gemm -> Reshape of A to [M,K,1,1] + QLinearConv 1x1 (weight [N,K,1,1]) +
    Reshape to [M,N] (keeps the int32 bias exact; QLinearMatMul has no bias input
    and QGemm is com.microsoft);
  * MatMul -> QLinearMatMul (per-column int8 weights for a constant B);
  * MaxPool, Flatten, Reshape, Transpose run on the uint8 tensor directly;
  * every other quantized op (Add, Mul, Sigmoid, Concat, GlobalAveragePool,
    Resize, ...: their QLinear forms are com.microsoft) stays
    DequantizeLinear -> float op -> QuantizeLinear; so does a Conv/Gemm whose
    fused Clip is not implied by the output's saturation (bounds other than
    [0, >= 255 * scale]), with its float weights.
Both formats compute the same function in exact arithmetic.

--integer-io writes a QDQ variant whose graph input and output are the uint8
tensors themselves (the first QuantizeLinear and the last DequantizeLinear are
removed), for callers that quantize at the edges; mlcc's header and
--describe manifest then show each integer input's/output's scale and zero point.

Exit status: 0 ok, 1 the model cannot be quantized (message on stderr), 2 usage.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ORT_RUNNER = os.path.join(ROOT, "tests", "quant", "ort_quant_run.js")

# Ops whose float activation inputs and outputs are quantized.
QUANT_OPS = {"Conv", "Gemm", "MatMul", "Add", "Mul", "Relu", "Clip", "Sigmoid", "MaxPool",
             "GlobalAveragePool", "AveragePool", "Concat", "Resize", "Flatten", "Reshape",
             "Transpose"}
# Output reuses input 0's quantization parameters.
SAME_AS_INPUT = {"MaxPool", "Flatten", "Reshape", "Transpose", "Resize"}
# Run on the uint8 tensor in the QOperator variant (ONNX allows uint8 for them).
QOP_INTEGER = {"MaxPool", "Flatten", "Reshape", "Transpose"}
FUSED_ACT = {"Relu", "Clip"}
FUSE_PRODUCERS = {"Conv", "Gemm", "MatMul", "Add"}


class QuantizeError(Exception):
    pass


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def prepare(model):
    """Returns a copy with Constant nodes turned into initializers and Identity of
    an initializer removed (consumers read the initializer), so that weights are
    initializers wherever they are read."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    alias = {}
    keep = []
    for n in g.node:
        ins = [alias.get(i, i) for i in n.input]
        del n.input[:]
        n.input.extend(ins)
        if n.op_type == "Constant" and attr(n, "value") is not None:
            t = onnx.TensorProto()
            t.CopyFrom(attr(n, "value"))
            t.name = n.output[0]
            g.initializer.append(t)
            inits[t.name] = t
            continue
        if n.op_type == "Identity" and n.input[0] in inits and \
                n.output[0] not in {o.name for o in g.output}:
            alias[n.output[0]] = n.input[0]
            continue
        keep.append(n)
    del g.node[:]
    g.node.extend(keep)
    fold_gemm_batchnorm(m)
    return m


def fold_gemm_batchnorm(model):
    """Folds a BatchNormalization (ONNX BatchNormalization, opset 9-15, inference
    form: one output) that is the only consumer of a Gemm's 2-D output into the
    Gemm, in place, as onnxruntime's quantization pre-processing does for
    Conv + BatchNormalization: the Gemm [N, M] output's channel axis is 1, so with
    s = scale / sqrt(var + epsilon) the Gemm becomes alpha' = 1, beta' = 1,
    op(B)' = alpha * op(B) * s (per output column m) and C' = s * (beta * C - mean)
    + bias (float64 arithmetic, stored as float32). Only a Gemm with constant B and
    a constant C of shape [M] or [1, M] (or none), and a BatchNormalization with
    constant parameters of shape [M], is folded; anything else is left as it is.
    Without the fold the BatchNormalization between Gemm and Relu stays float
    (the quantized Gemm could not fuse its Relu, and the float tensors cost RAM)."""
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    outputs = {o.name for o in g.output}
    users = {}
    for n in g.node:
        for x in n.input:
            users.setdefault(x, []).append(n)
    drop = set()
    for n in g.node:
        if n.op_type != "Gemm" or n.output[0] in outputs or len(users.get(n.output[0], [])) != 1:
            continue
        bn = users[n.output[0]][0]
        if bn.op_type != "BatchNormalization" or len(bn.output) != 1 or bn.input[0] != n.output[0]:
            continue
        if attr(n, "transA", 0) or len(n.input) < 2 or n.input[1] not in inits:
            continue
        if any(x not in inits for x in bn.input[1:5]):
            continue
        b = numpy_helper.to_array(inits[n.input[1]]).astype(np.float64)
        if b.ndim != 2:
            continue
        trans_b = attr(n, "transB", 0)
        m_dim = b.shape[0] if trans_b else b.shape[1]
        gamma, beta_bn, mean, var = (numpy_helper.to_array(inits[x]).astype(np.float64)
                                     for x in bn.input[1:5])
        if any(p.shape != (m_dim,) for p in (gamma, beta_bn, mean, var)):
            continue
        c = np.zeros(m_dim)
        if len(n.input) > 2 and n.input[2]:
            if n.input[2] not in inits:
                continue
            c = numpy_helper.to_array(inits[n.input[2]]).astype(np.float64)
            if c.shape not in ((m_dim,), (1, m_dim)):
                continue
            c = c.reshape(m_dim)
        alpha = attr(n, "alpha", 1.0)
        beta = attr(n, "beta", 1.0)
        s = gamma / np.sqrt(var + attr(bn, "epsilon", 1e-5))
        b = b * alpha * (s[:, None] if trans_b else s[None, :])
        c = s * (beta * c - mean) + beta_bn
        b_name = n.output[0] + "_bn_folded_B"
        c_name = n.output[0] + "_bn_folded_C"
        g.initializer.append(numpy_helper.from_array(b.astype(np.float32), b_name))
        g.initializer.append(numpy_helper.from_array(c.astype(np.float32), c_name))
        a_name = n.input[0]
        del n.input[:]
        n.input.extend([a_name, b_name, c_name])
        kept = [a for a in n.attribute if a.name not in ("alpha", "beta")]
        del n.attribute[:]
        n.attribute.extend(kept)
        n.output[0] = bn.output[0]
        drop.add(id(bn))
    if drop:
        keep = [n for n in g.node if id(n) not in drop]
        del g.node[:]
        g.node.extend(keep)
        used = {x for n in g.node for x in n.input} | {i.name for i in g.input}
        live = [i for i in g.initializer if i.name in used]
        del g.initializer[:]
        g.initializer.extend(live)


def analyse(model):
    """Returns (float activation tensor names in topological order, consumers map)."""
    g = model.graph
    inferred = shape_inference.infer_shapes(model)
    types = {}
    for vi in list(inferred.graph.value_info) + list(g.input) + list(g.output):
        types[vi.name] = vi.type.tensor_type.elem_type
    consts = {i.name for i in g.initializer}
    acts = []
    for i in g.input:
        if i.name not in consts and types.get(i.name) == TensorProto.FLOAT:
            acts.append(i.name)
    for n in g.node:
        if n.op_type == "Shape" or all((not x) or x in consts for x in n.input):
            consts.update(n.output)
            continue
        for o in n.output:
            if types.get(o) == TensorProto.FLOAT:
                acts.append(o)
    consumers = {}
    for n in g.node:
        for x in n.input:
            consumers.setdefault(x, []).append(n)
    return acts, consumers, consts


def calibrate(model, acts, inputs, ort_dir, work):
    """Runs |model| with every tensor of |acts| as an output on each input dict
    (name -> float32 array); returns name -> (min, max)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for a in acts:
        if a not in have:
            m.graph.output.append(helper.make_tensor_value_info(a, TensorProto.FLOAT, None))
    path = os.path.join(work, "calib.onnx")
    onnx.save(m, path)
    ranges = {}
    for k, feed in enumerate(inputs):
        outs = ort_run(path, feed, ort_dir, os.path.join(work, "calib%d" % k))
        for name, arr in outs.items():
            if name in acts:
                lo, hi = float(arr.min()), float(arr.max())
                if name in ranges:
                    lo, hi = min(lo, ranges[name][0]), max(hi, ranges[name][1])
                ranges[name] = (lo, hi)
    return ranges


def ort_run(model_path, feed, ort_dir, out_dir, threads=1, opt="disabled", precision=None):
    """Runs onnxruntime-node through tests/quant/ort_quant_run.js; returns a
    dict output name -> numpy array."""
    os.makedirs(out_dir, exist_ok=True)
    args = ["node", ORT_RUNNER, model_path, out_dir, str(threads), opt, precision or "-"]
    for i, (name, arr) in enumerate(feed.items()):
        p = os.path.join(out_dir, "in_%d.bin" % i)
        np.ascontiguousarray(arr).tofile(p)
        with open(p + ".json", "w") as f:
            json.dump({"name": name, "shape": list(arr.shape), "dtype": str(arr.dtype)}, f)
        args.append(p)
    env = dict(os.environ, NODE_PATH=os.path.join(ort_dir, "node_modules"))
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise QuantizeError("onnxruntime-node failed on %s: %s" % (model_path, r.stderr.strip()))
    meta = json.load(open(os.path.join(out_dir, "outputs.json")))
    res = {}
    for i, o in enumerate(meta):
        res[o["name"]] = np.fromfile(os.path.join(out_dir, "out_%d.bin" % i),
                                     dtype=o["dtype"]).reshape(o["dims"])
    return res


def act_params(lo, hi):
    """uint8 asymmetric parameters as onnxruntime's MinMax calibration computes them."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / 255.0)
    if scale == 0:
        scale = np.float32(1.0)
    zp = int(np.clip(np.rint(-lo / float(scale)), 0, 255))
    return scale, np.uint8(zp)


def quantize_weight(w, axis):
    """int8 symmetric per-channel along |axis|: returns (q int8, scale float32[C])."""
    moved = np.moveaxis(w.astype(np.float64), axis, 0).reshape(w.shape[axis], -1)
    amax = np.abs(moved).max(axis=1)
    scale = (amax / 127.0).astype(np.float32)
    scale[scale == 0] = np.float32(1.0)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.rint(w / scale.reshape(shape).astype(np.float64)), -127, 127).astype(np.int8)
    return q, scale


def plan(model, ranges, acts, consumers):
    """Decides which tensors get quantized and with which (scale, zero point)."""
    g = model.graph
    producer = {o: n for n in g.node for o in n.output}
    actset = set(acts)
    quant = set()
    for n in g.node:
        if n.op_type not in QUANT_OPS:
            continue
        for x in n.input:
            if x in actset:
                quant.add(x)
        for o in n.output:
            if o in actset:
                quant.add(o)
    # Fused activation: no Q/DQ between the producer and its only consumer Relu/Clip.
    fused = {}
    for o in list(quant):
        p = producer.get(o)
        cs = consumers.get(o, [])
        if p is not None and p.op_type in FUSE_PRODUCERS and len(cs) == 1 and \
                cs[0].op_type in FUSED_ACT and o not in {x.name for x in g.output}:
            quant.discard(o)
            fused[p.output[0]] = cs[0]
    params = {}
    for name in acts:  # topological: inputs of SAME_AS_INPUT ops come first
        if name not in quant:
            continue
        p = producer.get(name)
        if p is not None and p.op_type in SAME_AS_INPUT and p.input[0] in params:
            params[name] = params[p.input[0]]
            continue
        if name not in ranges:
            raise QuantizeError("no calibration range for tensor '%s'" % name)
        params[name] = act_params(*ranges[name])
    return params, fused


def weight_axis(node, idx, w):
    if node.op_type == "Conv" and idx == 1:
        return 0
    if node.op_type == "Gemm" and idx == 1:
        return 0 if attr(node, "transB", 0) else 1
    if node.op_type == "MatMul" and idx == 1 and w.ndim == 2:
        return 1
    return None


class Builder:
    def __init__(self, model):
        self.model = model
        self.inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
        self.new_inits = []
        self.made = {}
        self.nodes = []

    def const(self, name, arr):
        """Adds initializer |name| once (a second use of a shared weight or of a
        tensor's parameters must have the same value)."""
        arr = np.asarray(arr)
        if name in self.made:
            old = self.made[name]
            if old.dtype != arr.dtype or old.shape != arr.shape or not np.array_equal(old, arr):
                raise QuantizeError("initializer '%s' is needed with two different values "
                                    "(a weight shared by nodes with different input scales?)"
                                    % name)
            return name
        self.made[name] = arr
        self.new_inits.append(numpy_helper.from_array(arr, name))
        return name

    def qparams(self, t, sz):
        s, z = sz
        return (self.const(t + "_scale", np.array(s, dtype=np.float32)),
                self.const(t + "_zero_point", np.array(z, dtype=np.uint8)))

    def weight(self, node, idx, xparams):
        """Quantized weight (and, for Conv/Gemm, bias) of |node|; returns
        (wq name, ws name, wz name, bias name or None, ws array)."""
        wname = node.input[idx]
        w = self.inits[wname]
        axis = weight_axis(node, idx, w)
        q, s = quantize_weight(w, axis)
        wq = self.const(wname + "_quantized", q)
        ws = self.const(wname + "_scale", s)
        wz = self.const(wname + "_zero_point", np.zeros(s.shape, dtype=np.int8))
        bq = None
        bidx = 2
        if node.op_type in ("Conv", "Gemm") and len(node.input) > bidx and node.input[bidx]:
            b = self.inits.get(node.input[bidx])
            if b is None or b.ndim != 1:
                raise QuantizeError("%s '%s': bias must be a 1-D initializer" %
                                    (node.op_type, node.name))
            bs = (np.float32(xparams[0]) * s).astype(np.float32)
            bqv = np.rint(b.astype(np.float64) / bs.astype(np.float64))
            if np.abs(bqv).max(initial=0) > 2**31 - 1:
                raise QuantizeError("%s '%s': bias overflows int32" % (node.op_type, node.name))
            bname = node.input[bidx]
            prev = self.made.get(bname + "_scale")
            if prev is not None and (prev.shape != bs.shape or not np.array_equal(prev, bs)):
                bname = "%s_%s" % (bname, node.name or node.output[0])  # shared bias
            bq = (self.const(bname + "_quantized", bqv.astype(np.int32)),
                  self.const(bname + "_scale", bs),
                  self.const(bname + "_zero_point", np.zeros(bs.shape, dtype=np.int32)))
        return wq, ws, wz, bq, axis

    def add(self, op, ins, outs, name, **attrs):
        self.nodes.append(helper.make_node(op, ins, outs, name=name, **attrs))

    def finish(self, outputs_rename=None):
        g = self.model.graph
        used = set()
        for n in self.nodes:
            used.update(n.input)
        inits = [i for i in g.initializer if i.name in used] + \
                [i for i in self.new_inits if i.name in used]
        graph = helper.make_graph(self.nodes, g.name + "_quantized", list(g.input),
                                  list(g.output), inits)
        m = helper.make_model(graph, producer_name="mlcc scripts/quantize.py",
                              opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 7
        return m


def gemm_weight_ok(node, b):
    return (attr(node, "alpha", 1.0) == 1.0 and attr(node, "beta", 1.0) == 1.0 and
            not attr(node, "transA", 0) and b is not None and b.ndim == 2)


def build_qdq(model, params, fused):
    b = Builder(model)
    outputs = {o.name for o in model.graph.output}
    dq_name = {}  # quantized tensor -> its DequantizeLinear output
    ren = {}      # graph-output tensor -> the name its producer writes
    for t in params:
        if t in outputs:
            ren[t] = t + "_float"
            dq_name[t] = t
        else:
            dq_name[t] = t + "_DequantizeLinear_Output"

    def emit_qdq(t):
        s, z = b.qparams(t, params[t])
        src = ren.get(t, t)
        b.add("QuantizeLinear", [src, s, z], [t + "_QuantizeLinear_Output"], t + "_QuantizeLinear")
        b.add("DequantizeLinear", [t + "_QuantizeLinear_Output", s, z], [dq_name[t]],
              t + "_DequantizeLinear")

    made_dq = set()

    def dq_const(ins, axis):  # one DequantizeLinear per quantized initializer
        base = ins[0][:-len("_quantized")]
        out = base + "_DequantizeLinear_Output"
        if out not in made_dq:
            b.add("DequantizeLinear", ins, [out], base + "_DequantizeLinear", axis=axis)
            made_dq.add(out)
        return out

    for i in model.graph.input:
        if i.name in params:
            emit_qdq(i.name)
    for n in model.graph.node:
        ins = [dq_name.get(x, x) for x in n.input]
        xp = params.get(n.input[0]) if n.input else None
        if n.op_type in ("Conv", "Gemm", "MatMul") and len(n.input) > 1 and \
                n.input[1] in b.inits and xp is not None and \
                (n.op_type != "Gemm" or gemm_weight_ok(n, b.inits[n.input[1]])) and \
                weight_axis(n, 1, b.inits[n.input[1]]) is not None:
            wq, ws, wz, bq, axis = b.weight(n, 1, xp)
            ins[1] = dq_const([wq, ws, wz], axis)
            if bq is not None:
                ins[2] = dq_const(list(bq), 0)
        outs = [ren.get(o, o) for o in n.output]
        node = helper.make_node(n.op_type, ins, outs, name=n.name)
        node.attribute.extend(n.attribute)
        b.nodes.append(node)
        for o in n.output:
            if o in params:
                emit_qdq(o)
    return b.finish()


def build_qop(model, params, fused):
    b = Builder(model)
    outputs = {o.name for o in model.graph.output}
    producer = {o: n for n in model.graph.node for o in n.output}
    skip = set()  # fused activation nodes folded into QLinearConv
    qname = lambda t: t + "_quantized"
    have_q = set()
    dq_done = set()
    fsrc = {t: t + "_float" for t in params if t in outputs}  # float producer's name

    def need_q(t):  # the uint8 tensor of t, quantizing the float one if needed
        if t not in have_q:
            s, z = b.qparams(t, params[t])
            b.add("QuantizeLinear", [fsrc.get(t, t), s, z], [qname(t)], t + "_QuantizeLinear")
            have_q.add(t)
        return qname(t)

    def need_f(t):  # the float (dequantized) tensor of t
        if t in params and t not in dq_done:
            need_q(t)
            s, z = b.qparams(t, params[t])
            out = t if t in outputs else t + "_DequantizeLinear_Output"
            b.add("DequantizeLinear", [qname(t), s, z], [out], t + "_DequantizeLinear")
            dq_done.add(t)
        if t in params:
            return t if t in outputs else t + "_DequantizeLinear_Output"
        return t

    for n in model.graph.node:
        if id(n) in skip:
            continue
        x = n.input[0] if n.input else None
        y = n.output[0] if n.output else None
        act = fused.get(y)
        yq = act.output[0] if act is not None else y
        if n.op_type in ("Conv", "Gemm") and x in params and yq in params and \
                n.input[1] in b.inits and \
                (n.op_type != "Gemm" or gemm_weight_ok(n, b.inits[n.input[1]])) and \
                (act is None or act_is_saturation(act, params[yq], b.inits)):
            xp = params[x]
            wq, ws, wz, bq, axis = b.weight(n, 1, xp)
            xs, xz = b.qparams(x, xp)
            ys, yz = b.qparams(yq, params[yq])
            xin = need_q(x)
            attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            if n.op_type == "Gemm":
                w = b.inits[n.input[1]]
                wv = numpy_helper.to_array(next(i for i in b.new_inits if i.name == wq))
                if not attr(n, "transB", 0):
                    wv = wv.T
                wq = b.const(n.input[1] + "_quantized_nk11",
                             np.ascontiguousarray(wv).reshape(wv.shape[0], wv.shape[1], 1, 1))
                k, nn = wv.shape[1], wv.shape[0]
                shp = b.const(n.name + "_as_nchw", np.array([-1, k, 1, 1], dtype=np.int64))
                b.add("Reshape", [xin, shp], [xin + "_nchw"], n.name + "_reshape_in")
                xin = xin + "_nchw"
                attrs = {}
                outq = qname(yq) + "_nchw"
            else:
                outq = qname(yq)
            ins = [xin, xs, xz, wq, ws, wz, ys, yz] + ([bq[0]] if bq else [])
            b.add("QLinearConv", ins, [outq], n.name + "_quant", **attrs)
            if n.op_type == "Gemm":
                shp2 = b.const(n.name + "_as_nc", np.array([-1, nn], dtype=np.int64))
                b.add("Reshape", [outq, shp2], [qname(yq)], n.name + "_reshape_out")
            have_q.add(yq)
            if act is not None:
                skip.add(id(act))
            continue
        if n.op_type == "MatMul" and x in params and y in params and len(n.input) == 2 and \
                (n.input[1] in params or (n.input[1] in b.inits and
                                          b.inits[n.input[1]].ndim == 2)):
            xs, xz = b.qparams(x, params[x])
            if n.input[1] in params:
                ws, wz = b.qparams(n.input[1], params[n.input[1]])
                wq = need_q(n.input[1])
            else:
                wq, ws, wz, _, _ = b.weight(n, 1, params[x])
            ys, yz = b.qparams(y, params[y])
            b.add("QLinearMatMul", [need_q(x), xs, xz, wq, ws, wz, ys, yz], [qname(y)],
                  n.name + "_quant")
            have_q.add(y)
            continue
        if n.op_type in QOP_INTEGER and x in params and y in params and \
                params[x] == params[y] and len(n.output) == 1:
            ins = [need_q(x)] + list(n.input[1:])
            node = helper.make_node(n.op_type, ins, [qname(y)], name=n.name + "_quant")
            node.attribute.extend(n.attribute)
            b.nodes.append(node)
            have_q.add(y)
            continue
        ins = [need_f(i) if i in params else i for i in n.input]
        node = helper.make_node(n.op_type, ins, [fsrc.get(o, o) for o in n.output], name=n.name)
        node.attribute.extend(n.attribute)
        b.nodes.append(node)
        for o in n.output:
            if o in params:
                need_q(o)
    for o in model.graph.output:
        if o.name in params:
            need_f(o.name)
    return b.finish()


def act_is_saturation(act, yparams, inits):
    """True when the fused Relu/Clip is implied by saturating to the output's
    uint8 range: zero point 0 (lower bound 0) and, for Clip, an upper bound at
    or above 255 * scale."""
    s, z = yparams
    if int(z) != 0:
        return False
    if act.op_type == "Relu":
        return True
    lo = inits.get(act.input[1]) if len(act.input) > 1 and act.input[1] else None
    hi = inits.get(act.input[2]) if len(act.input) > 2 and act.input[2] else None
    lo_v = float(lo) if lo is not None else float(attr(act, "min", -3.4e38))
    hi_v = float(hi) if hi is not None else float(attr(act, "max", 3.4e38))
    return lo_v == 0.0 and hi_v >= 255 * float(s) * (1 - 1e-6)


def integer_io(qdq, params):
    """The QDQ model with uint8 graph input/output: drops the input's
    QuantizeLinear and the output's DequantizeLinear. An output computed by
    float ops after its last DequantizeLinear (a float Softmax) stays float."""
    m = onnx.ModelProto()
    m.CopyFrom(qdq)
    g = m.graph
    ins = {i.name: i for i in g.input}
    outs = {o.name: o for o in g.output}
    keep = []
    ren = {}
    dropped = set()
    for n in g.node:
        if n.op_type == "QuantizeLinear" and n.input[0] in ins:
            ren[n.output[0]] = n.input[0]
            continue
        if n.op_type == "DequantizeLinear" and n.output[0] in outs:
            ren[n.input[0]] = n.output[0]  # the uint8 tensor takes the output's name
            dropped.add(n.output[0])
            continue
        keep.append(n)
    for n in keep:
        for field in (n.input, n.output):
            new = [ren.get(x, x) for x in field]
            del field[:]
            field.extend(new)
    del g.node[:]
    g.node.extend(keep)
    for i in g.input:
        if i.name in params:
            i.type.tensor_type.elem_type = TensorProto.UINT8
    for o in g.output:
        if o.name in dropped:
            o.type.tensor_type.elem_type = TensorProto.UINT8
    return m


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def calibration_inputs(model, pbs, n_random, seed):
    g = model.graph
    inits = {i.name for i in g.initializer}
    feeds = [i for i in g.input if i.name not in inits]
    if len(feeds) != 1:
        raise QuantizeError("calibration needs a model with one input; got %d" % len(feeds))
    shape = [d.dim_value for d in feeds[0].type.tensor_type.shape.dim]
    if any(d <= 0 for d in shape):
        raise QuantizeError("input '%s' needs a static shape; got %s" % (feeds[0].name, shape))
    res = [{feeds[0].name: load_pb(p)[1].astype(np.float32)} for p in pbs]
    rng = np.random.default_rng(seed)
    for _ in range(n_random):
        res.append({feeds[0].name: rng.standard_normal(shape).astype(np.float32)})
    return res


def quantize(model_path, calib_pbs, n_random, seed, ort_dir):
    """Returns (qdq model, qoperator model, params, prepared float model)."""
    try:
        loaded = onnx.load(model_path)
    except OSError:
        raise
    except Exception as e:  # protobuf's DecodeError and friends
        raise QuantizeError("not an ONNX model (%s: %s)" % (type(e).__name__, e))
    model = prepare(loaded)
    acts, consumers, _ = analyse(model)
    inputs = calibration_inputs(model, calib_pbs, n_random, seed)
    if not inputs:
        raise QuantizeError("no calibration input: give --calib FILE.pb or --calib-random N")
    work = tempfile.mkdtemp(prefix="mlcc-quant-")
    try:
        ranges = calibrate(model, acts, inputs, ort_dir, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    params, fused = plan(model, ranges, acts, consumers)
    return build_qdq(model, params, fused), build_qop(model, params, fused), params, model


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("--qdq", help="write the QDQ model here")
    ap.add_argument("--qop", help="write the QOperator model here")
    ap.add_argument("--integer-io", help="write the QDQ model with uint8 input/output here")
    ap.add_argument("--calib", action="append", default=[], help="calibration TensorProto .pb")
    ap.add_argument("--calib-random", type=int, default=0, metavar="N")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ort-dir", default=os.path.join(ROOT, "tools", "ort"))
    ap.add_argument("--params", help="write the activation scales/zero points as JSON here")
    args = ap.parse_args()
    if not (args.qdq or args.qop or args.integer_io):
        ap.error("give at least one of --qdq, --qop, --integer-io")
    if not os.path.isdir(os.path.join(args.ort_dir, "node_modules", "onnxruntime-node")):
        print("quantize.py: onnxruntime-node not found under %s (scripts/setup.sh installs it)"
              % args.ort_dir, file=sys.stderr)
        return 1
    try:
        qdq, qop, params, _ = quantize(args.model, args.calib, args.calib_random, args.seed,
                                       args.ort_dir)
    except (QuantizeError, OSError, onnx.onnx_cpp2py_export.shape_inference.InferenceError) as e:
        print("quantize.py: %s: %s" % (args.model, e), file=sys.stderr)
        return 1
    if args.qdq:
        onnx.save(qdq, args.qdq)
    if args.qop:
        onnx.save(qop, args.qop)
    if args.integer_io:
        onnx.save(integer_io(qdq, params), args.integer_io)
    if args.params:
        with open(args.params, "w") as f:
            json.dump({k: [float(v[0]), int(v[1])] for k, v in params.items()}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
