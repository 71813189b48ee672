#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Compiles one ONNX test case with mlcc, runs it, and compares with references.

A case is a folder in the ONNX backend-test layout: model.onnx plus
test_data_set_*/input_N.pb and output_N.pb. The model is compiled for --target
into a static library, linked with tests/e2e/harness.c by the target's C
compiler, run (natively or under qemu-user), and every output is compared with
max|y - ref| <= atol + rtol*|ref| (floats; NaN matches NaN) or exactly
(integers, booleans), per DESIGN.md section 4. A case listed in
tests/onnx/tolerances.txt (known-inexact reference data) is compared with the
rtol/atol given there unless --rtol/--atol are passed.

Exit status: 0 pass, 1 wrong values / crash / build failure, 77 mlcc refused
the model as unsupported (its UNIMPLEMENTED error). Prints one result line:
"PASS|FAIL|UNSUPPORTED <case> [<target>]: detail".
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
sys.path.insert(0, HERE)
import onnx_case  # noqa: E402
TOLERANCES = os.path.join(HERE, "..", "onnx", "tolerances.txt")
DEFAULT_RTOL, DEFAULT_ATOL = 1e-4, 1e-5  # DESIGN.md section 4

TARGETS = {
    # alias: (C compiler, runner prefix)
    "x86": (["cc"], []),
    "aarch64": (["aarch64-linux-gnu-gcc"], ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]),
    "riscv": (["riscv64-linux-gnu-gcc"], ["qemu-riscv64", "-L", "/usr/riscv64-linux-gnu"]),
}


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    if t.data_type in onnx_case.SUBBYTE:
        # int4/uint4 (onnx 1.12 does not know them): one element per byte,
        # the layout of the generated API (docs/generated-api.md).
        return t.name, onnx_case.subbyte_array(t)
    return t.name, numpy_helper.to_array(t)


def compare_bf16(name, got, ref):
    """bfloat16 outputs (uint16 bits): equal, both NaN, or one bf16 ulp
    apart. mlcc rounds to nearest even; ONNX 1.12's Cast test data truncates."""
    g = got.reshape(-1).astype(np.int64)
    r = ref.reshape(-1).astype(np.int64)
    nan = lambda b: ((b & 0x7F80) == 0x7F80) & ((b & 0x7F) != 0)
    ok = (g == r) | (nan(g) & nan(r)) | ((((g ^ r) & 0x8000) == 0) & (np.abs(g - r) <= 1))
    if not ok.all():
        i = int(np.argmin(ok))
        return "%s: %d of %d bfloat16 elements differ by more than one ulp; first at %d: " \
               "got 0x%04x want 0x%04x" % (name, int((~ok).sum()), ok.size, i, g[i], r[i])
    return None


def fit_inputs_to_data(model, case, work):
    """Returns (model path, re-declared input names). A fed graph input whose
    static declared shape contradicts test_data_set_0's tensor (ONNX 1.12's
    castlike bfloat16 cases feed 'like' as [1] for a declared [3, 4]) is
    re-declared with the data's shape in a copy of the model."""
    ds = os.path.join(case, "test_data_set_0")
    if not os.path.isdir(ds):
        return model, []
    m = onnx.load(model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    feed = [i for i in m.graph.input if i.name not in inits]
    ins = sorted((f for f in os.listdir(ds) if f.startswith("input_")),
                 key=lambda f: int(f[6:-3]))
    changed = []
    for pos, f in enumerate(ins):
        name, arr = load_pb(os.path.join(ds, f))
        vi = next((i for i in feed if i.name == name), feed[pos] if pos < len(feed) else None)
        if vi is None or not vi.type.tensor_type.HasField("shape"):
            continue
        shape = vi.type.tensor_type.shape
        if not all(d.HasField("dim_value") for d in shape.dim):
            continue
        if tuple(d.dim_value for d in shape.dim) == arr.shape:
            continue
        shape.ClearField("dim")
        for d in arr.shape:
            shape.dim.add().dim_value = d
        changed.append(vi.name)
    if not changed:
        return model, []
    path = os.path.join(work, "model_fit.onnx")
    onnx.save(m, path)
    return path, changed


def case_tolerance(case_name, path=TOLERANCES):
    """(rtol, atol, reason) for |case_name| from tests/onnx/tolerances.txt
    ("case rtol atol  # reason" lines), or None when it is not listed."""
    if not os.path.exists(path):
        return None
    for line in open(path):
        body, _, why = line.partition("#")
        f = body.split()
        if len(f) == 3 and f[0] == case_name:
            return float(f[1]), float(f[2]), why.strip()
    return None


def compare_quantized(name, got, ref, step):
    """Issue 16's rule for a quantized output (an integer tensor, or a float
    one dequantized with scale |step|): every element within one quantization
    step of the reference and at least 99% identical."""
    g = got.reshape(-1).astype(np.float64)
    r = ref.reshape(-1).astype(np.float64)
    unit = step if ref.dtype.kind == "f" else 1.0
    d = np.abs(g - r) / unit
    same = d <= 1e-3
    if (d > 1 + 1e-3).any() or same.mean() < 0.99:
        i = int(np.argmax(d))
        return "%s: %d of %d elements more than one step (%g) apart, %.2f%% identical (need " \
            "99%%); worst at %d: got %r want %r" % (name, int((d > 1 + 1e-3).sum()), d.size, unit,
                                                  100 * same.mean(), i, g[i], r[i])
    return None


def compare(name, got, ref, rtol, atol, quant_step=None):
    if got.shape != ref.shape:
        got = got.reshape(ref.shape)
    if quant_step is not None:
        return compare_quantized(name, got, ref, quant_step)
    if ref.dtype.kind == "f":
        g = got.astype(np.float64)
        r = ref.astype(np.float64)
        both_nan = np.isnan(g) & np.isnan(r)
        err = np.abs(g - r)
        bad = ~both_nan & ~(err <= atol + rtol * np.abs(r))
        # inf == inf of the same sign is fine
        bad &= ~(np.isinf(r) & (g == r))
        if bad.any():
            i = int(np.argmax(bad.reshape(-1)))
            return "%s: %d of %d elements differ; first at %d: got %r want %r; max err %.3g" % (
                name, int(bad.sum()), bad.size, i, g.reshape(-1)[i], r.reshape(-1)[i],
                float(np.nanmax(np.where(both_nan, 0, err))) if err.size else 0.0)
        return None
    if not np.array_equal(got, ref):
        diff = np.nonzero(got.reshape(-1) != ref.reshape(-1))[0]
        i = int(diff[0])
        return "%s: %d of %d elements differ; first at %d: got %r want %r" % (
            name, len(diff), ref.size, i, got.reshape(-1)[i], ref.reshape(-1)[i])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("--case", required=True, help="folder with model.onnx and test_data_set_*")
    ap.add_argument("--model", default=None,
                    help="model file (default: <case>/model.onnx)")
    ap.add_argument("--target", default="x86", choices=sorted(TARGETS))
    ap.add_argument("--mattr", default=None)
    ap.add_argument("--qemu-cpu", default=None, help="e.g. rv64,v=true,vlen=256,vext_spec=v1.0")
    ap.add_argument("--mcpu", default=None, help="passed to mlcc as -mcpu=CPU")
    ap.add_argument("--quant-step", default=None,
                    help="compare outputs by issue 16's quantized rule: within one step "
                         "(this scale for float outputs, 1 for integer ones), >= 99%% identical; "
                         "'auto' reads the step from the case's quant_step.txt")
    ap.add_argument("--mlcc-flag", action="append", default=[],
                    help="an extra mlcc flag (repeatable), e.g. --passes=...")
    ap.add_argument("--opt", default="-O2")
    ap.add_argument("--rtol", type=float, default=None,
                    help="default: tests/onnx/tolerances.txt's entry for the case, else 1e-4")
    ap.add_argument("--atol", type=float, default=None,
                    help="default: tests/onnx/tolerances.txt's entry for the case, else 1e-5")
    ap.add_argument("--tolerance-file", default=None,
                    help="read 'rtol atol' from this file of the case folder (a bound the "
                         "case's generator derived, e.g. make_wq_matmul_cases.py)")
    ap.add_argument("--require-cpu-flag", default=None,
                    help="exit 77 (skip) unless /proc/cpuinfo lists this flag (e.g. avx512f)")
    ap.add_argument("--skip-if-missing", action="store_true",
                    help="exit 77 when the case folder does not exist")
    ap.add_argument("--input-value", action="append", default=None, metavar="NAME",
                    help="bake graph input NAME in at compile time (mlcc --input-value="
                         "NAME=@<data set's .pb>), compiling once per distinct value; "
                         "repeatable")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--via", default=None, choices=["asm", "ll"],
                    help="link the harness against the model built from mlcc --emit=asm "
                         "(assembled by the target's gcc) or --emit=ll (compiled by llc-16) "
                         "instead of the library")
    args = ap.parse_args()

    if args.require_cpu_flag:
        try:
            flags = open("/proc/cpuinfo").read().split()
        except OSError:
            flags = []
        if args.require_cpu_flag not in flags:
            print("SKIP %s: this CPU lacks %s" % (args.case, args.require_cpu_flag))
            return 77
    case = os.path.abspath(args.case)
    label = "%s [%s]" % (os.path.basename(case.rstrip("/")), args.target)
    if not os.path.isdir(case):
        if args.skip_if_missing:
            print("SKIP %s: %s not found (shared models absent)" % (label, case))
            return 77
        print("FAIL %s: no such case folder %s" % (label, case))
        return 1

    args.tolerance_note = ""
    if args.tolerance_file:
        with open(os.path.join(case, args.tolerance_file)) as f:
            args.rtol, args.atol = (float(v) for v in f.read().split()[:2])
        args.tolerance_note = " [tolerance rtol=%g atol=%g from the case's %s]" % (
            args.rtol, args.atol, args.tolerance_file)
    if args.rtol is None or args.atol is None:
        tol = case_tolerance(os.path.basename(case.rstrip("/")))
        if tol is not None:
            if args.rtol is None:
                args.rtol = tol[0]
            if args.atol is None:
                args.atol = tol[1]
            args.tolerance_note = " [tolerance rtol=%g atol=%g from tests/onnx/tolerances.txt]" % (
                args.rtol, args.atol)
        if args.rtol is None:
            args.rtol = DEFAULT_RTOL
        if args.atol is None:
            args.atol = DEFAULT_ATOL
    if args.quant_step == "auto":
        with open(os.path.join(case, "quant_step.txt")) as f:
            args.quant_step = float(f.read().strip())
    elif args.quant_step is not None:
        args.quant_step = float(args.quant_step)
    work = tempfile.mkdtemp(prefix="mlcc-case-")
    try:
        return run(args, case, label, work)
    finally:
        if args.keep:
            print("work folder:", work)
        else:
            shutil.rmtree(work, ignore_errors=True)


def compile_and_link(args, model, label, work, input_values):
    """Compiles |model| (with --input-value=NAME=@FILE for each (NAME, FILE)
    of |input_values|) and links the harness. Returns (exit code or None, exe)."""
    lib = os.path.join(work, "libm.a")
    cmd = [args.mlcc, model, "-o", lib, "--name=m", "--target=" + args.target, args.opt]
    if args.mattr:
        cmd.append("-mattr=" + args.mattr)
    if args.mcpu:
        cmd.append("-mcpu=" + args.mcpu)
    cmd += args.mlcc_flag
    cmd += ["--input-value=%s=@%s" % (n, f) for n, f in input_values]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["(no message)"])[0]
        if p.returncode == 1 and "[UNIMPLEMENTED]" in p.stderr:
            print("UNSUPPORTED %s: %s" % (label, msg))
            return 77, None
        print("FAIL %s: mlcc exited %d: %s" % (label, p.returncode, p.stderr.strip()[:2000]))
        return 1, None

    cc, _ = TARGETS[args.target]
    if args.via:
        rc, lib = build_via_text(args, cmd, label, work, cc)
        if rc is not None:
            return rc, None
    exe = os.path.join(work, "harness")
    p = subprocess.run(cc + ["-O1", "-std=c11", "-include", os.path.join(work, "m.h"),
                             "-DMLCC_INFO=m_info", os.path.join(HERE, "harness.c"),
                             lib, "-lm", "-o", exe], capture_output=True, text=True)
    if p.returncode != 0:
        print("FAIL %s: linking the harness failed:\n%s" % (label, p.stderr[:3000]))
        return 1, None
    return None, exe


LLC = "/usr/lib/llvm-16/bin/llc"


def build_via_text(args, lib_cmd, label, work, cc):
    """--via: the same compilation as |lib_cmd| to --emit=asm|ll, turned into
    one object (gcc -c for assembly; llc-16 with mlcc's CPU and features for
    LLVM IR). Returns (exit code or None, object path)."""
    ext = "s" if args.via == "asm" else "ll"
    text = os.path.join(work, "m." + ext)
    at = lib_cmd.index("-o")
    cmd = lib_cmd[:at] + lib_cmd[at + 2:] + ["--emit=" + args.via, "-o", text, "-v"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        print("FAIL %s: mlcc --emit=%s exited %d: %s" % (label, args.via, p.returncode,
                                                        p.stderr.strip()[:2000]))
        return 1, None
    obj = os.path.join(work, "m_text.o")
    if args.via == "asm":
        build = cc + ["-c", text, "-o", obj]
    else:
        info = dict(l.split(": ", 1) for l in p.stderr.splitlines()
                    if l.startswith(("Target: ", "CPU: ", "Features: ")))
        build = [LLC, "-O2", "-filetype=obj", "-relocation-model=pic",
                 "-mtriple=" + info["Target"], "-mcpu=" + info["CPU"]]
        if info.get("Features"):
            build.append("-mattr=" + info["Features"])
        build += [text, "-o", obj]
    p = subprocess.run(build, capture_output=True, text=True)
    if p.returncode != 0:
        print("FAIL %s: %s failed:\n%s" % (label, " ".join(build[:1]), p.stderr[:3000]))
        return 1, None
    return None, obj


def run(args, case, label, work):
    model, redeclared = fit_inputs_to_data(args.model or os.path.join(case, "model.onnx"),
                                           case, work)
    bound = list(args.input_value or [])
    _, runner = TARGETS[args.target]
    if args.qemu_cpu and runner:
        runner = runner[:1] + ["-cpu", args.qemu_cpu] + runner[1:]

    model_proto = onnx.load(model, load_external_data=False)
    inits = {i.name for i in model_proto.graph.initializer}
    graph_inputs = [i.name for i in model_proto.graph.input]
    if model_proto.ir_version < 4:
        # Before IR 4 every initializer was also listed as an input; mlcc
        # bakes those as weights (ir/onnx/onnx_import.c), so they are not
        # arguments of the compiled function.
        graph_inputs = [n for n in graph_inputs if n not in inits]
    unknown = [n for n in bound if n not in graph_inputs]
    if unknown:
        print("FAIL %s: --input-value names %s, not graph inputs" % (label, ",".join(unknown)))
        return 1
    outputs = [o.name for o in model_proto.graph.output]
    out_types = [o.type.tensor_type.elem_type for o in model_proto.graph.output]
    sets = sorted(d for d in os.listdir(case) if d.startswith("test_data_set_"))
    if not sets:
        print("FAIL %s: no test_data_set_* folders" % label)
        return 1
    exe = None
    if not bound:
        rc, exe = compile_and_link(args, model, label, work, [])
        if rc is not None:
            return rc
    built_for = None  # the bound values the current exe was compiled with
    for ds in sets:
        dsdir = os.path.join(case, ds)
        ins = sorted((f for f in os.listdir(dsdir) if f.startswith("input_")),
                     key=lambda f: int(f[6:-3]))
        refs = sorted((f for f in os.listdir(dsdir) if f.startswith("output_")),
                      key=lambda f: int(f[7:-3]))
        # Inputs fed by the data set: by name when the .pb names one, else by
        # position among the non-initializer graph inputs.
        feed_order = [n for n in graph_inputs if n not in inits]
        fed = {}
        files = {}
        for pos, f in enumerate(ins):
            name, arr = load_pb(os.path.join(dsdir, f))
            if not name or name not in graph_inputs:
                name = feed_order[pos] if pos < len(feed_order) else graph_inputs[pos]
            fed[name] = arr
            files[name] = os.path.join(dsdir, f)
        if bound:
            # Inputs baked in with --input-value: compile for this data set's
            # values (once, when every data set shares them).
            missing = [n for n in bound if n not in files]
            if missing:
                print("FAIL %s: %s: no data for --input-value %s" % (label, ds, ",".join(missing)))
                return 1
            key = [fed[n].tobytes() + str(fed[n].shape).encode() for n in bound]
            if key != built_for:
                rc, exe = compile_and_link(args, model, label, work,
                                           [(n, files[n]) for n in bound])
                if rc is not None:
                    return rc
                built_for = key
        argv = []
        for n in graph_inputs:
            if n in bound:
                continue
            if n not in fed:
                # an initializer that is also an input and not fed: mlcc keeps it
                # as an input (a fed value wins), so feed the initializer itself
                init = next(i for i in model_proto.graph.initializer if i.name == n)
                fed[n] = numpy_helper.to_array(init)
            path = os.path.join(work, "in_%d.bin" % len(argv))
            arr = fed[n]
            if arr.dtype == np.bool_:
                arr = arr.astype(np.uint8)
            np.ascontiguousarray(arr).tofile(path)
            argv.append(path)
        out_paths = [os.path.join(work, "out_%d.bin" % i) for i in range(len(outputs))]
        p = subprocess.run(runner + [exe] + argv + out_paths, capture_output=True, text=True,
                           timeout=1800)
        if p.returncode != 0:
            print("FAIL %s: %s: harness exited %d: %s" % (label, ds, p.returncode,
                                                        p.stderr.strip()[:1000]))
            return 1
        # Outputs with data-dependent dims: the harness reports the actual
        # dims (NAME_output_shape) and writes that many elements.
        actual = {}
        for line in p.stdout.splitlines():
            f = line.split()
            if len(f) == 4 and f[0] == "mlcc-output" and f[2] != "bound=0":
                actual[int(f[1])] = tuple(int(d) for d in f[3][5:].split(",") if d)
        for i, f in enumerate(refs):
            name, ref = load_pb(os.path.join(dsdir, f))
            if i in actual and actual[i] != ref.shape:
                print("FAIL %s: %s: output %d has shape %s, want %s" % (
                    label, ds, i, list(actual[i]), list(ref.shape)))
                return 1
            dt = ref.dtype if ref.dtype != np.bool_ else np.uint8
            got = np.fromfile(out_paths[i], dtype=dt)
            if ref.dtype == np.bool_:
                got = got.astype(np.bool_)
            if got.size != ref.size:
                print("FAIL %s: %s: output %d has %d elements, want %d" % (
                    label, ds, i, got.size, ref.size))
                return 1
            oname = outputs[i] if i < len(outputs) else name
            # (ONNX 1.12 stores bfloat16 references as uint16 tensors: the
            # model's declared output type tells.)
            if i < len(out_types) and out_types[i] == onnx.TensorProto.BFLOAT16:
                err = compare_bf16(oname, got, ref)
            else:
                err = compare(oname, got.reshape(ref.shape), ref, args.rtol, args.atol,
                              args.quant_step)
            if err:
                print("FAIL %s: %s: %s" % (label, ds, err))
                return 1
    print("PASS %s: %d data set(s)%s%s%s" % (
        label, len(sets), " [inputs re-declared as fed: %s]" % ",".join(redeclared)
        if redeclared else "", args.tolerance_note,
        " [--input-value: %s]" % ",".join(bound) if bound else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
