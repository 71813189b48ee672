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
Exit 0 = pass, 1 = fail.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

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


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)
    print("  ok: " + what)


def run(*args, cwd=None):
    p = subprocess.run([MLCC, *args], cwd=cwd, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    print("$ mlcc %s  -> %d" % (" ".join(args), p.returncode))
    for name, text in (("stdout", out), ("stderr", err)):
        if text:
            print("  %s: %s" % (name, text[:1500].replace("\n", "\n          ")))
    return p.returncode, out, err


def listing(d):
    return sorted(os.path.relpath(os.path.join(r, f), d)
                  for r, ds, fs in os.walk(d) for f in fs + ds)


def tiny_with_external_data(d):
    """y = Relu(x @ W) with W in the external file 'w.bin'."""
    w = np.arange(12, dtype=np.float32).reshape(4, 3) / 8
    wt = numpy_helper.from_array(w, "W")
    wt.ClearField("raw_data")
    wt.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "w.bin"), ("offset", "0"), ("length", str(w.nbytes))):
        e = wt.external_data.add()
        e.key, e.value = k, v
    with open(os.path.join(d, "w.bin"), "wb") as f:
        f.write(w.tobytes())
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


def main():
    global MLCC
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    MLCC = os.path.abspath(sys.argv[1])
    fn = globals().get("case_" + sys.argv[2])
    if not fn:
        print("unknown case " + sys.argv[2])
        return 2
    d = tempfile.mkdtemp(prefix="mlcc-targets-")
    try:
        fn(d)
    except Failure as e:
        print("FAIL: " + str(e))
        print("(left %s for inspection)" % d)
        return 1
    shutil.rmtree(d, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
