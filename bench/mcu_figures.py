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

  bench/mcu_figures.py --mlcc build/mlcc [--models DIR] [--target T ...] [--flag F ...]
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


def figures(mlcc, models_dir, model, target, flags):
    case = os.path.join(models_dir, model)
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
    ap.add_argument("--target", action="append")
    ap.add_argument("--flag", action="append", default=[], help="extra mlcc flag")
    args = ap.parse_args()
    with open(os.path.join(args.models, "manifest.json")) as f:
        manifest = json.load(f)["models"]
    print("| model | target | workspace | stack used (bound) | RAM = workspace + stack used "
          "| code | weights | flash = code + weights | planner live set | manifest bound "
          "| M instructions |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for model in MODELS:
        bound = manifest[model]["memory"]["fused"]["peak_live_bytes"]
        for target in args.target or TARGETS:
            r = figures(args.mlcc, args.models, model, target, args.flag)
            used = r["stack_used"]
            used_s = ("<512" if used is not None and used <= 512 else str(used))
            print("| %s | %s | %d | %s (%d) | %s | %d | %d | %d | %s | %d | %s |" % (
                model, target, r["workspace"], used_s, r["stack_bound"],
                str(r["workspace"] + used) if used is not None else "?",
                r["code"], r["weights"], r["code"] + r["weights"],
                r["live"] if r["live"] is not None else "?", bound,
                "%.1f" % r["minsn"] if r["minsn"] is not None else "-"))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
