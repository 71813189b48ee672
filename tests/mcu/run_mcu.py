#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Microcontroller tests (tests/mcu/README.md): compile a model with mlcc for a
bare-metal target, link it with the board's start-up file, linker script and
the semihosting harness (harness.c), run it under qemu-system and compare the
outputs with the reference outputs of the case folder.

  run_mcu.py --mlcc MLCC --case DIR --target cortex-m4|cortex-m55|rv32|rv32f [--skip-if-missing]
      DIR holds model.onnx and test_data_set_0/{input_*,output_*}.pb. Passes if
      qemu exits 0 (the harness compared every float32 output with rtol 1e-4,
      atol 1e-5), the outputs it wrote agree with the references here too, and
      the stack the run used is at most the header's NAME_STACK_SIZE.
  run_mcu.py --mlcc MLCC --symbols --target T --case DIR [--case DIR ...]
      nm on each model's archive: every undefined symbol is defined in the
      archive or is in the allowed set: memcpy, memset, memmove, plus the
      single-precision soft-float helpers of libgcc where the target has no
      FPU. No libm, no double-precision helpers, no threads, no TLS.
  run_mcu.py --mlcc MLCC --weights-section NAME --target T --case DIR
      the weights object of the archive has section NAME, read-only
      (SHF_ALLOC, not SHF_WRITE), NAME_WEIGHTS_SIZE bytes, holding NAME_weights;
      the linked image has the default section's blob in the linker script's
      .mlcc_weights output section, inside the board's flash region.
  run_mcu.py --mlcc MLCC --workspace-bound --target T --case DIR [--case DIR ...]
      mlcc -v's workspace equals its largest live set (the planner's lower bound
      after fusion and in-place reuse), which is at most the manifest's
      memory.fused.peak_live_bytes (../shared/models/tiny/manifest.json).
  run_mcu.py --mlcc MLCC --cmake-consumer --target T --case DIR
      configures tests/mcu/consumer with the toolchain file of T
      (toolchains/arm-none-eabi.cmake or riscv32-unknown-elf.cmake): add_ml_model
      for x86 and T (`model` must be T's variant, found through the toolchain's
      MLCC_TARGET_ALIAS; no -lm), the harness linked by
      ml_model_board_executable, and `ctest`, which starts the harness through
      CMAKE_CROSSCOMPILING_EMULATOR (qemu-system, semihosting).
Exit 0 = pass, 1 = fail, 77 = skipped (a case folder is absent).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
RTOL, ATOL = 1e-4, 1e-5

# Per target: the C compiler and its flags for the harness, the start-up
# file, the linker script, the flash region [lo, hi) and the qemu command.
SEMIHOSTING = ["-semihosting-config", "enable=on,target=native", "-nographic",
               "-monitor", "none", "-serial", "none"]
ARM_CC = "arm-none-eabi-gcc"
RV_CC = "riscv64-unknown-elf-gcc"
BOARDS = {
    "cortex-m4": dict(cc=ARM_CC, tool="arm-none-eabi-",
                      flags=["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard",
                             "-mfpu=fpv4-sp-d16"],
                      startup="startup_cortex_m.c", ld="mps2-an386.ld",
                      flash=(0x00000000, 0x00400000),
                      qemu=["qemu-system-arm", "-M", "mps2-an386", "-cpu", "cortex-m4"]),
    "cortex-m55": dict(cc=ARM_CC, tool="arm-none-eabi-",
                       flags=["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"],
                       startup="startup_cortex_m.c", ld="mps3-an547.ld",
                       flash=(0x60000000, 0x61000000),
                       qemu=["qemu-system-arm", "-M", "mps3-an547"]),
    "rv32": dict(cc=RV_CC, tool="riscv64-unknown-elf-",
                 flags=["-march=rv32imac", "-mabi=ilp32", "-mcmodel=medany"],
                 startup="startup_rv32.S", ld="virt-rv32.ld",
                 flash=(0x80000000, 0x80800000),
                 qemu=["qemu-system-riscv32", "-M", "virt", "-bios", "none", "-m", "32M"]),
    "rv32f": dict(cc=RV_CC, tool="riscv64-unknown-elf-",
                  flags=["-march=rv32imafc", "-mabi=ilp32f", "-mcmodel=medany"],
                  startup="startup_rv32.S", ld="virt-rv32.ld",
                  flash=(0x80000000, 0x80800000),
                  qemu=["qemu-system-riscv32", "-M", "virt", "-bios", "none", "-m", "32M"]),
}
# Single-precision soft-float helpers (libgcc's names; the Arm EABI's
# __aeabi_f* spellings) allowed where the target has no FPU.
SOFT_FLOAT = re.compile(
    r"^(__(add|sub|mul|div|neg|eq|ne|lt|le|gt|ge|unord|cmp)sf[23]"
    r"|__(fix|fixuns)sf(si|di)|__float(un)?(si|di)sf"
    r"|__aeabi_(fadd|fsub|frsub|fmul|fdiv|fcmp(eq|lt|le|ge|gt|un)|f2iz|f2uiz|i2f|ui2f|f2lz|f2ulz|l2f|ul2f))$")
LIBC = {"memcpy", "memset", "memmove"}
NO_FPU = {"rv32"}


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def run(cmd, cwd=None, timeout=600):
    p = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def data_files(case, stem):
    d = os.path.join(case, "test_data_set_0")
    files = [f for f in os.listdir(d) if re.fullmatch(stem + r"_\d+\.pb", f)]
    return [os.path.join(d, f) for f in sorted(files, key=lambda f: int(f[len(stem) + 1:-3]))]


def compile_model(mlcc, case, target, work, name, extra=()):
    out = os.path.join(work, "lib%s.a" % name)
    rc, _, err = run([mlcc, os.path.join(case, "model.onnx"), "--name=" + name,
                      "--target=" + target, "-o", out, "-v"] + list(extra))
    check(rc == 0, "mlcc --target=%s failed (exit %d):\n%s" % (target, rc, err[-3000:]))
    figures = [l for l in err.splitlines() if l.startswith("mlcc: RAM ") or
               l.startswith("mlcc: workspace ")]
    return out, figures


def link(board, work, name, lib):
    cc = board["cc"]
    check(shutil.which(cc) is not None, "%s not found (scripts/setup.sh installs it)" % cc)
    obj_startup = os.path.join(work, "startup.o")
    flags = board["flags"]
    rc, _, err = run([cc] + flags + ["-O2", "-c", os.path.join(HERE, board["startup"]),
                                     "-I", HERE, "-o", obj_startup])
    check(rc == 0, "start-up file: %s" % err[-2000:])
    elf = os.path.join(work, name + ".elf")
    cmd = [cc] + flags + ["-O2", "--specs=picolibc.specs", "-nostartfiles", "-I", HERE,
                          "-I", work, "-include", os.path.join(work, name + ".h"),
                          "-DHARNESS_INFO=%s_info" % name,
                          os.path.join(HERE, "harness.c"), os.path.join(HERE, "semihost.c"),
                          obj_startup, "-L", HERE, "-T", os.path.join(HERE, board["ld"]),
                          "-Wl,--no-warn-rwx-segments", lib, "-lc", "-lgcc",
                          "-Wl,-Map," + os.path.join(work, name + ".map"), "-o", elf]
    rc, _, err = run(cmd)
    check(rc == 0, "link failed:\n%s" % err[-3000:])
    return elf


def case_run(args):
    board = BOARDS[args.target]
    name = "model"
    work = tempfile.mkdtemp(prefix="mlcc-mcu-")
    try:
        lib, figures = compile_model(args.mlcc, args.case[0], args.target, work, name,
                                     args.mlcc_flag)
        elf = link(board, work, name, lib)
        for i, f in enumerate(data_files(args.case[0], "input")):
            np.ascontiguousarray(load_pb(f)).tofile(os.path.join(work, "input_%d.bin" % i))
        refs = [load_pb(f) for f in data_files(args.case[0], "output")]
        for i, r in enumerate(refs):
            np.ascontiguousarray(r).tofile(os.path.join(work, "ref_%d.bin" % i))
        check(shutil.which(board["qemu"][0]) is not None,
              "%s not found (scripts/setup.sh installs it)" % board["qemu"][0])
        try:
            rc, out, err = run(board["qemu"] + SEMIHOSTING + ["-kernel", elf], cwd=work,
                               timeout=args.timeout)
        except subprocess.TimeoutExpired:
            raise Failure("qemu did not finish in %d s" % args.timeout)
        out = out + err  # semihosting console output goes to qemu's stderr
        sys.stdout.write(out)
        for l in figures:
            print(l)
        check(rc == 0 and "harness: PASS" in out,
              "the harness failed under %s (exit %d): %s" % (board["qemu"][0], rc,
                                                             out[-2000:]))
        # NAME_STACK_SIZE is the target's own bound (targets/codegen/stack.h):
        # the painted-stack high-water mark of the run stays below it.
        used = re.search(r"stack used by the run ~(\d+)", out)
        with open(os.path.join(work, name + ".h")) as f:
            bound = re.search(r"#define MODEL_STACK_SIZE (\d+)", f.read())
        check(used is not None and bound is not None, "no stack figures (harness / header)")
        check(int(used.group(1)) <= int(bound.group(1)),
              "the run used %s bytes of stack, above MODEL_STACK_SIZE %s"
              % (used.group(1), bound.group(1)))
        print("stack used %s of MODEL_STACK_SIZE %s" % (used.group(1), bound.group(1)))
        # The outputs the harness wrote, compared here once more.
        for i, r in enumerate(refs):
            got = np.fromfile(os.path.join(work, "output_%d.bin" % i), dtype=r.dtype)
            check(got.size == r.size, "output %d: %d values, expected %d" % (i, got.size, r.size))
            got = got.reshape(r.shape)
            if r.dtype.kind == "f":
                err_abs = np.abs(got.astype(np.float64) - r.astype(np.float64))
                bad = ~(err_abs <= args.atol + args.rtol * np.abs(r.astype(np.float64)))
                check(not bad.any(), "output %d: %d values outside rtol %g atol %g "
                      "(max abs err %.3g)" % (i, int(bad.sum()), args.rtol, args.atol,
                                              err_abs.max()))
                print("output %d: max abs err %.3g (rtol %g, atol %g)" % (i, err_abs.max(),
                                                                          args.rtol, args.atol))
            else:
                check(np.array_equal(got, r), "output %d differs" % i)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("kept", work)


def nm_symbols(tool, lib):
    rc, out, err = run([tool + "nm", "--format=posix", lib])
    check(rc == 0, "nm failed: %s" % err)
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2 or parts[0].endswith(":") or line.endswith(":"):
            continue
        sym, kind = parts[0], parts[1]
        (undefined if kind in ("U", "w") else defined).add(sym)
    return defined, undefined


def case_symbols(args):
    board = BOARDS[args.target]
    work = tempfile.mkdtemp(prefix="mlcc-mcu-nm-")
    try:
        for case in args.case:
            name = os.path.basename(os.path.normpath(case))
            lib, _ = compile_model(args.mlcc, case, args.target, work, name)
            defined, undefined = nm_symbols(board["tool"], lib)
            outside = sorted(s for s in undefined - defined if s not in LIBC and
                             not (args.target in NO_FPU and SOFT_FLOAT.match(s)))
            check(not outside, "%s for %s references symbols outside the allowed set: %s"
                  % (name, args.target, ", ".join(outside)))
            # No thread-local data and no double-precision helpers either way.
            rc, out, _ = run([board["tool"] + "readelf", "-S", "-W", lib])
            check(".tbss" not in out and ".tdata" not in out, "%s has TLS sections" % name)
            used = sorted(undefined - defined)
            print("%s %s: undefined symbols %s" % (name, args.target, " ".join(used) or "(none)"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def case_section(args):
    board = BOARDS[args.target]
    case = args.case[0]
    name = "model"
    work = tempfile.mkdtemp(prefix="mlcc-mcu-sec-")
    try:
        sect = args.weights_section
        lib, _ = compile_model(args.mlcc, case, args.target, work, name,
                               ["--weights-section=" + sect])
        with open(os.path.join(work, name + ".h")) as f:
            m = re.search(r"#define MODEL_WEIGHTS_SIZE (\d+)", f.read())
        check(m is not None, "the header has no MODEL_WEIGHTS_SIZE")
        size = int(m.group(1))
        check(size > 0, "MODEL_WEIGHTS_SIZE is 0")
        members = os.path.join(work, "members")
        os.mkdir(members)
        rc, _, err = run(["ar", "x", lib, name + "_weights.o"], cwd=members)
        check(rc == 0, "no %s_weights.o in the archive: %s" % (name, err))
        obj = os.path.join(members, name + "_weights.o")
        rc, out, _ = run([board["tool"] + "readelf", "-S", "-W", obj])
        rows = [l for l in out.splitlines() if " %s " % sect in l]
        check(len(rows) == 1, "section %s not in %s_weights.o:\n%s" % (sect, name, out))
        # [Nr] Name Type Address Off Size ES Flg Lk Inf Al
        fields = rows[0].split("]", 1)[1].split()
        sec_size, flags = int(fields[4], 16), fields[6]
        check(sec_size == size, "section %s holds %d bytes, NAME_WEIGHTS_SIZE is %d"
              % (sect, sec_size, size))
        check("A" in flags and "W" not in flags and "X" not in flags,
              "section %s flags %s: want read-only allocated data" % (sect, flags))
        rc, out, _ = run([board["tool"] + "readelf", "-s", "-W", obj])
        check(re.search(r"\s%s_weights$" % name, out, re.M) is not None,
              "%s_weights is not defined in the weights object" % name)
        print("%s: section %s, %d bytes, flags %s" % (args.target, sect, sec_size, flags))
        # The default section lands in the linker script's .mlcc_weights, in flash.
        lib, _ = compile_model(args.mlcc, case, args.target, work, name)
        elf = link(board, work, name, lib)
        rc, out, _ = run([board["tool"] + "readelf", "-S", "-W", elf])
        rows = [l for l in out.splitlines() if " .mlcc_weights " in l]
        check(len(rows) == 1, "no .mlcc_weights section in the linked image")
        fields = rows[0].split("]", 1)[1].split()
        addr, sec_size = int(fields[2], 16), int(fields[4], 16)
        lo, hi = board["flash"]
        check(sec_size == size and lo <= addr and addr + sec_size <= hi,
              ".mlcc_weights at %#x, %d bytes: want %d bytes inside flash [%#x, %#x)"
              % (addr, sec_size, size, lo, hi))
        rc, out, _ = run([board["tool"] + "nm", elf])
        m = re.search(r"^([0-9a-f]+) [rR] %s_weights$" % name, out, re.M)
        check(m is not None and int(m.group(1), 16) == addr,
              "%s_weights is not at the start of .mlcc_weights" % name)
        print("%s: linked .mlcc_weights at %#x, %d bytes (flash)" % (args.target, addr, sec_size))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def case_workspace_bound(args):
    work = tempfile.mkdtemp(prefix="mlcc-mcu-ws-")
    try:
        for case in args.case:
            name = os.path.basename(os.path.normpath(case))
            manifest = os.path.join(os.path.dirname(os.path.normpath(case)), "manifest.json")
            bound = None
            if os.path.exists(manifest):
                import json
                with open(manifest) as f:
                    bound = json.load(f)["models"][name]["memory"]["fused"]["peak_live_bytes"]
            _, figures = compile_model(args.mlcc, case, args.target, work, name)
            m = re.search(r"workspace (\d+) bytes .*largest live set (\d+)", "\n".join(figures))
            check(m is not None, "%s: no workspace figures in mlcc -v" % name)
            ws, live = int(m.group(1)), int(m.group(2))
            print("%s %s: workspace %d, largest live set %d, manifest bound %s"
                  % (name, args.target, ws, live, bound))
            check(ws == live, "%s: workspace %d is above the planner's live-set bound %d"
                  % (name, ws, live))
            check(bound is None or live <= bound, "%s: live set %d above the manifest's %d"
                  % (name, live, bound))
    finally:
        shutil.rmtree(work, ignore_errors=True)


TOOLCHAINS = {
    "cortex-m4": ("arm-none-eabi.cmake", ["-DMLCC_MCU_BOARD=mps2-an386"]),
    "cortex-m55": ("arm-none-eabi.cmake", ["-DMLCC_MCU_BOARD=mps3-an547"]),
    "rv32": ("riscv32-unknown-elf.cmake", ["-DMLCC_RV32_FPU=OFF"]),
    "rv32f": ("riscv32-unknown-elf.cmake", ["-DMLCC_RV32_FPU=ON"]),
}


def case_cmake_consumer(args):
    case = args.case[0]
    toolchain, defs = TOOLCHAINS[args.target]
    work = tempfile.mkdtemp(prefix="mlcc-mcu-cmake-")
    try:
        data = os.path.join(work, "data")
        os.mkdir(data)
        for i, f in enumerate(data_files(case, "input")):
            np.ascontiguousarray(load_pb(f)).tofile(os.path.join(data, "input_%d.bin" % i))
        for i, f in enumerate(data_files(case, "output")):
            np.ascontiguousarray(load_pb(f)).tofile(os.path.join(data, "ref_%d.bin" % i))
        build = os.path.join(work, "build")
        root = os.path.dirname(os.path.dirname(HERE))
        rc, out, err = run(["cmake", "-S", os.path.join(HERE, "consumer"), "-B", build,
                            "-G", "Ninja",
                            "-DCMAKE_TOOLCHAIN_FILE=" + os.path.join(root, "toolchains", toolchain),
                            "-DMLCC_EXECUTABLE=" + os.path.abspath(args.mlcc),
                            "-DMODEL=" + os.path.join(case, "model.onnx"),
                            "-DMLCC_SOURCE_DIR=" + root,
                            "-DDATA_DIR=" + data] + defs)
        check(rc == 0, "configure failed:\n%s%s" % (out[-2000:], err[-2000:]))
        out_cfg = out
        rc, out, err = run(["cmake", "--build", build])
        check(rc == 0, "build failed:\n%s%s" % (out[-3000:], err[-2000:]))
        rc, out, err = run(["ctest", "--test-dir", build, "--output-on-failure", "-V"])
        sys.stdout.write(out[-2000:])
        check(rc == 0 and "harness: PASS" in out and "100% tests passed" in out,
              "ctest through CMAKE_CROSSCOMPILING_EMULATOR failed:\n%s" % (out + err)[-3000:])
        with open(os.path.join(build, "CMakeCache.txt")) as f:
            cache = f.read()
        check("MLCC_TARGET_ALIAS:STRING=%s" % args.target in cache,
              "the toolchain's MLCC_TARGET_ALIAS is not %s" % args.target)
        check("mcu consumer: model is model_%s" % args.target in out_cfg,
              "add_ml_model's `model` is not the %s variant" % args.target)
        with open(os.path.join(build, "build.ninja")) as f:
            ninja = f.read()
        check("--target=%s" % args.target in ninja and "--target=x86" in ninja
              and "-lm" not in ninja, "both variants built, no -lm on the bare-metal link")
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("--case", action="append", required=True)
    ap.add_argument("--target", required=True, choices=sorted(BOARDS))
    ap.add_argument("--symbols", action="store_true")
    ap.add_argument("--weights-section")
    ap.add_argument("--cmake-consumer", action="store_true")
    ap.add_argument("--workspace-bound", action="store_true")
    ap.add_argument("--rtol", type=float, default=RTOL,
                    help="this script's own check of the outputs (the harness uses 1e-4)")
    ap.add_argument("--atol", type=float, default=ATOL)
    ap.add_argument("--mlcc-flag", action="append", default=[],
                    help="extra mlcc flag for the run (repeatable), e.g. -fno-winograd")
    ap.add_argument("--skip-if-missing", action="store_true")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    missing = [c for c in args.case if not os.path.isdir(c)]
    if missing:
        if args.skip_if_missing:
            print("SKIP: %s not found (the shared tiny models are not here)" % ", ".join(missing))
            return 77
        print("FAIL: %s not found" % ", ".join(missing))
        return 1
    try:
        if args.symbols:
            case_symbols(args)
        elif args.workspace_bound:
            case_workspace_bound(args)
        elif args.cmake_consumer:
            case_cmake_consumer(args)
        elif args.weights_section:
            case_section(args)
        else:
            case_run(args)
    except Failure as e:
        print("FAIL:", e)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
