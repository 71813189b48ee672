#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Issue 16: a re-quantized model (new int8 weights, weight scales, zero
points, activation scales and int32 bias; same shapes and structure)
compiles 0 kernels against the cache of the original: scales and zero points
are kernel arguments and the pre-packed int8 weights are weights, so only the
layout is in the kernel key. Also checks that both builds' outputs match their
exact numpy references (make_quant_kernel_cases.py), so the new values did
take effect.

Usage: quant_requantized_test.py MLCC"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_quant_kernel_cases as mk  # noqa: E402


def make(case_dir, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (1, 8, 10, 10)).astype(np.float32)
    s8 = lambda shape: rng.integers(-127, 128, size=shape).astype(np.int8)
    mk.qdq_conv_case(os.path.dirname(case_dir), os.path.basename(case_dir), x,
                     rng.uniform(0.005, 0.01), int(rng.integers(100, 150)), np.uint8, [
        dict(w=s8((16, 8, 3, 3)), ws=rng.uniform(0.002, 0.01, 16), wz=np.zeros(16, np.int8),
             bias="int32", b=rng.integers(-2000, 2000, 16), act="relu",
             ys=rng.uniform(0.01, 0.03), yz=int(rng.integers(0, 20)), ydt=np.uint8,
             pads=(1, 1, 1, 1)),
        dict(w=s8((12, 16, 3, 3)), ws=rng.uniform(0.002, 0.01, 12), wz=np.zeros(12, np.int8),
             bias="int32", b=rng.integers(-2000, 2000, 12), ys=rng.uniform(0.02, 0.04),
             yz=int(rng.integers(100, 150)), ydt=np.uint8, pads=(1, 1, 1, 1)),
    ])


def main():
    mlcc = sys.argv[1]
    failed = 0
    with tempfile.TemporaryDirectory(prefix="mlcc-requant-") as d:
        cache = os.path.join(d, "cache")
        env = dict(os.environ, MLCC_CACHE_DIR=cache)
        counts = []
        for seed, name in ((1, "orig"), (2, "requantized")):
            case = os.path.join(d, name)
            make(case, seed)
            p = subprocess.run([mlcc, os.path.join(case, "model.onnx"), "-v", "--name=m",
                                "-o", os.path.join(d, "lib%s.a" % name)], env=env,
                               capture_output=True, text=True)
            if p.returncode != 0:
                print("FAIL: mlcc exited %d: %s" % (p.returncode, p.stderr[-2000:]))
                return 1
            m = re.search(r"mlcc: (\d+) kernels? compiled", p.stderr)
            counts.append(int(m.group(1)) if m else -1)
            r = subprocess.run([sys.executable, os.path.join(HERE, "run_case.py"), "--mlcc", mlcc,
                                "--case", case], capture_output=True, text=True)
            print(r.stdout.strip())
            failed |= r.returncode != 0
        print("kernels compiled: original %d, re-quantized %d" % tuple(counts))
        if counts[0] <= 0 or counts[1] != 0:
            print("FAIL: the re-quantized model must compile 0 kernels (and the original some)")
            failed = 1
    print("PASS" if not failed else "FAIL")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
