#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Runs the pass golden tests: tests/passes/<pass>/<case>.mlccir.

A golden file starts with '//' header lines (this script parses them):

  // RUN: mlcc %models/NAME.onnx --passes=infer-shapes,fuse --emit=ir
  // Free text: what the case shows.

The RUN line is one mlcc command (split like a shell would, without expansion): 'mlcc' is
replaced by --mlcc, '%models' by the models directory; it runs without the caller's MLCC_*
environment variables. NAME is a model from make_models.py, written there at test time
(again whenever make_models.py is newer than the file). The rest of the file is either

  * exact mode: the whole expected standard output of the command, compared byte for byte
    (a mismatch prints a unified diff); or
  * check mode: when the header has '// CHECK:' lines (also CHECK-NEXT, CHECK-NOT,
    CHECK-SAME, CHECK-EMPTY) and nothing follows the header. They are run through LLVM's
    FileCheck when one is found (--filecheck, else FileCheck-16 / FileCheck on PATH or in
    /usr/lib/llvm-16/bin), otherwise through a built-in matcher for plain-text patterns
    (no {{regex}} or [[VAR]]), with FileCheck's whitespace folding.

--update rewrites the body of exact-mode files with the actual output (keeping the header)
for a human to review with `git diff`; check-mode files are never rewritten (their actual
output is printed instead). A new case is a file with only its header: run --update on it.

Exit status: 0 when every selected case passes, 1 otherwise, 2 for usage errors.
"""
import argparse
import difflib
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL_REF = re.compile(r"%models/([A-Za-z0-9_]+)\.onnx")
CHECK_LINE = re.compile(r"^//\s*(CHECK(?:-NEXT|-NOT|-SAME|-EMPTY)?):(.*)$")


class Case:
    def __init__(self, path):
        self.path = path
        rel = os.path.relpath(path, HERE)
        self.name = (path if rel.startswith("..") else rel)[:-len(".mlccir")]
        with open(path, encoding="utf-8") as f:
            text = f.read()
        lines = text.splitlines(keepends=True)
        n = 0
        while n < len(lines) and lines[n].startswith("//"):
            n += 1
        self.header = "".join(lines[:n])
        self.body = "".join(lines[n:])
        runs = [l[len("// RUN:"):].strip() for l in lines[:n] if l.startswith("// RUN:")]
        if len(runs) != 1:
            raise ValueError("%s: needs exactly one '// RUN:' line, found %d"
                             % (path, len(runs)))
        self.run = runs[0]
        self.checks = [(m.group(1), m.group(2).strip())
                       for m in (CHECK_LINE.match(l) for l in lines[:n]) if m]
        if self.checks and self.body.strip():
            raise ValueError("%s: has CHECK lines and an exact body; use one or the other"
                             % path)
        self.models = MODEL_REF.findall(self.run)

    def argv(self, mlcc, models_dir):
        args = shlex.split(self.run)
        if not args or args[0] != "mlcc":
            raise ValueError("%s: the RUN line must start with 'mlcc'" % self.path)
        return [mlcc] + [a.replace("%models", models_dir) for a in args[1:]]


def ensure_models(names, models_dir):
    """Writes each model that is missing or older than make_models.py."""
    script = os.path.join(HERE, "make_models.py")
    stamp = os.path.getmtime(script)
    stale = sorted({n for n in names
                    if not os.path.exists(os.path.join(models_dir, n + ".onnx"))
                    or os.path.getmtime(os.path.join(models_dir, n + ".onnx")) < stamp})
    if not stale:
        return
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    sys.path.insert(0, HERE)
    import make_models  # needs onnx: only imported when something is stale
    os.makedirs(models_dir, exist_ok=True)
    for n in stale:
        if n not in make_models.MODELS:
            raise ValueError("model '%s' is not defined in make_models.py" % n)
        make_models.write_model(n, models_dir)


def find_filecheck(explicit):
    if explicit:
        return explicit
    for name in ("FileCheck-16", "FileCheck"):
        path = shutil.which(name) or shutil.which(name, path="/usr/lib/llvm-16/bin")
        if path:
            return path
    return None


def fold_ws(s):
    return re.sub(r"[ \t]+", " ", s).strip()


def builtin_check(checks, output):
    """FileCheck's CHECK, CHECK-NEXT, CHECK-SAME, CHECK-EMPTY and CHECK-NOT for literal
    patterns. Returns an error message or None."""
    lines = [fold_ws(l) for l in output.splitlines()]
    pos, col = 0, 0   # the search resumes here: line |pos|, column |col|
    last = None       # line of the previous positive match
    nots = []         # CHECK-NOT patterns waiting for the next positive match

    def text_between(p0, c0, p1, c1):
        if p0 == p1:
            return [lines[p0][c0:c1]] if p0 < len(lines) else []
        return [lines[p0][c0:]] + lines[p0 + 1:p1] + ([lines[p1][:c1]] if p1 < len(lines)
                                                      else [])

    for kind, pat in checks:
        if "{{" in pat or "[[" in pat:
            return "the built-in matcher only takes plain text; '%s' needs FileCheck" % pat
        pat = fold_ws(pat)
        if kind == "CHECK-NOT":
            nots.append(pat)
            continue
        found = None  # (line, start column)
        if kind == "CHECK":
            for i in range(pos, len(lines)):
                at = lines[i].find(pat, col if i == pos else 0)
                if at >= 0:
                    found = (i, at)
                    break
        elif kind == "CHECK-NEXT":
            i = 0 if last is None else last + 1
            if i < len(lines) and pat in lines[i]:
                found = (i, lines[i].index(pat))
        elif kind == "CHECK-SAME":
            if last is not None and lines[last].find(pat, col) >= 0:
                found = (last, lines[last].find(pat, col))
        elif kind == "CHECK-EMPTY":
            i = 0 if last is None else last + 1
            if i < len(lines) and lines[i] == "":
                found = (i, 0)
        if found is None:
            after = lines[last] if last is not None else "<start of output>"
            return "%s: '%s' not found (after the line '%s')" % (kind, pat, after)
        for n in nots:
            for seg in text_between(pos, col, found[0], found[1]):
                if n in seg:
                    return "CHECK-NOT: '%s' found before '%s'" % (n, pat)
        nots = []
        last, pos, col = found[0], found[0], found[1] + len(pat)
    for n in nots:
        for seg in text_between(pos, col, len(lines), 0):
            if n in seg:
                return "CHECK-NOT: '%s' found after the last match" % n
    return None


def run_case(case, args, filecheck):
    """Returns (passed, message)."""
    argv = case.argv(args.mlcc, args.models_dir)
    # Hermetic: no MLCC_* variable of the caller's (MLCC_WINOGRAD forces a layout, ...).
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLCC_")}
    try:
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=args.timeout, env=env)
    except subprocess.TimeoutExpired:
        return False, "timed out after %ds: %s" % (args.timeout, shlex.join(argv))
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        return False, "mlcc exited with %d: %s\n%s" % (
            proc.returncode, shlex.join(argv), proc.stderr.decode("utf-8", "replace"))
    if case.checks:
        if filecheck:
            with tempfile.NamedTemporaryFile("w", suffix=".out", delete=False) as f:
                f.write(out)
            try:
                fc = subprocess.run([filecheck, case.path, "--input-file=" + f.name],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            finally:
                os.unlink(f.name)
            if fc.returncode == 0:
                return True, ""
            msg = fc.stdout.decode("utf-8", "replace")
        else:
            err = builtin_check(case.checks, out)
            if err is None:
                return True, ""
            msg = err + "\n"
        if args.update:
            msg += "CHECK files are not rewritten by --update; the actual output:\n" + out
        return False, "%s\n%s" % (shlex.join(argv), msg)
    if out == case.body:
        return True, ""
    if args.update:
        with open(case.path, "w", encoding="utf-8") as f:
            f.write(case.header + out)
        return True, "updated"
    diff = difflib.unified_diff(case.body.splitlines(keepends=True),
                                out.splitlines(keepends=True),
                                case.name + ".mlccir (expected)", "actual output")
    return False, "%s\n%s" % (shlex.join(argv), "".join(diff))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mlcc", required=True, help="the mlcc binary")
    ap.add_argument("--models-dir",
                    help="where the models are written (default: tests/passes_models beside "
                         "the mlcc binary, the build dir)")
    ap.add_argument("--update", action="store_true",
                    help="rewrite the expected output of exact-mode files")
    ap.add_argument("--filter", default="", help="regex on the case name, e.g. 'fuse/'")
    ap.add_argument("--filecheck", help="the FileCheck binary (default: search)")
    ap.add_argument("--no-filecheck", action="store_true",
                    help="use the built-in CHECK matcher even if FileCheck exists")
    ap.add_argument("--make-models-only", action="store_true",
                    help="write every model and exit (the CTest fixture)")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("files", nargs="*", help="golden files (default: all)")
    args = ap.parse_args()
    args.mlcc = os.path.abspath(args.mlcc)
    if args.models_dir is None:
        args.models_dir = os.path.join(os.path.dirname(args.mlcc), "tests", "passes_models")
    args.models_dir = os.path.abspath(args.models_dir)
    paths = args.files or sorted(glob.glob(os.path.join(HERE, "*", "*.mlccir")))
    try:
        cases = [Case(os.path.abspath(p)) for p in paths]
    except (OSError, ValueError) as e:
        print("run_golden.py: %s" % e, file=sys.stderr)
        return 2
    cases = [c for c in cases if re.search(args.filter, c.name)]
    if args.make_models_only:
        sys.dont_write_bytecode = True
        sys.path.insert(0, HERE)
        import make_models
        ensure_models(list(make_models.MODELS), args.models_dir)
        return 0
    if not cases:
        print("run_golden.py: no case matches", file=sys.stderr)
        return 2
    try:
        ensure_models([m for c in cases for m in c.models], args.models_dir)
    except ValueError as e:
        print("run_golden.py: %s" % e, file=sys.stderr)
        return 2
    filecheck = None if args.no_filecheck else find_filecheck(args.filecheck)
    failed = 0
    for case in cases:
        try:
            ok, msg = run_case(case, args, filecheck)
        except ValueError as e:
            ok, msg = False, str(e)
        status = "UPDATED" if msg == "updated" else "PASS" if ok else "FAIL"
        print("%-7s %s" % (status, case.name))
        if not ok:
            failed += 1
            sys.stdout.write(msg if msg.endswith("\n") else msg + "\n")
    print("%d of %d passed%s" % (len(cases) - failed, len(cases),
                                 "" if filecheck or not any(c.checks for c in cases)
                                 else " (built-in CHECK matcher)"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
