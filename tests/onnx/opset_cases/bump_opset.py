#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Re-exports an ONNX model at a newer default-domain opset, like the onnx
version converter (which Debian's onnx 1.12 lacks past opset 17): the opset
import and IR version change, and every node whose op changed its signature
between the two opsets is rewritten to the new form (graph-level subgraphs of
If/Loop/Scan included). The rewrites, per ONNX's changelog:

  Reduce* but ReduceSum (18)      'axes' attribute -> int64 input 1
  ReduceSum, Squeeze, Unsqueeze (13)  'axes' attribute -> int64 input 1
  Split (13)                      'split' attribute -> int64 input 1
  Pad (11)                        'pads'/'value' attributes -> inputs 1 and 2
  Clip (11)                       'min'/'max' attributes -> inputs 1 and 2

An op that changed in a way these rules do not cover (a semantic change, not a
signature change) stops the script with exit 1 naming it, so a bumped model
never silently means something else. Data sets (test_data_set_*) are
symlinked beside the new model.

  bump_opset.py --opset 21 IN_CASE_DIR OUT_CASE_DIR
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

# IR version of each opset (onnx/helper.py VERSION_TABLE); 23+ capped at the
# IR version mlcc reads.
IR_OF_OPSET = {13: 7, 14: 7, 15: 8, 16: 8, 17: 8, 18: 8, 19: 9, 20: 9, 21: 10, 22: 10}
REDUCE_18 = {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
             "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}
# Ops whose semantics (not only their signature) change between opset 13 and
# 26 in ways the rewrites above cannot express; bumping across the version
# is refused. (Type-only extensions are not listed.)
SEMANTIC = {"DFT": 20, "GridSample": 20, "QuantizeLinear": 21, "DequantizeLinear": 21,
            "Resize": 18, "Pad": 19, "AveragePool": 19, "Split": 18, "LpPool": 18}


class Bumper:
    def __init__(self, graph, old, new):
        self.root, self.old, self.new = graph, old, new
        self.count = 0

    def crosses(self, version):
        return self.old < version <= self.new

    def const(self, graph, base, array):
        self.count += 1
        name = "%s__bump%d" % (base, self.count)
        graph.initializer.append(numpy_helper.from_array(array, name))
        return name

    def take_attr(self, node, name):
        for i, a in enumerate(node.attribute):
            if a.name == name:
                value = helper.get_attribute_value(a)
                del node.attribute[i]
                return value
        return None

    def attr_to_input(self, graph, node, attr, index, dtype):
        value = self.take_attr(node, attr)
        if value is None:
            return
        while len(node.input) < index:
            node.input.append("")
        name = self.const(graph, node.name or node.op_type, np.array(value, dtype=dtype))
        if len(node.input) == index:
            node.input.append(name)
        else:
            node.input[index] = name

    def node(self, graph, n):
        if n.domain not in ("", "ai.onnx"):
            return
        for a in n.attribute:  # subgraphs first
            if a.type == onnx.AttributeProto.GRAPH:
                self.graph(a.g)
            for g in a.graphs:
                self.graph(g)
        op = n.op_type
        if op in REDUCE_18 and self.crosses(18):
            self.attr_to_input(graph, n, "axes", 1, np.int64)
        elif op in ("ReduceSum", "Squeeze", "Unsqueeze") and self.crosses(13):
            self.attr_to_input(graph, n, "axes", 1, np.int64)
        elif op == "Split" and self.crosses(13):
            self.attr_to_input(graph, n, "split", 1, np.int64)
        elif op == "Pad" and self.crosses(11):
            self.attr_to_input(graph, n, "pads", 1, np.int64)
            value = self.take_attr(n, "value")
            if value is not None:
                n.input.append(self.const(graph, n.name or op, np.array(value, np.float32)))
        elif op == "Clip" and self.crosses(11):
            lo, hi = self.take_attr(n, "min"), self.take_attr(n, "max")
            n.input.append(self.const(graph, "clip_min", np.array(
                -3.4028234663852886e38 if lo is None else lo, np.float32)))
            n.input.append(self.const(graph, "clip_max", np.array(
                3.4028234663852886e38 if hi is None else hi, np.float32)))
        if op in SEMANTIC and self.crosses(SEMANTIC[op]) and not self.compatible(n):
            raise SystemExit("bump_opset: %s node '%s' changes meaning at opset %d; no "
                             "rewrite from opset %d to %d" % (op, n.name, SEMANTIC[op],
                                                              self.old, self.new))

    @staticmethod
    def compatible(n):
        """Nodes of SEMANTIC ops that mean the same at the new opset: those
        using only attributes whose defaults keep the old semantics."""
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if n.op_type == "Resize":  # 18 adds attributes whose defaults are Resize-13
            return True
        if n.op_type == "Pad":  # 19 adds a mode
            return True
        if n.op_type == "AveragePool":  # 19 adds dilations (default 1)
            return True
        if n.op_type == "Split":  # 18 adds num_outputs
            return "num_outputs" not in attrs
        return False

    def graph(self, g):
        for n in list(g.node):
            self.node(g, n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--opset", type=int, required=True)
    ap.add_argument("src", help="case folder (model.onnx + test_data_set_*) or a model file")
    ap.add_argument("dst", help="output case folder")
    args = ap.parse_args()
    src_model = args.src if args.src.endswith(".onnx") else os.path.join(args.src, "model.onnx")
    m = onnx.load(src_model)
    old = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), None)
    if old is None:
        print("bump_opset: %s has no default-domain opset import" % src_model, file=sys.stderr)
        return 1
    if args.opset < old:
        print("bump_opset: %s is at opset %d; cannot go down to %d" % (src_model, old,
                                                                        args.opset),
              file=sys.stderr)
        return 1
    Bumper(m.graph, old, args.opset).graph(m.graph)
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = args.opset
    m.ir_version = max(m.ir_version, IR_OF_OPSET.get(args.opset, 10))
    os.makedirs(args.dst, exist_ok=True)
    tmp = os.path.join(args.dst, "model.onnx.tmp")
    onnx.save(m, tmp)  # onnx.checker is not run: onnx 1.12 knows opsets <= 17 only
    os.replace(tmp, os.path.join(args.dst, "model.onnx"))
    src_dir = os.path.dirname(os.path.abspath(src_model))
    for d in sorted(os.listdir(src_dir)):
        if d.startswith("test_data_set_"):
            link = os.path.join(args.dst, d)
            if not os.path.lexists(link):
                os.symlink(os.path.join(src_dir, d), link)
    return 0


if __name__ == "__main__":
    sys.exit(main())
