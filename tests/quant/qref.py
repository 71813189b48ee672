# SPDX-License-Identifier: Apache-2.0
"""Exact numpy evaluation of QDQ and QOperator ONNX graphs (docs/quantization.md).

    from qref import evaluate
    outputs = evaluate(model_proto, {"input": array})   # name -> numpy array

The reference the quantized-model tests (tests/quant/run_quant_model.py)
compare mlcc with. It follows the ONNX specs (opset 13) with exact
arithmetic wherever a spec allows it:
  * Every float tensor is float32, as in the graph: each op's result is
    computed in float64 and rounded once to float32 (for +, -, *, / of float32
    operands that is IEEE float32 arithmetic).
  * DequantizeLinear: (x - zero_point) * scale (per tensor or per axis); the
    result remembers its integer tensor, scale and zero point.
  * Conv / Gemm / MatMul whose activation and weight inputs are both
    DequantizeLinear outputs: the sum runs over the integers (x_q - x_zp) *
    (w_q - w_zp) in int32 (an accumulator outside int32 raises), then is scaled
    by x_scale * w_scale[c] in float64 and the dequantized bias is added. Other
    inputs fall back to float64 arithmetic.
  * QLinearConv / QLinearMatMul: int32 accumulation (bias included), then
    saturate(round_half_to_even(float32(acc) * M) + y_zp) with
    M = float32(float32(x_scale * w_scale) / y_scale) and the product in
    float32 (the specs leave the precision open; this is the ONNX reference
    implementation's multiplier and mlcc's targets/kernels/quant.c).
  * QuantizeLinear: saturate(round_half_to_even(x / scale) + zero_point), the
    division in float32.
  * Every float op (Relu, Clip, Sigmoid, Add, Mul, pools, Resize, LayerNorm
    pieces, Softmax, ...) in float64.
So each integer value is the graph's exact result, and each float value the
exact one rounded to float32. Raises EvalError for an op or
attribute this evaluator does not cover.
"""
import numpy as np
from onnx import helper, numpy_helper


class EvalError(Exception):
    pass


def _attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            v = helper.get_attribute_value(a)
            return v.decode() if isinstance(v, bytes) else v
    return default


def _per_axis(v, axis, ndim):
    v = np.asarray(v)
    if v.ndim == 0 or v.size == 1 and ndim == 0:
        return v.reshape(())
    shape = [1] * ndim
    shape[axis] = -1
    return v.reshape(shape)


def _saturate(v, dtype):
    info = np.iinfo(dtype)
    return np.clip(v, info.min, info.max).astype(dtype)


def _check_int32(acc, what):
    if acc.size and (acc.max() > 2**31 - 1 or acc.min() < -2**31):
        raise EvalError("%s: the int32 accumulator overflows (range %d..%d)" %
                        (what, int(acc.min()), int(acc.max())))


def _conv_sum(x, w, node):
    """Direct convolution of float64 arrays (exact for integer-valued inputs
    whose partial sums stay below 2^53): NCHW x, MCkk w."""
    if x.ndim != 4:
        raise EvalError("Conv: only 2-D convolutions are covered; got input rank %d" % x.ndim)
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    g = _attr(node, "group", 1)
    sh, sw = _attr(node, "strides", [1, 1])
    dh, dw = _attr(node, "dilations", [1, 1])
    pads = _attr(node, "pads", [0, 0, 0, 0])
    if _attr(node, "auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise EvalError("Conv: auto_pad %s not covered" % _attr(node, "auto_pad"))
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (xp.shape[2] - dh * (kh - 1) - 1) // sh + 1
    ow = (xp.shape[3] - dw * (kw - 1) - 1) // sw + 1
    cols = np.empty((n, c, kh * kw, oh * ow), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                       j * dw:j * dw + sw * (ow - 1) + 1:sw]
            cols[:, :, i * kw + j, :] = patch.reshape(n, c, -1)
    cols = cols.reshape(n, g, cg * kh * kw, oh * ow)
    wm = w.reshape(g, m // g, cg * kh * kw)
    out = np.matmul(wm[None], cols)  # [n, g, m/g, P]
    return out.reshape(n, m, oh, ow)


def _pool_windows(x, node, pad_value):
    kh, kw = _attr(node, "kernel_shape")
    sh, sw = _attr(node, "strides", [1, 1])
    dh, dw = _attr(node, "dilations", [1, 1])
    pads = _attr(node, "pads", [0, 0, 0, 0])
    ceil = _attr(node, "ceil_mode", 0)
    h, w = x.shape[2], x.shape[3]

    def osize(size, k, s, d, p0, p1):
        span = size + p0 + p1 - d * (k - 1) - 1
        o = (-(-span // s) if ceil else span // s) + 1
        if ceil and (o - 1) * s >= size + p0:
            o -= 1
        return o
    oh = osize(h, kh, sh, dh, pads[0], pads[2])
    ow = osize(w, kw, sw, dw, pads[1], pads[3])
    need_h = (oh - 1) * sh + dh * (kh - 1) + 1
    need_w = (ow - 1) * sw + dw * (kw - 1) + 1
    xp = np.full(x.shape[:2] + (max(need_h, h + pads[0]), max(need_w, w + pads[1])),
                 pad_value, dtype=x.dtype)
    xp[:, :, pads[0]:pads[0] + h, pads[1]:pads[1] + w] = x
    wins = [xp[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
            for i in range(kh) for j in range(kw)]
    return wins


def _resize(x, node, scales, sizes):
    if _attr(node, "mode", "nearest") != "nearest":
        raise EvalError("Resize: only mode 'nearest' is covered")
    ctm = _attr(node, "coordinate_transformation_mode", "half_pixel")
    nm = _attr(node, "nearest_mode", "round_prefer_floor")
    if sizes is None or sizes.size == 0:
        sizes = np.floor(np.array(x.shape) * scales).astype(np.int64)
        sc = scales.astype(np.float64)
    else:
        sc = sizes.astype(np.float64) / np.array(x.shape)
    y = x
    for ax in range(x.ndim):
        out = int(sizes[ax])
        if out == x.shape[ax]:
            continue
        o = np.arange(out, dtype=np.float64)
        if ctm == "asymmetric":
            src = o / sc[ax]
        elif ctm == "half_pixel":
            src = (o + 0.5) / sc[ax] - 0.5
        elif ctm == "align_corners":
            src = o * (x.shape[ax] - 1) / max(out - 1, 1)
        else:
            raise EvalError("Resize: coordinate_transformation_mode %s not covered" % ctm)
        if nm == "floor":
            idx = np.floor(src)
        elif nm == "ceil":
            idx = np.ceil(src)
        elif nm == "round_prefer_floor":
            idx = np.where(src - np.floor(src) == 0.5, np.floor(src), np.round(src))
        else:
            idx = np.where(src - np.floor(src) == 0.5, np.ceil(src), np.round(src))
        idx = np.clip(idx, 0, x.shape[ax] - 1).astype(np.int64)
        y = np.take(y, idx, axis=ax)
    return y


def evaluate(model, feeds, force=None, check=None, fuse_qdq=True):
    """Runs |model| (an onnx ModelProto) on |feeds| (name -> array). Returns a
    dict graph output name -> array (float64 for float outputs, the integer
    dtype for quantized ones).

    |force| (name -> flat array) replaces a node output by the given values
    after |check|(name, reference value, forced array) has seen both: the rest
    of the graph then runs on the forced values ("teacher forcing": each
    tensor is compared with the reference computed from the tested program's
    own inputs, so a one-step difference does not cascade).

    With |fuse_qdq| (the default) a QDQ chain DequantizeLinear(x),
    DequantizeLinear(w)[, DequantizeLinear(int32 bias with scale
    x_scale * w_scale)] -> Conv/Gemm/MatMul -> [Relu | Clip] -> QuantizeLinear
    whose intermediate tensors have no other reader is evaluated like
    QLinearConv/QLinearMatMul (_requantize; the activation as a clamp of the
    integer result), so a QDQ model and its QOperator twin have one reference;
    without it the chain runs in float as written (exact sum, one rounding)."""
    g = model.graph
    env = {}
    quant = {}  # DequantizeLinear output -> (q int64 array, scale, zero point, axis)
    for init in g.initializer:
        env[init.name] = numpy_helper.to_array(init)
    for k, v in feeds.items():
        env[k] = v.astype(np.float64) if v.dtype == np.float32 else v
    consumers = {}
    for node in g.node:
        for i in node.input:
            consumers.setdefault(i, []).append(node)
    graph_outputs = {o.name for o in g.output}
    fused = {}  # QuantizeLinear output -> its integer value from a fused chain
    for node in g.node:
        if node.domain not in ("", "ai.onnx"):
            raise EvalError("op %s of domain %s not covered" % (node.op_type, node.domain))
        ins = [env[i] if i else None for i in node.input]
        fn = _OPS.get(node.op_type)
        if fn is None:
            raise EvalError("op %s not covered" % node.op_type)
        qin = [quant.get(i) for i in node.input]
        if fuse_qdq and node.op_type in ("Conv", "Gemm", "MatMul"):
            hit = _fused_chain(node, ins, qin, consumers, graph_outputs, env)
            if hit is not None:
                fused[hit[0]] = hit[1]
        if node.op_type == "QuantizeLinear" and node.output[0] in fused:
            outs = fused.pop(node.output[0])
        else:
            outs = fn(node, ins, qin, quant)
        if not isinstance(outs, tuple):
            outs = (outs,)
        for name, val in zip(node.output, outs):
            if isinstance(val, np.ndarray) and val.dtype.kind == "f":
                # Every float tensor of the graph is float32: the op's exact
                # (float64) result rounded once to float32.
                val = val.astype(np.float32)
            if force is not None and name in force:
                got = np.asarray(force[name])
                if got.size != np.asarray(val).size:
                    raise EvalError("'%s' has %d elements, the reference %d" %
                                    (name, got.size, np.asarray(val).size))
                got = got.reshape(np.shape(val)).astype(np.asarray(val).dtype)
                if check is not None:
                    check(name, val, got)
                val = got
            env[name] = val
    return {o.name: env[o.name] for o in g.output}


def _f(v):
    return np.asarray(v).astype(np.float64)


def op_quantize(node, ins, _q, _quant):
    # x / y_scale of float32 tensors, correctly rounded to float32 (IEEE division).
    x, s = np.asarray(ins[0], dtype=np.float32), np.asarray(ins[1], dtype=np.float32)
    zp = ins[2] if len(ins) > 2 and ins[2] is not None else np.array(0, dtype=np.uint8)
    axis = _attr(node, "axis", 1)
    ax = axis % x.ndim if x.ndim else 0
    q = (x / _per_axis(s, ax, x.ndim)).astype(np.float32)
    y = np.rint(q.astype(np.float64)) + _per_axis(zp.astype(np.float64), ax, x.ndim)
    return _saturate(y, zp.dtype)


def op_dequantize(node, ins, _q, quant):
    x = ins[0]
    s = _f(ins[1])
    zp = ins[2] if len(ins) > 2 and ins[2] is not None else np.zeros((), dtype=x.dtype)
    axis = _attr(node, "axis", 1)
    ax = axis % x.ndim if x.ndim and s.ndim else 0
    zpa = _per_axis(zp.astype(np.int64), ax, x.ndim)
    y = (x.astype(np.int64) - zpa).astype(np.float64) * _per_axis(s, ax, x.ndim)
    quant[node.output[0]] = (x.astype(np.int64) - zpa, s, ax if s.ndim else None)
    return y


def op_conv(node, ins, q, _quant):
    x, w = ins[0], ins[1]
    bias = _f(ins[2]) if len(ins) > 2 and ins[2] is not None else None
    if q[0] is not None and q[1] is not None and q[0][1].ndim == 0 and \
            (q[1][1].ndim == 0 or q[1][2] == 0):
        acc = _conv_sum(_f(q[0][0]), _f(q[1][0]), node)
        _check_int32(acc, "Conv '%s'" % node.name)
        scale = float(q[0][1]) * q[1][1].reshape(-1)
        y = acc * scale.reshape(1, -1, 1, 1) if scale.size > 1 else acc * float(scale)
    else:
        y = _conv_sum(_f(x), _f(w), node)
    if bias is not None:
        y = y + bias.reshape(1, -1, 1, 1)
    return y


def op_qlinear_conv(node, ins, _q, _quant):
    x, xs, xz, w, ws, wz, ys, yz = ins[:8]
    b = ins[8] if len(ins) > 8 and ins[8] is not None else None
    m = w.shape[0]
    wzv = np.broadcast_to(wz.astype(np.int64).reshape(-1), (m,))
    acc = _conv_sum(_f(x.astype(np.int64) - int(xz)),
                    _f(w.astype(np.int64) - wzv.reshape(-1, 1, 1, 1)), node)
    if b is not None:
        acc = acc + b.astype(np.float64).reshape(1, -1, 1, 1)
    _check_int32(acc, "QLinearConv '%s'" % node.name)
    mult = _multiplier(xs, np.broadcast_to(np.asarray(ws, np.float32).reshape(-1), (m,)), ys)
    return _requantize(acc, mult.reshape(1, -1, 1, 1), yz)


def _multiplier(a_scale, b_scale, y_scale):
    """M = (a_scale * b_scale) / y_scale, each step rounded to float32 (the
    ONNX reference implementation's formula: its scales are float32)."""
    prod = np.float32(a_scale) * np.asarray(b_scale, dtype=np.float32)
    return (prod / np.float32(y_scale)).astype(np.float32)


def _requantize(acc, mult, y_zp):
    """saturate(round_half_even(float32(acc) * M) + y_zero_point), the product
    in float32 (docs/quantization.md: the requantization rule)."""
    f = acc.astype(np.float32) * mult
    return _saturate(np.rint(f.astype(np.float32)).astype(np.float64) + float(y_zp), y_zp.dtype)


def _fused_chain(node, ins, q, consumers, graph_outputs, env):
    """(QuantizeLinear output name, its uint8/int8 value) for a fusable QDQ
    chain starting at |node|, else None (see evaluate)."""
    if len(q) < 2 or q[0] is None or q[1] is None or q[0][1].ndim != 0:
        return None
    op = node.op_type
    ws, waxis = q[1][1], q[1][2]
    if op == "Conv":
        ch_axis_ok = ws.ndim == 0 or waxis == 0
    elif op == "Gemm":
        if _attr(node, "alpha", 1.0) != 1.0 or _attr(node, "beta", 1.0) != 1.0 or \
                _attr(node, "transA", 0):
            return None
        ch_axis_ok = ws.ndim == 0 or waxis == (0 if _attr(node, "transB", 0) else 1)
    else:
        ch_axis_ok = ws.ndim == 0 or (ins[1].ndim == 2 and waxis == 1)
    if not ch_axis_ok:
        return None
    y = node.output[0]
    chain = consumers.get(y, [])
    if y in graph_outputs or len(chain) != 1:
        return None
    act = None
    if chain[0].op_type in ("Relu", "Clip"):
        act = chain[0]
        y2 = act.output[0]
        chain = consumers.get(y2, [])
        if y2 in graph_outputs or len(chain) != 1:
            return None
    qn = chain[0]
    if qn.op_type != "QuantizeLinear" or len(qn.input) < 3 or not qn.input[2]:
        return None
    ys, yz = env[qn.input[1]], env[qn.input[2]]
    if np.asarray(ys).ndim != 0:
        return None
    sx = np.float32(q[0][1])
    wsv = np.asarray(ws, dtype=np.float32).reshape(-1)
    if op in ("Conv", "Gemm") and len(ins) > 2 and ins[2] is not None:
        bq = q[2] if len(q) > 2 else None
        if bq is None or not np.array_equal(np.asarray(bq[1], np.float32).reshape(-1),
                                            np.broadcast_to(sx * wsv, (bq[0].size,))):
            return None
        bias = bq[0].astype(np.float64)
    else:
        bias = None
    if op == "Conv":
        acc = _conv_sum(_f(q[0][0]), _f(q[1][0]), node)
        if bias is not None:
            acc = acc + bias.reshape(1, -1, 1, 1)
        mult = _multiplier(sx, wsv, ys).reshape(1, -1, 1, 1) if wsv.size > 1 else \
            _multiplier(sx, wsv[0], ys)
    else:
        a, b = q[0][0], q[1][0]
        if op == "Gemm" and _attr(node, "transB", 0):
            b = b.T
        acc = np.matmul(_f(a), _f(b))
        if bias is not None:
            acc = acc + bias
        mult = _multiplier(sx, wsv, ys) if wsv.size > 1 else _multiplier(sx, wsv[0], ys)
    _check_int32(acc, "%s '%s'" % (op, node.name))
    f = (acc.astype(np.float32) * mult).astype(np.float32)
    r = np.rint(f.astype(np.float64)) + float(yz)
    if act is not None:  # Relu / Clip applied to the real value = a clamp of r
        lo = 0.0 if act.op_type == "Relu" else _clip_bound(act, env, 1)
        hi = None if act.op_type == "Relu" else _clip_bound(act, env, 2)
        qb = lambda v: np.rint(np.float64(np.float32(np.float32(v) / np.float32(ys)))) + float(yz)
        if lo is not None:
            r = np.maximum(r, qb(lo))
        if hi is not None:
            r = np.minimum(r, qb(hi))
    return qn.output[0], _saturate(r, yz.dtype)


def _clip_bound(node, env, i):
    if len(node.input) > i and node.input[i]:
        return float(env[node.input[i]])
    return None


def _matmul_int(a, b, what):
    acc = np.matmul(_f(a), _f(b))
    _check_int32(acc, what)
    return acc


def op_qlinear_matmul(node, ins, _q, _quant):
    a, as_, az, b, bs, bz, ys, yz = ins
    bzv = bz.astype(np.int64)
    acc = _matmul_int(a.astype(np.int64) - az.astype(np.int64),
                      b.astype(np.int64) - (bzv.reshape(-1) if bzv.ndim else bzv),
                      "QLinearMatMul '%s'" % node.name)
    mult = _multiplier(as_, np.asarray(bs, np.float32).reshape(-1 if bs.ndim else ()), ys)
    return _requantize(acc, mult, yz)


def op_gemm(node, ins, q, _quant):
    if _attr(node, "alpha", 1.0) != 1.0 or _attr(node, "beta", 1.0) != 1.0:
        raise EvalError("Gemm: only alpha = beta = 1 is covered")
    ta, tb = _attr(node, "transA", 0), _attr(node, "transB", 0)
    c = _f(ins[2]) if len(ins) > 2 and ins[2] is not None else 0.0
    if q[0] is not None and q[1] is not None and q[0][1].ndim == 0:
        aq, bq = q[0][0], q[1][0]
        aq = aq.T if ta else aq
        bq = bq.T if tb else bq
        acc = _matmul_int(aq, bq, "Gemm '%s'" % node.name)
        return acc * float(q[0][1]) * q[1][1].reshape(-1 if q[1][1].ndim else ()) + c
    a, b = _f(ins[0]), _f(ins[1])
    return (a.T if ta else a) @ (b.T if tb else b) + c


def op_matmul(node, ins, q, _quant):
    if q[0] is not None and q[1] is not None and q[0][1].ndim == 0 and \
            (q[1][1].ndim == 0 or (ins[1].ndim == 2 and q[1][2] == 1)):
        acc = _matmul_int(q[0][0], q[1][0], "MatMul '%s'" % node.name)
        return acc * float(q[0][1]) * q[1][1].reshape(-1 if q[1][1].ndim else ())
    return np.matmul(_f(ins[0]), _f(ins[1]))


def op_maxpool(node, ins, _q, _quant):
    x = ins[0]
    pad = np.iinfo(x.dtype).min if x.dtype.kind in "iu" else -np.inf
    wins = _pool_windows(x, node, pad)
    return np.maximum.reduce(wins)


def op_avgpool(node, ins, _q, _quant):
    # ONNX AveragePool (opset 11-19): the window mean; with count_include_pad 0
    # the padding does not count.
    x = _f(ins[0])
    if x.ndim != 4 or _attr(node, "auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
        raise EvalError("AveragePool '%s': only 2-D explicit pads are covered" % node.name)
    wins = _pool_windows(x, node, 0.0)
    total = np.add.reduce(wins)
    if _attr(node, "count_include_pad", 0):
        return total / len(wins)
    ones = _pool_windows(np.ones(x.shape[:2] + x.shape[2:], dtype=np.float64), node, 0.0)
    return total / np.add.reduce(ones)


def op_batchnorm(node, ins, _q, _quant):
    # ONNX BatchNormalization (opset 9-15), inference form on axis 1.
    x, scale, bias, mean, var = (_f(v) for v in ins[:5])
    shape = (1, -1) + (1,) * (x.ndim - 2)
    eps = _attr(node, "epsilon", 1e-5)
    return ((x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + np.float32(eps))
            * scale.reshape(shape) + bias.reshape(shape))


def op_clip(node, ins, _q, _quant):
    x = _f(ins[0])
    lo = ins[1] if len(ins) > 1 and ins[1] is not None else None
    hi = ins[2] if len(ins) > 2 and ins[2] is not None else None
    if lo is not None:
        x = np.maximum(x, float(lo))
    if hi is not None:
        x = np.minimum(x, float(hi))
    return x


def op_reshape(node, ins, _q, _quant):
    x, shape = ins[0], [int(d) for d in ins[1]]
    shape = [x.shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return x.reshape(shape)


def op_flatten(node, ins, _q, _quant):
    x = ins[0]
    ax = _attr(node, "axis", 1) % max(x.ndim, 1)
    return x.reshape(int(np.prod(x.shape[:ax])), -1)


def op_softmax(node, ins, _q, _quant):
    x = _f(ins[0])
    ax = _attr(node, "axis", -1)
    e = np.exp(x - x.max(axis=ax, keepdims=True))
    return e / e.sum(axis=ax, keepdims=True)


def op_slice(node, ins, _q, _quant):
    x = ins[0]
    starts, ends = ins[1], ins[2]
    axes = ins[3] if len(ins) > 3 and ins[3] is not None else range(len(starts))
    steps = ins[4] if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    sl = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        sl[int(a)] = slice(int(s), int(e), int(st))
    return x[tuple(sl)]


def op_reduce_mean(node, ins, _q, _quant):
    axes = tuple(_attr(node, "axes", range(ins[0].ndim)))
    return _f(ins[0]).mean(axis=axes, keepdims=bool(_attr(node, "keepdims", 1)))


def _binary(fn, ins):
    a, b = np.asarray(ins[0]), np.asarray(ins[1])
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":  # shape arithmetic
        if fn is np.divide:
            q = np.abs(a) // np.abs(b)  # ONNX integer Div truncates toward zero
            return (np.sign(a) * np.sign(b) * q).astype(np.result_type(a, b))
        return fn(a, b)
    return fn(_f(a), _f(b))


_OPS = {
    "QuantizeLinear": op_quantize,
    "DequantizeLinear": op_dequantize,
    "Conv": op_conv,
    "QLinearConv": op_qlinear_conv,
    "QLinearMatMul": op_qlinear_matmul,
    "Gemm": op_gemm,
    "MatMul": op_matmul,
    "MaxPool": op_maxpool,
    "AveragePool": op_avgpool,
    "BatchNormalization": op_batchnorm,
    "GlobalAveragePool": lambda n, i, q, qq: _f(i[0]).mean(axis=(2, 3), keepdims=True),
    "Relu": lambda n, i, q, qq: np.maximum(_f(i[0]), 0.0),
    "Clip": op_clip,
    "Sigmoid": lambda n, i, q, qq: 1.0 / (1.0 + np.exp(-_f(i[0]))),
    "Add": lambda n, i, q, qq: _binary(np.add, i),
    "Sub": lambda n, i, q, qq: _binary(np.subtract, i),
    "Mul": lambda n, i, q, qq: _binary(np.multiply, i),
    "Div": lambda n, i, q, qq: _binary(np.divide, i),
    "Pow": lambda n, i, q, qq: np.power(_f(i[0]), _f(i[1])),
    "Sqrt": lambda n, i, q, qq: np.sqrt(_f(i[0])),
    "Concat": lambda n, i, q, qq: np.concatenate(i, axis=_attr(n, "axis")),
    "Resize": lambda n, i, q, qq: _resize(i[0], n, i[2] if len(i) > 2 else None,
                                          i[3] if len(i) > 3 else None),
    "Flatten": op_flatten,
    "Reshape": op_reshape,
    "Transpose": lambda n, i, q, qq: np.transpose(i[0], _attr(n, "perm")),
    "Identity": lambda n, i, q, qq: i[0],
    "Softmax": op_softmax,
    "Shape": lambda n, i, q, qq: np.array(i[0].shape, dtype=np.int64),
    "Gather": lambda n, i, q, qq: np.take(i[0], i[1].astype(np.int64), axis=_attr(n, "axis", 0)),
    "Slice": op_slice,
    "ReduceMean": op_reduce_mean,
    "Unsqueeze": lambda n, i, q, qq: np.expand_dims(i[0], tuple(int(a) for a in i[1])),
    "Cast": lambda n, i, q, qq: i[0].astype(
        helper.tensor_dtype_to_np_dtype(_attr(n, "to")) if hasattr(helper, "tensor_dtype_to_np_dtype")
        else __import__("onnx").mapping.TENSOR_TYPE_TO_NP_TYPE[_attr(n, "to")]),
}
