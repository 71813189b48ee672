#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Static stack use of an mlcc object (x86-64, aarch64, riscv64).

Reads `llvm-objdump -d -r` of a relocatable object built with `mlcc -c`,
computes each function's frame from the instructions that move the stack
pointer down (pushes, `sub sp`, pre-indexed stores, realignment; on x86 the
return address the call pushed is counted in the callee), follows direct
calls and tail calls through their relocations, and prints the deepest
chain from each entry point:

  run        NAME_run (and NAME_run_v) on the calling thread
  parallel   NAME_run_parallel's own frame plus the deepest task (the caller's
             parallel-for runs tasks, its own frame is the caller's)
  task       one NAME_task<k> on a worker thread

Calls to symbols outside the object (libm, memcpy, clock_gettime) are listed;
their frames are not known here.

  stack_frames.py OBJ --name NAME [--check BYTES] [--kernels] [--json]

--check BYTES: exit 1 if run, parallel or task exceed BYTES (NAME_STACK_SIZE).
Every frame is an upper bound: all stack-pointer decrements of a function are
summed (a shrink-wrapped prologue is counted once, a duplicated one twice),
realignment to A bytes adds A - 1 (x86: A - 8). riscv64 with V spills vector
registers to slots of VLEN/8 bytes each: --vlen (default 256) sets VLEN.
"""
import argparse
import json
import re
import shutil
import subprocess
import sys

OBJDUMP_CANDIDATES = ("llvm-objdump-16", "llvm-objdump")

FUNC_RE = re.compile(r"^([0-9a-f]+) <(.+)>:$")
RELOC_RE = re.compile(r"^\s+[0-9a-f]+:\s+(R_\w+)\s+(\S+?)(?:[-+]0x[0-9a-f]+)?$")
INSN_RE = re.compile(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$")

CALL_RELOCS = {"R_X86_64_PLT32", "R_X86_64_PC32", "R_AARCH64_CALL26", "R_AARCH64_JUMP26",
               "R_RISCV_CALL_PLT", "R_RISCV_CALL"}


def imm(text):
    text = text.strip().lstrip("#$")
    return int(text, 0)


class Frame:
    """Register tracking just good enough for prologues."""

    def __init__(self, arch, vlenb=32):
        self.arch = arch
        self.vlenb = vlenb  # riscv V: bytes of one vector register (VLEN / 8)
        self.bytes = 8 if arch == "x86_64" else 0  # x86: the return address
        self.regs = {}      # register -> constant value
        self.sp_rel = {}    # register -> bytes below the entry sp
        self.unknown = []   # sp writes we could not evaluate

    def down(self, n):
        if n > 0:
            self.bytes += n

    def x86(self, mn, ops):
        if mn.startswith("push"):
            self.down(8)
        elif mn in ("subq", "sub") and ops.endswith("%rsp"):
            src = ops.split(",")[0].strip()
            if src.startswith("$"):
                self.down(imm(src))
            elif src in self.regs:
                self.down(self.regs[src])
            else:
                self.unknown.append(mn + " " + ops)
        elif mn in ("andq", "and") and ops.endswith("%rsp"):
            self.down(-imm(ops.split(",")[0]) - 8)
        elif mn in ("movq", "movabsq", "movl", "mov") and re.fullmatch(r"\$\S+, %\w+", ops):
            src, dst = [s.strip() for s in ops.split(",")]
            self.regs[dst] = imm(src)
            if dst.startswith("%e"):
                self.regs["%r" + dst[2:]] = imm(src)

    def aarch64(self, mn, ops):
        parts = [p.strip() for p in ops.split(",")]
        pre = re.search(r"\[sp, #(-?0x[0-9a-f]+|-?\d+)\]!", ops)
        if pre:
            self.down(-imm(pre.group(1)))
            return
        if mn in ("mov", "movz") and len(parts) >= 2 and parts[1].startswith("#"):
            self.regs[parts[0]] = imm(parts[1])
            return
        if mn == "movk" and parts[0] in self.regs:
            shift = int(parts[2].split("#")[1]) if len(parts) > 2 else 0
            v = self.regs[parts[0]] & ~(0xFFFF << shift)
            self.regs[parts[0]] = v | (imm(parts[1]) << shift)
            return
        if mn == "sub" and len(parts) >= 3:
            dst, src, amt = parts[0], parts[1], parts[2]
            if amt.startswith("#"):
                n = imm(amt)
                if len(parts) > 3 and "lsl" in parts[3]:
                    n <<= int(parts[3].split("#")[1])
            elif amt in self.regs or amt.replace("w", "x") in self.regs:
                n = self.regs.get(amt, self.regs.get(amt.replace("w", "x")))
            else:
                if dst == "sp":
                    self.unknown.append(mn + " " + ops)
                return
            if dst == "sp" and src == "sp":
                self.down(n)
            elif src == "sp":
                self.sp_rel[dst] = n
            elif src in self.sp_rel:
                self.sp_rel[dst] = self.sp_rel[src] + n
            return
        if mn == "and" and parts[0] == "sp":
            src = parts[1]
            mask = imm(parts[2])
            align = (1 << 64) - mask if mask > 0 else -mask
            base = self.sp_rel.get(src)
            if base is None:
                self.unknown.append(mn + " " + ops)
            else:
                self.down(base + align - 1)
            return
        if mn == "mov" and parts[0] == "sp" and parts[1] in self.sp_rel:
            self.down(self.sp_rel[parts[1]])

    def riscv(self, mn, ops):
        parts = [p.strip() for p in ops.split(",")]
        if mn in ("addi", "addiw") and len(parts) == 3:
            dst, src, v = parts[0], parts[1], imm(parts[2])
            if dst == "sp" and src == "sp":
                self.down(-v)
            elif src in self.regs:
                self.regs[dst] = self.regs[src] + v
            elif src == "zero":
                self.regs[dst] = v
            return
        if mn == "li":
            self.regs[parts[0]] = imm(parts[1])
            return
        if mn == "lui":
            v = imm(parts[1]) << 12
            if v >= 1 << 31:
                v -= 1 << 32
            self.regs[parts[0]] = v
            return
        if mn in ("slli",) and parts[1] in self.regs:
            self.regs[parts[0]] = self.regs[parts[1]] << imm(parts[2])
            return
        if mn == "csrr" and parts[1] == "vlenb":
            # Scalable (V) spill slots: sized by the hardware's VLEN.
            self.regs[parts[0]] = self.vlenb
            return
        if mn == "mul" and parts[1] in self.regs and parts[2] in self.regs:
            self.regs[parts[0]] = self.regs[parts[1]] * self.regs[parts[2]]
            return
        if parts and parts[0] in self.regs and mn not in ("sd", "sw", "sh", "sb", "fsd", "fsw"):
            del self.regs[parts[0]]  # any other write leaves the value unknown
            return
        if mn == "sub" and parts[0] == "sp" and parts[1] == "sp":
            if parts[2] in self.regs:
                self.down(self.regs[parts[2]])
            else:
                self.unknown.append(mn + " " + ops)
            return
        if mn == "add" and parts[0] == "sp" and parts[1] == "sp":
            if parts[2] in self.regs and self.regs[parts[2]] < 0:
                self.down(-self.regs[parts[2]])
            return
        if mn == "andi" and parts[0] == "sp":
            self.down(-imm(parts[2]) - 1)


def objdump_tool():
    for name in OBJDUMP_CANDIDATES:
        if shutil.which(name):
            return name
    return None


def analyze(obj, vlen=256):
    tool = objdump_tool()
    if tool is None:
        raise SystemExit("stack_frames.py: llvm-objdump not found")
    text = subprocess.run([tool, "-d", "-r", "--no-show-raw-insn", obj], check=True,
                          capture_output=True, text=True).stdout
    arch = "x86_64"
    fmt = subprocess.run([tool, "-f", obj], check=True, capture_output=True, text=True).stdout
    if "aarch64" in fmt:
        arch = "aarch64"
    elif "riscv" in fmt:
        arch = "riscv64"
    funcs = {}
    cur = None
    frame = None
    last_mn = ""
    for line in text.splitlines():
        m = FUNC_RE.match(line)
        if m and m.group(2).startswith(".L"):
            continue  # a local label (riscv pcrel pairs): same function
        if m:
            cur = m.group(2)
            frame = Frame(arch, vlen // 8)
            funcs[cur] = {"frame": frame, "calls": set()}
            continue
        if cur is None:
            continue
        r = RELOC_RE.match(line)
        if r:
            # x86 PC32/PLT32 also address data: only those on a call or jump.
            on_branch = arch != "x86_64" or last_mn.startswith(("call", "jmp"))
            if r.group(1) in CALL_RELOCS and on_branch:
                funcs[cur]["calls"].add(r.group(2))
            continue
        i = INSN_RE.match(line)
        if not i:
            continue
        mn, ops = i.group(2), i.group(3).split("//")[0].split(" # ")[0].strip()
        last_mn = mn
        getattr(frame, {"x86_64": "x86", "aarch64": "aarch64", "riscv64": "riscv"}[arch])(mn, ops)
        # Intra-object direct calls that carry no relocation.
        if arch == "x86_64" and mn in ("callq", "call", "jmp", "jmpq"):
            t = re.search(r"<([^+>]+)>", ops)
            if t and t.group(1) != cur:
                funcs[cur]["calls"].add(t.group(1))
    sizes = {f: d["frame"].bytes for f, d in funcs.items()}
    unknown = {f: d["frame"].unknown for f, d in funcs.items() if d["frame"].unknown}
    calls = {f: {c for c in d["calls"] if c != f} for f, d in funcs.items()}
    return arch, sizes, calls, unknown


def deepest(fn, sizes, calls, externals, memo, stack=()):
    if fn not in sizes:
        externals.add(fn)
        return 0, [fn]
    if fn in memo:
        return memo[fn]
    if fn in stack:
        raise SystemExit("stack_frames.py: recursion through %s" % fn)
    best, path = 0, []
    for c in sorted(calls[fn]):
        d, p = deepest(c, sizes, calls, externals, memo, stack + (fn,))
        if d > best:
            best, path = d, p
    memo[fn] = (sizes[fn] + best, [fn] + path)
    return memo[fn]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("obj")
    ap.add_argument("--name", required=True)
    ap.add_argument("--check", type=int, default=None)
    ap.add_argument("--kernels", action="store_true", help="print every kernel's frame")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--vlen", type=int, default=256, help="riscv V: VLEN in bits")
    args = ap.parse_args()
    arch, sizes, calls, unknown = analyze(args.obj, args.vlen)
    externals = set()
    memo = {}
    res = {"arch": arch}
    run, run_path = deepest(args.name + "_run", sizes, calls, externals, memo)
    runv, _ = deepest(args.name + "_run_v", sizes, calls, externals, memo)
    res["run"] = max(run, runv)
    res["run_path"] = run_path
    tasks = [f for f in sizes if re.fullmatch(re.escape(args.name) + r"_task\d+", f)]
    task, task_path = 0, []
    for t in tasks:
        d, p = deepest(t, sizes, calls, externals, memo)
        if d > task:
            task, task_path = d, p
    res["task"] = task
    res["task_path"] = task_path
    par = args.name + "_run_parallel"
    own = sizes.get(par, 0)
    pd, _ = deepest(par, sizes, calls, externals, memo)  # includes its serial call of NAME_run
    res["parallel"] = max(pd, own + task)
    kernels = {f: s for f, s in sizes.items() if f.startswith("mlcc_k_")}
    res["max_kernel"] = max(kernels.values()) if kernels else 0
    res["max_kernel_fn"] = max(kernels, key=kernels.get) if kernels else ""
    res["externals"] = sorted(externals)
    res["unknown_sp_writes"] = unknown
    if args.kernels:
        res["kernels"] = dict(sorted(kernels.items(), key=lambda kv: -kv[1]))
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        print("%s: run %d  parallel %d  task %d  max kernel frame %d (%s)" %
              (arch, res["run"], res["parallel"], res["task"], res["max_kernel"],
               res["max_kernel_fn"]))
        print("  deepest run chain: " + " -> ".join(run_path))
        if externals:
            print("  external calls (frames not counted): " + ", ".join(sorted(externals)))
        for f, u in unknown.items():
            print("  warning: %s: unrecognized stack-pointer writes: %s" % (f, "; ".join(u)))
        if args.kernels:
            for f, s in res["kernels"].items():
                print("  %8d %s" % (s, f))
    if args.check is not None:
        worst = max(res["run"], res["parallel"], res["task"])
        if worst > args.check or unknown:
            print("FAIL: %d bytes of stack > %d (or unrecognized sp writes)" %
                  (worst, args.check), file=sys.stderr)
            return 1
        print("ok: %d <= %d" % (worst, args.check))
    return 0


if __name__ == "__main__":
    sys.exit(main())
