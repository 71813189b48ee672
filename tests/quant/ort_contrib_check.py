#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""onnxruntime as an oracle for mlcc's com.microsoft int8 ops (QLinearAdd,
QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat):
runs onnxruntime-node 1.30 (tools/ort, tests/quant/ort_quant_run.js, graph
optimizations off) on every qg_*_qop case that tests/e2e/make_quant_graph_cases.py
wrote and compares its output with the case's reference, which mlcc matches
bit for bit (quant_graph.<case>.<target>). The pass rule is the issue's:
every element within one quantization step, at least 99% identical.
onnxruntime computes Add / Mul as (a - a_zp) * (a_s / c_s) + ..., a
different float32 order than DQ -> op -> Q, so a few elements may differ by
one step.

  ort_contrib_check.py CASES_DIR [--ort-dir tools/ort]

Exit status: 0 pass, 1 a case fails, 77 tools/ort or the cases are absent."""
import argparse
import glob
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import quantize  # noqa: E402  (scripts/quantize.py: ort_run)


def load_pbs(folder, prefix):
    out = []
    for p in sorted(glob.glob(os.path.join(folder, prefix + "_*.pb")),
                    key=lambda q: int(q.rsplit("_", 1)[1].split(".")[0])):
        t = onnx.TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        out.append((t.name, numpy_helper.to_array(t)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--ort-dir", default=os.path.join(ROOT, "tools", "ort"))
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.ort_dir, "node_modules", "onnxruntime-node")):
        print("SKIP: onnxruntime-node is not installed in %s" % args.ort_dir)
        return 77
    cases = sorted(glob.glob(os.path.join(args.cases, "qg_*_qop")))
    if not cases:
        print("SKIP: no qg_*_qop cases in %s" % args.cases)
        return 77
    failed = 0
    with tempfile.TemporaryDirectory(prefix="mlcc-ort-contrib-") as work:
        for case in cases:
            name = os.path.basename(case)
            data = os.path.join(case, "test_data_set_0")
            feeds = dict(load_pbs(data, "input"))
            refs = load_pbs(data, "output")
            got = quantize.ort_run(os.path.join(case, "model.onnx"), feeds, args.ort_dir,
                                   os.path.join(work, name))
            for oname, ref in refs:
                o = got[oname].astype(np.int64).reshape(ref.shape)
                d = np.abs(o - ref.astype(np.int64))
                same = float((d == 0).mean())
                ok = d.max() <= 1 and same >= 0.99
                print("%s %s: onnxruntime vs reference: max %d step(s), %.2f%% identical" %
                      ("ok  " if ok else "FAIL", name, int(d.max()), 100 * same))
                failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
