#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes control-flow test cases (If, Loop, Scan; ONNX backend-test layout)
with numpy references, for what the ONNX node suite does not cover: loops
with a constant trip count or a condition the body computes, outer-scope
values read through nested subgraphs (If and Loop inside a Loop body), If
with a run-time condition of shape [1], Scan-9/11 with input/output axes and
reverse directions, Scan-8 with a batch and a reverse direction, and a
zero-iteration Loop whose scan output type the body declares.

Usage: make_control_flow_cases.py OUT_DIR
"""
import os
import sys

import numpy as np
from onnx import helper, numpy_helper, TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_case  # noqa: E402

F = TensorProto.FLOAT
I64 = TensorProto.INT64
B = TensorProto.BOOL
rng = np.random.default_rng(5)


vi = onnx_case.value_info


def const(name, arr):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(arr), name))


def save(out_dir, name, graph, opset, feeds, outputs):
    onnx_case.save_case(os.path.join(out_dir, "test_cf_" + name),
                        onnx_case.model(graph, opset, 8, producer_name="make_control_flow_cases"),
                        [(feeds, outputs)])


def loop_for(out):
    # for i < 4: y = y * a + float(i); scan y.  'a' is a graph input read by the body.
    y0 = rng.standard_normal((2, 3)).astype(np.float32)
    a = rng.standard_normal((2, 3)).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Mul", ["y_in", "a"], ["ya"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Add", ["ya", "fi"], ["y_out"]),
         helper.make_node("Identity", ["y_out"], ["scan"])],
        "for_body", [vi("i", I64, []), vi("c_in", B, []), vi("y_in", F, [2, 3])],
        [vi("c_out"), vi("y_out"), vi("scan")])
    g = helper.make_graph(
        [const("M", np.array(4, np.int64)),
         helper.make_node("Loop", ["M", "", "y0"], ["y", "ys"], body=body)],
        "loop_for", [vi("y0", F, [2, 3]), vi("a", F, [2, 3])],
        [vi("y", F, [2, 3]), vi("ys", F, [4, 2, 3])])
    y, ys = y0.copy(), []
    for i in range(4):
        y = (y * a + np.float32(i)).astype(np.float32)
        ys.append(y)
    save(out, "loop_for", g, 13, [("y0", y0), ("a", a)], [("y", y), ("ys", np.stack(ys))])


def loop_while(out):
    # while cond: x = x + x; cond = i + 1 < 3 (computed by the body, folded).
    x0 = rng.standard_normal((3,)).astype(np.float32)
    body = helper.make_graph(
        [const("one", np.array(1, np.int64)), const("three", np.array(3, np.int64)),
         helper.make_node("Add", ["i", "one"], ["i1"]),
         helper.make_node("Less", ["i1", "three"], ["c_out"]),
         helper.make_node("Add", ["x_in", "x_in"], ["x_out"]),
         helper.make_node("Identity", ["x_in"], ["seen"])],
        "while_body", [vi("i", I64, []), vi("c_in", B, []), vi("x_in", F, [3])],
        [vi("c_out", B, []), vi("x_out", F, [3]), vi("seen", F, [3])])
    g = helper.make_graph(
        [const("go", np.array(True)),
         helper.make_node("Loop", ["", "go", "x0"], ["x", "xs"], body=body)],
        "loop_while", [vi("x0", F, [3])], [vi("x", F, [3]), vi("xs", F, [3, 3])])
    x, xs = x0.copy(), []
    for i in range(3):
        xs.append(x)
        x = x + x
    save(out, "loop_while", g, 11, [("x0", x0)], [("x", x), ("xs", np.stack(xs))])


def loop_nested(out):
    # for i < 3: v = If(i % 2 == 0, v + 1, v * 2); w = inner Loop(2) {w = w * 0.5 + b};
    # v = w; scan i-dependent sum. 'b' (graph input) is read two levels down,
    # 'v_in' (body input) by the If branches.
    v0 = rng.standard_normal((4,)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32)
    then_g = helper.make_graph([const("one_f", np.array(1, np.float32)),
                                helper.make_node("Add", ["v_in", "one_f"], ["t_out"])],
                               "then_g", [], [vi("t_out", F, [4])])
    else_g = helper.make_graph([const("two_f", np.array(2, np.float32)),
                                helper.make_node("Mul", ["v_in", "two_f"], ["e_out"])],
                               "else_g", [], [vi("e_out", F, [4])])
    inner = helper.make_graph(
        [const("half", np.array(0.5, np.float32)),
         helper.make_node("Identity", ["ic_in"], ["ic_out"]),
         helper.make_node("Mul", ["w_in", "half"], ["wh"]),
         helper.make_node("Add", ["wh", "b"], ["w_out"])],
        "inner_body", [vi("j", I64, []), vi("ic_in", B, []), vi("w_in", F, [4])],
        [vi("ic_out"), vi("w_out")])
    body = helper.make_graph(
        [const("two", np.array(2, np.int64)), const("zero", np.array(0, np.int64)),
         helper.make_node("Mod", ["i", "two"], ["m"]),
         helper.make_node("Equal", ["m", "zero"], ["even"]),
         helper.make_node("If", ["even"], ["v_if"], then_branch=then_g, else_branch=else_g),
         helper.make_node("Loop", ["two", "", "v_if"], ["v_out"], body=inner),
         helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("ReduceSum", ["v_out"], ["s"], keepdims=0)],
        "outer_body", [vi("i", I64, []), vi("c_in", B, []), vi("v_in", F, [4])],
        [vi("c_out"), vi("v_out"), vi("s")])
    g = helper.make_graph(
        [const("M", np.array(3, np.int64)),
         helper.make_node("Loop", ["M", "", "v0"], ["v", "sums"], body=body)],
        "loop_nested", [vi("v0", F, [4]), vi("b", F, [4])],
        [vi("v", F, [4]), vi("sums", F, [3])])
    v, sums = v0.copy(), []
    for i in range(3):
        v = v + np.float32(1) if i % 2 == 0 else v * np.float32(2)
        for _ in range(2):
            v = v * np.float32(0.5) + b
        sums.append(np.sum(v, dtype=np.float32))
    save(out, "loop_nested", g, 13, [("v0", v0), ("b", b)],
         [("v", v.astype(np.float32)), ("sums", np.array(sums, np.float32))])


def if_runtime(out, cond_value):
    # If with a run-time condition of shape [1]: both branches are computed and
    # Where selects; the branches read graph inputs x and y.
    x = rng.standard_normal((2, 2)).astype(np.float32)
    y = rng.standard_normal((2, 2)).astype(np.float32)
    then_g = helper.make_graph([const("one", np.array(1, np.float32)),
                                helper.make_node("Add", ["x", "one"], ["t0"]),
                                helper.make_node("Sub", ["x", "y"], ["t1"])],
                               "then_g", [], [vi("t0", F, [2, 2]), vi("t1", F, [2, 2])])
    else_g = helper.make_graph([helper.make_node("Mul", ["x", "y"], ["e0"]),
                                helper.make_node("Neg", ["x"], ["e1"])],
                               "else_g", [], [vi("e0", F, [2, 2]), vi("e1", F, [2, 2])])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["r0", "r1"], then_branch=then_g, else_branch=else_g)],
        "if_runtime", [vi("c", B, [1]), vi("x", F, [2, 2]), vi("y", F, [2, 2])],
        [vi("r0", F, [2, 2]), vi("r1", F, [2, 2])])
    r = (x + 1, x - y) if cond_value else (x * y, -x)
    save(out, "if_runtime_" + ("true" if cond_value else "false"), g, 11,
         [("c", np.array([cond_value])), ("x", x), ("y", y)],
         [("r0", r[0].astype(np.float32)), ("r1", r[1].astype(np.float32))])


def scan_axes(out):
    # Scan-11: x1 [3,4] scanned on axis 1, x2 [4,3] on axis 0 in reverse;
    # s = s + x1_t * x2_t; outputs: s per step on axis 0, x1_t * 2 on axis -1
    # prepended (reverse).
    s0 = rng.standard_normal((3,)).astype(np.float32)
    x1 = rng.standard_normal((3, 4)).astype(np.float32)
    x2 = rng.standard_normal((4, 3)).astype(np.float32)
    body = helper.make_graph(
        [const("two", np.array(2, np.float32)),
         helper.make_node("Mul", ["a", "c"], ["ac"]),
         helper.make_node("Add", ["s_in", "ac"], ["s_out"]),
         helper.make_node("Identity", ["s_out"], ["o1"]),
         helper.make_node("Mul", ["a", "two"], ["o2"])],
        "scan_body", [vi("s_in", F, [3]), vi("a", F, [3]), vi("c", F, [3])],
        [vi("s_out", F, [3]), vi("o1", F, [3]), vi("o2", F, [3])])
    g = helper.make_graph(
        [helper.make_node("Scan", ["s0", "x1", "x2"], ["s", "y1", "y2"], body=body,
                          num_scan_inputs=2, scan_input_axes=[1, 0],
                          scan_input_directions=[0, 1], scan_output_axes=[0, -1],
                          scan_output_directions=[0, 1])],
        "scan_axes", [vi("s0", F, [3]), vi("x1", F, [3, 4]), vi("x2", F, [4, 3])],
        [vi("s", F, [3]), vi("y1", F, [4, 3]), vi("y2", F, [3, 4])])
    s, o1, o2 = s0.copy(), [], []
    for t in range(4):
        a, c = x1[:, t], x2[3 - t, :]
        s = s + a * c
        o1.append(s)
        o2.append(a * 2)
    y1 = np.stack(o1, axis=0)
    y2 = np.stack(o2[::-1], axis=-1)
    save(out, "scan_axes", g, 11, [("s0", s0), ("x1", x1), ("x2", x2)],
         [("s", s), ("y1", y1.astype(np.float32)), ("y2", y2.astype(np.float32))])


def scan8_batch(out):
    # Scan-8, batch 2, 5 steps scanned in reverse, full-length sequence_lens.
    s0 = rng.standard_normal((2, 3)).astype(np.float32)
    x = rng.standard_normal((2, 5, 3)).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
         helper.make_node("Mul", ["s_out", "x_t"], ["o"])],
        "scan8_body", [vi("s_in", F, [3]), vi("x_t", F, [3])],
        [vi("s_out", F, [3]), vi("o", F, [3])])
    g = helper.make_graph(
        [helper.make_node("Scan", ["lens", "s0", "x"], ["s", "y"], body=body,
                          num_scan_inputs=1, directions=[1])],
        "scan8_batch", [vi("s0", F, [2, 3]), vi("x", F, [2, 5, 3])],
        [vi("s", F, [2, 3]), vi("y", F, [2, 5, 3])],
        initializer=[numpy_helper.from_array(np.array([5, 5], np.int64), "lens")])
    ss, ys = [], []
    for b in range(2):
        s, ob = s0[b].copy(), []
        for t in range(5):
            xt = x[b, 4 - t]
            s = s + xt
            ob.append(s * xt)
        ss.append(s)
        ys.append(np.stack(ob))
    save(out, "scan8_batch", g, 8, [("s0", s0), ("x", x)],
         [("s", np.stack(ss).astype(np.float32)), ("y", np.stack(ys).astype(np.float32))])


def loop_zero(out):
    # A trip count of 0: the carried value passes through, the scan output is
    # empty with the element shape the body declares.
    y0 = rng.standard_normal((2,)).astype(np.float32)
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Neg", ["y_in"], ["y_out"]),
         helper.make_node("Identity", ["y_in"], ["scan"])],
        "zero_body", [vi("i", I64, []), vi("c_in", B, []), vi("y_in", F, [2])],
        [vi("c_out", B, []), vi("y_out", F, [2]), vi("scan", F, [2])])
    g = helper.make_graph(
        [const("M", np.array(0, np.int64)),
         helper.make_node("Loop", ["M", "", "y0"], ["y", "ys"], body=body)],
        "loop_zero", [vi("y0", F, [2])], [vi("y", F, [2]), vi("ys", F, [0, 2])])
    save(out, "loop_zero", g, 13, [("y0", y0)],
         [("y", y0), ("ys", np.zeros((0, 2), np.float32))])


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    loop_for(out)
    loop_while(out)
    loop_nested(out)
    if_runtime(out, True)
    if_runtime(out, False)
    scan_axes(out)
    scan8_batch(out)
    loop_zero(out)


if __name__ == "__main__":
    main()
