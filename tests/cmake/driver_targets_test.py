#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Black-box tests of mlcc's target selection and depfiles, as the CMake rules use them.

usage: driver_targets_test.py MLCC CASE
  print_targets   --print-targets: the table of DESIGN.md section 4 (alias, triple, CPU, features)
  jobs            -### for every alias and full triple, with -mcpu/-mattr: the resolved triple,
                  CPU and features, the codegen jobs' flags, nothing written
  bad_target      unknown --target values: exit 2, a message naming the value and the known
                  targets, nothing written (not even with -MD)
  depfile         -MD -MF with absolute paths (as add_ml_model passes them), for a library,
                  a -c object and an aarch64 library: first target = the output; prerequisites
                  = the model and its external data file; the target does not change the text
  outputs_cache   a library and a -c object through the kernel cache alike (cold 1, warm 0,
                  new weights 0 kernels compiled), NAME.h beside both, unchanged outputs keep
                  inode and mtime, the -c object's values equal the library's and numpy's
  describe        --describe=FILE for a library and a -c object: every fact against the
                  header, the files and the options; refused (exit 2) for -S/header/asm
Exit 0 = pass, 1 = fail.
"""
import re
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import mlcc_e2e  # noqa: E402
import onnx_case  # noqa: E402
from mlcc_e2e import check, listing  # noqa: E402

MLCC = None

TABLE = [  # DESIGN.md section 4
    ("x86", "x86_64-linux-gnu", "x86-64-v3", "-"),
    ("aarch64", "aarch64-linux-gnu", "generic", "+neon"),
    ("riscv", "riscv64-linux-gnu", "generic-rv64", "+m,+a,+f,+d,+c"),
    # microcontrollers (docs/mcu.md)
    ("cortex-m4", "thumbv7em-none-eabihf", "cortex-m4", "-"),
    ("cortex-m55", "thumbv8.1m.main-none-eabihf", "cortex-m55", "+mve.fp,+fp-armv8d16"),
    ("rv32", "riscv32-unknown-elf", "generic-rv32", "+m,+a,+c"),
    ("rv32f", "riscv32-unknown-elf", "generic-rv32", "+m,+a,+f,+c"),
]


def run(*args, cwd=None):
    return mlcc_e2e.run_mlcc(MLCC, args, cwd=cwd, echo_chars=1500)


def tiny_with_external_data(d):
    """y = Relu(x @ W) with W in the external file 'w.bin'."""
    w = np.arange(12, dtype=np.float32).reshape(4, 3) / 8
    wt = onnx_case.external_tensor(d, "W", w, "w.bin")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["m"]), helper.make_node("Relu", ["m"], ["y"])],
        "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [wt])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = os.path.join(d, "tiny.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def resolved(err):
    """(triple, cpu, features) from the header lines of -### output."""
    vals = {}
    for line in err.splitlines():
        for key in ("Target", "CPU", "Features"):
            if line.startswith(key + ":"):
                vals[key] = line[len(key) + 1:].strip()
    return vals.get("Target"), vals.get("CPU"), vals.get("Features")


def case_print_targets(d):
    rc, out, err = run("--print-targets")
    check(rc == 0 and err == "", "exit 0, nothing on stderr")
    rows = [tuple(l.split()) for l in out.splitlines() if l.strip()]
    check(rows == TABLE, "the table of DESIGN.md section 4: %s" % rows)


def case_jobs(d):
    model = tiny_with_external_data(d)
    before = listing(d)
    cases = [
        # (flags, triple, cpu, features)
        (["--target=x86"], "x86_64-linux-gnu", "x86-64-v3", ""),
        (["--target=aarch64"], "aarch64-linux-gnu", "generic", "+neon"),
        (["--target=riscv"], "riscv64-linux-gnu", "generic-rv64", "+m,+a,+f,+d,+c"),
        (["--target=x86_64-linux-gnu"], "x86_64-linux-gnu", "x86-64-v3", ""),
        (["--target=aarch64-unknown-linux-gnu"], "aarch64-unknown-linux-gnu", "generic",
         "+neon"),
        (["--target=riscv64-linux-gnu"], "riscv64-linux-gnu", "generic-rv64", "+m,+a,+f,+d,+c"),
        (["--target=aarch64", "-mcpu=cortex-a72"], "aarch64-linux-gnu", "cortex-a72", "+neon"),
        (["--target=riscv", "-mattr=+v"], "riscv64-linux-gnu", "generic-rv64",
         "+m,+a,+f,+d,+c,+v"),
        (["--target=x86", "-mcpu=skylake-avx512"], "x86_64-linux-gnu", "skylake-avx512", ""),
        (["--target=cortex-m4"], "thumbv7em-none-eabihf", "cortex-m4", ""),
        (["--target=cortex-m4", "-mcpu=cortex-m7"], "thumbv7em-none-eabihf", "cortex-m7", ""),
        (["--target=rv32f"], "riscv32-unknown-elf", "generic-rv32", "+m,+a,+f,+c"),
        (["--target=thumbv8m.main-none-eabihf", "-mcpu=cortex-m33"],
         "thumbv8m.main-none-eabihf", "cortex-m33", ""),
    ]
    for flags, triple, cpu, feats in cases:
        out_lib = os.path.join(d, "out", "libtiny.a")
        rc, out, err = run("-###", *flags, model, "-o", out_lib, "-MD")
        check(rc == 0, "%s: exit 0" % flags)
        check(resolved(err) == (triple, cpu, feats), "%s: resolved %s" % (flags, resolved(err)))
        codegen = [l for l in err.splitlines() if '"-cc1" "codegen' in l]
        check(codegen and all('"--target=%s"' % triple in l and '"-mcpu=%s"' % cpu in l and
                              '"-mattr=%s"' % feats in l for l in codegen),
              "%s: every codegen job carries the triple, CPU and features" % flags)
        check(listing(d) == before, "%s: -### wrote nothing (no library, header, depfile)"
              % flags)
    # -mcpu=native resolves to this machine's CPU and features (never the word 'native').
    rc, _, err = run("-###", "--target=x86", "-mcpu=native", model)
    triple, cpu, feats = resolved(err)
    check(rc == 0 and cpu not in (None, "", "native") and "+sse2" in (feats or ""),
          "-mcpu=native: host CPU %s with its features" % cpu)


def case_bad_target(d):
    model = tiny_with_external_data(d)
    before = listing(d)
    for t in ("sparc", "riscv16", "arm", "armv7-linux-gnueabihf", "mips64-linux-gnu", "x86-linux"):
        rc, out, err = run("--target=" + t, model, "-o", os.path.join(d, "libtiny.a"), "-MD")
        check(rc == 2, "--target=%s: exit 2 (usage error)" % t)
        check("unknown target '%s'" % t in err, "--target=%s: message names the value" % t)
        check(all(a in err for a in ("x86", "aarch64", "riscv")),
              "--target=%s: message lists the known targets" % t)
        check(out == "", "--target=%s: nothing on stdout" % t)
        check(listing(d) == before, "--target=%s: nothing written" % t)
    rc, _, err = run("--target=", model)
    check(rc == 2 and "target" in err, "--target= (empty): exit 2")
    rc, _, err = run("-###", "--target=sparc", model)
    check(rc == 2, "-### --target=sparc: exit 2 too")
    check(listing(d) == before, "nothing written by any bad --target")


def case_depfile(d):
    src = os.path.join(d, "models")
    os.mkdir(src)
    model = tiny_with_external_data(src)
    data = os.path.join(src, "w.bin")
    texts = {}
    for name, flags, output in (
            ("lib", ["--target=x86"], os.path.join(d, "build", "x86", "libtiny.a")),
            ("obj", ["--target=x86", "-c"], os.path.join(d, "build", "x86", "tiny.o")),
            ("aarch64", ["--target=aarch64"], os.path.join(d, "build", "aarch64", "libtiny.a")),
            ("riscv_v", ["--target=riscv", "-mattr=+v"],
             os.path.join(d, "build", "riscv", "libtiny.a"))):
        dep = os.path.join(os.path.dirname(output), "tiny.d")
        rc, _, _ = run(model, "-o", output, "--name=tiny", *flags, "-MD", "-MF", dep)
        check(rc == 0 and os.path.exists(output), "%s: built %s" % (name, output))
        text = open(dep).read()
        print("  depfile: " + text.replace("\n", "\n           "))
        want = "%s: %s \\\n  %s\n" % (output, model, data)
        check(text == want, "%s: depfile is exactly '<output>: <model> <external data>'" % name)
        texts[name] = text.replace(output, "OUT")
    check(len(set(texts.values())) == 1, "the depfile's prerequisites do not depend on the target")


def kernels_line(err):
    """(compiled, from cache) from -v's "mlcc: N kernels compiled[, M from the cache]"."""
    import re
    m = re.search(r"^mlcc: (\d+) kernels? compiled(?:, (\d+) from the cache)?", err, re.M)
    return (int(m.group(1)), int(m.group(2) or 0)) if m else None


def case_outputs_cache(d):
    """Every object output goes through the kernel cache: a library and a -c object each
    compile their kernels once, then 0 (warm, and after new weights); -c writes NAME.h
    beside its object like a library; an output whose bytes did not change keeps its
    inode and mtime; -c's object links into a program that gives the library's values."""
    model = tiny_with_external_data(d)
    for kind, flags, out in (("lib", [], "lib/libtiny.a"), ("obj", ["-c"], "obj/tiny.o")):
        for a in ("x86", "aarch64"):
            os.environ["MLCC_CACHE_DIR"] = os.path.join(d, "cache-%s-%s" % (kind, a))
            o = os.path.join(d, a, out)
            rc, _, err = run(model, "-o", o, "--target=" + a, "-v", *flags)
            check(rc == 0 and kernels_line(err) == (1, 0),
                  "%s %s cold: 1 kernel compiled (%s)" % (kind, a, kernels_line(err)))
            hdr = os.path.join(os.path.dirname(o), "tiny.h")
            check(os.path.exists(hdr), "%s %s: tiny.h written beside the output" % (kind, a))
            st = {p: (os.stat(p).st_ino, os.stat(p).st_mtime_ns) for p in (o, hdr)}
            rc, _, err = run(model, "-o", o, "--target=" + a, "-v", *flags)
            check(rc == 0 and kernels_line(err) == (0, 1),
                  "%s %s warm: 0 kernels compiled, 1 from the cache" % (kind, a))
            check(all((os.stat(p).st_ino, os.stat(p).st_mtime_ns) == st[p] for p in st),
                  "%s %s warm: output and header keep their inode and mtime" % (kind, a))
    # New weights, same shapes: the -c object changes, the kernel and the header do not.
    o = os.path.join(d, "x86", "obj", "tiny.o")
    hdr = os.path.join(d, "x86", "obj", "tiny.h")
    before_obj, before_hdr = open(o, "rb").read(), os.stat(hdr).st_mtime_ns
    os.environ["MLCC_CACHE_DIR"] = os.path.join(d, "cache-obj-x86")
    w = np.fromfile(os.path.join(d, "w.bin"), np.float32) * 2
    w.tofile(os.path.join(d, "w.bin"))
    rc, _, err = run(model, "-o", o, "--target=x86", "-v", "-c")
    check(rc == 0 and kernels_line(err) == (0, 1), "-c, new weights: 0 kernels compiled")
    check(open(o, "rb").read() != before_obj and os.stat(hdr).st_mtime_ns == before_hdr,
          "-c, new weights: the object changed, the header kept its mtime")
    # No linker in $PATH and no $MLCC_LD: -c still works (one whole module, no cache).
    nold = os.path.join(d, "no-linker")
    os.mkdir(nold)
    whole = os.path.join(d, "whole", "tiny.o")
    p = subprocess.run([MLCC, model, "-c", "-o", whole, "-v", "--describe",
                        os.path.join(d, "whole", "tiny.json")],
                       env=dict(os.environ, PATH=nold, MLCC_LD=""), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    err = p.stderr.decode()
    check(p.returncode == 0 and open(whole, "rb").read(4) == b"\x7fELF"
          and os.path.exists(os.path.join(d, "whole", "tiny.h"))
          and "no linker to join the kernel objects" in err,
          "-c without a linker: a whole-module object and its header, with a -v note")
    # -v's RAM/flash line for the whole object, and --describe's copy of it.
    import json
    m = re.search(r"^mlcc: RAM (\d+) bytes .*; flash (\d+) bytes \(code (\d+),", err, re.M)
    wt = json.load(open(os.path.join(d, "whole", "tiny.json")))["target"]
    check(m is not None and int(m.group(3)) > 0
          and (wt["ram_size"], wt["flash_size"], wt["code_size"]) == tuple(map(int, m.groups())),
          "-c without a linker: -v prints RAM and flash, --describe has the same figures")
    # The same object written to stdout: its figures come from the object in memory.
    p = subprocess.run([MLCC, model, "-c", "-o", "-", "--describe",
                        os.path.join(d, "whole", "stdout.json")],
                       env=dict(os.environ, PATH=nold, MLCC_LD=""), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    st = json.load(open(os.path.join(d, "whole", "stdout.json")))["target"] if p.returncode == 0 \
        else {}
    check(p.returncode == 0 and p.stdout == open(whole, "rb").read()
          and (st.get("code_size"), st.get("flash_size")) == (wt["code_size"], wt["flash_size"]),
          "-c -o - without a linker: --describe's figures from the object written to stdout")
    # The object and the library of the same model give the same values.
    lib = os.path.join(d, "x86", "lib", "libtiny.a")
    run(model, "-o", lib, "--target=x86")
    app = os.path.join(d, "app.c")
    with open(app, "w") as f:
        f.write('#include "tiny.h"\n#include <stdio.h>\n'
                'static unsigned char ws[TINY_WORKSPACE_SIZE + 64];\n'
                'int main(void) { float x[8], y[6]; for (int i = 0; i < 8; ++i) x[i] = i - 3;\n'
                '  void *w = (void *)(((unsigned long)ws + 63) & ~63ul);\n'
                '  if (tiny_run(x, y, w)) return 1;\n'
                '  for (int i = 0; i < 6; ++i) printf("%.6g\\n", y[i]); return 0; }\n')
    outs = []
    for name, link, inc in (("obj", o, os.path.dirname(o)), ("lib", lib, os.path.dirname(lib)),
                            ("whole", whole, os.path.dirname(whole))):
        exe = os.path.join(d, "app_" + name)
        subprocess.run(["cc", "-I", inc, app, link, "-lm", "-o", exe], check=True)
        outs.append(subprocess.run([exe], check=True, stdout=subprocess.PIPE).stdout.decode())
    x = (np.arange(8, dtype=np.float32) - 3).reshape(2, 4)
    want = np.maximum(x @ (np.arange(12, dtype=np.float32).reshape(4, 3) / 8 * 2), 0)
    got = np.array([float(v) for v in outs[0].split()]).reshape(2, 3)
    check(outs[0] == outs[1] and np.allclose(got, want, atol=1e-5),
          "the -c object and the library give the reference values %s" % got.tolist())
    got = np.array([float(v) for v in outs[2].split()]).reshape(2, 3)
    check(np.allclose(got, want, atol=1e-5), "the whole-module -c object too")


def case_describe(d):
    """--describe=FILE: the variant's facts (docs/bundle.md) for a library and a -c
    object; refused for outputs without a library."""
    import hashlib
    import json
    model = tiny_with_external_data(d)
    sha = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
    for flags, out in (([], "libtiny.a"), (["-c"], "tiny.o")):
        o = os.path.join(d, "riscv", out)
        desc = os.path.join(d, "riscv", "tiny.json")
        rc, _, _ = run(model, "-o", o, "--target=riscv", "-mattr=+v", "-O3",
                       "--input-shape=x=2x4", "-fno-winograd", "--describe", desc, *flags)
        check(rc == 0, "%s: built with --describe" % out)
        text = open(desc).read()
        j = json.loads(text)
        t = j["target"]
        check(j["format"] == 2 and j["model"] == {"name": "tiny", "file": "tiny.onnx",
                                                  "sha256": sha(model),
                                                  "size": os.path.getsize(model)},
              "%s: format 2, the model's name, file, sha256 and size" % out)
        check((t["alias"], t["triple"], t["cpu"]) == ("riscv", "riscv64-linux-gnu", "generic-rv64")
              and "+v" in t["features"] and t["opt_level"] == 3
              and t["options"] == ["--input-shape=x=2x4", "-fno-winograd"] and t["entry_abi"] == 3,
              "%s: target, CPU, features, -O3, the code options, entry ABI 3" % out)
        hdr = open(os.path.join(d, "riscv", "tiny.h")).read()
        for key, macro in (("workspace_size", "WORKSPACE_SIZE"),
                           ("workspace_align", "WORKSPACE_ALIGN"), ("stack_size", "STACK_SIZE")):
            line = [l for l in hdr.splitlines() if l.startswith("#define TINY_%s " % macro)][0]
            check(t[key] == int(line.split()[2]), "%s: %s = the header's %s" % (out, key, macro))
        check(t["inputs"] == [{"name": "x", "dtype": "float32", "shape": [2, 4], "bounded": []}]
              and t["outputs"] == [{"name": "y", "dtype": "float32", "shape": [2, 3],
                                    "bounded": []}], "%s: the I/O signature" % out)
        check(t["library_sha256"] == sha(o) and
              t["header_sha256"] == sha(os.path.join(d, "riscv", "tiny.h")),
              "%s: the sha256 of the output and of the header" % out)
        check(t["library"] == "riscv64-linux-gnu/lib/libtiny.a" and
              t["header"] == "riscv64-linux-gnu/include/tiny.h", "%s: bundle paths" % out)
        check('\n  "target": {\n' in text and text.endswith("\n  }\n}\n"),
              "%s: the target object's lines stand between their markers" % out)
    # RAM and flash (format 2) against mlcc -v's figures and the header, for a
    # Linux and a microcontroller target, library and -c object.
    for target in ("riscv", "cortex-m4", "rv32"):
        for flags, out in (([], "libtiny.a"), (["-c"], "tiny.o")):
            o = os.path.join(d, target, out)
            desc = os.path.join(d, target, "tiny.json")
            rc, _, err = run(model, "-o", o, "--target=" + target, "--describe", desc, "-v",
                             *flags)
            check(rc == 0, "%s %s: built with --describe -v" % (target, out))
            t = json.load(open(desc))["target"]
            m = re.search(r"^mlcc: RAM (\d+) bytes \(workspace (\d+), stack (\d+), static (\d+)\); "
                          r"flash (\d+) bytes \(code (\d+), weights (\d+), other read-only (\d+), "
                          r"data (\d+)\)$", err, re.M)
            check(m is not None, "%s %s: -v prints RAM and flash" % (target, out))
            ram, ws, stack, static, flash, code, weights, other, data = map(int, m.groups())
            hdr = open(os.path.join(d, target, "tiny.h")).read()
            macro = lambda k: int(re.search(r"#define TINY_%s (\d+)" % k, hdr).group(1))
            check(ws == macro("WORKSPACE_SIZE") and stack == macro("STACK_SIZE")
                  and weights == macro("WEIGHTS_SIZE") > 0 and code > 0,
                  "%s %s: -v's workspace, stack and weights are the header's" % (target, out))
            check(ram == ws + stack + static and flash == code + weights + other + data,
                  "%s %s: RAM = workspace + stack + static, flash = code + read-only + data"
                  % (target, out))
            check((t["ram_size"], t["flash_size"], t["code_size"], t["weights_size"],
                   t["stack_size"]) == (ram, flash, code, weights, stack),
                  "%s %s: --describe's ram %d, flash %d, code %d, weights %d, stack %d are -v's"
                  % (target, out, ram, flash, code, weights, stack))
            if target != "riscv":
                check(stack <= 4096, "%s %s: the microcontroller's own stack bound (%d B)"
                      % (target, out, stack))
    for flags in (["-S"], ["--emit=header"], ["--emit=asm"]):
        before = listing(d)
        rc, _, err = run(model, *flags, "-o", os.path.join(d, "x.out"), "--describe",
                         os.path.join(d, "x.json"))
        check(rc == 2 and "--describe needs a library or an object" in err and listing(d) == before,
              "%s --describe: usage error, nothing written" % flags[0])


def main():
    return mlcc_e2e.main_of_cases(__doc__, globals(), "mlcc-targets-", None)


if __name__ == "__main__":
    sys.exit(main())
