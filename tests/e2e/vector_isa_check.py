#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that mlcc's generated kernels use the target's vector unit.

qemu cannot time code, so the vector-unit requirement of the cross targets is
checked on the emitted assembly: a small Conv (3x3, 16->32 channels, fused
Relu) and a Gemm are compiled with --emit=asm for
  aarch64             -> NEON: fmla on .4s vector registers
  riscv -mattr=+v     -> RVV: vfmacc/vfmadd and vle32/vse32
  x86 (-mcpu=skylake-avx512) -> vfmadd*ps on zmm registers
and each pattern must occur. Exit 0 pass, 1 fail.

Usage: vector_isa_check.py --mlcc build/mlcc
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

CHECKS = [
    ("aarch64", [], [r"fmla\s+v\d+\.4s"]),
    ("riscv", ["-mattr=+v"], [r"\bvf(macc|madd)\.v[vf]\b", r"\bvle32\.v\b"]),
    ("x86", ["-mcpu=skylake-avx512"], [r"vfmadd\d+ps\s+.*zmm"]),
]


def conv_model(path):
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((32, 16, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal((32,)).astype(np.float32), "b")
    g = numpy_helper.from_array(rng.standard_normal((64, 32 * 20 * 20)).astype(np.float32), "g")
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Flatten", ["r"], ["f"]),
        helper.make_node("Gemm", ["f", "g"], ["y"], transB=1),
    ]
    graph = helper.make_graph(
        nodes, "isa", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 20, 20])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])], [w, b, g])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlcc", required=True)
    args = ap.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory(prefix="mlcc-isa-") as work:
        model = os.path.join(work, "isa.onnx")
        conv_model(model)
        for target, flags, patterns in CHECKS:
            asm = os.path.join(work, "isa_%s.s" % target)
            r = subprocess.run([args.mlcc, model, "--target=" + target, "--emit=asm", "-o", asm]
                               + flags, capture_output=True, text=True)
            if r.returncode != 0:
                print("FAIL %s: mlcc exited %d: %s" % (target, r.returncode, r.stderr.strip()))
                failed += 1
                continue
            text = open(asm).read()
            for pat in patterns:
                n = len(re.findall(pat, text))
                ok = n > 0
                failed += not ok
                print("%s %s %s: %d matches of /%s/" % ("PASS" if ok else "FAIL", target,
                                                       " ".join(flags), n, pat))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
