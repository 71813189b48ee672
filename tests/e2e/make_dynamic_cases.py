#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes test cases (ONNX backend-test layout) for outputs with data-dependent
shapes (NonZero, Compress, Unique, NonMaxSuppression) with numpy references.

Each case has several data sets whose actual output shapes differ (including
empty results and results at the bound), so tests/e2e/run_case.py checks the
shapes NAME_output_shape reports as well as the values. Covered: integer,
bool, float16 and NaN inputs, Compress with and without axis, Unique sorted
and in first-occurrence order with and without axis and with omitted optional
outputs, NonMaxSuppression with both box formats, several batches/classes,
run-time thresholds and no score threshold, and graphs mixing bounded and
static outputs with kernels running after the bounded one (its extent slot
must survive the rest of the run). Usage: make_dynamic_cases.py OUT_DIR
"""
import os
import sys

import numpy as np
from onnx import helper, numpy_helper, TensorProto

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onnx_case  # noqa: E402

rng = np.random.default_rng(5)
def write_case(out_dir, name, nodes, inputs, outputs, datasets, opset, inits=()):
    """inputs: [(name, dtype, shape)]; outputs: [(name, dtype)] (shape left
    unknown: it is data-dependent); datasets: [([in arrays], [out arrays])]."""
    graph = onnx_case.graph(
        nodes, name,
        [onnx_case.value_info(n, onnx_case.elem_type(d), list(s)) for n, d, s in inputs],
        [onnx_case.value_info(n, onnx_case.elem_type(d)) for n, d in outputs], inits)
    named = lambda arrays, decl: [(decl[i][0], a) for i, a in enumerate(arrays)]
    onnx_case.save_case(os.path.join(out_dir, name), onnx_case.model(graph, opset, 7),
                        [(named(ins, inputs), named(outs, outputs)) for ins, outs in datasets])


def nonzero_ref(x):
    return np.array(np.nonzero(x), dtype=np.int64).reshape(x.ndim, -1)


def unique_ref(x, axis, sorted_):
    y, idx, inv, cnt = np.unique(x, True, True, True, axis=axis)
    inv = inv.reshape(-1)
    if not sorted_:
        order = np.argsort(idx, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        y = np.take(y, order, axis=0 if axis is None else axis)
        idx, cnt, inv = idx[order], cnt[order], rank[inv]
    return y, idx.astype(np.int64), inv.astype(np.int64), cnt.astype(np.int64)


def nms_ref(boxes, scores, max_per_class, iou_thr, score_thr, center):
    """Greedy NMS as onnxruntime does it (score > threshold, IoU > threshold
    suppresses, ties go to the lower index)."""
    def corners(b):
        if center:
            xc, yc, w, h = [float(v) for v in b]
            return yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2
        y1, x1, y2, x2 = [float(v) for v in b]
        return min(y1, y2), min(x1, x2), max(y1, y2), max(x1, x2)

    def suppress(a, b):
        a, b = corners(a), corners(b)
        ih = min(a[2], b[2]) - max(a[0], b[0])
        iw = min(a[3], b[3]) - max(a[1], b[1])
        if ih <= 0 or iw <= 0:
            return False
        inter = np.float32(ih) * np.float32(iw)
        aa = (a[2] - a[0]) * (a[3] - a[1])
        ab = (b[2] - b[0]) * (b[3] - b[1])
        union = aa + ab - inter
        if aa <= 0 or ab <= 0 or union <= 0:
            return False
        return inter / union > iou_thr

    rows = []
    nb, nc, n = scores.shape
    for b in range(nb):
        for c in range(nc):
            cand = [i for i in range(n) if score_thr is None or scores[b, c, i] > score_thr]
            cand.sort(key=lambda i: (-scores[b, c, i], i))
            sel = []
            for i in cand:
                if len(sel) >= max_per_class:
                    break
                if all(not suppress(boxes[b, i], boxes[b, j]) for j in sel):
                    sel.append(i)
            rows += [[b, c, i] for i in sel]
    return np.array(rows, dtype=np.int64).reshape(-1, 3)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "dynamic_cases"
    os.makedirs(out, exist_ok=True)

    # NonZero on float32 with NaN and -0.0 (NaN is nonzero, -0.0 is zero).
    sets = []
    for density in (0.0, 0.3, 1.0, 0.7):
        x = np.where(rng.random((3, 4, 5)) < density, rng.standard_normal((3, 4, 5)), 0)
        x = x.astype(np.float32)
        x[0, 0, 0] = np.nan if density > 0.5 else -0.0
        sets.append(([x], [nonzero_ref(x)]))
    write_case(out, "dyn_nonzero_f32", [helper.make_node("NonZero", ["x"], ["y"])],
               [("x", np.float32, (3, 4, 5))], [("y", np.int64)], sets, 13)

    # NonZero on int8 and bool vectors, opset 9.
    for dt, name in ((np.int8, "dyn_nonzero_i8"), (np.bool_, "dyn_nonzero_bool")):
        sets = []
        for density in (0.5, 0.0, 1.0):
            x = (rng.random(17) < density) * rng.integers(1, 100, 17)
            x = x.astype(dt)
            sets.append(([x], [nonzero_ref(x)]))
        write_case(out, name, [helper.make_node("NonZero", ["x"], ["y"])],
                   [("x", dt, (17,))], [("y", np.int64)], sets, 9)

    # Compress along axis 1 of int32 and without axis (flattened) on float16.
    sets = []
    x = rng.integers(-50, 50, (2, 5, 3)).astype(np.int32)
    for cond in ([1, 0, 1, 1, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1], [0, 1, 0]):
        c = np.array(cond, dtype=np.bool_)
        sets.append(([x, c], [np.compress(c, x, axis=1)]))
    write_case(out, "dyn_compress_axis1_i32",
               [helper.make_node("Compress", ["x", "c"], ["y"], axis=1)],
               [("x", np.int32, (2, 5, 3)), ("c", np.bool_, (5,))], [("y", np.int32)],
               sets[:3], 11)
    write_case(out, "dyn_compress_short_cond",
               [helper.make_node("Compress", ["x", "c"], ["y"], axis=-2)],
               [("x", np.int32, (2, 5, 3)), ("c", np.bool_, (3,))], [("y", np.int32)],
               [([x, np.array(c, dtype=np.bool_)],
                 [np.compress(np.array(c, dtype=np.bool_), x, axis=1)])
                for c in ([0, 1, 0], [1, 1, 1], [0, 0, 0])], 11)
    xf = rng.standard_normal((4, 3)).astype(np.float16)
    sets = []
    for k in range(3):
        c = rng.random(10) < (0.2, 0.6, 1.0)[k]
        sets.append(([xf, c], [np.compress(c, xf)]))
    write_case(out, "dyn_compress_flat_f16", [helper.make_node("Compress", ["x", "c"], ["y"])],
               [("x", np.float16, (4, 3)), ("c", np.bool_, (10,))], [("y", np.float16)],
               sets, 11)

    # Unique: int64 without axis, sorted and not; float32 rows (axis 0) and
    # columns (axis 1) with repeats; only Y and counts requested.
    for sorted_ in (1, 0):
        sets = []
        for hi in (3, 50, 1):
            x = rng.integers(0, hi, (4, 6)).astype(np.int64)
            sets.append(([x], list(unique_ref(x, None, sorted_))))
        write_case(out, "dyn_unique_i64_sorted%d" % sorted_,
                   [helper.make_node("Unique", ["x"], ["y", "idx", "inv", "cnt"],
                                     sorted=sorted_)],
                   [("x", np.int64, (4, 6))],
                   [("y", np.int64), ("idx", np.int64), ("inv", np.int64), ("cnt", np.int64)],
                   sets, 11)
    for axis, sorted_ in ((0, 1), (1, 0), (-1, 1)):
        sets = []
        for hi in (2, 4, 1):
            base = rng.integers(0, hi, (3, 2)).astype(np.float32)
            x = base[:, rng.integers(0, 2, 5)] if axis != 0 else base[rng.integers(0, 3, 6), :]
            x = np.ascontiguousarray(x)
            sets.append(([x], list(unique_ref(x, axis, sorted_))))
        shape = sets[0][0][0].shape
        write_case(out, "dyn_unique_f32_axis%d_sorted%d" % (axis, sorted_),
                   [helper.make_node("Unique", ["x"], ["y", "idx", "inv", "cnt"], axis=axis,
                                     sorted=sorted_)],
                   [("x", np.float32, shape)],
                   [("y", np.float32), ("idx", np.int64), ("inv", np.int64), ("cnt", np.int64)],
                   sets, 11)
    sets = []
    for hi in (5, 2):
        x = rng.integers(-hi, hi, (9,)).astype(np.int8)
        y, _, _, cnt = unique_ref(x, None, 1)
        sets.append(([x], [y, cnt]))
    write_case(out, "dyn_unique_i8_y_counts",
               [helper.make_node("Unique", ["x"], ["y", "", "", "cnt"])],
               [("x", np.int8, (9,))], [("y", np.int8), ("cnt", np.int64)], sets, 11)

    # NonMaxSuppression: 2 batches, 3 classes, 12 boxes, at most 8 per class;
    # thresholds fed at run time; corner and center formats; no score threshold.
    for center in (0, 1):
        sets = []
        for iou, sth in ((0.5, 0.2), (0.1, 0.0), (0.9, 0.95)):
            xy = rng.random((2, 12, 2)).astype(np.float32) * 3
            wh = rng.random((2, 12, 2)).astype(np.float32) * 2.5 + 0.5
            if center:
                boxes = np.concatenate([xy, wh], axis=2)
            else:
                boxes = np.concatenate([xy, xy + wh], axis=2)[:, :, [1, 0, 3, 2]]
                boxes[:, ::3] = boxes[:, ::3][:, :, [2, 3, 0, 1]]  # flipped corners
            boxes = boxes.astype(np.float32)
            scores = rng.random((2, 3, 12)).astype(np.float32)
            ref = nms_ref(boxes, scores, 8, np.float32(iou), np.float32(sth), center)
            sets.append(([boxes, scores, np.array([iou], np.float32), np.array([sth], np.float32)],
                         [ref]))
        m = numpy_helper.from_array(np.array([8], np.int64), "m")
        write_case(out, "dyn_nms_center%d" % center,
                   [helper.make_node("NonMaxSuppression", ["boxes", "scores", "m", "iou", "sth"],
                                     ["sel"], center_point_box=center)],
                   [("boxes", np.float32, (2, 12, 4)), ("scores", np.float32, (2, 3, 12)),
                    ("iou", np.float32, (1,)), ("sth", np.float32, (1,))],
                   [("sel", np.int64)], sets, 11, inits=[m])
    sets = []
    for _ in range(2):
        xy = rng.random((1, 8, 2)).astype(np.float32)
        boxes = np.concatenate([xy, xy + 0.5], axis=2).astype(np.float32)
        scores = (rng.random((1, 2, 8)) - 0.5).astype(np.float32)
        sets.append(([boxes, scores], [nms_ref(boxes, scores, 8, 0.0, None, 0)]))
    m = numpy_helper.from_array(np.array(100, np.int64), "m")
    write_case(out, "dyn_nms_no_score_threshold",
               [helper.make_node("NonMaxSuppression", ["boxes", "scores", "m"], ["sel"])],
               [("boxes", np.float32, (1, 8, 4)), ("scores", np.float32, (1, 2, 8))],
               [("sel", np.int64)], sets, 10, inits=[m])

    # A graph mixing bounded and static outputs: NonZero of a computed mask
    # runs first; two MatMuls (with workspace intermediates) run after it.
    w = rng.standard_normal((6, 6)).astype(np.float32)
    sets = []
    for t in (0.0, 2.0, -5.0):
        x = rng.standard_normal((4, 6)).astype(np.float32)
        th = np.array(t, np.float32)
        mask = x > th
        z = np.maximum((x @ w) @ w, 0).astype(np.float32)
        sets.append(([x, th], [nonzero_ref(mask), z, np.compress(mask[:, 0], x, axis=0)]))
    write_case(out, "dyn_mixed_outputs",
               [helper.make_node("Greater", ["x", "th"], ["mask"]),
                helper.make_node("NonZero", ["mask"], ["nz"]),
                helper.make_node("Gather", ["mask", "zero"], ["col0"], axis=1),
                helper.make_node("Compress", ["x", "col0"], ["rows"], axis=0),
                helper.make_node("MatMul", ["x", "w"], ["h"]),
                helper.make_node("MatMul", ["h", "w"], ["h2"]),
                helper.make_node("Relu", ["h2"], ["z"])],
               [("x", np.float32, (4, 6)), ("th", np.float32, ())],
               [("nz", np.int64), ("z", np.float32), ("rows", np.float32)], sets, 13,
               inits=[numpy_helper.from_array(w, "w"),
                      numpy_helper.from_array(np.array(0, np.int64), "zero")])
    print("wrote cases to", out)


if __name__ == "__main__":
    main()
