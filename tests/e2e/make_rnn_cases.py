#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes RNN/GRU/LSTM test cases (ONNX backend-test layout) with numpy references.

They cover what the ONNX node tests do not: reverse and bidirectional
directions, sequence_lens fed at run time (shorter rows, a zero-length row),
initial_h/initial_c, peepholes, layout 1, all three outputs, clip,
linear_before_reset, input_forget, non-default activations with
alpha/beta, float64 and float16, opset 7, and sizes long enough for the
vectorized dot products. The reference follows the ONNX spec equations in
float64; sequence_lens semantics as onnxruntime: a row of length L runs steps
[0, L) (reverse: L-1 down to 0), Y is 0 past L, and Y_h/Y_c are the state
after the last step (0 when L == 0). Usage: make_rnn_cases.py OUT_DIR
"""
import os
import sys

import numpy as np
from onnx import helper, TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_case  # noqa: E402

def act(name, x, alpha, beta):
    n = name.lower()
    if n == "relu": return np.maximum(x, 0)
    if n == "tanh": return np.tanh(x)
    if n == "sigmoid": return 1 / (1 + np.exp(-x))
    if n == "affine": return alpha * x + beta
    if n == "leakyrelu": return np.where(x >= 0, x, alpha * x)
    if n == "thresholdedrelu": return np.where(x >= alpha, x, 0)
    if n == "scaledtanh": return alpha * np.tanh(beta * x)
    if n == "hardsigmoid": return np.clip(alpha * x + beta, 0, 1)
    if n == "elu": return np.where(x >= 0, x, alpha * (np.exp(x) - 1))
    if n == "softsign": return x / (1 + np.abs(x))
    if n == "softplus": return np.log1p(np.exp(x))
    raise ValueError(name)

USES = {"affine": (1, 1), "leakyrelu": (1, 0), "thresholdedrelu": (1, 0), "scaledtanh": (1, 1),
        "hardsigmoid": (1, 1), "elu": (1, 0)}
DEFAULTS = {"affine": (1.0, 0.0), "leakyrelu": (0.01, 0.0), "thresholdedrelu": (1.0, 0.0),
            "scaledtanh": (1.0, 1.0), "hardsigmoid": (0.2, 0.5), "elu": (1.0, 0.0)}

def resolve_acts(names, alphas, betas):
    """(name, alpha, beta) per function: alpha/beta consumed in order by the users."""
    out, ia, ib = [], 0, 0
    for nm in names:
        ua, ub = USES.get(nm.lower(), (0, 0))
        a, b = DEFAULTS.get(nm.lower(), (0.0, 0.0))
        if ua and ia < len(alphas): a = alphas[ia]; ia += 1
        if ub and ib < len(betas): b = betas[ib]; ib += 1
        out.append((nm, a, b))
    return out

def reference(op, x, w, r, b, seq_lens, h0, c0, p, hidden, direction, layout, acts, clip, lbr,
              input_forget):
    """Float64 reference of ONNX RNN/GRU/LSTM; returns Y, Y_h, Y_c (layout applied)."""
    G = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    nacts = {"RNN": 1, "GRU": 2, "LSTM": 3}[op]
    D = 2 if direction == "bidirectional" else 1
    x = x.astype(np.float64)
    if layout == 1:
        x = x.transpose(1, 0, 2)
        if h0 is not None: h0 = h0.transpose(1, 0, 2)
        if c0 is not None: c0 = c0.transpose(1, 0, 2)
    S, B, _ = x.shape
    H = hidden
    Y = np.zeros((S, D, B, H)); Yh = np.zeros((D, B, H)); Yc = np.zeros((D, B, H))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip is not None else (lambda v: v)
    for d in range(D):
        f = [lambda v, a=a: act(a[0], v, a[1], a[2]) for a in acts[d * nacts:(d + 1) * nacts]]
        W = w[d].astype(np.float64); R = r[d].astype(np.float64)
        Bd = b[d].astype(np.float64) if b is not None else np.zeros(2 * G * H)
        Wb, Rb = Bd[:G * H], Bd[G * H:]
        P = p[d].astype(np.float64) if p is not None else np.zeros(3 * H)
        rev = direction == "reverse" or d == 1
        for bi in range(B):
            L = S if seq_lens is None else int(min(max(seq_lens[bi], 0), S))
            h = h0[d, bi].astype(np.float64) if h0 is not None else np.zeros(H)
            c = c0[d, bi].astype(np.float64) if c0 is not None else np.zeros(H)
            for s in range(L):
                t = L - 1 - s if rev else s
                xt = x[t, bi]
                gx = W @ xt + Wb
                gh = R @ h
                if op == "RNN":
                    h = f[0](cl(gx + gh + Rb))
                elif op == "GRU":
                    z = f[0](cl(gx[:H] + gh[:H] + Rb[:H]))
                    rg = f[0](cl(gx[H:2 * H] + gh[H:2 * H] + Rb[H:2 * H]))
                    if lbr:
                        hh = f[1](cl(gx[2 * H:] + rg * (gh[2 * H:] + Rb[2 * H:])))
                    else:
                        hh = f[1](cl(gx[2 * H:] + R[2 * H:] @ (rg * h) + Rb[2 * H:]))
                    h = (1 - z) * hh + z * h
                else:
                    a = gx + gh + Rb
                    i = f[0](cl(a[:H] + P[:H] * c))
                    if input_forget:
                        fg = 1 - i
                    else:
                        fg = f[0](cl(a[2 * H:3 * H] + P[2 * H:] * c))
                    cc = f[1](cl(a[3 * H:]))
                    c = fg * c + i * cc
                    o = f[0](cl(a[H:2 * H] + P[H:2 * H] * c))
                    h = o * f[2](c)
                Y[t, d, bi] = h
            Yh[d, bi] = h if L > 0 else 0
            Yc[d, bi] = c if L > 0 else 0
    if layout == 1:
        Y = Y.transpose(2, 0, 1, 3); Yh = Yh.transpose(1, 0, 2); Yc = Yc.transpose(1, 0, 2)
    return Y, Yh, Yc

NP = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.FLOAT16: np.float16}

# name, op, opset, dtype, S, B, I, H, direction, layout, inputs (subset of
# B, seq, h0, c0, P), outputs (subset of Y, Y_h, Y_c), attrs
CASES = [
    ("rnn_bidir_seqlens", "RNN", 14, TensorProto.FLOAT, 5, 3, 19, 21, "bidirectional", 0,
     "B seq h0", "Y Y_h", {}),
    ("rnn_reverse_layout1", "RNN", 14, TensorProto.FLOAT, 4, 2, 3, 5, "reverse", 1,
     "B h0", "Y Y_h", {"activations": ["LeakyRelu"], "activation_alpha": [0.3], "clip": 1.5}),
    ("rnn_opset7_relu", "RNN", 7, TensorProto.FLOAT, 3, 2, 4, 6, "forward", 0,
     "B seq", "Y", {"activations": ["Relu"]}),
    ("gru_bidir_lbr", "GRU", 14, TensorProto.FLOAT, 4, 3, 17, 24, "bidirectional", 0,
     "B seq h0", "Y Y_h", {"linear_before_reset": 1}),
    ("gru_reverse_acts", "GRU", 14, TensorProto.FLOAT, 5, 2, 9, 18, "reverse", 1,
     "B seq h0", "Y Y_h",
     {"activations": ["HardSigmoid", "Softsign"], "activation_alpha": [0.25], "activation_beta": [0.45],
      "clip": 2.0}),
    ("gru_opset7_f64", "GRU", 7, TensorProto.DOUBLE, 3, 2, 5, 4, "forward", 0,
     "B h0", "Y Y_h", {}),
    ("lstm_bidir_full", "LSTM", 14, TensorProto.FLOAT, 5, 3, 20, 16, "bidirectional", 1,
     "B seq h0 c0 P", "Y Y_h Y_c", {}),
    ("lstm_forget_clip", "LSTM", 14, TensorProto.FLOAT, 4, 2, 6, 7, "forward", 0,
     "B seq h0 c0", "Y Y_c", {"input_forget": 1, "clip": 0.8,
                              "activations": ["Sigmoid", "Elu", "ScaledTanh"],
                              "activation_alpha": [0.9, 0.7], "activation_beta": [1.3]}),
    ("lstm_reverse_acts", "LSTM", 14, TensorProto.FLOAT, 3, 2, 5, 4, "reverse", 0,
     "B P", "Y Y_h Y_c", {"activations": ["Affine", "Softplus", "ThresholdedRelu"],
                          "activation_alpha": [0.5, 0.1], "activation_beta": [0.2]}),
    ("lstm_opset7_f64", "LSTM", 7, TensorProto.DOUBLE, 3, 2, 9, 8, "bidirectional", 0,
     "B seq h0 c0 P", "Y Y_h Y_c", {}),
    ("lstm_f16", "LSTM", 14, TensorProto.FLOAT16, 3, 2, 4, 5, "forward", 0,
     "B h0 c0", "Y Y_h Y_c", {}),
    # clip with a NaN input (X[t=1, b=0, i=2], "_nan_x" is not an attribute):
    # np.clip keeps NaN, so batch row 0 is NaN from step 1 on, row 1 finite.
    ("rnn_clip_nan", "RNN", 14, TensorProto.FLOAT, 3, 2, 4, 5, "forward", 0,
     "B h0", "Y Y_h", {"clip": 0.5, "_nan_x": (1, 0, 2)}),
    ("gru_clip_nan", "GRU", 14, TensorProto.FLOAT, 3, 2, 4, 5, "forward", 0,
     "B h0", "Y Y_h", {"clip": 0.5, "_nan_x": (1, 0, 2)}),
    ("lstm_clip_nan", "LSTM", 14, TensorProto.FLOAT, 3, 2, 4, 5, "forward", 0,
     "B h0 c0", "Y Y_h Y_c", {"clip": 0.5, "_nan_x": (1, 0, 2)}),
]

def main():
    out_dir = sys.argv[1]
    rng = np.random.default_rng(7)
    for name, op, opset, et, S, B, I, H, direction, layout, ins, outs, attrs in CASES:
        attrs = dict(attrs)
        nan_x = attrs.pop("_nan_x", None)
        G = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
        nacts = {"RNN": 1, "GRU": 2, "LSTM": 3}[op]
        D = 2 if direction == "bidirectional" else 1
        ins = ins.split(); outs = outs.split()
        npt = NP[et]
        def rnd(*shape, scale=0.5):
            return (rng.standard_normal(shape) * scale).astype(npt)
        x = rnd(*((S, B, I) if layout == 0 else (B, S, I)), scale=1.0)
        if nan_x is not None: x[nan_x] = np.nan
        w = rnd(D, G * H, I, scale=0.4); r = rnd(D, G * H, H, scale=0.4)
        b = rnd(D, 2 * G * H) if "B" in ins else None
        seq = None
        if "seq" in ins:
            seq = rng.integers(1, S + 1, size=B).astype(np.int32); seq[0] = S
            if B > 2: seq[-1] = 0
        st = (D, B, H) if layout == 0 else (B, D, H)
        h0 = rnd(*st) if "h0" in ins else None
        c0 = rnd(*st) if "c0" in ins and op == "LSTM" else None
        p = rnd(D, 3 * H) if "P" in ins and op == "LSTM" else None
        names = attrs.get("activations")
        if names is not None and D == 2: names = names * 2
        default = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}[op]
        acts = resolve_acts(names or default * D, attrs.get("activation_alpha", []),
                            attrs.get("activation_beta", []))
        Y, Yh, Yc = reference(op, x, w, r, b, seq, h0, c0, p, H, direction, layout, acts,
                              attrs.get("clip"), attrs.get("linear_before_reset", 0),
                              attrs.get("input_forget", 0))
        node_attrs = dict(attrs)
        if names is not None: node_attrs["activations"] = names
        node_attrs["hidden_size"] = H
        if direction != "forward": node_attrs["direction"] = direction
        if layout: node_attrs["layout"] = layout
        slots = [("X", x), ("W", w), ("R", r), ("B", b), ("sequence_lens", seq), ("initial_h", h0)]
        if op == "LSTM": slots += [("initial_c", c0), ("P", p)]
        while slots[-1][1] is None: slots.pop()
        node_in = [n if v is not None else "" for n, v in slots]
        feeds = [(n, v) for n, v in slots if v is not None]
        all_outs = [("Y", Y), ("Y_h", Yh), ("Y_c", Yc)][:2 if op != "LSTM" else 3]
        node_out = [n if n in outs else "" for n, _ in all_outs]
        while node_out[-1] == "": node_out.pop()
        refs = [(n, v) for n, v in all_outs if n in outs]
        node = helper.make_node(op, node_in, node_out, **node_attrs)
        vi = lambda n, v: helper.make_tensor_value_info(
            n, TensorProto.INT32 if v.dtype == np.int32 else et, v.shape)
        g = helper.make_graph([node], name, [vi(n, v) for n, v in feeds],
                              [vi(n, v) for n, v in refs])
        onnx_case.save_case(os.path.join(out_dir, name), onnx_case.model(g, opset, 7),
                            [(feeds, [(n, v.astype(npt)) for n, v in refs])])
        print(name, [v.shape for _, v in refs])

if __name__ == "__main__":
    main()
