#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes accuracy cases (ONNX backend-test layout) for long float32 sums:
reductions, pools and normalizations over 2^20..2^23 elements, each with a
float64 numpy reference rounded to float32, checked by run_case.py with the
project tolerance (rtol 1e-4, atol 1e-5; DESIGN.md section 4).

A float32 accumulator that adds n elements one by one (or one SIMD lane of
n/16 elements) drifts by up to ~n*eps: the rounding of each add is biased
once the running sum's ulp is large against the addends. The kernels block
such sums or accumulate them in double (targets/kernels/reduce.c, targets/kernels/pool.c,
targets/kernels/norm.c, targets/kernels/normalize.c MeanVarianceNormalization).

Inputs are positive values of similar size, x = 0.1 + 0.01*u with u uniform
on [0, 1) (feature maps after an activation, a long axis of nearby values):
their rounding errors do not cancel. Sums of plain uniform [0, 1) values
mostly do cancel (a random walk: sequential float32 sums of 2^20..2^23 such
values are within ~2e-5 of the exact sum), so they would not catch the
drift. GlobalAveragePool (8 or 16 partial sums per plane on x86) reads
1 - 0.001*u, whose partial sums drift further. Softmax feeds 0.001*u (exp
terms in [0.999, 1]) and is scaled by its
axis length so the outputs are O(1) against atol. LayerNormalization,
InstanceNormalization and MeanVarianceNormalization divide the error of
the mean by the (small) standard deviation, so they see it magnified.

The fold_* cases compute the same nodes from initializers: mlcc folds them
at compile time through the same emitters (the host JIT), and a graph input
added at the end keeps the model runnable.

Usage: make_reduce_accuracy_cases.py OUT_DIR (writes OUT_DIR/racc_<name>).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import onnx_case

OPSET = 17


def write_case(root, name, nodes, feeds, outputs, inits=()):
    """feeds: [(name, array)] graph inputs; outputs: [(name, reference)];
    inits: [(name, array)] initializers."""
    onnx_case.write_case(os.path.join(root, "racc_" + name), nodes, feeds, outputs, inits,
                         opset=OPSET)


def f32(a):
    return np.asarray(a, dtype=np.float64).astype(np.float32)


def similar(rng, shape):
    """Positive values of similar size: 0.1 + 0.01*uniform[0, 1)."""
    return (np.float32(0.1) + np.float32(0.01) * rng.random(shape, dtype=np.float32)).astype(
        np.float32)


def near_one(rng, shape):
    """Positive values just below 1: 1 - 0.001*uniform[0, 1)."""
    return (np.float32(1.0) - np.float32(0.001) * rng.random(shape, dtype=np.float32)).astype(
        np.float32)


def layernorm_ref(x, scale, bias, axis, eps=1e-5):
    xd = x.astype(np.float64)
    axes = tuple(range(axis, x.ndim))
    mean = xd.mean(axis=axes, keepdims=True)
    var = ((xd - mean) ** 2).mean(axis=axes, keepdims=True)
    inv = 1.0 / np.sqrt(var + eps)
    return (xd - mean) * inv * scale.astype(np.float64) + bias.astype(np.float64), mean, inv


def cases(root):
    rng = np.random.default_rng(20240611)
    i64 = lambda v: np.array(v, dtype=np.int64)

    # ReduceSum over all 2^23 elements (targets/kernels/reduce.c, serial loop).
    x = similar(rng, (1 << 23,))
    write_case(root, "reduce_sum_2p23",
               [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
               [("x", x)], [("y", f32(x.astype(np.float64).sum()))],
               inits=[("axes", i64([0]))])

    # ReduceMean over the strided axis 0 of [2^21, 2].
    x = similar(rng, (1 << 21, 2))
    write_case(root, "reduce_mean_2p21_axis0",
               [helper.make_node("ReduceMean", ["x"], ["y"], axes=[0], keepdims=1)],
               [("x", x)], [("y", f32(x.astype(np.float64).mean(axis=0, keepdims=True)))])

    # ReduceL1 over axes 0 and 2 of [2^19, 2, 4] (a kept axis between them:
    # the blocked loop is the outer reduced one, 64 iterations per block).
    x = similar(rng, (1 << 19, 2, 4))
    write_case(root, "reduce_l1_2p21_axes02",
               [helper.make_node("ReduceL1", ["x"], ["y"], axes=[0, 2], keepdims=0)],
               [("x", x)], [("y", f32(np.abs(x.astype(np.float64)).sum(axis=(0, 2))))])

    # ReduceSumSquare / ReduceL2 / ReduceLogSumExp over contiguous rows of 2^20.
    x = similar(rng, (2, 1 << 20))
    xd = x.astype(np.float64)
    write_case(root, "reduce_sumsquare_2p20",
               [helper.make_node("ReduceSumSquare", ["x"], ["y"], axes=[1], keepdims=0)],
               [("x", x)], [("y", f32((xd * xd).sum(axis=1)))])
    write_case(root, "reduce_l2_2p20",
               [helper.make_node("ReduceL2", ["x"], ["y"], axes=[1], keepdims=0)],
               [("x", x)], [("y", f32(np.sqrt((xd * xd).sum(axis=1))))])
    write_case(root, "reduce_logsumexp_2p20",
               [helper.make_node("ReduceLogSumExp", ["x"], ["y"], axes=[1], keepdims=0)],
               [("x", x)], [("y", f32(np.log(np.exp(xd).sum(axis=1))))])

    # GlobalAveragePool over 1024x1024 planes (2^20; vector lanes).
    xn = near_one(rng, (1, 2, 1024, 1024))
    write_case(root, "global_avgpool_2p20",
               [helper.make_node("GlobalAveragePool", ["x"], ["y"])],
               [("x", xn)], [("y", f32(xn.astype(np.float64).mean(axis=(2, 3), keepdims=True)))])

    # AveragePool whose one window is a whole 1024x1024 plane (generic nest).
    x = similar(rng, (1, 2, 1024, 1024))
    write_case(root, "avgpool_window_2p20",
               [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[1024, 1024])],
               [("x", x)], [("y", f32(x.astype(np.float64).mean(axis=(2, 3), keepdims=True)))])

    # Softmax over a contiguous axis of 2^21, times 2^21 (outputs ~1).
    n = 1 << 21
    x = (np.float32(0.001) * rng.random((1, n), dtype=np.float32)).astype(np.float32)
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(axis=-1, keepdims=True))
    write_case(root, "softmax_2p21_scaled",
               [helper.make_node("Softmax", ["x"], ["s"], axis=-1),
                helper.make_node("Mul", ["s", "n"], ["y"])],
               [("x", x)], [("y", f32(e / e.sum(axis=-1, keepdims=True) * n))],
               inits=[("n", np.array([n], dtype=np.float32))])

    # Softmax over the strided axis 0 of [2^20, 2] (scalar loop), times 2^20.
    n = 1 << 20
    x = (np.float32(0.001) * rng.random((n, 2), dtype=np.float32)).astype(np.float32)
    xd = x.astype(np.float64)
    e = np.exp(xd - xd.max(axis=0, keepdims=True))
    write_case(root, "softmax_2p20_axis0_scaled",
               [helper.make_node("Softmax", ["x"], ["s"], axis=0),
                helper.make_node("Mul", ["s", "n"], ["y"])],
               [("x", x)], [("y", f32(e / e.sum(axis=0, keepdims=True) * n))],
               inits=[("n", np.array([n], dtype=np.float32))])

    # LayerNormalization over a last axis of 2^20, with Mean and InvStdDev.
    x = similar(rng, (2, 1 << 20))
    scale = f32(rng.random(1 << 20) + 0.5)
    bias = f32(rng.random(1 << 20) - 0.5)
    y, mean, inv = layernorm_ref(x, scale, bias, 1)
    write_case(root, "layernorm_2p20",
               [helper.make_node("LayerNormalization", ["x", "scale", "bias"],
                                 ["y", "mean", "inv"], axis=-1)],
               [("x", x)], [("y", f32(y)), ("mean", f32(mean)), ("inv", f32(inv))],
               inits=[("scale", scale), ("bias", bias)])

    # InstanceNormalization over 1024x1024 planes.
    x = similar(rng, (1, 2, 1024, 1024))
    sc = np.array([1.5, 0.75], dtype=np.float32)
    b = np.array([0.25, -0.5], dtype=np.float32)
    xd = x.astype(np.float64)
    mu = xd.mean(axis=(2, 3), keepdims=True)
    var = ((xd - mu) ** 2).mean(axis=(2, 3), keepdims=True)
    ref = (xd - mu) / np.sqrt(var + 1e-5) * sc.reshape(1, 2, 1, 1) + b.reshape(1, 2, 1, 1)
    write_case(root, "instancenorm_2p20",
               [helper.make_node("InstanceNormalization", ["x", "sc", "b"], ["y"])],
               [("x", x)], [("y", f32(ref))], inits=[("sc", sc), ("b", b)])

    # MeanVarianceNormalization (default axes 0, 2, 3) over 2^20 per channel.
    x = similar(rng, (1, 2, 1024, 1024))
    xd = x.astype(np.float64)
    mu = xd.mean(axis=(0, 2, 3), keepdims=True)
    sd = np.sqrt((xd * xd).mean(axis=(0, 2, 3), keepdims=True) - mu * mu)
    write_case(root, "mvn_2p20",
               [helper.make_node("MeanVarianceNormalization", ["x"], ["y"])],
               [("x", x)], [("y", f32((xd - mu) / (sd + 1e-9)))])

    # Folded at compile time: the same nodes on initializers, plus a graph
    # input so the model has something to run.
    bias1 = np.array([0.5], dtype=np.float32)
    x = similar(rng, (1 << 22,))
    write_case(root, "fold_reduce_sum_2p22",
               [helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=1),
                helper.make_node("Add", ["s", "b"], ["y"])],
               [("b", bias1)], [("y", f32(x.astype(np.float64).sum() + 0.5).reshape(1))],
               inits=[("x", x), ("axes", i64([0]))])
    x = near_one(rng, (1, 1, 1024, 1024))
    write_case(root, "fold_global_avgpool_2p20",
               [helper.make_node("GlobalAveragePool", ["x"], ["p"]),
                helper.make_node("Add", ["p", "b"], ["y"])],
               [("b", bias1)],
               [("y", f32(x.astype(np.float64).mean(axis=(2, 3), keepdims=True) + 0.5))],
               inits=[("x", x)])
    x = similar(rng, (1, 1 << 20))
    scale = np.ones(1, dtype=np.float32)
    zero = np.zeros(1, dtype=np.float32)
    y, _, _ = layernorm_ref(x, scale, zero, 1)
    write_case(root, "fold_layernorm_2p20",
               [helper.make_node("LayerNormalization", ["x", "scale", "zero"], ["l"], axis=-1),
                helper.make_node("Add", ["l", "b"], ["y"])],
               [("b", bias1)], [("y", f32(y + 0.5))],
               inits=[("x", x), ("scale", scale), ("zero", zero)])


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    cases(sys.argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
