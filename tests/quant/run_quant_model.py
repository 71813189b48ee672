#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Quantized-model test: a shared model quantized by scripts/quantize.py, compiled
by mlcc, run, and compared with the exact numpy evaluation (tests/quant/qref.py).

    run_quant_model.py prepare --model-dir ../shared/models/resnet18 --out BUILD/quant/resnet18
    run_quant_model.py run --mlcc build/mlcc --out BUILD/quant/resnet18 --format qdq
        [--target x86|aarch64|riscv|cortex-m4|cortex-m55|rv32|rv32f] [--mattr A]
        [--qemu-cpu C] [--ort-report]

The microcontroller targets (docs/mcu.md) link the program with the board's
start-up file, linker script and semihosting harness (tests/mcu/harness.c,
through tests/mcu/run_mcu.py) and run it under qemu-system; the rule and the
reference are the same.

prepare writes qdq.onnx, qop.onnx and int.onnx (the QDQ model with uint8 input
and output) into --out, calibrated on the model's own sample input
(test_data_set_0/input_0.pb) plus two N(0,1) inputs drawn with seed 0, so the
files are the same on every run; it does nothing when --out already holds
them for the same model and quantizer (a stamp of both sha256s).

run feeds the sample input and applies the pass rule (docs/quantization.md):
measured in steps of the output's quantization scale, every element of mlcc's
output is within one step of the exact evaluation, and at least 99% of the
elements are identical (0 steps). For a float output (qdq/qop: the graph ends
in DequantizeLinear) a step is the last DequantizeLinear's scale and
"identical" means closer than 1e-3 steps; for the uint8 output of int.onnx
they are integer differences. With --ort-report it also prints, never
asserts, the same distances for onnxruntime-node 1.30 (graph optimizations on,
so its int8 kernels run) with its default session options and with
session.x64quantprecision = "1": without VNNI onnxruntime's default x86 kernels
add u8 x s8 pairs in saturating 16-bit arithmetic, so it can land many steps
away; a kernel of mlcc must not depend on the CPU that way.

Exit status: 0 pass, 1 fail, 77 skipped (the shared models or onnxruntime-node
are absent).
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import shutil

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import qref  # noqa: E402
import quantize  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests", "mcu"))
import run_mcu  # noqa: E402  (the bare-metal boards: compile flags, link, qemu-system)

TARGETS = {
    "x86": (["cc"], []),
    "aarch64": (["aarch64-linux-gnu-gcc"], ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]),
    "riscv": (["riscv64-linux-gnu-gcc"], ["qemu-riscv64", "-L", "/usr/riscv64-linux-gnu"]),
}
MCU_TARGETS = tuple(sorted(run_mcu.BOARDS))
FORMATS = ("qdq", "qop", "int")
SEED, N_RANDOM = 0, 2
MAX_STEPS, MIN_IDENTICAL = 1, 0.99
# Formats whose end-to-end output must meet the rule too. A QOperator graph's
# integer ops fix their requantization (qref.py), so the program and the
# reference agree bit for bit. A QDQ graph's Conv chains compile to the same
# integer kernels (the quant-fuse pass: QLinearConv with the spec's float
# requantization), so it is asserted as well; a float evaluation of QDQ Conv
# would differ by a step in a few elements per layer and cascade
# (docs/quantization.md).
END_TO_END_ASSERTED = ("qop", "qdq", "int")
PROBES_PER_RUN = 60


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def default_ort_dir():
    return os.path.join(ROOT, "tools", "ort")


def have_ort(ort_dir):
    return os.path.isdir(os.path.join(ort_dir, "node_modules", "onnxruntime-node"))


def prepare(args):
    src = os.path.join(args.model_dir, "model.onnx")
    sample = os.path.join(args.model_dir, "test_data_set_0", "input_0.pb")
    if not os.path.exists(src):
        print("SKIP %s: not found (shared models absent)" % src)
        return 77
    if not have_ort(args.ort_dir):
        print("SKIP: onnxruntime-node not under %s (scripts/setup.sh installs it)" % args.ort_dir)
        return 77
    stamp = {"model": sha256(src), "quantize.py": sha256(quantize.__file__),
             "seed": SEED, "random": N_RANDOM}
    stamp_path = os.path.join(args.out, "stamp.json")
    if os.path.exists(stamp_path) and all(
            os.path.exists(os.path.join(args.out, f + ".onnx")) for f in FORMATS):
        try:
            if json.load(open(stamp_path)) == stamp:
                print("PASS prepare %s: cached in %s" % (args.model_dir, args.out))
                return 0
        except ValueError:
            pass
    os.makedirs(args.out, exist_ok=True)
    try:
        qdq, qop, params, _ = quantize.quantize(src, [sample], N_RANDOM, SEED, args.ort_dir)
    except quantize.QuantizeError as e:
        print("FAIL prepare %s: %s" % (args.model_dir, e))
        return 1
    for name, m in (("qdq", qdq), ("qop", qop), ("int", quantize.integer_io(qdq, params))):
        tmp = os.path.join(args.out, name + ".onnx.tmp")
        onnx.save(m, tmp)
        os.replace(tmp, os.path.join(args.out, name + ".onnx"))
    shutil.copyfile(sample, os.path.join(args.out, "input_0.pb"))
    with open(stamp_path, "w") as f:
        json.dump(stamp, f)
    print("PASS prepare %s: %d quantized tensors -> %s" % (args.model_dir, len(params), args.out))
    return 0


def output_quant(model):
    """(scale, zero point) of the graph's output: the last DequantizeLinear's
    (float output) or the producing QuantizeLinear's (integer output). A
    float tail after the last DequantizeLinear (the tiny models' Softmax,
    which the quantizer leaves float) is walked back through: the step is
    then the smallest scale of the DequantizeLinears feeding the tail (a
    Softmax moves by less than one step of its input's scale when an input
    moves by one)."""
    g = model.graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    scales, todo, seen = [], [g.output[0].name], set()
    while todo:
        t = todo.pop()
        n = producer.get(t)
        if n is None or t in seen:
            continue
        seen.add(t)
        if n.op_type in ("DequantizeLinear", "QuantizeLinear"):
            scales.append((float(inits[n.input[1]]), int(inits[n.input[2]])))
            continue
        todo.extend(i for i in n.input if i and i not in inits)
    if not scales:
        raise SystemExit("FAIL: output '%s' is not computed from Q/DQ" % g.output[0].name)
    return min(scales)


def input_quant(model):
    g = model.graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    name = g.input[0].name
    for n in g.node:
        if n.op_type == "DequantizeLinear" and n.input[0] == name:
            return float(inits[n.input[1]]), int(inits[n.input[2]])
    return None


def distance(got, ref, scale, integer):
    """(max steps, fraction identical) of |got| against |ref|."""
    if integer:
        steps = np.abs(got.astype(np.int64) - ref.astype(np.int64)).astype(np.float64)
        same = steps == 0
    else:
        steps = np.abs(got.astype(np.float64) - ref.astype(np.float64)) / scale
        same = steps < 1e-3
    return float(steps.max(initial=0)), float(same.mean())


def run_mlcc(args, model_path, x, outputs, work, extra=()):
    """Compiles and runs |model_path| on |x|; |outputs| lists (name, numpy
    dtype) of the graph outputs; |extra| mlcc flags after the others.
    Returns ({name: flat array}, None) or (None, error text)."""
    lib = os.path.join(work, "libm.a")
    cmd = [args.mlcc, model_path, "-o", lib, "--name=m", "--target=" + args.target]
    if args.mattr:
        cmd.append("-mattr=" + args.mattr)
    cmd += args.mlcc_flag + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=3000)
    if p.returncode != 0:
        return None, "mlcc exited %d: %s" % (p.returncode, p.stderr.strip()[:2000])
    if args.target in MCU_TARGETS:
        return run_board(args, x, outputs, work)
    cc, runner = TARGETS[args.target]
    if args.qemu_cpu and runner:
        runner = runner[:1] + ["-cpu", args.qemu_cpu] + runner[1:]
    exe = os.path.join(work, "harness")
    p = subprocess.run(cc + ["-O1", "-std=c11", "-include", os.path.join(work, "m.h"),
                             "-DMLCC_INFO=m_info", os.path.join(ROOT, "tests", "e2e", "harness.c"),
                             lib, "-lm", "-o", exe], capture_output=True, text=True)
    if p.returncode != 0:
        return None, "linking the harness failed: %s" % p.stderr[:2000]
    xin = os.path.join(work, "in.bin")
    youts = [os.path.join(work, "out_%d.bin" % i) for i in range(len(outputs))]
    np.ascontiguousarray(x).tofile(xin)
    p = subprocess.run(runner + [exe, xin] + youts, capture_output=True, text=True, timeout=3000)
    if p.returncode != 0:
        return None, "harness exited %d: %s" % (p.returncode, p.stderr.strip()[:1000])
    return {name: np.fromfile(path, dtype=dt) for (name, dt), path in zip(outputs, youts)}, None


def run_board(args, x, outputs, work):
    """The MCU half of run_mlcc: m.h / libm.a in |work| linked with the
    semihosting harness (input_0.bin in, output_<i>.bin out) and run on the
    target's qemu-system board."""
    board = run_mcu.BOARDS[args.target]
    try:
        elf = run_mcu.link(board, work, "m", os.path.join(work, "libm.a"))
    except run_mcu.Failure as e:
        return None, str(e)
    np.ascontiguousarray(x).tofile(os.path.join(work, "input_0.bin"))
    youts = [os.path.join(work, "output_%d.bin" % i) for i in range(len(outputs))]
    for y in youts:
        if os.path.exists(y):
            os.remove(y)
    try:
        rc, out, err = run_mcu.run(board["qemu"] + run_mcu.SEMIHOSTING + ["-kernel", elf],
                                   cwd=work, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return None, "%s did not finish in %d s" % (board["qemu"][0], args.timeout)
    out += err  # the semihosting console is qemu's stderr
    if rc != 0 or "harness: PASS" not in out:
        return None, "the board harness exited %d: %s" % (rc, out.strip()[-1000:])
    return {name: np.fromfile(path, dtype=dt) for (name, dt), path in zip(outputs, youts)}, None


NP_TYPES = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.UINT8: np.uint8,
            onnx.TensorProto.INT8: np.int8}


def probe_model(model):
    """|model| with every int8/uint8 node output (each quantized tensor: the
    QuantizeLinear, QLinearConv, QLinearMatMul outputs and the integer data
    movement between them) added as a graph output, after the original ones."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inferred = onnx.shape_inference.infer_shapes(m)
    types = {vi.name: vi.type.tensor_type.elem_type for vi in inferred.graph.value_info}
    have = {o.name for o in m.graph.output}
    names = []
    for n in m.graph.node:
        for o in n.output:
            t = types.get(o)
            if o and o not in have and t in (onnx.TensorProto.UINT8, onnx.TensorProto.INT8):
                m.graph.output.append(onnx.helper.make_tensor_value_info(o, t, None))
                have.add(o)
                names.append((o, NP_TYPES[t]))
    return m, names


def run(args):
    if args.require_cpu_flag:
        try:
            flags = open("/proc/cpuinfo").read().split()
        except OSError:
            flags = []
        if args.require_cpu_flag not in flags:
            print("SKIP: this CPU lacks %s" % args.require_cpu_flag)
            return 77
    path = os.path.join(args.out, args.format + ".onnx")
    label = "%s.%s [%s%s]" % (os.path.basename(args.out.rstrip("/")), args.format, args.target,
                              (" " + args.mattr) if args.mattr else "")
    if not os.path.exists(path):
        print("SKIP %s: %s not prepared (shared models or onnxruntime-node absent)" % (label, path))
        return 77
    model = onnx.load(path)
    _, x = quantize.load_pb(os.path.join(args.out, "input_0.pb"))
    x = x.astype(np.float32)
    integer = args.format == "int"
    int_in = integer
    # A float tail after the last DequantizeLinear keeps a float output.
    out_type = model.graph.output[0].type.tensor_type.elem_type
    integer = integer and out_type == onnx.TensorProto.UINT8
    if int_in:
        s_in, z_in = input_quant(model)
        x = np.clip(np.rint(x.astype(np.float64) / np.float64(np.float32(s_in))) + z_in,
                    0, 255).astype(np.uint8)
    scale, _ = output_quant(model)
    in_name = model.graph.input[0].name
    out_name = model.graph.output[0].name
    out_dt = np.uint8 if integer else np.float32
    try:
        ref = qref.evaluate(model, {in_name: x})[out_name]
    except qref.EvalError as e:
        print("FAIL %s: the numpy reference: %s" % (label, e))
        return 1
    work = tempfile.mkdtemp(prefix="mlcc-quant-")
    try:
        # 1. Per tensor, teacher-forced: every quantized tensor of mlcc's run
        # against the reference computed from mlcc's own values of the
        # tensors before it.
        probe, probes = probe_model(model)
        got = {}
        same_checked = 0
        for k in range(0, len(probes), PROBES_PER_RUN):  # the harness takes <= 64 outputs
            chunk = probes[k:k + PROBES_PER_RUN]
            names = {n for n, _ in chunk} | {out_name}
            part = onnx.ModelProto()
            part.CopyFrom(probe)
            keep = [o for o in part.graph.output if o.name in names]
            del part.graph.output[:]
            part.graph.output.extend(keep)
            ppath = os.path.join(work, "probe.onnx")
            onnx.save(part, ppath)
            vals, err = run_mlcc(args, ppath, x, [(out_name, out_dt)] + chunk, work)
            if err:
                print("FAIL %s: the probe model: %s" % (label, err))
                return 1
            got.update(vals)
            if args.same_as:
                # The same tensors built with --same-as's flags: byte-identical.
                alt, err = run_mlcc(args, ppath, x, [(out_name, out_dt)] + chunk, work,
                                    args.same_as)
                if err:
                    print("FAIL %s: the probe model with %s: %s" % (label, args.same_as, err))
                    return 1
                for n, v in vals.items():
                    if v.tobytes() != alt[n].tobytes():
                        diff = int(np.count_nonzero(v != alt[n]))
                        print("FAIL %s: tensor '%s' differs in %d of %d elements from the build "
                              "with %s" % (label, n, diff, v.size, " ".join(args.same_as)))
                        return 1
                same_checked += len(vals)
        worst = []

        def check(name, want, have):
            steps, same = distance(have, want, 1.0, True)
            worst.append((same, steps, name, want.size))
        qref.evaluate(model, {in_name: x}, force={n: got[n] for n, _ in probes}, check=check)
        bad = [w for w in worst if w[1] > MAX_STEPS or w[0] < MIN_IDENTICAL]
        worst.sort()
        # 2. End to end: the unmodified model.
        got, err = run_mlcc(args, path, x, [(out_name, out_dt)], work)
        if err:
            print("FAIL %s: %s" % (label, err))
            return 1
        y = got[out_name].reshape(ref.shape)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    steps, same = distance(y, ref, scale, integer)
    e2e_ok = steps <= MAX_STEPS + 1e-3 and same >= MIN_IDENTICAL
    ok = not bad and (e2e_ok or args.format not in END_TO_END_ASSERTED)
    line = "%s %s: per tensor (%d quantized tensors, teacher-forced): %s; " % (
        "PASS" if ok else "FAIL", label, len(worst),
        ("%d break the rule, worst '%s' max %g steps %.3f%% identical" % (
            len(bad), bad[0][2], bad[0][1], 100 * bad[0][0])) if bad else
        ("all within %d step, the least identical '%s' %.3f%% (max %g steps)" % (
            MAX_STEPS, worst[0][2], 100 * worst[0][0], worst[0][1])) if worst else "none")
    line += "end to end%s: max %.3g steps of scale %.4g, %.2f%% identical (%d elements)" % (
        "" if args.format in END_TO_END_ASSERTED else " (reported)", steps, scale, 100 * same,
        ref.size)
    line += "; rule <= %d step, >= %.0f%% identical" % (MAX_STEPS, 100 * MIN_IDENTICAL)
    if args.same_as:
        line += "; %d tensors byte-identical to the build with %s" % (
            same_checked, " ".join(args.same_as))
    if args.ort_report:
        line += "; " + ort_report(args, path, model, x, ref, scale, integer)
    print(line)
    return 0 if ok else 1


def ort_report(args, path, model, x, ref, scale, integer):
    if not have_ort(args.ort_dir):
        return "onnxruntime-node absent"
    parts = []
    for prec, name in ((None, "onnxruntime default"), ("1", "x64quantprecision=1")):
        work = tempfile.mkdtemp(prefix="mlcc-quant-ort-")
        try:
            outs = quantize.ort_run(path, {model.graph.input[0].name: x}, args.ort_dir, work,
                                    threads=1, opt="all", precision=prec)
            y = outs[model.graph.output[0].name]
            steps, same = distance(y, ref, scale, integer)
            parts.append("%s max %.3g steps, %.2f%% identical" % (name, steps, 100 * same))
        except quantize.QuantizeError as e:
            parts.append("%s failed: %s" % (name, str(e)[:200]))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return "; ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("action", choices=("prepare", "run"))
    ap.add_argument("--model-dir")
    ap.add_argument("--out", required=True, help="folder of the quantized models")
    ap.add_argument("--mlcc")
    ap.add_argument("--format", choices=FORMATS, default="qdq")
    ap.add_argument("--target", choices=sorted(TARGETS) + list(MCU_TARGETS), default="x86")
    ap.add_argument("--timeout", type=int, default=600,
                    help="seconds per qemu-system run (microcontroller targets)")
    ap.add_argument("--mattr", default=None)
    ap.add_argument("--qemu-cpu", default=None)
    ap.add_argument("--mlcc-flag", action="append", default=[], help="extra mlcc flag")
    ap.add_argument("--require-cpu-flag", default=None,
                    help="exit 77 (skip) unless /proc/cpuinfo lists this flag (e.g. avx512_vnni)")
    ap.add_argument("--same-as", action="append", default=[],
                    help="mlcc flag of a second build whose quantized tensors and output must "
                         "be byte-identical (e.g. -mattr=-amx-tile,-amx-int8)")
    ap.add_argument("--ort-dir", default=default_ort_dir())
    ap.add_argument("--ort-report", action="store_true")
    args = ap.parse_args()
    if args.action == "prepare":
        if not args.model_dir:
            ap.error("prepare needs --model-dir")
        return prepare(args)
    if not args.mlcc:
        ap.error("run needs --mlcc")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
