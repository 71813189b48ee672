#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes small legacy-opset test cases (ONNX backend-test layout) with numpy
references for ir/onnx/legacy.c's rewrites that the pytorch suites do not
reach: limited broadcast with an 'axis' leaving trailing dims of A (B is
unsqueezed), with A computed by the model (its rank comes from the import-time
scratch inference), B fed at run time or constant (folded), a per-channel
PRelu-6 slope on a computed X, opset-1 nodes with consumed_inputs, and the
same rewrites inside If and Loop bodies.
Usage: make_legacy_cases.py OUT_DIR; then run_case.py --case OUT_DIR/legacy_<name>.
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_case  # noqa: E402

F = TensorProto.FLOAT


def write_case(root, name, nodes, inputs, output, feeds, ref, inits=(), opset=6):
    g = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info(n, F, a.shape) for n, a in inputs],
        [helper.make_tensor_value_info(output, F, ref.shape)], initializer=list(inits))
    # IR 3 (as the opset 1-6 exporters wrote): initializers are also inputs.
    for t in inits:
        g.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    onnx_case.save_case(os.path.join(root, "legacy_" + name), onnx_case.model(g, opset, 3),
                        [(feeds, [(output, ref.astype(np.float32))])])


def main():
    root = sys.argv[1]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    r = np.maximum(x, 0)
    relu = helper.make_node("Relu", ["x"], ["r"])
    # Add(Relu(x), b[3,4], axis=1): b -> [3,4,1].
    b = rng.standard_normal((3, 4)).astype(np.float32)
    write_case(root, "add_axis_input",
               [relu, helper.make_node("Add", ["r", "b"], ["y"], broadcast=1, axis=1)],
               [("x", x), ("b", b)], "y", [("x", x), ("b", b)], r + b[None, :, :, None])
    # Sub(Relu(x), b0[2], axis=0) with b0 an initializer: b0 -> [2,1,1,1].
    b0 = rng.standard_normal((2,)).astype(np.float32)
    write_case(root, "sub_axis0_init",
               [relu, helper.make_node("Sub", ["r", "b0"], ["y"], broadcast=1, axis=0)],
               [("x", x)], "y", [("x", x)], r - b0[:, None, None, None],
               inits=[numpy_helper.from_array(b0, "b0")])
    # Both operands constant (folded at compile time): ac[2,3,4] + bc[3] at axis 1.
    ac = rng.standard_normal((2, 3, 4)).astype(np.float32)
    bc = rng.standard_normal((3,)).astype(np.float32)
    write_case(root, "add_const_fold",
               [helper.make_node("Add", ["ac", "bc"], ["t"], broadcast=1, axis=1),
                helper.make_node("Add", ["x3", "t"], ["y"])],
               [("x3", ac)], "y", [("x3", ac)], ac + ac + bc[None, :, None],
               inits=[numpy_helper.from_array(ac, "ac"), numpy_helper.from_array(bc, "bc")])
    # Suffix matching (no axis) and a 1-element B with an axis.
    b5 = (rng.standard_normal((5,)) + 3).astype(np.float32)
    s = np.array([[2.0]], np.float32)
    write_case(root, "mul_suffix_div_scalar",
               [helper.make_node("Mul", ["x", "b5"], ["m"], broadcast=1),
                helper.make_node("Div", ["m", "s"], ["y"], broadcast=1, axis=2)],
               [("x", x), ("b5", b5), ("s", s)], "y", [("x", x), ("b5", b5), ("s", s)],
               x * b5 / 2.0)
    # PRelu-6 on a computed X with a per-channel slope [3] -> [3,1,1].
    sl = np.array([0.1, 0.2, 0.3], np.float32)
    write_case(root, "prelu_channel",
               [helper.make_node("Neg", ["x"], ["n"]), helper.make_node("PRelu", ["n", "sl"], ["y"])],
               [("x", x)], "y", [("x", x)], np.where(-x >= 0, -x, -x * sl[None, :, None, None]),
               inits=[numpy_helper.from_array(sl, "sl")])
    # Opset 1: consumed_inputs, variadic Max.
    x2 = (2 * x).astype(np.float32)
    write_case(root, "opset1_add_max",
               [helper.make_node("Add", ["x", "x2"], ["a"], consumed_inputs=[0, 0]),
                helper.make_node("Max", ["a", "x", "x2"], ["y"])],
               [("x", x), ("x2", x2)], "y", [("x", x), ("x2", x2)],
               np.maximum(np.maximum(x + x2, x), x2), opset=1)
    subgraph_cases(root, rng)


def write_sg_case(root, name, graph, datasets, opset=6):
    """A model whose subgraph bodies hold legacy nodes; |datasets| lists
    (feeds, refs) pairs of [(name, array)]."""
    onnx_case.save_case(os.path.join(root, "legacy_" + name), onnx_case.model(graph, opset, 3),
                        datasets)


def subgraph_cases(root, rng):
    """Legacy rewrites inside If/Loop bodies (applied as the lowering
    instantiates each body; ir/onnx/legacy.h)."""
    vi = helper.make_tensor_value_info
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    b = rng.standard_normal((3,)).astype(np.float32)
    sl = np.array([0.1, 0.2, 0.3], np.float32)
    # If-1 on a run-time condition: then = Add(x, b, axis=1) (b -> [3,1]),
    # else = PRelu-6(Neg(x), sl) (per-channel slope -> [3,1]) with
    # consumed_inputs. Both branches are inlined; the output is selected.
    then_g = helper.make_graph(
        [helper.make_node("Add", ["x", "b"], ["t_out"], broadcast=1, axis=1)],
        "then", [], [vi("t_out", F, [2, 3, 4])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["n"]),
         helper.make_node("PRelu", ["n", "sl"], ["e_out"], consumed_inputs=[0, 0])],
        "else", [], [vi("e_out", F, [2, 3, 4])])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
        "if_branch_legacy",
        [vi("c", TensorProto.BOOL, []), vi("x", F, [2, 3, 4]), vi("b", F, [3]),
         vi("sl", F, [3])],
        [vi("y", F, [2, 3, 4])])
    prelu = np.where(-x >= 0, -x, -x * sl[None, :, None])
    feeds = lambda c: [("c", np.array(c)), ("x", x), ("b", b), ("sl", sl)]
    write_sg_case(root, "if_branch_add_prelu", g,
                  [(feeds(True), [("y", x + b[None, :, None])]),
                   (feeds(False), [("y", prelu)])])
    # Loop-1, 3 iterations: v <- Sub(Mul(v, w, axis=0), b, axis=1) with
    # v [2,3,4], w [2] (-> [2,1,1]) and b [3] (-> [3,1]) read from the
    # outer scope; the iteration count M is an initializer.
    w = np.array([0.5, -1.5], np.float32)
    body = helper.make_graph(
        [helper.make_node("Mul", ["v_in", "w"], ["m"], broadcast=1, axis=0),
         helper.make_node("Sub", ["m", "b"], ["v_out"], broadcast=1, axis=1),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [vi("i", TensorProto.INT64, []), vi("cond_in", TensorProto.BOOL, []),
         vi("v_in", F, [2, 3, 4])],
        [vi("cond_out", TensorProto.BOOL, []), vi("v_out", F, [2, 3, 4])])
    g = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x"], ["y"], body=body)],
        "loop_body_legacy",
        [vi("x", F, [2, 3, 4]), vi("w", F, [2]), vi("b", F, [3])],
        [vi("y", F, [2, 3, 4])],
        initializer=[numpy_helper.from_array(np.array(3, np.int64), "M")])
    g.input.append(vi("M", TensorProto.INT64, []))
    v = x.astype(np.float64)
    for _ in range(3):
        v = v * w[:, None, None] - b[None, :, None]
    write_sg_case(root, "loop_body_mul_sub", g,
                  [([("x", x), ("w", w), ("b", b)], [("y", v.astype(np.float32))])])


if __name__ == "__main__":
    main()
