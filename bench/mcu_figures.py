#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""RAM and flash of the MLPerf Tiny models on the microcontroller targets
(BENCHMARKS.md, "Microcontrollers"): for every model of ../shared/models/tiny
and every MCU target, compiles it with `mlcc -v`, links it into the qemu
board's image (tests/mcu/), runs it once and prints one markdown table row:
workspace, NAME_STACK_SIZE, the stack the run used (painted-stack high-water
mark), code, weights, the planner's largest live set and the manifest's
live-set bound (memory.fused.peak_live_bytes), and on rv32/rv32f the guest
instructions of one inference (minstret under qemu -icount shift=0; the Arm
boards have no such counter in qemu 7.2, so speed is not measured there).

  bench/mcu_figures.py --mlcc build/mlcc [--models DIR] [--model M ...] [--target T ...] [--flag F ...]
      [--int8 QDIR]

With --int8 QDIR the models are the QDQ int8 versions scripts/quantize.py wrote
into QDIR/<model>/qdq.onnx with their sample input QDIR/<model>/input_0.pb
(`tests/quant/run_quant_model.py prepare`, or the ctest fixture
mcu.q.<model>.prepare: BUILD/tests/mcu_quant); the table then adds RAM
(workspace + measured stack) against the float32 model's, the manifest bound / 4
(its int8 equivalent), and the published int8 RAM of TensorFlow Lite Micro
and of microTVM + CMSIS-NN (MLPerf Tiny v1.0) for the same benchmarks.
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "mcu"))
import run_mcu  # noqa: E402  (tests/mcu/run_mcu.py: boards, compile, link)

TARGETS = ["cortex-m4", "cortex-m55", "rv32", "rv32f"]
MODELS = ["kws_dscnn", "vww_mobilenet", "ic_resnet8", "ad_autoencoder"]
# Published int8 RAM, bytes (issue 17: the TFLite Micro arena sizes commonly
# quoted for these benchmarks, ../shared/models/tiny/README.md; microTVM with
# CMSIS-NN workspaces in MLPerf Tiny v1.0). Not re-measured here.
PUBLISHED = {"kws_dscnn": (31e3, 17.2e3), "vww_mobilenet": (99e3, 64.8e3),
             "ic_resnet8": (54e3, 66.1e3), "ad_autoencoder": (3e3, 1.2e3)}


def int8_case(qdir, model, work):
    """A case folder (model.onnx, test_data_set_0/input_0.pb) for the QDQ model."""
    case = os.path.join(work, model)
    os.makedirs(os.path.join(case, "test_data_set_0"))
    shutil.copyfile(os.path.join(qdir, model, "qdq.onnx"), os.path.join(case, "model.onnx"))
    shutil.copyfile(os.path.join(qdir, model, "input_0.pb"),
                    os.path.join(case, "test_data_set_0", "input_0.pb"))
    return case


def figures(mlcc, models_dir, model, target, flags, case=None):
    case = case or os.path.join(models_dir, model)
    board = run_mcu.BOARDS[target]
    work = tempfile.mkdtemp(prefix="mlcc-mcu-bench-")
    try:
        lib, lines = run_mcu.compile_model(mlcc, case, target, work, "model", flags)
        text = "\n".join(lines)
        ram = re.search(r"workspace (\d+), stack (\d+)", text)
        flash = re.search(r"code (\d+), weights (\d+)", text)
        live = re.search(r"largest live set (\d+)", text)
        elf = run_mcu.link(board, work, "model", lib)
        for i, f in enumerate(run_mcu.data_files(case, "input")):
            np.ascontiguousarray(run_mcu.load_pb(f)).tofile(os.path.join(work, "input_%d.bin" % i))
        icount = ["-icount", "shift=0"] if target.startswith("rv32") else []
        rc, out, err = run_mcu.run(board["qemu"] + icount + run_mcu.SEMIHOSTING + ["-kernel", elf],
                                   cwd=work, timeout=1800)
        out += err
        used = re.search(r"stack used by the run ~(\d+)", out)
        insn = re.search(r"minstret delta (\d+) k", out)
        return dict(workspace=int(ram.group(1)), stack_bound=int(ram.group(2)),
                    stack_used=int(used.group(1)) if used else None,
                    code=int(flash.group(1)), weights=int(flash.group(2)),
                    live=int(live.group(1)) if live else None,
                    minsn=int(insn.group(1)) / 1000.0 if insn else None, rc=rc)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("--models", default=os.path.join(HERE, "..", "..", "shared", "models", "tiny"))
    ap.add_argument("--model", action="append", help="only this model (repeatable)")
    ap.add_argument("--target", action="append")
    ap.add_argument("--flag", action="append", default=[], help="extra mlcc flag")
    ap.add_argument("--int8", metavar="QDIR", help="the QDQ models of QDIR (see above)")
    args = ap.parse_args()
    with open(os.path.join(args.models, "manifest.json")) as f:
        manifest = json.load(f)["models"]
    if args.int8:
        print("| model | target | workspace | stack used (bound) | RAM int8 (float32) "
              "| code | weights | flash int8 (float32) | planner live set "
              "| manifest bound / 4 | TFLM arena | microTVM | M instructions |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    else:
        print("| model | target | workspace | stack used (bound) | RAM = workspace + stack used "
              "| code | weights | flash = code + weights | planner live set | manifest bound "
              "| M instructions |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    work = tempfile.mkdtemp(prefix="mlcc-mcu-int8-")
    try:
        for model in args.model or MODELS:
            bound = manifest[model]["memory"]["fused"]["peak_live_bytes"]
            case = int8_case(args.int8, model, work) if args.int8 else None
            for target in args.target or TARGETS:
                r = figures(args.mlcc, args.models, model, target, args.flag, case)
                used = r["stack_used"]
                used_s = str(used) if used is not None else "?"
                ram = r["workspace"] + used if used is not None else None
                minsn = "%.1f" % r["minsn"] if r["minsn"] is not None else "-"
                live = r["live"] if r["live"] is not None else "?"
                if args.int8:
                    f = figures(args.mlcc, args.models, model, target, args.flag)
                    fram = f["workspace"] + f["stack_used"] if f["stack_used"] else None
                    tflm, tvm = PUBLISHED[model]
                    print("| %s | %s | %d | %s (%d) | %s (%s) | %d | %d | %d (%d) | %s | %d "
                          "| %.1f KB | %.1f KB | %s |" % (
                              model, target, r["workspace"], used_s, r["stack_bound"],
                              ram if ram is not None else "?", fram if fram else "?",
                              r["code"], r["weights"], r["code"] + r["weights"],
                              f["code"] + f["weights"], live, bound // 4, tflm / 1e3,
                              tvm / 1e3, minsn))
                else:
                    print("| %s | %s | %d | %s (%d) | %s | %d | %d | %d | %s | %d | %s |" % (
                        model, target, r["workspace"], used_s, r["stack_bound"],
                        str(ram) if ram is not None else "?",
                        r["code"], r["weights"], r["code"] + r["weights"], live, bound, minsn))
                sys.stdout.flush()
    finally:
        shutil.rmtree(work, ignore_errors=True)

if __name__ == "__main__":
    main()
