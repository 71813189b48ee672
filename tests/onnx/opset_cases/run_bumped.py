#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Re-exports a real model (a ../shared/models case folder) at a newer opset
with bump_opset.py and checks it against the model's own reference outputs
with tests/e2e/run_case.py. Exit 0 pass, 1 fail (an UNIMPLEMENTED refusal is a
failure here), 77 when the case folder is absent (shared models missing).

  run_bumped.py --mlcc build/mlcc --case ../shared/models/mlp --opset 21 [--target x86]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_CASE = os.path.join(HERE, "..", "..", "e2e", "run_case.py")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("--case", required=True)
    ap.add_argument("--opset", type=int, default=21)
    ap.add_argument("--target", default="x86")
    args = ap.parse_args()
    name = os.path.basename(os.path.normpath(args.case))
    if not os.path.isdir(args.case):
        print("SKIP %s at opset %d: %s not found (shared models absent)" %
              (name, args.opset, args.case))
        return 77
    work = tempfile.mkdtemp(prefix="mlcc-bump-")
    try:
        dst = os.path.join(work, name)
        p = subprocess.run([sys.executable, os.path.join(HERE, "bump_opset.py"), "--opset",
                            str(args.opset), args.case, dst])
        if p.returncode != 0:
            print("FAIL %s: bump_opset.py exited %d" % (name, p.returncode))
            return 1
        p = subprocess.run([sys.executable, RUN_CASE, "--mlcc", args.mlcc, "--case", dst,
                            "--target", args.target])
        return 1 if p.returncode != 0 else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
