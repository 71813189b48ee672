#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A retrained, re-quantized model (new int8 weights, int32 biases, scales and
zero points; the same shapes) compiles no kernel: every kernel comes from the
cache (issue 16).

    requant_test.py --mlcc build/mlcc --quant-dir BUILD/tests/quant/squeezenet1_1
        --model-dir ../shared/models/squeezenet1_1

Scales every float weight of the model by 1 + 0.05 * N(0,1) (seed 7, a
stand-in for retraining), quantizes it with other calibration data (3 random
inputs, seed 7), checks that the scales and the quantized weights differ from
the quant.* tests' models in --quant-dir (else the test would prove nothing),
then compiles the --quant-dir model and the new one, QDQ and QOperator, into
one fresh kernel cache and requires the second compile of each format to add
no cache miss (mlcc --print-stats). Exit status: 0 pass, 1 fail, 77 skipped
(models or onnxruntime-node absent).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import quantize  # noqa: E402


def stats(mlcc, model, cache, work, out):
    """(cache misses, local hits) after compiling |model| as library "m" (one
    name for both models: the name is part of the entry's symbols) into
    |work|/|out|."""
    os.makedirs(os.path.join(work, out), exist_ok=True)
    p = subprocess.run([mlcc, model, "-o", os.path.join(work, out, "libm.a"),
                        "--name=m", "--cache-dir=" + cache, "--print-stats"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("mlcc failed on %s: %s" % (model, p.stderr.strip()[:1000]))
    kv = dict(ln.split("\t", 1) for ln in p.stdout.splitlines() + p.stderr.splitlines()
              if "\t" in ln)
    return int(kv["misses"]), int(kv["local_hits"])


def initializers(path):
    return {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("--quant-dir", required=True)
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--ort-dir", default=os.path.join(HERE, "..", "..", "tools", "ort"))
    args = ap.parse_args()
    base = {f: os.path.join(args.quant_dir, f + ".onnx") for f in ("qdq", "qop")}
    if not all(os.path.exists(p) for p in base.values()):
        print("SKIP quant.requantized: %s not prepared" % args.quant_dir)
        return 77
    work = tempfile.mkdtemp(prefix="mlcc-requant-")
    try:
        # "Retrained": every float weight scaled by 1 + 0.05 * N(0,1) (seed 7).
        fm = onnx.load(os.path.join(args.model_dir, "model.onnx"))
        rng = np.random.default_rng(7)
        for i, init in enumerate(fm.graph.initializer):
            w = numpy_helper.to_array(init)
            if w.dtype == np.float32 and w.ndim >= 1 and w.size > 1:
                w = (w * (1 + 0.05 * rng.standard_normal(w.shape))).astype(np.float32)
                fm.graph.initializer[i].CopyFrom(numpy_helper.from_array(w, init.name))
        retrained = os.path.join(work, "retrained.onnx")
        onnx.save(fm, retrained)
        qdq, qop, _, _ = quantize.quantize(retrained, [], 3, 7, args.ort_dir)
        new = {"qdq": os.path.join(work, "qdq.onnx"), "qop": os.path.join(work, "qop.onnx")}
        onnx.save(qdq, new["qdq"])
        onnx.save(qop, new["qop"])
        fails = []
        a, b = initializers(base["qdq"]), initializers(new["qdq"])
        changed_scales = [k for k in a if k.endswith("_scale") and k in b and
                          a[k].shape == b[k].shape and not np.array_equal(a[k], b[k])]
        changed_w = [k for k in a if k.endswith("weight_quantized") and k in b and
                     not np.array_equal(a[k], b[k])]
        if not changed_scales or not changed_w:
            fails.append("the re-quantized model has the same scales or weights (%d, %d changed)"
                         % (len(changed_scales), len(changed_w)))
        cache = os.path.join(work, "cache")
        os.makedirs(cache)
        for f in ("qdq", "qop"):
            m0, _ = stats(args.mlcc, base[f], cache, work, "a_" + f)
            m1, h1 = stats(args.mlcc, new[f], cache, work, "b_" + f)
            if m1 != m0:
                fails.append("%s: the re-quantized model compiled %d kernels (cache misses %d -> %d)"
                             % (f, m1 - m0, m0, m1))
            print("%s: first compile %d kernels; re-quantized: %d new (local hits now %d)" % (
                f, m0, m1 - m0, h1))
    except quantize.QuantizeError as e:
        print("SKIP quant.requantized: %s" % e)
        return 77
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in fails:
        print("FAIL quant.requantized: " + f)
    if not fails:
        print("PASS quant.requantized: %d scales and %d quantized weights changed, 0 kernels "
              "compiled" % (len(changed_scales), len(changed_w)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
