#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes a Llama-style decoder block (seeded weights) in two spellings, for
bench/run.py and the opset-23 tests (issue 15 item 3):

  llama23   opset 23: RMSNormalization, RotaryEmbedding (half-split) and
            Attention (GQA: 8 query heads, 2 key/value heads, causal)
  llama17   opset 17: the same math in the ops exporters wrote before opset 23
            (Pow/ReduceMean/Add/Sqrt/Reciprocal/Mul RMSNorm, Slice/Neg/Concat
            rotary, Expand for the shared K/V heads, MatMul/Mul/Add/Softmax/
            MatMul attention with a constant causal mask)

Both: x [1, S, D] -> y [1, S, D], S = 64, D = 256, head size 32, SwiGLU MLP
with hidden size 688, pre-norm residuals. The reference output of each is
onnxruntime-node 1.30's (tools/ort, installed by scripts/setup.sh); the script
also checks that the two spellings agree (max |a - b| <= 1e-4 * max |y|).

Usage: make_llama_block.py OUT_DIR   (writes OUT_DIR/manifest.json and one folder
       per model with model.onnx and test_data_set_0/{input,output}_0.pb)
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ORT_RUN = os.path.join(ROOT, "tests", "onnx", "opset_cases", "ort_run.js")
ORT_MODULES = os.path.join(ROOT, "tools", "ort", "node_modules")

S, D, HQ, HKV, DH, FF = 64, 256, 8, 2, 32, 688
EPS = 1e-6


def weights():
    r = np.random.default_rng(23)
    w = lambda *shape: (r.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)
    theta = np.arange(S)[:, None] / (10000.0 ** (np.arange(DH // 2) / (DH // 2)))[None, :]
    return {
        "wq": w(D, HQ * DH), "wk": w(D, HKV * DH), "wv": w(D, HKV * DH), "wo": w(HQ * DH, D),
        "wg": w(D, FF), "wu": w(D, FF), "wd": w(FF, D),
        "n1": (1 + 0.1 * r.standard_normal(D)).astype(np.float32),
        "n2": (1 + 0.1 * r.standard_normal(D)).astype(np.float32),
        "cos": np.cos(theta).astype(np.float32), "sin": np.sin(theta).astype(np.float32),
    }, r.standard_normal((1, S, D)).astype(np.float32)


def n(op, ins, outs, **kw):
    return helper.make_node(op, ins, outs, **kw)


def i64(*v):
    return np.array(v, np.int64)


def heads(prefix, src, h):
    """[1, S, h*DH] -> [1, h, S, DH]."""
    return [n("Reshape", [src, "shape_" + str(h)], [prefix + "_4d"]),
            n("Transpose", [prefix + "_4d"], [prefix], perm=[0, 2, 1, 3])]


def mlp_and_out(attn):
    """attn [1, HQ, S, DH] -> the block output y."""
    return [n("Transpose", [attn], ["a_t"], perm=[0, 2, 1, 3]),
            n("Reshape", ["a_t", "shape_flat"], ["a_f"]),
            n("MatMul", ["a_f", "wo"], ["o"]),
            n("Add", ["x", "o"], ["r"])]


def swiglu(h2):
    return [n("MatMul", [h2, "wg"], ["g"]), n("Sigmoid", ["g"], ["gs"]),
            n("Mul", ["g", "gs"], ["silu"]), n("MatMul", [h2, "wu"], ["u"]),
            n("Mul", ["silu", "u"], ["m"]), n("MatMul", ["m", "wd"], ["f"]),
            n("Add", ["r", "f"], ["y"])]


def common_inits(w):
    return {"wq": w["wq"], "wk": w["wk"], "wv": w["wv"], "wo": w["wo"], "wg": w["wg"],
            "wu": w["wu"], "wd": w["wd"], "n1": w["n1"], "n2": w["n2"],
            "shape_%d" % HQ: i64(1, S, HQ, DH), "shape_%d" % HKV: i64(1, S, HKV, DH),
            "shape_flat": i64(1, S, HQ * DH)}


def llama23(w):
    nodes = [n("RMSNormalization", ["x", "n1"], ["h"], axis=-1, epsilon=EPS),
             n("MatMul", ["h", "wq"], ["q2"]), n("MatMul", ["h", "wk"], ["k2"]),
             n("MatMul", ["h", "wv"], ["v2"])]
    nodes += heads("q0", "q2", HQ) + heads("k0", "k2", HKV) + heads("v", "v2", HKV)
    nodes += [n("RotaryEmbedding", ["q0", "cos", "sin", "pos"], ["q"]),
              n("RotaryEmbedding", ["k0", "cos", "sin", "pos"], ["k"]),
              n("Attention", ["q", "k", "v"], ["attn"], is_causal=1)]
    nodes += mlp_and_out("attn")
    nodes += [n("RMSNormalization", ["r", "n2"], ["h2"], axis=-1, epsilon=EPS)] + swiglu("h2")
    inits = common_inits(w)
    inits.update(cos=w["cos"], sin=w["sin"], pos=i64(*range(S)).reshape(1, S))
    return nodes, inits, 23


def rms17(x, weight, p):
    return [n("Pow", [x, "two"], [p + "_sq"]),
            n("ReduceMean", [p + "_sq"], [p + "_var"], axes=[-1], keepdims=1),
            n("Add", [p + "_var", "eps"], [p + "_ve"]), n("Sqrt", [p + "_ve"], [p + "_std"]),
            n("Reciprocal", [p + "_std"], [p + "_inv"]), n("Mul", [x, p + "_inv"], [p + "_n"]),
            n("Mul", [weight, p + "_n"], [p])]


def rotary17(x, p):
    return [n("Slice", [x, "zero", "half", "minus1"], [p + "_x1"]),
            n("Slice", [x, "half", "full", "minus1"], [p + "_x2"]),
            n("Neg", [p + "_x2"], [p + "_nx2"]),
            n("Concat", [p + "_nx2", p + "_x1"], [p + "_rot"], axis=-1),
            n("Mul", [x, "cos_full"], [p + "_a"]), n("Mul", [p + "_rot", "sin_full"], [p + "_b"]),
            n("Add", [p + "_a", p + "_b"], [p])]


def repeat_kv(x, p):
    return [n("Unsqueeze", [x, "ax2"], [p + "_u"]),
            n("Expand", [p + "_u", "rep_shape"], [p + "_e"]),
            n("Reshape", [p + "_e", "kv_shape"], [p])]


def llama17(w):
    nodes = rms17("x", "n1", "h")
    nodes += [n("MatMul", ["h", "wq"], ["q2"]), n("MatMul", ["h", "wk"], ["k2"]),
              n("MatMul", ["h", "wv"], ["v2"])]
    nodes += heads("q0", "q2", HQ) + heads("k0", "k2", HKV) + heads("v0", "v2", HKV)
    nodes += rotary17("q0", "q") + rotary17("k0", "k1") + repeat_kv("k1", "k") + \
        repeat_kv("v0", "v")
    nodes += [n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), n("MatMul", ["q", "kt"], ["s0"]),
              n("Mul", ["s0", "scale"], ["s1"]), n("Add", ["s1", "causal"], ["s2"]),
              n("Softmax", ["s2"], ["pr"], axis=-1), n("MatMul", ["pr", "v"], ["attn"])]
    nodes += mlp_and_out("attn")
    nodes += rms17("r", "n2", "h2") + swiglu("h2")
    inits = common_inits(w)
    mask = np.triu(np.full((S, S), -np.inf, np.float32), 1)
    inits.update(two=np.array(2.0, np.float32), eps=np.array(EPS, np.float32),
                 zero=i64(0), half=i64(DH // 2), full=i64(DH), minus1=i64(-1),
                 cos_full=np.concatenate([w["cos"], w["cos"]], -1),
                 sin_full=np.concatenate([w["sin"], w["sin"]], -1),
                 ax2=i64(2), rep_shape=i64(1, HKV, HQ // HKV, S, DH), kv_shape=i64(1, HQ, S, DH),
                 scale=np.array(1 / np.sqrt(DH), np.float32), causal=mask)
    return nodes, inits, 17


def macs():
    proj = S * D * (HQ * DH + 2 * HKV * DH) + S * HQ * DH * D
    attn = 2 * HQ * S * S * DH
    mlp = 3 * S * D * FF
    return proj + attn + mlp


def build(name, spec, x):
    nodes, inits, opset = spec
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, S, D])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, S, D])],
                          initializer=[numpy_helper.from_array(a, k) for k, a in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10 if opset >= 21 else 8
    return m


def ort(model_path, x_pb, out_dir):
    env = dict(os.environ, NODE_PATH=ORT_MODULES)
    p = subprocess.run(["node", ORT_RUN, model_path, out_dir, x_pb], env=env,
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("make_llama_block: onnxruntime-node: " + p.stderr.strip())
    t = TensorProto()
    with open(os.path.join(out_dir, "output_0.pb"), "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def main():
    out = sys.argv[1]
    w, x = weights()
    outs = {}
    manifest = {"models": {}}
    for name, spec in (("llama23", llama23(w)), ("llama17", llama17(w))):
        d = os.path.join(out, name, "test_data_set_0")
        os.makedirs(d, exist_ok=True)
        mpath = os.path.join(out, name, "model.onnx")
        onnx.save(build(name, spec, x), mpath)
        xpb = os.path.join(d, "input_0.pb")
        with open(xpb, "wb") as f:
            f.write(numpy_helper.from_array(x, "x").SerializeToString())
        with tempfile.TemporaryDirectory() as tmp:
            y = ort(mpath, xpb, tmp)
        with open(os.path.join(d, "output_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(y, "y").SerializeToString())
        outs[name] = y
        manifest["models"][name] = {"macs": macs(), "opset": spec[2]}
    diff = float(np.abs(outs["llama23"] - outs["llama17"]).max())
    scale = float(np.abs(outs["llama23"]).max())
    if not diff <= 1e-4 * scale:
        sys.exit("make_llama_block: the two spellings disagree: max |a - b| = %g (max |y| %g)"
                 % (diff, scale))
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print("make_llama_block: %s: llama23 and llama17 agree within %.2g (max |y| %.3g)"
          % (out, diff, scale))


if __name__ == "__main__":
    main()
