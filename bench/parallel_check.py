#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks NAME_run_parallel against NAME_run, bit for bit, on real models.

For each MODEL (an .onnx path, a model folder, or the name of a model in
../shared/models) compiles it with mlcc (--target of the host, -mcpu=native
unless --mcpu), links bench/parallel_check_main.c with the pthread pool of
examples/parallel_for and runs it on the model's test_data_set_0 inputs (random
ones if it has none): NAME_run_parallel_v on pools of 2, 3 and 4 threads must
reproduce NAME_run_v's outputs exactly (docs/generated-api.md promises
bit-identical results). Prints PASS/FAIL per model; exits 1 on any failure.

Usage: bench/parallel_check.py --mlcc build/mlcc MODEL... [--mcpu native] [--extra FLAGS]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_kernels import model_inputs, MODELS, ROOT, HERE  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("models", nargs="+")
    ap.add_argument("--mcpu", default="native")
    ap.add_argument("--extra", default="", help="extra mlcc flags, space separated")
    args = ap.parse_args()
    failed = 0
    for m in args.models:
        model = m
        if os.path.isdir(model):
            model = os.path.join(model, "model.onnx")
        elif not os.path.exists(model):
            model = os.path.join(MODELS, m, "model.onnx")
        work = tempfile.mkdtemp(prefix="mlcc-pcheck-")
        try:
            lib = os.path.join(work, "libpc.a")
            subprocess.run([args.mlcc, model, "-o", lib, "--name=pc", "-mcpu=" + args.mcpu]
                           + [x for x in args.extra.split() if x], check=True)
            hdr = os.path.join(work, "pc.h")
            exe = os.path.join(work, "pcheck")
            pfor = os.path.join(ROOT, "examples", "parallel_for")
            subprocess.run(["cc", "-O2", "-include", hdr, "-DMLCC_NAME=pc", "-I", pfor,
                            os.path.join(HERE, "parallel_check_main.c"),
                            os.path.join(pfor, "mlcc_pthread_pfor.c"), lib, "-lm", "-lpthread",
                            "-o", exe], check=True)
            ins = model_inputs(model, open(hdr).read(), work)
            try:
                r = subprocess.run([exe] + ins, capture_output=True, text=True, timeout=600)
                ok, why = r.returncode == 0, r.stderr.strip() or "exit %d" % r.returncode
            except subprocess.TimeoutExpired:
                ok, why = False, "timed out (hang?)"
            print("%s %s%s" % ("PASS" if ok else "FAIL", m, "" if ok else ": " + why), flush=True)
            failed += not ok
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
