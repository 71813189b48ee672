#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Runs ONNX backend test cases through tests/e2e/run_case.py in parallel.

Usage: run_suite.py --mlcc BIN [--target x86] [--jobs 2] [--filter REGEX]
                    [--data DIR ...] [--json OUT] [--list-passing OUT]
By default it runs every case of Debian's libonnx-testdata node suite. Prints
one line per case and a closing "N passed, N failed, N skipped" line
(unsupported cases count as skipped). Exit 0 unless a case failed.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_CASE = os.path.join(HERE, "..", "e2e", "run_case.py")
DEFAULT_DATA = ["/usr/share/libonnx-testdata/data/node"]


def load_out_of_scope():
    path = os.path.join(HERE, "out_of_scope.txt")
    skip = {}
    if os.path.exists(path):
        for line in open(path):
            line = line.split("#", 1)
            name = line[0].strip()
            if name:
                skip[name] = line[1].strip() if len(line) > 1 else ""
    return skip


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("--target", default="x86")
    ap.add_argument("--mattr", default=None)
    ap.add_argument("--qemu-cpu", default=None)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--filter", default=None, help="regex on the case name")
    ap.add_argument("--cases", default=None, help="file listing case names to run")
    ap.add_argument("--data", action="append", default=None)
    ap.add_argument("--json", default=None, help="write {case: outcome} here")
    ap.add_argument("--list-passing", default=None, help="write passing case names here")
    args = ap.parse_args()

    data_dirs = args.data or DEFAULT_DATA
    out_of_scope = load_out_of_scope()
    wanted = None
    if args.cases:
        wanted = {l.strip() for l in open(args.cases) if l.strip() and not l.startswith("#")}
    cases = []
    for d in data_dirs:
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            full = os.path.join(d, name)
            if not os.path.exists(os.path.join(full, "model.onnx")):
                continue
            if wanted is not None and name not in wanted:
                continue
            if args.filter and not re.search(args.filter, name):
                continue
            if name in out_of_scope:
                continue
            cases.append((name, full))

    def run(case):
        name, full = case
        cmd = [sys.executable, RUN_CASE, "--mlcc", args.mlcc, "--case", full,
               "--target", args.target]
        if args.mattr:
            cmd += ["--mattr", args.mattr]
        if args.qemu_cpu:
            cmd += ["--qemu-cpu", args.qemu_cpu]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
            line = (p.stdout.strip().splitlines() or [p.stderr.strip()[:300]])[-1]
            rc = p.returncode
        except subprocess.TimeoutExpired:
            line, rc = "FAIL %s: timed out" % name, 1
        outcome = {0: "pass", 77: "unsupported"}.get(rc, "fail")
        return name, outcome, line

    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for name, outcome, line in ex.map(run, cases):
            results[name] = {"outcome": outcome, "detail": line}
            print(line, flush=True)
    n_pass = sum(1 for r in results.values() if r["outcome"] == "pass")
    n_fail = sum(1 for r in results.values() if r["outcome"] == "fail")
    n_skip = sum(1 for r in results.values() if r["outcome"] == "unsupported")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    if args.list_passing:
        with open(args.list_passing, "w") as f:
            f.write("# ONNX backend node tests that pass on %s; CTest registers each.\n"
                    "# Regenerate: tests/onnx/run_suite.py --mlcc build/mlcc "
                    "--list-passing tests/onnx/node_cases.txt\n" % args.target)
            for n in sorted(results):
                if results[n]["outcome"] == "pass":
                    f.write(n + "\n")
    print("%d passed, %d failed, %d skipped" % (n_pass, n_fail, n_skip))
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
