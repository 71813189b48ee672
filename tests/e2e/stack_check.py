#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks NAME_STACK_SIZE (docs/generated-api.md, "Stack") on a real run.

Compiles a model with mlcc (--name=m), links tests/e2e/stack_harness.c, which
runs m_run_v, m_run_parallel_v with inline tasks, and m_run_parallel_v with
every task on its own thread, each on a pthread whose stack is M_STACK_SIZE
plus the harness's own measured need above a 16 MiB no-access guard (a bound
that is too small crashes), measures the stack each used (painted stack) and
compares the outputs with the case's references (run_case.compare; ONNX
backend-test layout) or, with --conv-model, with a numpy reference of a small
convolution net whose 3x3 stride-1 layer takes the Winograd kernel and whose
stride-2 layer the pixel-vector kernel's tile panel.

--static also compiles the model into one object (-c) and checks with
stack_frames.py that the deepest call chain of m_run, m_run_parallel and
m_task<k> fits M_STACK_SIZE (every frame from the object's prologues), which
needs no emulator; with --static-only nothing runs (any target).

Prints "PASS|FAIL|SKIP stack <case> [<target>]: ..."; exit 0 pass, 1 fail,
77 skipped (a missing case, or llvm-objdump for --static).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run_case  # noqa: E402  (load_pb, compare, TARGETS)
import stack_frames  # noqa: E402


def conv_ref(x, w, b, stride, pad):
    """Float64 2-D convolution, NCHW / OIHW, symmetric pads."""
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * (oh - 1) + 1:stride, j:j + stride * (ow - 1) + 1:stride]
            y += np.einsum("nchw,mc->nmhw", patch, w[:, :, i, j].astype(np.float64))
    return y + b[None, :, None, None]


def make_conv_model(folder):
    """x[1,32,28,28] -> Conv3x3 s1 (64) -> Relu -> Conv3x3 s2 (64) -> y[1,64,14,14]."""
    import onnx
    from onnx import helper, numpy_helper, TensorProto
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 32, 28, 28)).astype(np.float32)
    w1 = (rng.standard_normal((64, 32, 3, 3)) / np.sqrt(32 * 9)).astype(np.float32)
    b1 = rng.standard_normal(64).astype(np.float32)
    w2 = (rng.standard_normal((64, 64, 3, 3)) / np.sqrt(64 * 9)).astype(np.float32)
    b2 = rng.standard_normal(64).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], pads=[1] * 4),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["y"], kernel_shape=[3, 3], pads=[1] * 4,
                         strides=[2, 2]),
    ]
    inits = [numpy_helper.from_array(a, n) for a, n in ((w1, "w1"), (b1, "b1"), (w2, "w2"),
                                                        (b2, "b2"))]
    graph = helper.make_graph(nodes, "stackconv",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT,
                                                             [1, 64, 14, 14])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    os.makedirs(os.path.join(folder, "test_data_set_0"))
    onnx.save(model, os.path.join(folder, "model.onnx"))
    y = conv_ref(np.maximum(conv_ref(x, w1, b1, 1, 1), 0), w2, b2, 2, 1).astype(np.float32)
    for name, arr in (("input_0", x), ("output_0", y)):
        with open(os.path.join(folder, "test_data_set_0", name + ".pb"), "wb") as f:
            f.write(numpy_helper.from_array(arr, "x" if name == "input_0" else "y")
                    .SerializeToString())


def mlcc_flags(args):
    flags = ["--name=m", "--target=" + args.target, args.opt]
    if args.mattr:
        flags.append("-mattr=" + args.mattr)
    return flags


def static_check(args, model, work, label):
    if stack_frames.objdump_tool() is None:
        print("SKIP %s: llvm-objdump not found" % label)
        return 77
    obj = os.path.join(work, "m.o")
    hdr = os.path.join(work, "m_static.h")
    for extra in (["-c", "-o", obj], ["--emit=header", "-o", hdr]):
        p = subprocess.run([args.mlcc, model] + mlcc_flags(args) + extra, capture_output=True,
                           text=True)
        if p.returncode != 0:
            print("FAIL %s: mlcc exited %d: %s" % (label, p.returncode, p.stderr.strip()[:2000]))
            return 1
    bound = int(re.search(r"#define M_STACK_SIZE (\d+)", open(hdr).read()).group(1))
    arch, sizes, calls, unknown = stack_frames.analyze(obj)
    ext, memo = set(), {}
    run = max(stack_frames.deepest("m_run", sizes, calls, ext, memo)[0],
              stack_frames.deepest("m_run_v", sizes, calls, ext, memo)[0])
    task = max([stack_frames.deepest(f, sizes, calls, ext, memo)[0]
                for f in sizes if re.fullmatch(r"m_task\d+", f)] or [0])
    par = max(stack_frames.deepest("m_run_parallel", sizes, calls, ext, memo)[0],
              sizes.get("m_run_parallel", 0) + task)
    msg = "static %s: run %d, parallel %d, task %d of M_STACK_SIZE %d" % (arch, run, par, task,
                                                                         bound)
    if unknown:
        print("FAIL %s: %s; unrecognized stack-pointer writes in %s" % (label, msg,
                                                                         sorted(unknown)))
        return 1
    if max(run, par, task) > bound:
        print("FAIL %s: %s" % (label, msg))
        return 1
    print("ok %s: %s" % (label, msg))
    return 0


def run_check(args, case, model, work, label):
    lib = os.path.join(work, "libm.a")
    p = subprocess.run([args.mlcc, model, "-o", lib] + mlcc_flags(args), capture_output=True,
                       text=True)
    if p.returncode != 0:
        print("FAIL %s: mlcc exited %d: %s" % (label, p.returncode, p.stderr.strip()[:2000]))
        return 1
    cc, runner = run_case.TARGETS[args.target]
    exe = os.path.join(work, "stack_harness")
    # _GNU_SOURCE before the model header's <stdint.h> fixes the feature set.
    p = subprocess.run(cc + ["-O1", "-std=c11", "-D_GNU_SOURCE", "-include", os.path.join(work, "m.h"),
                             "-DMLCC_INFO=m_info", "-DMLCC_STACK_SIZE=M_STACK_SIZE",
                             "-DMLCC_RUN_PARALLEL_V=m_run_parallel_v", "-I", HERE,
                             os.path.join(HERE, "stack_harness.c"), lib, "-lm", "-lpthread",
                             "-o", exe], capture_output=True, text=True)
    if p.returncode != 0:
        print("FAIL %s: building the stack harness failed:\n%s" % (label, p.stderr[:3000]))
        return 1
    ds = os.path.join(case, "test_data_set_0")
    ins = sorted((f for f in os.listdir(ds) if f.startswith("input_")), key=lambda f: int(f[6:-3]))
    outs = sorted((f for f in os.listdir(ds) if f.startswith("output_")),
                  key=lambda f: int(f[7:-3]))
    argv = []
    for f in ins:
        _, arr = run_case.load_pb(os.path.join(ds, f))
        path = os.path.join(work, f[:-3] + ".bin")
        np.ascontiguousarray(arr).tofile(path)
        argv.append(path)
    refs = []
    for f in outs:
        _, arr = run_case.load_pb(os.path.join(ds, f))
        refs.append(arr)
        argv.append(os.path.join(work, f[:-3] + ".bin"))
    p = subprocess.run(runner + [exe] + argv, capture_output=True, text=True, timeout=1800)
    line = next((l for l in p.stdout.splitlines() if l.startswith("mlcc-stack ")), "")
    if p.returncode != 0:
        print("FAIL %s: stack harness exited %d (a negative code is a signal: -11 = the "
              "stack overflowed M_STACK_SIZE): %s %s" % (label, p.returncode, line,
                                                         p.stderr.strip()[:2000]))
        return 1
    for i, ref in enumerate(refs):
        got = np.fromfile(argv[len(ins) + i], dtype=ref.dtype)
        err = run_case.compare("output_%d" % i, got, ref, args.rtol, args.atol)
        if err:
            print("FAIL %s: %s (%s)" % (label, err, line))
            return 1
    print("ok %s: %s" % (label, line[len("mlcc-stack "):]))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlcc", required=True)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--case", help="folder with model.onnx and test_data_set_0")
    src.add_argument("--conv-model", action="store_true", help="the small conv net (numpy ref)")
    ap.add_argument("--target", default="x86", choices=sorted(run_case.TARGETS))
    ap.add_argument("--mattr", default=None)
    ap.add_argument("--opt", default="-O2")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-4)
    ap.add_argument("--static", action="store_true", help="also check the object's frames")
    ap.add_argument("--static-only", action="store_true", help="only check the object's frames")
    ap.add_argument("--skip-if-missing", action="store_true")
    ap.add_argument("--require-cpu-flag", default=None,
                    help="exit 77 (skip) unless /proc/cpuinfo lists this flag (e.g. avx512f)")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if args.require_cpu_flag and not args.static_only:
        try:
            flags = open("/proc/cpuinfo").read().split()
        except OSError:
            flags = []
        if args.require_cpu_flag not in flags:
            print("SKIP stack: this CPU lacks %s" % args.require_cpu_flag)
            return 77
    work = tempfile.mkdtemp(prefix="mlcc-stack-")
    try:
        if args.conv_model:
            case = os.path.join(work, "stackconv")
            make_conv_model(case)
        else:
            case = args.case
            if not os.path.exists(os.path.join(case, "model.onnx")):
                print("SKIP stack %s: no model" % case)
                return 77 if args.skip_if_missing else 1
        model = os.path.join(case, "model.onnx")
        label = "stack %s [%s%s]" % (os.path.basename(os.path.normpath(case)), args.target,
                                     " " + args.mattr if args.mattr else "")
        rc = 0
        if args.static or args.static_only:
            rc = static_check(args, model, work, label)
            if rc == 77 and not args.static_only:
                rc = 0
        if rc == 0 and not args.static_only:
            rc = run_check(args, case, model, work, label)
        if rc == 0:
            print("PASS %s" % label)
        return rc
    finally:
        if args.keep:
            print("work folder: %s" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
