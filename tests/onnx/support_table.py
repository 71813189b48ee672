#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Generates docs/onnx-support.md from ONNX backend-suite runs. Never edit the
output by hand; regenerate it.

  # run the suites (x86: everything; cross targets: cross_sample.txt) and
  # regenerate the table and the CTest case lists:
  tests/onnx/support_table.py --mlcc build/mlcc --run [--targets x86,aarch64,riscv]
                              [--full-cross] [--jobs 2]
  # re-run some cases (e.g. after a fix) and merge them into the stored results:
  tests/onnx/support_table.py --mlcc build/mlcc --run --rerun-cases FILE
  # re-render the table and lists from the stored results (tests/onnx/results/*.json):
  tests/onnx/support_table.py

Per op the table shows the opset range from ir/ops.def, how many generated
opset 18-26 cases (tests/onnx/opset_cases) use it and, per target, how
many test cases that use the op passed, passed with run-time shape inputs
given at compile time (mlcc --input-value), failed, or were refused as unsupported. Then: ops the
test data uses that mlcc lacks, and every non-passing in-scope case with its
reason (the known gaps). Cases in out_of_scope.txt are listed with reasons,
and so are the cases tests/onnx/tolerances.txt compares with a wider tolerance
(tests/e2e/run_case.py applies those; this script only lists them).
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
DATA = "/usr/share/libonnx-testdata/data"
SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
RESULTS = os.path.join(HERE, "results")
OUT = os.path.join(ROOT, "docs", "onnx-support.md")
OP_RE = re.compile(r'^MLCC_OP\(\s*(\w+),\s*"([^"]*)",\s*"(\w+)",\s*(\d+),\s*(\d+),')


def ops_def():
    rows = collections.OrderedDict()
    with open(os.path.join(ROOT, "ir", "ops.def")) as f:
        for line in f:
            m = OP_RE.match(line)
            if m and m.group(2) in ("", "ai.onnx"):  # ONNX ops (not com.microsoft's)
                name = m.group(3)
                lo, hi = int(m.group(4)), int(m.group(5))
                if name in rows:  # several rows per op: union of ranges
                    lo, hi = min(lo, rows[name][0]), max(hi, rows[name][1])
                rows[name] = (lo, hi)
    return rows


def out_of_scope():
    skip = collections.OrderedDict()
    for line in open(os.path.join(HERE, "out_of_scope.txt")):
        parts = line.split("#", 1)
        name = parts[0].strip()
        if name:
            skip[name] = parts[1].strip() if len(parts) > 1 else ""
    return skip


def tolerances():
    """[(case, rtol, atol, reason)] from tolerances.txt (see run_case.py)."""
    out = []
    path = os.path.join(HERE, "tolerances.txt")
    if os.path.exists(path):
        for line in open(path):
            body, _, why = line.partition("#")
            f = body.split()
            if len(f) == 3:
                out.append((f[0], f[1], f[2], why.strip()))
    return out


OPSET_CASES = os.path.join(HERE, "opset_cases", "cases")


def opset_cases():
    """[(case, opset, ops, reference)] of tests/onnx/opset_cases/cases."""
    import onnx
    out = []
    if not os.path.isdir(OPSET_CASES):
        return out
    for case in sorted(os.listdir(OPSET_CASES)):
        d = os.path.join(OPSET_CASES, case)
        m = onnx.load(os.path.join(d, "model.onnx"), load_external_data=False)
        opset = next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), 0)
        ops = sorted({n.op_type for n in m.graph.node})
        ref = "numpy (REFERENCE.txt)" if os.path.exists(os.path.join(d, "REFERENCE.txt")) \
            else "onnxruntime-node 1.30"
        out.append((case, opset, ops, ref))
    return out


def opset_not_supported():
    """[(what, reason)] from tests/onnx/opset_cases/not_supported.txt."""
    out = []
    path = os.path.join(HERE, "opset_cases", "not_supported.txt")
    if os.path.exists(path):
        for line in open(path):
            if line.startswith("#") or not line.strip():
                continue
            what, _, why = line.partition("  #")
            out.append((what.strip(), why.strip()))
    return out


def case_ops(suite):
    """{case: sorted op types used (subgraphs included)} for a suite."""
    import onnx
    out = {}
    d = os.path.join(DATA, suite)
    if not os.path.isdir(d):
        return out

    def walk(g):
        for n in g.node:
            yield n.op_type
            for a in n.attribute:
                if a.g.node:
                    yield from walk(a.g)
                for gg in a.graphs:
                    yield from walk(gg)
    for case in sorted(os.listdir(d)):
        p = os.path.join(d, case, "model.onnx")
        if os.path.exists(p):
            m = onnx.load(p, load_external_data=False)
            out[case] = sorted(set(walk(m.graph)))
    return out


def run_suites(args, targets):
    os.makedirs(RESULTS, exist_ok=True)
    runner = os.path.join(HERE, "run_suite.py")
    for target in targets:
        for suite in SUITES:
            cmd = [sys.executable, runner, "--mlcc", args.mlcc, "--target", target,
                   "--jobs", str(args.jobs), "--data", os.path.join(DATA, suite),
                   "--bind-shape-inputs",
                   "--json", os.path.join(RESULTS, "%s-%s.json" % (suite, target))]
            stored = os.path.join(RESULTS, "%s-%s.json" % (suite, target))
            if args.rerun_cases:
                # Re-run only the listed cases and merge them into the stored results.
                if not os.path.exists(stored):
                    continue
                cmd[cmd.index("--json") + 1] = stored + ".part"
                cmd += ["--cases", args.rerun_cases]
            elif target != "x86" and not args.full_cross:
                if suite != "node":
                    continue
                cmd += ["--cases", os.path.join(HERE, "cross_sample.txt")]
            print("+", " ".join(cmd), flush=True)
            subprocess.run(cmd, check=False)
            if args.rerun_cases and os.path.exists(stored + ".part"):
                merged = json.load(open(stored))
                merged.update(json.load(open(stored + ".part")))
                os.remove(stored + ".part")
                with open(stored, "w") as f:
                    json.dump(merged, f, indent=1, sort_keys=True)


def write_lists():
    """CTest lists from the x86 results."""
    header = ("# ONNX backend %s cases that pass on x86; CTest registers each.\n"
              "# Generated by tests/onnx/support_table.py --run; do not edit.\n")
    for suite in SUITES:
        path = os.path.join(RESULTS, "%s-x86.json" % suite)
        if not os.path.exists(path):
            continue
        res = json.load(open(path))
        name = "node_cases.txt" if suite == "node" else suite.replace("-", "_") + "_cases.txt"
        with open(os.path.join(HERE, name), "w") as f:
            f.write(header % suite)
            for c in sorted(res):
                if res[c]["outcome"] == "pass":
                    f.write(c + "\n")
        if suite == "node":
            with open(os.path.join(HERE, "bound_cases.txt"), "w") as f:
                f.write(header.replace("pass on x86", "pass on x86 with their run-time "
                                       "shape inputs given by --input-value") % suite)
                for c in sorted(res):
                    if res[c]["outcome"] == "pass-bound":
                        f.write(c + "\n")


def short_reason(detail):
    d = re.sub(r"^\S+ \S+ \[\w+\]: ", "", detail)
    d = re.sub(r"/\S*/model\.onnx: ", "", d)
    d = re.sub(r"pass 'infer-shapes': ", "", d)
    d = d.replace("|", "\\|")
    return d[:160]


def render():
    ops = ops_def()
    skip = out_of_scope()
    results = {}  # (suite, target) -> {case: {...}}
    targets = []
    for fn in sorted(os.listdir(RESULTS)) if os.path.isdir(RESULTS) else []:
        m = re.match(r"(.+)-(x86|aarch64|riscv)\.json$", fn)
        if m:
            results[(m.group(1), m.group(2))] = json.load(open(os.path.join(RESULTS, fn)))
            if m.group(2) not in targets:
                targets.append(m.group(2))
    targets.sort(key=lambda t: ["x86", "aarch64", "riscv"].index(t))
    used = {s: case_ops(s) for s in SUITES}
    L = []
    L.append("# ONNX conformance")
    L.append("")
    L.append("Generated by `tests/onnx/support_table.py` from runs of the ONNX backend test "
             "data in Debian's `libonnx-testdata` (onnx 1.12, opsets <= 17). Do not edit; "
             "regenerate with `tests/onnx/support_table.py --mlcc build/mlcc --run`.")
    L.append("")
    L.append("Outcomes: **pass**; **pass with --input-value** (*input-value*, results key `pass-bound`): passes with the shape-determining inputs "
             "(Reshape's shape, TopK's K, Resize's scales, Loop's trip count, ...) that the "
             "test feeds at run time given to mlcc at compile time instead, with "
             "`mlcc --input-value=NAME=@<the test's .pb>` (README, Using mlcc): mlcc specializes "
             "every kernel on its shapes, so a value that decides a shape must be known when "
             "the model is compiled, as an initializer or through `--input-value`; "
             "**fail**: wrong values or a crash; **unsup**: mlcc refused the model with its "
             "UNIMPLEMENTED error. "
             "Cross targets run the fixed sample `tests/onnx/cross_sample.txt` under qemu "
             "unless a full run was requested (`--full-cross`).")
    L.append("")
    L.append("## Summary")
    L.append("")
    L.append("| suite | target | cases run | pass | pass with --input-value | fail | unsup | out of scope |")
    L.append("|---|---|---|---|---|---|---|---|")
    for suite in SUITES:
        n_skip = sum(1 for c in used[suite] if c in skip)
        for t in targets:
            r = results.get((suite, t))
            if r is None:
                continue
            c = collections.Counter(v["outcome"] for v in r.values())
            L.append("| %s | %s | %d | %d | %d | %d | %d | %d |" % (
                suite, t, len(r), c["pass"], c["pass-bound"],
                c["fail"] + c["fail-bound"], c["unsupported"], n_skip))
    L.append("")
    L.append("## Per operator (node suite)")
    L.append("")
    L.append("A case counts for every op its model uses (expanded function tests use many).")
    L.append("")
    L.append("The column *18-26 cases* counts the generated opset 18-26 cases that use the op "
             "(section Opsets 18-26).")
    L.append("")
    new_cases = opset_cases()
    new_by_op = collections.Counter(op for _, _, ops_, _ in new_cases for op in ops_)
    hdr = ("| op | opsets | 18-26 cases | " +
           " | ".join("%s pass/input-value/fail/unsup" % t for t in targets) + " |")
    L.append(hdr)
    L.append("|---|---|---|" + "---|" * len(targets))
    node_used = used["node"]
    by_op = collections.defaultdict(list)
    for case, oplist in node_used.items():
        if case in skip:
            continue
        for op in oplist:
            by_op[op].append(case)

    def cell(op, t):
        r = results.get(("node", t), {})
        c = collections.Counter(r[x]["outcome"] for x in by_op.get(op, []) if x in r)
        if not sum(c.values()):
            return "-"
        return "%d/%d/%d/%d" % (c["pass"], c["pass-bound"], c["fail"] + c["fail-bound"],
                                c["unsupported"])
    for op in sorted(ops, key=str.lower):
        lo, hi = ops[op]
        L.append("| %s | %d-%d | %s | %s |" % (op, lo, hi, new_by_op.get(op, 0) or "-",
                                                " | ".join(cell(op, t) for t in targets)))
    L.append("")
    missing = sorted(op for op in by_op if op not in ops)
    L.append("## Ops in the test data that mlcc does not implement")
    L.append("")
    L.append("| op | in-scope node cases |")
    L.append("|---|---|")
    for op in missing:
        L.append("| %s | %d |" % (op, len(by_op[op])))
    L.append("")
    L.append("## Known gaps (x86): every in-scope case that does not pass as-is")
    L.append("")
    L.append("| suite | case | outcome | reason |")
    L.append("|---|---|---|---|")
    for suite in SUITES:
        r = results.get((suite, "x86"), {})
        for case in sorted(r):
            o = r[case]["outcome"]
            if o == "pass":
                continue
            L.append("| %s | %s | %s | %s |" % (suite, case, o, short_reason(r[case]["detail"])))
    L.append("")
    # Hand-written sections (IR versions, functions, decomposed forms) are
    # kept in docs/onnx-support-notes.md and copied in verbatim.
    notes = os.path.join(ROOT, "docs", "onnx-support-notes.md")
    if os.path.exists(notes):
        with open(notes) as f:
            L.extend(f.read().rstrip("\n").split("\n"))
        L.append("")
    n_new = sum(1 for op in ops if ops[op][0] >= 18)
    n_26 = sum(1 for op in ops if ops[op][1] >= 26)
    L.append("## Opsets 18-26")
    L.append("")
    L.append("Debian's test data stops at opset 17, so `tests/onnx/opset_cases/"
             "make_opset_cases.py` generates at least one case per op and version that "
             "changed in opsets 18-26, with expected outputs from onnxruntime-node 1.30 "
             "(or a numpy reference where onnxruntime contradicts the spec; the case's "
             "REFERENCE.txt says why). CTest runs every case on x86 (`opset_cases.*`, label "
             "onnx) and a sample on aarch64 and riscv64 (all of them there with `ctest -L "
             "opset-cross-full`); `opset_cases.oracle_check` "
             "regenerates them and compares. The shared models re-exported at opset 21 "
             "(`bump_opset.py`) are checked against their references (`model.*.opset21.*`).")
    L.append("")
    L.append("| summary | count |")
    L.append("|---|---|")
    L.append("| ops in ir/ops.def | %d |" % len(ops))
    L.append("| ops whose range reaches opset 26 | %d |" % n_26)
    L.append("| ops new in opsets 18-26 | %d |" % n_new)
    L.append("| generated opset 18-26 cases | %d |" % len(new_cases))
    L.append("")
    L.append("| case | opset | ops | expected outputs |")
    L.append("|---|---|---|---|")
    for case, opset, ops_, ref in new_cases:
        L.append("| %s | %d | %s | %s |" % (case, opset, ", ".join(ops_), ref))
    L.append("")
    L.append("Not supported in opsets 18-26 (`tests/onnx/opset_cases/not_supported.txt`); "
             "each is refused with an error naming the op (or type) and opset:")
    L.append("")
    L.append("| op, version or type | reason |")
    L.append("|---|---|")
    for what, why in opset_not_supported():
        L.append("| %s | %s |" % (what.replace("|", "\\|"), why.replace("|", "\\|")))
    L.append("")
    L.append("## Out of scope (`tests/onnx/out_of_scope.txt`)")
    L.append("")
    L.append("| case | reason |")
    L.append("|---|---|")
    for case, why in skip.items():
        L.append("| %s | %s |" % (case, why))
    L.append("")
    L.append("## Compared with a wider tolerance (`tests/onnx/tolerances.txt`)")
    L.append("")
    L.append("Known-inexact reference data; every other case uses rtol 1e-4, atol 1e-5.")
    L.append("")
    L.append("| case | rtol | atol | reason |")
    L.append("|---|---|---|---|")
    for case, rtol, atol, why in tolerances():
        L.append("| %s | %s | %s | %s |" % (case, rtol, atol, why.replace("|", "\\|")))
    L.append("")
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(L))
    print("wrote", OUT)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlcc", default=None)
    ap.add_argument("--run", action="store_true", help="run the suites first")
    ap.add_argument("--targets", default="x86,aarch64,riscv")
    ap.add_argument("--full-cross", action="store_true",
                    help="run every case on the cross targets, not only the sample")
    ap.add_argument("--rerun-cases", default=None, metavar="FILE",
                    help="with --run: run only the cases listed in FILE (every suite and "
                         "target) and merge them into the stored results")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    if args.run:
        if not args.mlcc:
            ap.error("--run needs --mlcc")
        run_suites(args, [t for t in args.targets.split(",") if t])
    write_lists()
    render()
    return 0


if __name__ == "__main__":
    sys.exit(main())
