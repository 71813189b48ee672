#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the small ONNX models that the pass golden tests (tests/passes/*/*.mlccir) compile.

Each function decorated with @model builds one model; its name is the model's file name
(NAME.onnx) and its graph name, and the RUN line of a golden file refers to it as
%models/NAME.onnx. Weights come from fixed seeds, so the files are byte-identical on every
run (the goldens never print weight data, but fold-batchnorm and pack-weights read it).

Usage: make_models.py OUT_DIR [NAME ...]   (all models when no NAME is given)
       make_models.py --list
run_golden.py imports this file (MODELS, write_model) to regenerate stale models.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F32 = TensorProto.FLOAT
I64 = TensorProto.INT64
MODELS = {}


def model(fn):
    MODELS[fn.__name__] = fn
    return fn


def vi(name, shape, dtype=F32):
    return helper.make_tensor_value_info(name, dtype, shape)


def const(name, shape, seed=0, dtype=np.float32, value=None):
    """An initializer: |value| if given, else seeded normal data of |shape|."""
    if value is None:
        data = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    else:
        data = np.asarray(value, dtype=dtype).reshape(shape)
    return numpy_helper.from_array(data, name)


def node(op, ins, outs, name=None, **attrs):
    return helper.make_node(op, ins, outs, name=name or outs[0], **attrs)


def make(name, nodes, inputs, outputs, inits=(), opset=13):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="mlcc-tests-passes")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def bn_params(prefix, c, seed):
    rng = np.random.default_rng(seed)
    return [
        const(prefix + "_scale", [c], value=rng.uniform(0.5, 1.5, c)),
        const(prefix + "_bias", [c], value=rng.standard_normal(c)),
        const(prefix + "_mean", [c], value=rng.standard_normal(c)),
        const(prefix + "_var", [c], value=rng.uniform(0.5, 2.0, c)),
    ]


def bn_inputs(x, prefix):
    return [x, prefix + "_scale", prefix + "_bias", prefix + "_mean", prefix + "_var"]


# --- infer-shapes ----------------------------------------------------------------------------

@model
def infer_cnn():
    """Conv -> Relu -> MaxPool -> Flatten -> Gemm: every intermediate gets dtype and shape."""
    return make("infer_cnn", [
        node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        node("Relu", ["c"], ["r"]),
        node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        node("Flatten", ["p"], ["f"], axis=1),
        node("Gemm", ["f", "fc_w", "fc_b"], ["y"], transB=1),
    ], [vi("x", [1, 3, 8, 8])], [vi("y", [1, 10])],
        [const("w", [8, 3, 3, 3], 1), const("b", [8], 2),
         const("fc_w", [10, 32], 3), const("fc_b", [10], 4)])


@model
def infer_fold_subgraph():
    """y = Reshape(x, Concat(Gather(Shape(x), 0), ReduceProd(Slice(Shape(x), 1:3)))) + Sqrt(Abs(k)):
    the shape computation and the constant chain fold to constants (ReduceProd, Abs and Sqrt
    through the host JIT); the nodes reading x stay."""
    return make("infer_fold_subgraph", [
        node("Shape", ["x"], ["s"]),
        node("Gather", ["s", "zero"], ["n"], axis=0),
        node("Unsqueeze", ["n", "axes0"], ["n1"]),
        node("Slice", ["s", "start1", "end3"], ["tail"]),
        node("ReduceProd", ["tail"], ["prod"], keepdims=1),
        node("Concat", ["n1", "prod"], ["shape"], axis=0),
        node("Reshape", ["x", "shape"], ["r"]),
        node("Abs", ["k"], ["ka"]),
        node("Sqrt", ["ka"], ["ks"]),
        node("Add", ["r", "ks"], ["y"]),
    ], [vi("x", [2, 3, 4])], [vi("y", [2, 12])],
        [const("zero", [], dtype=np.int64, value=0),
         const("axes0", [1], dtype=np.int64, value=[0]),
         const("start1", [1], dtype=np.int64, value=[1]),
         const("end3", [1], dtype=np.int64, value=[3]),
         const("k", [12], 5)])


@model
def infer_keep_output():
    """An all-constant node that writes a graph output is not folded (the entry function
    writes outputs); a node with one non-constant input is not folded either."""
    return make("infer_keep_output", [
        node("Add", ["a", "b"], ["y"]),
        node("Mul", ["x", "a"], ["z"]),
    ], [vi("x", [4])], [vi("y", [4]), vi("z", [4])],
        [const("a", [4], 6), const("b", [4], 7)])


@model
def infer_if_const():
    """If with a constant condition: infer-shapes unrolls the taken branch in place
    (passes/lower_control_flow.c)."""
    then_g = helper.make_graph([node("Relu", ["x"], ["t"])], "then_branch", [],
                               [vi("t", [2, 3])])
    else_g = helper.make_graph([node("Neg", ["x"], ["e"])], "else_branch", [],
                               [vi("e", [2, 3])])
    return make("infer_if_const", [
        node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
    ], [vi("x", [2, 3])], [vi("y", [2, 3])],
        [const("cond", [], dtype=np.bool_, value=True)])


# --- remove-identity -------------------------------------------------------------------------

@model
def identity_chain():
    """Identity, an inference Dropout (opset 13, no training input), a training-mode Dropout
    with ratio 0 and a Reshape to the same shape are bypassed."""
    return make("identity_chain", [
        node("Identity", ["x"], ["i"]),
        node("Relu", ["i"], ["r"]),
        node("Dropout", ["r"], ["d"]),
        node("Sigmoid", ["d"], ["s"]),
        node("Dropout", ["s", "zero", "train"], ["s0"]),
        node("Reshape", ["s0", "same"], ["rs"]),
        node("Tanh", ["rs"], ["y"]),
    ], [vi("x", [2, 8])], [vi("y", [2, 8])],
        [const("same", [2], dtype=np.int64, value=[2, 8]), const("zero", [], value=0.0),
         const("train", [], dtype=np.bool_, value=True)])


@model
def identity_kept():
    """Nothing here may be removed: an Identity writing a graph output, a Dropout whose mask
    is read, and a Reshape and a Squeeze that change the shape."""
    return make("identity_kept", [
        node("Relu", ["x"], ["r"]),
        node("Identity", ["r"], ["y"]),
        node("Dropout", ["x"], ["d", "mask"]),
        node("Cast", ["mask"], ["m"], to=F32),
        node("Add", ["d", "m"], ["z"]),
        node("Reshape", ["x", "flat"], ["t"]),
        node("Unsqueeze", ["t", "axes0"], ["u"]),
        node("Squeeze", ["u", "axes0"], ["w"]),
    ], [vi("x", [2, 8])], [vi("y", [2, 8]), vi("z", [2, 8]), vi("w", [16])],
        [const("flat", [1], dtype=np.int64, value=[16]),
         const("axes0", [1], dtype=np.int64, value=[0])])


# --- fold-constants --------------------------------------------------------------------------

@model
def fold_const_nodes():
    """Constant nodes (value, value_float, value_ints) and Shape/Size of an input with a
    static shape fold without shape inference; Add(const, const) does not (its output has
    no inferred shape yet, and folding evaluates only inferred nodes)."""
    return make("fold_const_nodes", [
        node("Constant", [], ["ct"], value=numpy_helper.from_array(
            np.arange(4, dtype=np.float32), "ct")),
        node("Constant", [], ["cf"], value_float=2.5),
        node("Constant", [], ["ci"], value_ints=[1, 4]),
        node("Shape", ["x"], ["sh"]),
        node("Size", ["x"], ["sz"]),
        node("Add", ["ct", "cf"], ["s"]),
        node("Mul", ["x", "s"], ["m"]),
        node("Reshape", ["m", "ci"], ["r"]),
        node("Cast", ["sh"], ["shf"], to=F32),
        node("Cast", ["sz"], ["szf"], to=F32),
        node("Concat", ["shf", "szf"], ["y"], axis=0),
    ], [vi("x", [4])], [vi("r", [1, 4]), vi("y", [2])])


@model
def fold_keep():
    """Nothing for fold-constants after infer-shapes: every node reads the input x or
    writes a graph output (Add of two constants stays: it is the graph output)."""
    return make("fold_keep", [
        node("Add", ["a", "b"], ["y"]),
        node("Mul", ["x", "a"], ["z"]),
        node("Shape", ["x"], ["s"]),
    ], [vi("x", [3, 4])], [vi("y", [4]), vi("z", [3, 4]), vi("s", [2], I64)],
        [const("a", [4], 8), const("b", [4], 9)])


# --- fold-batchnorm --------------------------------------------------------------------------

@model
def bn_after_conv():
    """Conv(x, w, b) -> BN folds into the Conv (new weights and bias); Conv(x, w2) without
    a bias -> BN folds too and gets a bias."""
    return make("bn_after_conv", [
        node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        node("BatchNormalization", bn_inputs("c", "bn1"), ["y"], epsilon=1e-3),
        node("Conv", ["x", "w2"], ["c2"]),
        node("BatchNormalization", bn_inputs("c2", "bn2"), ["z"]),
    ], [vi("x", [1, 3, 6, 6])], [vi("y", [1, 4, 6, 6]), vi("z", [1, 4, 6, 6])],
        [const("w", [4, 3, 3, 3], 10), const("b", [4], 11), const("w2", [4, 3, 1, 1], 12)]
        + bn_params("bn1", 4, 13) + bn_params("bn2", 4, 14))


@model
def bn_not_folded():
    """BN after a Relu (no Conv producer), BN after a Conv whose output has a second reader,
    and BN whose Conv weight is a graph input: none of them folds."""
    return make("bn_not_folded", [
        node("Relu", ["x"], ["r"]),
        node("BatchNormalization", bn_inputs("r", "bn1"), ["y"]),
        node("Conv", ["x", "w"], ["c"]),
        node("BatchNormalization", bn_inputs("c", "bn2"), ["z0"]),
        node("Add", ["z0", "c"], ["z"]),
        node("Conv", ["x", "wi"], ["c3"]),
        node("BatchNormalization", bn_inputs("c3", "bn2"), ["u"]),
    ], [vi("x", [1, 4, 5, 5]), vi("wi", [4, 4, 1, 1])],
        [vi("y", [1, 4, 5, 5]), vi("z", [1, 4, 5, 5]), vi("u", [1, 4, 5, 5])],
        [const("w", [4, 4, 1, 1], 15)] + bn_params("bn1", 4, 16) + bn_params("bn2", 4, 17))


# --- canonicalize ----------------------------------------------------------------------------

def layernorm_nodes(x, p, square="pow", axes_attr=-1, eps="eps", affine=True, opset=13):
    """PyTorch's pre-opset-17 LayerNorm export, values named p_*."""
    red = dict(axes=[axes_attr], keepdims=1)
    nodes = [
        node("ReduceMean", [x], [p + "_mean"], **red),
        node("Sub", [x, p + "_mean"], [p + "_d"]),
        node("Pow", [p + "_d", "two"], [p + "_sq"]) if square == "pow"
        else node("Mul", [p + "_d", p + "_d"], [p + "_sq"]),
        node("ReduceMean", [p + "_sq"], [p + "_var"], **red),
        node("Add", [p + "_var", eps], [p + "_ve"]),
        node("Sqrt", [p + "_ve"], [p + "_std"]),
        node("Div", [p + "_d", p + "_std"], [p + "_n"]),
    ]
    if affine:
        nodes += [node("Mul", [p + "_n", "gamma"], [p + "_g"]),
                  node("Add", [p + "_g", "beta"], [p + "_out"])]
    return nodes


def ln_consts(d):
    return [const("two", [], value=2.0), const("eps", [], value=1e-5),
            const("gamma", [d], 18), const("beta", [d], 19)]


@model
def layernorm_decomposed():
    """Decomposed LayerNorm (Pow(d, 2), gamma, beta) -> one LayerNormalization; a second one
    with Mul(d, d) and no affine tail gets a constant gamma of ones."""
    nodes = layernorm_nodes("x", "ln1") + [node("Relu", ["ln1_out"], ["h"])]
    nodes += layernorm_nodes("h", "ln2", square="mul", affine=False)
    nodes += [node("Identity", ["ln2_n"], ["y"])]
    return make("layernorm_decomposed", nodes, [vi("x", [2, 3, 8])], [vi("y", [2, 3, 8])],
                ln_consts(8))


@model
def rmsnorm_decomposed():
    """Llama-style RMSNorm (Pow, Reciprocal + Mul, weight) and a Div form with Mul(x, x) and
    no weight -> RMSNormalization-23 nodes; a mean over axis 1 must stay as it is."""
    nodes = [node("Pow", ["x", "two"], ["a_sq"]),
             node("ReduceMean", ["a_sq"], ["a_var"], axes=[-1], keepdims=1),
             node("Add", ["a_var", "eps"], ["a_ve"]),
             node("Sqrt", ["a_ve"], ["a_std"]),
             node("Reciprocal", ["a_std"], ["a_inv"]),
             node("Mul", ["x", "a_inv"], ["a_n"]),
             node("Mul", ["gamma", "a_n"], ["a_out"]),
             node("Mul", ["a_out", "a_out"], ["b_sq"]),
             node("ReduceMean", ["b_sq"], ["b_var"], axes=[-1], keepdims=1),
             node("Add", ["eps", "b_var"], ["b_ve"]),
             node("Sqrt", ["b_ve"], ["b_std"]),
             node("Div", ["a_out", "b_std"], ["b_n"]),
             node("Mul", ["b_n", "b_n"], ["c_sq"]),
             node("ReduceMean", ["c_sq"], ["c_var"], axes=[1], keepdims=1),
             node("Add", ["c_var", "eps"], ["c_ve"]),
             node("Sqrt", ["c_ve"], ["c_std"]),
             node("Div", ["b_n", "c_std"], ["y"])]
    return make("rmsnorm_decomposed", nodes, [vi("x", [2, 3, 8])], [vi("y", [2, 3, 8])],
                ln_consts(8))


@model
def layernorm_near_miss():
    """Three near misses that must stay as they are: the mean over axis 1 (not the last),
    an exponent of 3 instead of 2, and a centered value d that is also a graph output."""
    nodes = layernorm_nodes("x", "a", axes_attr=1, affine=False)
    nodes += layernorm_nodes("x", "b", affine=False)
    nodes[nodes.index(next(n for n in nodes if n.output[0] == "b_sq"))] = \
        node("Pow", ["b_d", "three"], ["b_sq"])
    nodes += layernorm_nodes("x", "c", affine=False)
    return make("layernorm_near_miss", nodes, [vi("x", [2, 3, 8])],
                [vi("a_n", [2, 3, 8]), vi("b_n", [2, 3, 8]), vi("c_n", [2, 3, 8]),
                 vi("c_d", [2, 3, 8])],
                ln_consts(8) + [const("three", [], value=3.0)])


# --- dce -------------------------------------------------------------------------------------

@model
def dce_dead_nodes():
    """A dead chain (Exp -> Log, read by nothing), a dead node reading a live value, and a
    Split whose second output is unread (the node is live: its first output is read)."""
    return make("dce_dead_nodes", [
        node("Exp", ["x"], ["e"]),
        node("Log", ["e"], ["l"]),
        node("Relu", ["x"], ["r"]),
        node("Sigmoid", ["r"], ["unused"]),
        node("Split", ["r", "halves"], ["s0", "s1"], axis=1),
        node("Tanh", ["s0"], ["y"]),
    ], [vi("x", [2, 8])], [vi("y", [2, 4])],
        [const("halves", [2], dtype=np.int64, value=[4, 4])])


@model
def dce_all_live():
    """Every node contributes to an output (one of them only to a second output): dce
    changes nothing."""
    return make("dce_all_live", [
        node("Relu", ["x"], ["r"]),
        node("Sigmoid", ["r"], ["s"]),
        node("Add", ["r", "s"], ["y"]),
        node("Neg", ["s"], ["z"]),
    ], [vi("x", [3])], [vi("y", [3]), vi("z", [3])])


# --- pack-weights ----------------------------------------------------------------------------

@model
def pack_conv():
    """Two float32 Convs with constant weights (3x3 stride 2 with a bias, and 1x1): each gets
    its packed copy and a mlcc.packed_mr attribute (the block size depends on the target).
    No stride-1 3x3 Conv here: those may take the Winograd layout (pack_winograd)."""
    return make("pack_conv", [
        node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        node("Relu", ["c1"], ["r1"]),
        node("Conv", ["r1", "w2"], ["y"]),
    ], [vi("x", [1, 8, 16, 16])], [vi("y", [1, 32, 8, 8])],
        [const("w1", [16, 8, 3, 3], 20), const("b1", [16], 21),
         const("w2", [32, 16, 1, 1], 22)])


@model
def pack_winograd():
    """Stride-1 3x3 Convs: a resnet18 layer1-sized one (64 channels, 56x56) takes the
    Winograd layout (mlcc.winograd = [m, mr], W becomes [M, C, m+2, m+2]: the cost model
    picks it where it wins); a small 16->8 one on 8x8 the direct kernel's packed_mr layout."""
    return make("pack_winograd", [
        node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        node("Relu", ["c"], ["r"]),
        node("Conv", ["s", "w2"], ["y"], pads=[1, 1, 1, 1]),
    ], [vi("x", [1, 64, 56, 56]), vi("s", [1, 16, 8, 8])],
        [vi("r", [1, 64, 56, 56]), vi("y", [1, 8, 8, 8])],
        [const("w", [64, 64, 3, 3], 34), const("b", [64], 35),
         const("w2", [8, 16, 3, 3], 36)])


@model
def pack_skip():
    """Convs pack-weights leaves alone: a depthwise Conv (its kernel reads the ONNX layout)
    and a Conv whose weight is a graph input."""
    return make("pack_skip", [
        node("Conv", ["x", "dw"], ["c1"], group=8, pads=[1, 1, 1, 1]),
        node("Conv", ["c1", "wi"], ["y"]),
    ], [vi("x", [1, 8, 8, 8]), vi("wi", [16, 8, 1, 1])], [vi("y", [1, 16, 8, 8])],
        [const("dw", [8, 1, 3, 3], 23)])


@model
def pack_gemm():
    """Gemms with a constant B and transB=1: one of 8 rows (B becomes a [K, N] constant,
    transB is dropped) and one of 1 row (the dot form streams B along k: left as it is),
    reading the same B."""
    return make("pack_gemm", [
        node("Gemm", ["a", "w", "b"], ["y"], transB=1),
        node("Gemm", ["a1", "w"], ["y1"], transB=1),
    ], [vi("a", [8, 32]), vi("a1", [1, 32])], [vi("y", [8, 48]), vi("y1", [1, 48])],
        [const("w", [48, 32], 37), const("b", [48], 38)])


# --- fuse ------------------------------------------------------------------------------------

@model
def fuse_conv_relu():
    """Conv -> Relu -> MaxPool: the Relu joins the Conv's kernel; MaxPool (not elementwise)
    starts its own."""
    return make("fuse_conv_relu", [
        node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        node("Relu", ["c"], ["r"]),
        node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2]),
    ], [vi("x", [1, 4, 8, 8])], [vi("y", [1, 8, 4, 4])],
        [const("w", [8, 4, 3, 3], 24), const("b", [8], 25)])


@model
def fuse_residual():
    """r = Relu(Conv1(x)); y = Relu(Add(Conv2(r), r)): Conv2's kernel takes Add and Relu
    (the residual r exists before Conv2 runs)."""
    return make("fuse_residual", [
        node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        node("Relu", ["c1"], ["r"]),
        node("Conv", ["r", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        node("Add", ["c2", "r"], ["a"]),
        node("Relu", ["a"], ["y"]),
    ], [vi("x", [1, 4, 6, 6])], [vi("y", [1, 4, 6, 6])],
        [const("w1", [4, 4, 3, 3], 26), const("w2", [4, 4, 3, 3], 27)])


@model
def fuse_blocked():
    """c = Conv(x); s = Sigmoid(c); y = Mul(s, 2); z = Tanh(c): c has a second reader, so the
    Conv keeps it materialized and fuses nothing; Sigmoid -> Mul fuse on their own. A
    Relu writing a graph output that another node reads stays the end of its chain."""
    return make("fuse_blocked", [
        node("Conv", ["x", "w"], ["c"]),
        node("Sigmoid", ["c"], ["s"]),
        node("Mul", ["s", "two"], ["y"]),
        node("Tanh", ["c"], ["z"]),
        node("Relu", ["x"], ["r"]),
        node("Neg", ["r"], ["n"]),
    ], [vi("x", [1, 4, 4, 4])],
        [vi("y", [1, 4, 4, 4]), vi("z", [1, 4, 4, 4]), vi("r", [1, 4, 4, 4]),
         vi("n", [1, 4, 4, 4])],
        [const("w", [4, 4, 1, 1], 28), const("two", [], value=2.0)])


@model
def fuse_silu():
    """SiLU after a Conv, y = Mul(c, Sigmoid(c)): Mul reads two chain values (slot 0 is the
    carried one), so all three nodes form one kernel."""
    return make("fuse_silu", [
        node("Conv", ["x", "w", "b"], ["c"]),
        node("Sigmoid", ["c"], ["s"]),
        node("Mul", ["c", "s"], ["y"]),
    ], [vi("x", [1, 4, 4, 4])], [vi("y", [1, 8, 4, 4])],
        [const("w", [8, 4, 1, 1], 31), const("b", [8], 32)])


# --- plan-memory -----------------------------------------------------------------------------

@model
def plan_chain():
    """Five kernels in a chain (Conv+Relu, MaxPool, Conv, MaxPool, GlobalAveragePool): each
    intermediate dies after its one reader, so later ones reuse earlier slots."""
    return make("plan_chain", [
        node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        node("Relu", ["c1"], ["r1"]),
        node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        node("MaxPool", ["c2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        node("GlobalAveragePool", ["p2"], ["y"]),
    ], [vi("x", [1, 2, 8, 8])], [vi("y", [1, 4, 1, 1])],
        [const("w1", [4, 2, 3, 3], 29), const("w2", [4, 4, 3, 3], 30)])


@model
def plan_diamond():
    """a = MaxPool(x); b = AveragePool(x); y = Add(MaxPool(a), b): b stays live while a and
    a2 are written, so the three slots are pairwise disjoint while they overlap in time."""
    return make("plan_diamond", [
        node("MaxPool", ["x"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        node("AveragePool", ["x"], ["b"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        node("MaxPool", ["a"], ["a2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        node("Add", ["a2", "b"], ["y"]),
    ], [vi("x", [1, 4, 8, 8])], [vi("y", [1, 4, 8, 8])])


@model
def plan_inplace():
    """c = Conv(x); s = Sigmoid(c); m = Mul(c, s); a = Add(m, c); y = Conv(a): at -O0 every
    node is a kernel; the elementwise kernels may write over an input that dies there."""
    return make("plan_inplace", [
        node("Conv", ["x", "w"], ["c"]),
        node("Sigmoid", ["c"], ["s"]),
        node("Mul", ["c", "s"], ["m"]),
        node("Add", ["m", "c"], ["a"]),
        node("Conv", ["a", "w"], ["y"]),
    ], [vi("x", [1, 4, 4, 4])], [vi("y", [1, 4, 4, 4])], [const("w", [4, 4, 1, 1], 33)])


def write_model(name, out_dir):
    """Writes MODELS[name] to OUT_DIR/name.onnx atomically; returns the path."""
    m = MODELS[name]()
    path = os.path.join(out_dir, name + ".onnx")
    tmp = "%s.tmp%d" % (path, os.getpid())
    with open(tmp, "wb") as f:
        f.write(m.SerializeToString())
    os.replace(tmp, path)
    return path


def qdq_conv_chain(x, w, b, act, prefix, u8=TensorProto.UINT8):
    """DequantizeLinear(x) -> Conv(DequantizeLinear(w), DequantizeLinear(b)) -> act ->
    QuantizeLinear, with per-channel int8 weights (axis 0) and an int32 bias of scale
    x_scale * w_scale (what quantizers write)."""
    m = w.shape[0]
    ws = np.full(m, 0.01, np.float32)
    inits = [const(prefix + "w", w.shape, value=w, dtype=np.int8),
             const(prefix + "ws", [m], value=ws), const(prefix + "wz", [m], value=np.zeros(m), dtype=np.int8),
             const(prefix + "b", [m], value=b, dtype=np.int32),
             const(prefix + "bs", [m], value=ws * np.float32(0.02)),
             const(prefix + "bz", [m], value=np.zeros(m), dtype=np.int32)]
    nodes = [node("DequantizeLinear", [x, "xs", "xz"], [prefix + "dx"]),
             node("DequantizeLinear", [prefix + "w", prefix + "ws", prefix + "wz"], [prefix + "dw"], axis=0),
             node("DequantizeLinear", [prefix + "b", prefix + "bs", prefix + "bz"], [prefix + "db"], axis=0),
             node("Conv", [prefix + "dx", prefix + "dw", prefix + "db"], [prefix + "c"], pads=[1, 1, 1, 1])]
    cur = prefix + "c"
    if act is not None:
        nodes.append(node(act, [cur], [prefix + "a"]))
        cur = prefix + "a"
    nodes.append(node("QuantizeLinear", [cur, "ys", "yz"], [prefix + "q"]))
    return nodes, inits


def quant_params():
    return [const("xs", [], value=0.02), const("xz", [], value=128, dtype=np.uint8),
            const("ys", [], value=0.05), const("yz", [], value=0, dtype=np.uint8)]


@model
def qdq_conv_relu():
    rng = np.random.default_rng(16)
    w = rng.integers(-127, 128, (4, 3, 3, 3))
    nodes, inits = qdq_conv_chain("x", w, rng.integers(-100, 100, 4), "Relu", "")
    return make("qdq_conv_relu", nodes, [vi("x", [1, 3, 6, 6], TensorProto.UINT8)],
                [vi("q", [1, 4, 6, 6], TensorProto.UINT8)], quant_params() + inits)


@model
def qdq_not_fused():
    rng = np.random.default_rng(17)
    w = rng.integers(-127, 128, (4, 4, 3, 3))
    nodes, inits = qdq_conv_chain("x", w, rng.integers(-100, 100, 4), None, "")
    # The Conv's float output is also a graph output: the chain must stay.
    return make("qdq_not_fused", nodes, [vi("x", [1, 4, 5, 5], TensorProto.UINT8)],
                [vi("q", [1, 4, 5, 5], TensorProto.UINT8), vi("c", [1, 4, 5, 5])],
                quant_params() + inits)


@model
def qdq_move():
    # int8 data movement: MaxPool, Transpose, Concat between DQ and Q with the
    # same parameters run on the uint8 tensor; Q(DQ(q)) of equal parameters is q;
    # a Reshape whose Q has another zero point stays float.
    p = [const("s", [], value=0.02), const("z", [], value=128, dtype=np.uint8),
         const("z2", [], value=7, dtype=np.uint8), const("shp", [2], value=[4, 25], dtype=np.int64)]
    nodes = [node("DequantizeLinear", ["x", "s", "z"], ["dx"]),
             node("MaxPool", ["dx"], ["mp"], kernel_shape=[2, 2], pads=[1, 1, 1, 1]),
             node("QuantizeLinear", ["mp", "s", "z"], ["qmp"]),
             node("DequantizeLinear", ["qmp", "s", "z"], ["dmp"]),
             node("Transpose", ["dmp"], ["t"], perm=[0, 1, 3, 2]),
             node("QuantizeLinear", ["t", "s", "z"], ["qt"]),
             node("DequantizeLinear", ["qt", "s", "z"], ["dt"]),
             node("QuantizeLinear", ["dt", "s", "z"], ["qq"]),
             node("DequantizeLinear", ["qq", "s", "z"], ["dq2"]),
             node("Concat", ["dq2", "dmp"], ["cat"], axis=1),
             node("QuantizeLinear", ["cat", "s", "z"], ["y"]),
             node("Reshape", ["dx", "shp"], ["r"]),
             node("QuantizeLinear", ["r", "s", "z2"], ["y2"])]
    return make("qdq_move", nodes, [vi("x", [1, 4, 5, 5], TensorProto.UINT8)],
                [vi("y", [1, 8, 6, 6], TensorProto.UINT8), vi("y2", [4, 25], TensorProto.UINT8)], p)


@model
def qdq_gemm():
    # QDQ Gemm (transB = 1, per-row int8 weights, int32 bias of scale xs * ws) -> Relu ->
    # QuantizeLinear becomes QLinearMatMul with the transposed weights, the bias as a 9th
    # input (mlcc.qbias) and the Relu as mlcc.qact; the Gemm with alpha = 2 stays float.
    rng = np.random.default_rng(18)
    ws = np.full(3, 0.01, np.float32)
    p = quant_params() + [
        const("w", [3, 5], value=rng.integers(-127, 128, (3, 5)), dtype=np.int8),
        const("ws", [3], value=ws), const("wz", [3], value=np.zeros(3), dtype=np.int8),
        const("b", [3], value=rng.integers(-100, 100, 3), dtype=np.int32),
        const("bs", [3], value=ws * np.float32(0.02)),
        const("bz", [3], value=np.zeros(3), dtype=np.int32)]
    nodes = [node("DequantizeLinear", ["x", "xs", "xz"], ["dx"]),
             node("DequantizeLinear", ["w", "ws", "wz"], ["dw"], axis=0),
             node("DequantizeLinear", ["b", "bs", "bz"], ["db"], axis=0),
             node("Gemm", ["dx", "dw", "db"], ["g"], transB=1),
             node("Relu", ["g"], ["r"]),
             node("QuantizeLinear", ["r", "ys", "yz"], ["y"]),
             node("Gemm", ["dx", "dw", "db"], ["g2"], transB=1, alpha=2.0),
             node("QuantizeLinear", ["g2", "ys", "yz"], ["y2"])]
    return make("qdq_gemm", nodes, [vi("x", [2, 5], TensorProto.UINT8)],
                [vi("y", [2, 3], TensorProto.UINT8), vi("y2", [2, 3], TensorProto.UINT8)], p)


@model
def qdq_qlinear():
    # int8 Add (+ Relu), GlobalAveragePool and Concat of other parameters between
    # DequantizeLinear and QuantizeLinear become the com.microsoft QLinearAdd (Relu as
    # mlcc.qact), QLinearGlobalAveragePool and QLinearConcat; the DequantizeLinear of x
    # stays for the Mul by a float constant (float, as written) and the AveragePool with
    # count_include_pad and ceil_mode (float: its divisor differs in onnxruntime).
    p = [const("s", [], value=0.02), const("z", [], value=128, dtype=np.uint8),
         const("s2", [], value=0.05), const("z2", [], value=7, dtype=np.uint8),
         const("k", [1, 4, 1, 1], value=[0.5, 1.0, 1.5, 2.0])]
    nodes = [node("DequantizeLinear", ["x", "s", "z"], ["dx"]),
             node("DequantizeLinear", ["x2", "s2", "z2"], ["dx2"]),
             node("Add", ["dx", "dx2"], ["a"]),
             node("Relu", ["a"], ["r"]),
             node("QuantizeLinear", ["r", "s", "z"], ["y"]),
             node("GlobalAveragePool", ["dx"], ["g"]),
             node("QuantizeLinear", ["g", "s2", "z2"], ["yg"]),
             node("Concat", ["dx", "dx2"], ["cat"], axis=1),
             node("QuantizeLinear", ["cat", "s", "z"], ["yc"]),
             node("Mul", ["dx", "k"], ["m"]),
             node("QuantizeLinear", ["m", "s", "z"], ["ym"]),
             node("AveragePool", ["dx"], ["ap"], kernel_shape=[2, 2], strides=[2, 2],
                  ceil_mode=1, count_include_pad=1),
             node("QuantizeLinear", ["ap", "s", "z"], ["ya"])]
    return make("qdq_qlinear", nodes,
                [vi("x", [1, 4, 5, 5], TensorProto.UINT8), vi("x2", [1, 4, 5, 5], TensorProto.UINT8)],
                [vi("y", [1, 4, 5, 5], TensorProto.UINT8), vi("yg", [1, 4, 1, 1], TensorProto.UINT8),
                 vi("yc", [1, 8, 5, 5], TensorProto.UINT8), vi("ym", [1, 4, 5, 5], TensorProto.UINT8),
                 vi("ya", [1, 4, 3, 3], TensorProto.UINT8)], p)


def main(argv):
    if len(argv) == 2 and argv[1] == "--list":
        print("\n".join(sorted(MODELS)))
        return 0
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.stderr.write(__doc__)
        return 2
    out_dir = argv[1]
    names = argv[2:] or sorted(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.stderr.write("make_models.py: unknown model(s) %s; --list shows them\n"
                         % ", ".join(unknown))
        return 2
    os.makedirs(out_dir, exist_ok=True)
    for n in names:
        write_model(n, out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
