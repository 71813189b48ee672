#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Black-box tests of the mlcc command line (DESIGN.md sections 2-3).

usage: driver_test.py MLCC CASE      (CASE: one of the functions named case_*)

Each case runs in a fresh temporary directory, builds the small ONNX models it
needs with the onnx package, runs mlcc as a subprocess and checks exit codes,
messages and files. Exit 0 = pass, 1 = fail.
"""
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import mlcc_e2e  # noqa: E402
import onnx_case  # noqa: E402
from mlcc_e2e import Failure, check, listing  # noqa: E402,F401  (hardening_test uses them)

MLCC = None


def run(*args, cwd=None, env=None, stdin=subprocess.DEVNULL):
    """mlcc |args| (env entries added to os.environ); (rc, stdout, stderr)."""
    return mlcc_e2e.run_mlcc(MLCC, args, cwd=cwd, env=dict(os.environ, **env) if env else None,
                             stdin=stdin)


# --- models --------------------------------------------------------------------

def tiny_model(path, external=None, twin=False):
    """y = Relu(x @ W + b) + x2 with x:[2,4], W:[4,3], b:[3], x2:[2,3].
    With |twin|, also z = Relu(x @ W2 + b2) + x2: the same kernel with other weights."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal((3,)).astype(np.float32)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["mm"], name="mm"),
        helper.make_node("Add", ["mm", "b"], ["biased"], name="bias"),
        helper.make_node("Relu", ["biased"], ["act"], name="relu"),
        helper.make_node("Add", ["act", "x2"], ["y"], name="skip"),
    ]
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])]
    if twin:
        w2 = rng.standard_normal((4, 3)).astype(np.float32)
        b2 = rng.standard_normal((3,)).astype(np.float32)
        nodes += [
            helper.make_node("MatMul", ["x", "W2"], ["mm2"], name="mm2"),
            helper.make_node("Add", ["mm2", "b2"], ["biased2"], name="bias2"),
            helper.make_node("Relu", ["biased2"], ["act2"], name="relu2"),
            helper.make_node("Add", ["act2", "x2"], ["z"], name="skip2"),
        ]
        inits += [numpy_helper.from_array(w2, "W2"), numpy_helper.from_array(b2, "b2")]
        outputs.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3]))
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4]),
         helper.make_tensor_value_info("x2", TensorProto.FLOAT, [2, 3])],
        outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    if external:
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=external, size_threshold=0)
    else:
        onnx.save_model(model, path)
    return (w, b, w2, b2) if twin else (w, b)


def unsupported_model(path):
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("FrobnicateXyz", ["r"], ["y"], name="frob")]
    graph = helper.make_graph(
        nodes, "bad", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save_model(model, path)


# --- cases ---------------------------------------------------------------------

def case_version(d):
    rc, out, _ = run("--version")
    check(rc == 0, "exit 0")
    lines = out.splitlines()
    check(len(lines) >= 4, "at least four lines")
    check(lines[0] == "mlcc version 0.1.0", "line 1: version")
    check(re.fullmatch(r"commit: ([0-9a-f]{40}|unknown)", lines[1]) is not None,
          "line 2: commit (40 hex or unknown): " + lines[1])
    check(re.fullmatch(r"codegen: [0-9a-f]{64}", lines[2]) is not None,
          "line 3: codegen hash (64 hex): " + lines[2])
    check(re.fullmatch(r"LLVM: 16\.\d+\.\d+", lines[3]) is not None, "line 4: LLVM: " + lines[3])
    git = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)), "rev-parse",
                          "HEAD"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if git.returncode == 0 and lines[1] != "commit: unknown":
        # The build records HEAD at build time; a commit made since is newer.
        log = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(__file__)),
                              "merge-base", "--is-ancestor", lines[1][8:], "HEAD"])
        check(log.returncode == 0, "the commit is HEAD or an ancestor of it")
    for t in ("x86_64-linux-gnu", "aarch64-linux-gnu", "riscv64-linux-gnu"):
        check(t in out, f"target {t} listed")


def case_help(d):
    rc, out, _ = run("--help")
    check(rc == 0, "exit 0")
    for s in ("USAGE: mlcc [options] model.onnx", "--emit=KIND", "-o FILE", "-MF FILE", "-###",
              "--input-shape", "-mcpu=CPU", "--print-targets"):
        check(s in out, f"help mentions {s}")


def case_print_targets(d):
    rc, out, _ = run("--print-targets")
    check(rc == 0, "exit 0")
    lines = [l.split() for l in out.splitlines() if l.strip()]
    aliases = [l[0] for l in lines]
    check(aliases == ["x86", "aarch64", "riscv", "cortex-m4", "cortex-m55", "rv32", "rv32f"],
          f"aliases {aliases}")
    check(lines[0][1] == "x86_64-linux-gnu", "x86 triple")


def case_print_jobs(d):
    tiny_model(os.path.join(d, "tiny.onnx"))
    before = listing(d)
    rc, out, err = run("-###", "tiny.onnx", "--target=aarch64", "-o", "out/libtiny.a", cwd=d)
    check(rc == 0, "exit 0")
    check(listing(d) == before, "-### wrote nothing")
    check("Target: aarch64-linux-gnu" in err, "resolved triple printed")
    check("CPU: generic" in err and "Features: +neon" in err, "cpu and features printed")
    lines = err.splitlines()
    ar = [l for l in lines if '"rcsD"' in l]
    check(len(ar) == 1, "one archiver job")
    check('llvm-ar' in ar[0] and '"out/.mlcc-tmp-' in ar[0] and 'tiny_entry.o"' in ar[0],
          "archiver job names the temporary archive and the entry object")
    check(any(l.startswith(' "mlcc" "-cc1" "import" "tiny.onnx"') for l in lines), "import job")
    check(any('"header"' in l and '"out/tiny.h"' in l for l in lines), "header job beside output")
    # Every job line is fully quoted.
    for l in lines:
        if l.startswith(" "):
            check(all(tok.startswith('"') and tok.endswith('"') for tok in l.split()),
                  f"quoted: {l}")
    # $MLCC_AR picks the archiver.
    rc, _, err = run("-###", "tiny.onnx", env={"MLCC_AR": "/opt/my ar"}, cwd=d)
    check(rc == 0 and '"/opt/my ar" "rcsD"' in err, "MLCC_AR used and quoted")
    check(listing(d) == before, "-### wrote nothing (2)")


def case_bad_flag(d):
    rc, _, err = run("--emitt=ll", "model.onnx")
    check(rc == 2, "unknown flag exits 2")
    check("mlcc: error: unknown option '--emitt=ll'; did you mean '--emit=ll'?" in err,
          "did you mean")
    check("--help" in err, "hint to --help")
    rc, _, err = run()
    check(rc == 2 and "no input" in err, "no input exits 2")
    rc, _, err = run("--emit=library", "m.onnx")
    check(rc == 2 and "--emit" in err, "bad --emit value exits 2")
    rc, _, err = run("-O7", "m.onnx")
    check(rc == 2 and "-O7" in err, "bad -O exits 2")
    tiny_model(os.path.join(d, "tiny.onnx"))
    rc, _, err = run("--target=sparc", "tiny.onnx", cwd=d)
    check(rc == 2 and "sparc" in err, "unknown target exits 2")
    rc, _, err = run("--name=9bad", "tiny.onnx", cwd=d)
    check(rc == 2 and "9bad" in err, "invalid --name exits 2")
    rc, _, err = run("--passes=dce,nosuchpass", "--emit=ir", "tiny.onnx", cwd=d)
    check(rc == 2 and "nosuchpass" in err, "unknown pass exits 2")
    check(listing(d) == ["tiny.onnx"], "usage errors write nothing")


def case_missing_input(d):
    rc, _, err = run("no/such/model.onnx", cwd=d)
    check(rc == 1, "exit 1")
    check("no/such/model.onnx" in err, "path in message")
    check("No such file" in err, "reason in message")
    check(listing(d) == [], "nothing written")


def case_truncated_model(d):
    tiny_model(os.path.join(d, "full.onnx"))
    data = open(os.path.join(d, "full.onnx"), "rb").read()
    with open(os.path.join(d, "cut.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])
    rc, _, err = run("cut.onnx", cwd=d)
    check(rc == 1, f"exit 1 (got {rc})")
    check(err.startswith("cut.onnx: ") or "cut.onnx" in err, "path in message")
    check("error:" in err, "error rendered")
    open(os.path.join(d, "empty.onnx"), "wb").close()
    rc, _, err = run("empty.onnx", cwd=d)
    check(rc == 1 and "empty.onnx" in err, "empty file exits 1")
    check(sorted(listing(d)) == ["cut.onnx", "empty.onnx", "full.onnx"], "nothing written")


def case_unsupported_op(d):
    unsupported_model(os.path.join(d, "bad.onnx"))
    rc, _, err = run("bad.onnx", cwd=d)
    check(rc == 1, "exit 1")
    check(err.startswith("bad.onnx: "), "rendered status starts with the input path")
    check("FrobnicateXyz" in err, "unsupported op listed")
    check("[UNIMPLEMENTED]" in err, "code shown")


def case_no_partial_output(d):
    unsupported_model(os.path.join(d, "bad.onnx"))
    os.mkdir(os.path.join(d, "out"))
    old = {"out/libbad.a": b"old archive", "out/bad.h": b"old header", "out/bad.d": b"old dep"}
    for p, v in old.items():
        open(os.path.join(d, p), "wb").write(v)
    before = listing(d)
    rc, _, _ = run("bad.onnx", "-o", "out/libbad.a", "-MD", cwd=d)
    check(rc == 1, "import failure exits 1")
    check(listing(d) == before, "no temporaries left")
    for p, v in old.items():
        check(open(os.path.join(d, p), "rb").read() == v, f"{p} untouched")
    # A failure at the very end (the archiver) leaves nothing either.
    tiny_model(os.path.join(d, "tiny.onnx"))
    before = listing(d)
    rc, _, err = run("tiny.onnx", "-o", "out/libtiny.a", "-MD", cwd=d,
                     env={"MLCC_AR": "/bin/false"})
    check(rc == 1, f"archiver failure exits 1 (got {rc})")
    check("mlcc: error: cannot create 'out/libtiny.a': '/bin/false' failed with exit code 1"
          in err, "archiver named")
    check(listing(d) == before, "no partial library, header or depfile")
    rc, _, err = run("tiny.onnx", "-o", "tiny.onnx/libtiny.a", cwd=d)
    check(rc == 1 and "tiny.onnx" in err, "unwritable output exits 1")
    check(listing(d) == before, "nothing written")
    # Output folders are created (like ninja), and removed again on failure.
    rc, _, _ = run("bad.onnx", "-o", "new/sub/libbad.a", "-MD", "-MF", "deps/bad.d", cwd=d)
    check(rc == 1, "exit 1")
    check(listing(d) == before, "created folders removed after a failure")
    rc, _, _ = run("tiny.onnx", "-o", "new/sub/libtiny.a", "-MD", "-MF", "deps/tiny.d", cwd=d)
    check(rc == 0, "exit 0 with new output folders")
    check(os.path.exists(os.path.join(d, "new/sub/libtiny.a")) and
          os.path.exists(os.path.join(d, "new/sub/tiny.h")) and
          os.path.exists(os.path.join(d, "deps/tiny.d")), "outputs in the new folders")


def case_emit_ir(d):
    tiny_model(os.path.join(d, "tiny.onnx"))
    rc, out, _ = run("--emit=ir", "tiny.onnx", cwd=d)
    check(rc == 0, "exit 0")
    for s in ("MatMul", "Relu", "Add", "%y"):
        check(s in out, f"IR mentions {s}")
    check(listing(d) == ["tiny.onnx"], "stdout only")
    rc, out2, _ = run("--emit", "ir", "tiny.onnx", "-o", "tiny.mlccir", cwd=d)
    check(rc == 0 and out2 == "", "exit 0, nothing on stdout")
    check(open(os.path.join(d, "tiny.mlccir")).read() == out, "same text in the file")
    rc, dot, _ = run("--emit=dot", "tiny.onnx", cwd=d)
    check(rc == 0 and dot.lstrip().startswith("digraph"), "dot output")


def case_depfile(d):
    sub = os.path.join(d, "my models")
    os.mkdir(sub)
    tiny_model(os.path.join(sub, "tiny.onnx"), external="tiny weights.bin")
    os.mkdir(os.path.join(d, "out lib"))
    rc, _, _ = run("my models/tiny.onnx", "-o", "out lib/libtiny.a", "-MD", "-MF", "deps.d",
                   cwd=d)
    check(rc == 0, "exit 0")
    text = open(os.path.join(d, "deps.d")).read()
    print("depfile:\n" + text)
    want = ("out\\ lib/libtiny.a: my\\ models/tiny.onnx \\\n"
            "  my\\ models/tiny\\ weights.bin\n")
    check(text == want, f"depfile text {text!r} != {want!r}")
    check(os.path.exists(os.path.join(d, "out lib", "tiny.h")), "header beside the library")
    # -MD without -MF: the output with .d.
    rc, _, _ = run("my models/tiny.onnx", "-c", "-o", "t.o", "-MD", cwd=d)
    check(rc == 0, "exit 0 (-c -MD)")
    check(open(os.path.join(d, "t.d")).read().startswith("t.o: my\\ models/tiny.onnx"),
          "default depfile path and target")


def chain_model(path, n=60):
    """A chain of n MatMul+Relu with distinct shapes: n distinct kernels, slow to compile."""
    rng = np.random.default_rng(2)
    nodes, inits = [], []
    prev, width = "x", 8
    for i in range(n):
        w = rng.standard_normal((width, width + 1)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"]))
        nodes.append(helper.make_node("Relu", [f"m{i}"], [f"r{i}"]))
        prev, width = f"r{i}", width + 1
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [4, width])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save_model(model, path)


def case_interrupted(d):
    """SIGTERM in the middle of codegen (as ninja does) leaves nothing behind."""
    import signal
    import time
    chain_model(os.path.join(d, "chain.onnx"))
    before = listing(d)
    p = subprocess.Popen([MLCC, "chain.onnx", "-o", "out/libchain.a", "-MD", "-j1"], cwd=d,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    out_dir = os.path.join(d, "out")
    while time.time() < deadline and p.poll() is None:
        if os.path.isdir(out_dir) and any(n.startswith(".mlcc-tmp-") for n in os.listdir(out_dir)):
            break
        time.sleep(0.005)
    p.send_signal(signal.SIGTERM)
    rc = p.wait()
    print("rc =", rc, p.stderr.read().decode()[:500])
    if rc == 0:
        print("note: mlcc finished before the signal; checking the complete output instead")
        check(os.path.exists(os.path.join(out_dir, "libchain.a")), "complete output")
        return
    check(rc == -signal.SIGTERM, f"killed by SIGTERM (rc {rc})")
    check(listing(d) == before, f"nothing left behind: {listing(d)}")


def case_special_output(d):
    """-o naming a FIFO or device (cc -o /dev/null) writes through it: the node
    is never replaced by a regular file, no header lands beside it, and no
    temporary is left (a FIFO stands in for /dev/null, which a regression
    would replace for the whole machine when run as root)."""
    import stat
    import threading
    tiny_model(os.path.join(d, "tiny.onnx"))
    os.mkdir(os.path.join(d, "dev"))
    fifo = os.path.join(d, "dev", "pipe")
    tmp = os.path.join(d, "tmp")
    os.mkdir(tmp)
    for args, magic in ((["-o", "dev/pipe"], b"!<arch>\n"), (["-c", "-o", "dev/pipe"], b"\x7fELF"),
                        (["--emit=header", "-o", "dev/pipe"], b"/* tiny.h")):
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()),
                                  daemon=True)
        reader.start()
        rc, _, err = run("tiny.onnx", *args, cwd=d, env={"TMPDIR": tmp})
        if rc != 0:
            open(fifo, "wb").close()  # unblock the reader
        reader.join(30)
        check(rc == 0, f"{args}: exit 0 (got {rc})")
        check(stat.S_ISFIFO(os.stat(fifo).st_mode), f"{args}: the FIFO is still a FIFO")
        check(got and got[0].startswith(magic), f"{args}: the output went through the FIFO")
        check(os.listdir(os.path.join(d, "dev")) == ["pipe"], f"{args}: nothing beside the FIFO")
        check(os.listdir(tmp) == [], f"{args}: no temporaries left in $TMPDIR")
        os.unlink(fifo)


def case_output_is_directory(d):
    """-o naming a folder ("out/" or an existing folder) is a usage error found
    before any work, not an archiver or rename failure after the whole build."""
    tiny_model(os.path.join(d, "tiny.onnx"))
    os.mkdir(os.path.join(d, "out"))
    before = listing(d)
    for args, example in ((["-o", "out"], "out/libtiny.a"), (["-o", "out/"], "out/libtiny.a"),
                          (["-o", "new/"], "new/libtiny.a"), (["-c", "-o", "out"], "out/tiny.o"),
                          (["-o", "lib.a", "-MD", "-MF", "out"], None)):
        rc, _, err = run("tiny.onnx", *args, cwd=d)
        check(rc == 2, f"{args}: usage error (got {rc})")
        check("is a directory" in err and "llvm-ar" not in err, f"{args}: clear message")
        if example:
            check(f"e.g. '{example}'" in err, f"{args}: suggests {example}")
        check(listing(d) == before, f"{args}: nothing written")


def case_percent_in_path(d):
    """An output folder with '%' in its name (Jenkins names branch workspaces
    "feature%2Fx") builds: llvm-ar would replace every '%' of the path it is
    given when it makes its own temporary."""
    tiny_model(os.path.join(d, "tiny.onnx"))
    rc, _, err = run("tiny.onnx", "-o", "ws%2Ffeature/libtiny.a", "-MD", "-v", cwd=d)
    check(rc == 0, f"exit 0 (got {rc})")
    out = os.path.join(d, "ws%2Ffeature")
    check(sorted(os.listdir(out)) == ["libtiny.a", "libtiny.d", "tiny.h"], "library, depfile, header")
    members = subprocess.run(["llvm-ar-16", "t", os.path.join(out, "libtiny.a")],
                             stdout=subprocess.PIPE, check=True).stdout.decode().split()
    check(members[:2] == ["tiny_entry.o", "tiny_weights.o"] and len(members) == 3, f"members {members}")


def case_long_chain(d):
    """70 elementwise ops in a row: fusion stops at the kernel size limit
    (MLCC_KERNEL_MAX_NODES) instead of building a chain the emitter refuses,
    and the result is right (70 negations = identity)."""
    nodes, prev = [], "x"
    for i in range(70):
        nodes.append(helper.make_node("Neg", [prev], ["n%d" % i]))
        prev = "n%d" % i
    g = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [4, 8])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, os.path.join(d, "chain.onnx"))
    rc, _, err = run("chain.onnx", "-o", "libchain.a", "-v", cwd=d)
    check(rc == 0, f"exit 0 (got {rc}: {err.strip()[-300:]})")
    check("2 kernels compiled" in err, "the chain is split into two kernels")
    main_c = os.path.join(d, "main.c")
    with open(main_c, "w") as f:
        f.write('#include <stdio.h>\n#include "chain.h"\n'
                "static _Alignas(64) unsigned char ws[CHAIN_WORKSPACE_SIZE + 64];\n"
                "int main(void) { float x[32], y[32]; for (int i = 0; i < 32; ++i) x[i] = i - 7.5f;\n"
                "  if (chain_run(x, y, ws)) return 2;\n"
                "  for (int i = 0; i < 32; ++i) if (y[i] != x[i]) return 1; return 0; }\n")
    subprocess.run(["cc", "-std=c11", main_c, os.path.join(d, "libchain.a"), "-lm", "-o",
                    os.path.join(d, "app")], check=True, cwd=d)
    check(subprocess.run([os.path.join(d, "app")]).returncode == 0, "70 negations give x back")


MAIN_C = r"""
#include <math.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>
#include "tiny.h"
static alignas(64) unsigned char ws[TINY_WORKSPACE_SIZE + 64];
int main(void) {
  float x[2 * 4], x2[2 * 3], y[2 * 3], z[2 * 3];
  if (fread(x, sizeof x, 1, stdin) != 1 || fread(x2, sizeof x2, 1, stdin) != 1) return 3;
  memset(y, 0, sizeof y);
  if (tiny_run(x, x2, y, z, ws) != 0) return 4;
  fwrite(y, sizeof y, 1, stdout);
  fwrite(z, sizeof z, 1, stdout);
  /* The generic entry and the info struct agree. */
  float y2[6], z2[6];
  const void* ins[2] = {x, x2};
  void* outs[2] = {y2, z2};
  if (tiny_info.num_inputs != TINY_NUM_INPUTS || tiny_info.num_outputs != 2) return 5;
  if (tiny_info.run(ins, outs, ws) != 0 || memcmp(y, y2, sizeof y) || memcmp(z, z2, sizeof z))
    return 6;
  if (tiny_info.outputs[0].size_bytes != (int64_t)sizeof y) return 7;
  return 0;
}
"""


def case_end_to_end(d):
    w, b, w2, b2 = tiny_model(os.path.join(d, "tiny.onnx"), twin=True)
    rc, _, err = run("tiny.onnx", "-v", cwd=d)
    check(rc == 0, "compile exit 0")
    check(os.path.exists(os.path.join(d, "libtiny.a")) and os.path.exists(os.path.join(d, "tiny.h")),
          "libtiny.a and tiny.h in the current directory")
    check("mlcc: 1 kernel compiled for 2 kernel groups (1 shared)" in err,
          "-v summary: the twin kernel is compiled once")
    check("mlcc: workspace " in err, "-v workspace size")
    check('"rcsD"' in err, "-v shows the archiver")
    check(not any(n.startswith(".mlcc-") for n in os.listdir(d)), "no temporaries left")
    members = subprocess.run(["llvm-ar-16", "t", os.path.join(d, "libtiny.a")],
                             stdout=subprocess.PIPE, check=True).stdout.decode().split()
    print("members:", members)
    check(members[:2] == ["tiny_entry.o", "tiny_weights.o"], "entry and weights members")
    check(all(m.startswith("mlcc_k_") and len(m) == len("mlcc_k_") + 24 + 2 for m in members[2:])
          and members[2:], "kernel members named by key")
    open(os.path.join(d, "main.c"), "w").write(MAIN_C)
    cc = subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-pedantic", "-I", d,
                         os.path.join(d, "main.c"), os.path.join(d, "libtiny.a"), "-lm",
                         "-o", os.path.join(d, "main")], stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT)
    print(cc.stdout.decode())
    check(cc.returncode == 0, "the header compiles and the program links")
    cxx = shutil.which("c++")
    if cxx:
        open(os.path.join(d, "inc.cc"), "w").write('#include "tiny.h"\nint main() { return 0; }\n')
        p = subprocess.run([cxx, "-Wall", "-Werror", "-I", d, "-c", os.path.join(d, "inc.cc"),
                            "-o", os.path.join(d, "inc.o")])
        check(p.returncode == 0, "the header compiles as C++")
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    x2 = rng.standard_normal((2, 3)).astype(np.float32)
    p = subprocess.run([os.path.join(d, "main")], input=x.tobytes() + x2.tobytes(),
                       stdout=subprocess.PIPE)
    check(p.returncode == 0, f"program exit 0 (got {p.returncode})")
    y = np.frombuffer(p.stdout, dtype=np.float32).reshape(2, 2, 3)
    ref = np.stack([np.maximum(x @ w + b, 0) + x2, np.maximum(x @ w2 + b2, 0) + x2])
    print("y,z =", y.tolist(), "\nref =", ref.tolist())
    check(np.all(np.abs(y - ref) <= 1e-5 + 1e-4 * np.abs(ref)), "numbers match numpy")
    # Deterministic: a second build is byte-identical; the header is target-independent.
    lib1 = open(os.path.join(d, "libtiny.a"), "rb").read()
    hdr1 = open(os.path.join(d, "tiny.h"), "rb").read()
    rc, _, _ = run("tiny.onnx", "-j1", cwd=d)
    check(rc == 0 and open(os.path.join(d, "libtiny.a"), "rb").read() == lib1,
          "rebuild is byte-identical")
    rc, _, _ = run("tiny.onnx", "--target=aarch64", "--emit=header", "-o", "tiny_a64.h", cwd=d)
    check(rc == 0 and open(os.path.join(d, "tiny_a64.h"), "rb").read() == hdr1,
          "header identical for aarch64")
    check(b"/work" not in hdr1 and d.encode() not in hdr1, "no absolute paths in the header")
    # The other output kinds.
    rc, _, _ = run("tiny.onnx", "-c", cwd=d)
    check(rc == 0 and open(os.path.join(d, "tiny.o"), "rb").read(4) == b"\x7fELF", "-c object")
    rc, _, _ = run("tiny.onnx", "-S", cwd=d)
    check(rc == 0 and "define" in open(os.path.join(d, "tiny.ll")).read(), "-S LLVM IR")
    rc, _, _ = run("tiny.onnx", "--emit=asm", "--target=riscv", cwd=d)
    check(rc == 0 and "tiny_run" in open(os.path.join(d, "tiny.s")).read(), "--emit=asm")


def case_input_value(d):
    """--input-value bakes fed shape inputs (and a data input with an
    initializer default) into the library; bad bindings are usage errors."""
    x_vi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])
    shape_vi = helper.make_tensor_value_info("shape", TensorProto.INT64, [2])
    k_vi = helper.make_tensor_value_info("k", TensorProto.INT64, [1])
    scale_vi = helper.make_tensor_value_info("scale", TensorProto.FLOAT, [1])
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
             helper.make_node("Mul", ["r", "scale"], ["m"], name="mul"),
             helper.make_node("TopK", ["m", "k"], ["values", "indices"], name="topk")]
    g = helper.make_graph(nodes, "iv", [x_vi, shape_vi, k_vi, scale_vi],
                          [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("indices", TensorProto.INT64, None)],
                          initializer=[numpy_helper.from_array(np.array([2.0], np.float32),
                                                               "scale")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, os.path.join(d, "iv.onnx"))
    with open(os.path.join(d, "k.pb"), "wb") as f:
        f.write(numpy_helper.from_array(np.array([2], np.int64), "k").SerializeToString())
    # k's value as a .pb whose data lives in an external file (for -MD).
    kx = onnx_case.external_tensor(d, "k", np.array([2], np.int64), "k.bin", offsets=False)
    with open(os.path.join(d, "kx.pb"), "wb") as f:
        f.write(kx.SerializeToString())
    with open(os.path.join(d, "kf.pb"), "wb") as f:
        f.write(numpy_helper.from_array(np.array([2.0], np.float32), "k").SerializeToString())

    rc, _, err = run("iv.onnx", cwd=d)
    check(rc == 1 and "(Reshape, opset 13)" in err and "--input-value=shape=" in err,
          "a fed shape input: exit 1 naming the op and suggesting --input-value")
    for args, want in [(["--input-value=nope=1"], "'nope', which is not a graph input"),
                       (["--input-value=shape=1,2,3"], "do not fit graph input 'shape', shape [2]"),
                       (["--input-value=shape=3.5,4"], "is not an integer"),
                       (["--input-value=shape=3,4", "--input-value=k=@kf.pb"],
                        "the tensor is float32 but graph input 'k' is int64"),
                       (["--input-value=shape=3,x"], "item 'x' is not a number"),
                       (["--input-value=shape=3,18446744073709551615"],
                        "item 1 does not fit in int64")]:
        rc, _, err = run("iv.onnx", *args, cwd=d)
        check(rc == 2 and want in err, "usage error (exit 2) containing %r" % want)
    rc, _, err = run("iv.onnx", "--input-value=shape=3,4", "--input-value=k=@missing.pb", cwd=d)
    check(rc == 1 and "missing.pb" in err, "a missing @FILE: exit 1 naming it")
    check(not os.path.exists(os.path.join(d, "libiv.a")), "no output after errors")

    rc, _, err = run("iv.onnx", "--input-value=shape=3,4", "--input-value=k=@kx.pb",
                     "--input-value", "scale=0.5", "-MD", cwd=d)
    check(rc == 0, "compiles with the three inputs baked in")
    dep = open(os.path.join(d, "libiv.d")).read()
    check("kx.pb" in dep and "k.bin" in dep, "the @FILE and its external data are in the depfile")
    hdr = open(os.path.join(d, "iv.h")).read()
    check("int iv_run(const float *x, float *values, int64_t *indices, void *workspace);" in hdr,
          "only x stays a parameter of iv_run")
    open(os.path.join(d, "main.c"), "w").write(r"""
#include <stdalign.h>
#include <stdio.h>
#include "iv.h"
static alignas(64) unsigned char ws[IV_WORKSPACE_SIZE + 64];
int main(void) {
  float x[12], values[6];
  int64_t indices[6];
  if (fread(x, sizeof x, 1, stdin) != 1) return 3;
  if (iv_run(x, values, indices, ws) != 0) return 4;
  fwrite(values, sizeof values, 1, stdout);
  fwrite(indices, sizeof indices, 1, stdout);
  return 0;
}
""")
    cc = subprocess.run(["cc", "-std=c11", "-I", d, os.path.join(d, "main.c"),
                         os.path.join(d, "libiv.a"), "-lm", "-o", os.path.join(d, "main")])
    check(cc.returncode == 0, "links")
    x = np.random.default_rng(3).standard_normal((2, 6)).astype(np.float32)
    p = subprocess.run([os.path.join(d, "main")], input=x.tobytes(), stdout=subprocess.PIPE)
    check(p.returncode == 0, "runs")
    vals = np.frombuffer(p.stdout[:24], np.float32).reshape(3, 2)
    idx = np.frombuffer(p.stdout[24:], np.int64).reshape(3, 2)
    mm = x.reshape(3, 4) * np.float32(0.5)
    ref_idx = np.argsort(-mm, axis=1, kind="stable")[:, :2]
    ref_vals = np.take_along_axis(mm, ref_idx, axis=1)
    print("values", vals.tolist(), "ref", ref_vals.tolist())
    check(np.array_equal(idx, ref_idx) and np.allclose(vals, ref_vals, rtol=0, atol=0),
          "TopK(Reshape(x, [3,4]) * 0.5, 2) matches numpy (0.5 wins over the default 2.0)")


def main():
    return mlcc_e2e.main_of_cases(__doc__, globals(), "mlcc-driver-", None,
                                  private_cache=True)


if __name__ == "__main__":
    sys.exit(main())
