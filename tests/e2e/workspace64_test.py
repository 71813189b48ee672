#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A workspace above 4 GiB is planned and addressed with 64-bit offsets (issue 14).

usage: workspace64_test.py MLCC

The model: x[1, N] (N = 1.5 Gi floats, 6 GiB) -> Relu -> a -> Transpose -> b ->
Transpose -> c; y = c + a. Values a and b are live together, so the workspace
holds at least two 6 GiB slots and one of them starts at 6 GiB (0x180000000),
past 2^32. Nothing is run (that would need 12 GiB); the test reads what mlcc
emits:
  - the header's NAME_WORKSPACE_SIZE and -v's plan: >= 12 GiB, a multiple of 64;
  - the LLVM IR for x86_64, aarch64 and riscv64: the entry addresses the
    workspace with i64 offsets, the largest is 6 GiB and the slot fits;
    no offset survives only as its 32-bit truncation; the kernels count
    elements to N in i64;
  - the x86_64 entry object: the offset is a 64-bit immediate (movabs).
Exit 0 pass, 1 fail, 77 skip.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto, helper

N = 1610612736                 # 1.5 Gi elements
SLOT = N * 4                   # 6 GiB = 0x180000000
FAILED = []


def check(cond, what):
    print(("  ok: " if cond else "  FAIL: ") + what)
    if not cond:
        FAILED.append(what)


def make_model(path):
    nodes = [helper.make_node("Relu", ["x"], ["a"]),
             helper.make_node("Transpose", ["a"], ["b"], perm=[1, 0]),
             helper.make_node("Transpose", ["b"], ["c"], perm=[1, 0]),
             helper.make_node("Add", ["c", "a"], ["y"])]
    g = helper.make_graph(nodes, "big",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, N])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, N])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, path)


def run(args):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    if p.returncode != 0:
        raise RuntimeError("%s exited %d:\n%s" % (" ".join(args), p.returncode,
                                                  p.stderr.decode(errors="replace")[-2000:]))
    return p.stderr.decode(errors="replace")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    mlcc = os.path.abspath(sys.argv[1])
    d = tempfile.mkdtemp(prefix="mlcc-ws64-")
    model = os.path.join(d, "big.onnx")
    make_model(model)
    common = ["--name=big", "--no-cache"]

    err = run([mlcc, model, "-o", os.path.join(d, "libbig.a"), "-v", *common])
    header = open(os.path.join(d, "big.h")).read()
    m = re.search(r"#define BIG_WORKSPACE_SIZE (\d+)", header)
    size = int(m.group(1)) if m else 0
    check(size >= 2 * SLOT and size % 64 == 0,
          "BIG_WORKSPACE_SIZE = %d: two 6 GiB slots (> 4 GiB), a multiple of 64" % size)
    check("workspace %d bytes" % size in err, "-v reports the same plan")

    for target in ("x86", "aarch64", "riscv"):
        ll = os.path.join(d, "big-%s.ll" % target)
        run([mlcc, model, "--target=" + target, "-S", "--emit=ll", "-o", ll, *common])
        text = open(ll).read()
        run_fn = re.search(r"define [^\n]*@big_run\(.*?\n}\n", text, re.S)
        check(run_fn is not None, "%s: the IR has big_run" % target)
        if run_fn is None:
            continue
        body = run_fn.group(0)
        ws = re.search(r"@big_run\((?:[^,]*,){2}\s*ptr[^%]*(%\w+)\)", body)
        ws_reg = ws.group(1) if ws else "%2"
        offsets = [int(v) for v in re.findall(
            r"getelementptr inbounds i8, ptr %s, i64 (\d+)" % re.escape(ws_reg), body)]
        check(offsets and max(offsets) == SLOT,
              "%s: the entry addresses the workspace (%s) with i64 offsets up to %d (%s)"
              % (target, ws_reg, SLOT, sorted(set(offsets))))
        check(all(o + SLOT <= size for o in offsets), "%s: every slot fits the workspace" % target)
        trunc = SLOT & 0xFFFFFFFF                   # 2147483648: what an i32 offset would keep
        check(not re.search(r"i32 (-?%d|%d)\b" % (trunc - (1 << 32), trunc), text),
              "%s: no 32-bit truncation of the offset" % target)
        check(re.search(r"icmp eq i64 %%[\w.]+, %d\b" % N, text) is not None,
              "%s: the kernels' loops count to N = %d in i64" % (target, N))

    objdump = shutil.which("llvm-objdump-16") or shutil.which("objdump")
    ar = shutil.which("ar") or shutil.which("llvm-ar-16")
    if objdump and ar:
        x = os.path.join(d, "x")
        os.makedirs(x)
        subprocess.run([ar, "x", os.path.join(d, "libbig.a")], cwd=x, check=True)
        dis = subprocess.run([objdump, "-d", os.path.join(x, "big_entry.o")],
                             stdout=subprocess.PIPE, check=True).stdout.decode()
        check(re.search(r"movabs\w*\s+\$0x%x," % SLOT, dis) is not None,
              "x86_64 object: the 6 GiB offset is a 64-bit immediate (movabs $0x%x)" % SLOT)
    shutil.rmtree(d, ignore_errors=True)
    print("FAIL" if FAILED else "PASS")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
