#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Runs ONNX backend test cases through tests/e2e/run_case.py in parallel.

Usage: run_suite.py --mlcc BIN [--target x86] [--jobs 2] [--filter REGEX]
                    [--data DIR ...] [--json OUT] [--list-passing OUT]
                    [--bind-shape-inputs]
By default it runs every case of Debian's libonnx-testdata node suite. Prints
one line per case and a closing "N passed, N failed, N skipped" line
(unsupported cases count as skipped). Exit 0 unless a case failed.

Outcomes: pass, fail (wrong values, crash, build failure), unsupported (mlcc
refused with its UNIMPLEMENTED error). Cases in out_of_scope.txt are not run.
With --bind-shape-inputs, a case refused only because a shape-determining
input (Reshape's shape, TopK's K, ...) is fed at run time is retried with that
input baked in at compile time (run_case.py --input-value, i.e. mlcc
--input-value=NAME=@<the data set's .pb>, compiled per data set); its outcome
is then "pass-bound" / "fail-bound" / "unsupported" with the reason recorded.
When the value mlcc names is computed inside the model (Range's limit from
Cast(size), ...), the fed graph inputs it depends on are baked in instead
(found by walking the graph backwards from that value).
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


RUNTIME_RE = re.compile(r"must be a compile-time constant; value '([^']*)' is computed at run time")


def fed_inputs_behind(case_dir, value):
    """Names of the graph inputs fed by the test data (not initializers) that
    |value| is computed from: |value| itself when it is one, else the fed
    inputs reached by walking the model graph backwards from the node that
    produces it (values a node's subgraphs read from the outer scope count as
    its inputs). Sorted; empty when |value| depends on no fed input."""
    import onnx
    model = onnx.load(os.path.join(case_dir, "model.onnx"), load_external_data=False)
    g = model.graph
    inits = {i.name for i in g.initializer}
    fed = {i.name for i in g.input if i.name not in inits}

    def reads(node):
        out = [n for n in node.input if n]
        subs = [a.g for a in node.attribute if a.HasField("g")]
        for a in node.attribute:
            subs.extend(a.graphs)
        for sg in subs:
            # Names a subgraph reads but does not define come from outside.
            defined = {i.name for i in sg.input} | {i.name for i in sg.initializer}
            for n in sg.node:
                defined.update(o for o in n.output if o)
            for n in sg.node:
                out.extend(x for x in reads(n) if x not in defined)
        return out

    producer = {}
    for node in g.node:
        for o in node.output:
            if o:
                producer[o] = node
    found, seen, todo = set(), set(), [value]
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        if v in fed:
            found.add(v)
        elif v in producer:
            todo.extend(reads(producer[v]))
    return sorted(found)


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
    ap.add_argument("--expect-pass", action="store_true",
                    help="exit 1 unless every selected case passed (CTest use)")
    ap.add_argument("--bind-shape-inputs", action="store_true",
                    help="retry cases refused for a run-time shape input with it bound")
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

    def run_one(name, full, input_values=()):
        cmd = [sys.executable, RUN_CASE, "--mlcc", args.mlcc, "--case", full,
               "--target", args.target]
        for n in input_values:
            cmd += ["--input-value", n]
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
        return outcome, line

    def run(case):
        name, full = case
        outcome, line = run_one(name, full)
        if outcome != "unsupported" or not args.bind_shape_inputs:
            return name, outcome, line
        # Bake run-time shape inputs in (mlcc --input-value) one refusal at a
        # time (at most 4): the value mlcc names, or the fed inputs it is
        # computed from.
        bound = []
        for _ in range(4):
            m = RUNTIME_RE.search(line)
            if not m:
                break
            new_names = [n for n in fed_inputs_behind(full, m.group(1)) if n not in bound]
            if not new_names:
                break
            bound.extend(new_names)
            o2, l2 = run_one(name, full, bound)
            if o2 != "unsupported":
                return name, o2 + "-bound", l2
            line = l2
        return name, outcome, line

    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for name, outcome, line in ex.map(run, cases):
            results[name] = {"outcome": outcome, "detail": line}
            print(line, flush=True)
    n_pass = sum(1 for r in results.values() if r["outcome"] == "pass")
    n_fail = sum(1 for r in results.values() if r["outcome"] in ("fail", "fail-bound"))
    n_bound = sum(1 for r in results.values() if r["outcome"] == "pass-bound")
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
    if args.bind_shape_inputs:
        print("%d passed, %d passed with shape inputs bound, %d failed, %d skipped"
              % (n_pass, n_bound, n_fail, n_skip))
    else:
        print("%d passed, %d failed, %d skipped" % (n_pass, n_fail, n_skip))
    if args.expect_pass and (not results or any(
            r["outcome"] not in ("pass", "pass-bound") for r in results.values())):
        return 1
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
