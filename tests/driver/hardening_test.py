#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Black-box regression tests of the driver for a shared CI (issue 14 bugs
1, 5, 6, weak point 11; issue 12 item 6): huge Slice steps and pool strides,
outputs that are inputs, signals and closed pipes, default names, gcc's
depfile flags, the progress line and --emit=dot.

usage: hardening_test.py MLCC CASE      (CASE: one of the functions named case_*)

Reuses the helpers of driver_test.py (same folder). Exit 0 = pass, 1 = fail.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_test as dt  # noqa: E402
import mlcc_e2e  # noqa: E402  (on the path through driver_test)
import onnx_case  # noqa: E402
from driver_test import Failure, check, listing, run, tiny_model  # noqa: E402

INT64_MAX = 2**63 - 1
INT64_MIN = -2**63


def save(graph_nodes, inputs, outputs, path, inits=(), opset=13):
    g = helper.make_graph(graph_nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, path)


def build_and_run(d, model, name, x, n_out):
    """Compiles |model| as NAME, links a program that feeds |x| (float32) and
    prints the first |n_out| float32 outputs; returns them."""
    rc, _, err = run(model, "--name=" + name, "-o", f"lib{name}.a", "--no-cache", cwd=d)
    check(rc == 0, f"{model}: compiles (exit {rc}: {err.strip()[-300:]})")
    src = os.path.join(d, name + "_main.c")
    with open(src, "w") as f:
        f.write(f'#include <stdio.h>\n#include "{name}.h"\n'
                f"static _Alignas(64) unsigned char ws[{name.upper()}_WORKSPACE_SIZE + 64];\n"
                f"int main(void) {{ static float x[{x.size}], y[{max(n_out, 1)}];\n"
                "  if (fread(x, sizeof x, 1, stdin) != 1) return 3;\n"
                f"  for (int i = 0; i < {max(n_out, 1)}; ++i) y[i] = -12345.f;\n"
                f"  if ({name}_run(x, y, ws) != 0) return 4;\n"
                f"  fwrite(y, sizeof(float), {n_out}, stdout); return 0; }}\n")
    exe = os.path.join(d, name + "_app")
    subprocess.run(["cc", "-std=c11", "-I", d, src, os.path.join(d, f"lib{name}.a"), "-lm", "-o",
                    exe], check=True)
    p = subprocess.run([exe], input=x.astype(np.float32).tobytes(), stdout=subprocess.PIPE)
    check(p.returncode == 0, f"{name}: program exit 0 (got {p.returncode})")
    return np.frombuffer(p.stdout, np.float32)


# --- issue 14 bug 1: checked output-length arithmetic ---------------------------

def case_slice_huge_step(d):
    """Slice of x[10] with steps near INT64_MAX / INT64_MIN: one element, as
    numpy says (the emitter computed (e - s + st - 1) / st in int64 and
    refused the valid model)."""
    x = np.arange(10, dtype=np.float32) * 1.5 + 1
    cases = [(0, 10, INT64_MAX - 4), (0, 10, INT64_MAX), (3, 10, INT64_MAX),
             (9, -11, INT64_MIN), (9, INT64_MIN, INT64_MIN + 1), (-1, -11, INT64_MIN),
             (INT64_MIN, INT64_MAX, INT64_MAX), (INT64_MAX, INT64_MIN, INT64_MIN),
             (2, 9, 3), (8, 1, -3)]
    for i, (s, e, st) in enumerate(cases):
        ref = x[slice(s, e, st)]  # numpy takes any int64 bound and step
        inits = [numpy_helper.from_array(np.array([v], np.int64), n)
                 for n, v in (("s", s), ("e", e), ("a", 0), ("st", st))]
        path = os.path.join(d, f"slice{i}.onnx")
        save([helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])],
             [helper.make_tensor_value_info("x", TensorProto.FLOAT, [10])],
             [helper.make_tensor_value_info("y", TensorProto.FLOAT, [len(ref)])], path, inits)
        got = build_and_run(d, f"slice{i}.onnx", f"slice{i}", x, len(ref))
        print(f"x[{s}:{e}:{st}] = {got.tolist()} (numpy {ref.tolist()})")
        check(np.array_equal(got, ref), f"x[{s}:{e}:{st}] matches numpy")


def case_pool_huge_stride(d):
    """MaxPool 3x3 with pads 2 and strides INT64_MAX: one output, the max of
    the one window (the interior bounds computed (pad + stride - 1) / stride
    in int64, overflowed, and the kernel wrote out of bounds)."""
    save([helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3],
                           strides=[INT64_MAX, INT64_MAX], pads=[2, 2, 2, 2])],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
         os.path.join(d, "pool.onnx"))
    x = (np.arange(25) * 7 % 11 + 1).astype(np.float32)
    got = build_and_run(d, "pool.onnx", "pool", x, 2)
    print("y =", got.tolist())
    # The window covers rows/cols -2..0: only x[0,0]; y[1] is the canary.
    check(got[0] == x[0] and got[1] == -12345.0, "y = [x[0,0]] and nothing written past it")
    # The same window through Conv (direct and depthwise) and the other pools.
    x2 = (np.arange(50) % 7 + 1).astype(np.float32)  # [1,2,5,5]: x2[0,c,0,0] = 1, 5
    big = dict(strides=[INT64_MAX, INT64_MAX], pads=[2, 2, 2, 2])
    for i, (op, attrs, inits, ins, want) in enumerate([
            ("Conv", dict(kernel_shape=[3, 3], **big),
             [numpy_helper.from_array(np.ones((2, 2, 3, 3), np.float32), "w")], ["x", "w"], [6, 6]),
            ("Conv", dict(kernel_shape=[3, 3], group=2, **big),
             [numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")], ["x", "w"], [1, 5]),
            ("AveragePool", dict(kernel_shape=[3, 3], **big), [], ["x"], [1, 5]),
            ("AveragePool", dict(kernel_shape=[3, 3], count_include_pad=1, **big), [], ["x"],
             [1 / 9, 5 / 9])]):
        save([helper.make_node(op, ins, ["y"], **attrs)],
             [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
             [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
             os.path.join(d, f"w{i}.onnx"), inits)
        got = build_and_run(d, f"w{i}.onnx", f"w{i}", x2, 3)
        print(op, attrs, "y =", got.tolist())
        check(np.allclose(got[:2], want, rtol=1e-6) and got[2] == -12345.0,
              f"{op} {attrs}: y = {want}, nothing written past it")


# --- issue 14 bug 5: no output may be an input -----------------------------------

def case_output_is_input(d):
    """Every output (-o, -MF, the header beside a library, -c/-S/--emit
    outputs) that is the same file as an input (the model, its external data,
    --input-value=@FILE and that file's data) is refused with exit 2 naming
    both paths, compared by device and inode; every input stays intact."""
    tiny_model(os.path.join(d, "m.onnx"), external="m.bin")
    shutil.copy(os.path.join(d, "m.onnx"), os.path.join(d, "m.h"))  # its header would be m.h
    os.link(os.path.join(d, "m.onnx"), os.path.join(d, "hard.a"))
    os.symlink("m.bin", os.path.join(d, "link.o"))
    # A shape-input model fed through --input-value=@FILE whose data is external.
    save([helper.make_node("Reshape", ["x", "shape"], ["y"])],
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
          helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
         [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
         os.path.join(d, "iv.onnx"))
    kx = onnx_case.external_tensor(d, "shape", np.array([3, 4], np.int64), "k.bin",
                                   offsets=False)
    open(os.path.join(d, "k.pb"), "wb").write(kx.SerializeToString())
    iv = ["iv.onnx", "--input-value=shape=@k.pb"]
    snapshot = {n: open(os.path.join(d, n), "rb").read() for n in os.listdir(d)}
    before = listing(d)
    for args, out, inp in [
            (["m.onnx", "-MD", "-MF", "m.onnx"], "m.onnx", "m.onnx"),
            (["m.onnx", "-MF", "./m.onnx"], "./m.onnx", "m.onnx"),
            (["m.onnx", "-o", "m.bin"], "m.bin", "m.bin"),
            (["m.onnx", "-MD", "-MF", "m.bin"], "m.bin", "m.bin"),
            (["m.onnx", "-c", "-o", "link.o"], "link.o", "m.bin"),
            (["m.onnx", "-S", "-o", "m.bin"], "m.bin", "m.bin"),
            (["m.h"], "m.h", "m.h"),
            (["m.onnx", "-o", "./hard.a"], "./hard.a", "m.onnx"),
            (["m.onnx", "--emit=header", "-o", "hard.a"], "hard.a", "m.onnx"),
            (["m.onnx", "--emit=ir", "-o", "m.bin"], "m.bin", "m.bin"),
            (iv + ["-o", "k.pb"], "k.pb", "k.pb"),
            (iv + ["-MD", "-MF", "k.bin"], "k.bin", "k.bin"),
            (iv + ["-c", "-o", "sub/../k.bin"], "sub/../k.bin", "k.bin")]:
        if "sub/../k.bin" in args:
            os.mkdir(os.path.join(d, "sub"))
        rc, _, err = run(*args, cwd=d)
        check(rc == 2, f"{args}: exit 2 (got {rc})")
        check(f"'{out}'" in err and f"'{inp}'" in err and "refusing to overwrite" in err,
              f"{args}: the message names '{out}' and '{inp}'")
        if "sub/../k.bin" in args:
            os.rmdir(os.path.join(d, "sub"))
        check(listing(d) == before, f"{args}: nothing written ({listing(d)})")
        for n, data in snapshot.items():
            check(open(os.path.join(d, n), "rb").read() == data, f"{args}: {n} intact")
    # Outputs beside the inputs that are other files still build.
    rc, _, _ = run("m.onnx", "-o", "libm2.a", "-MD", cwd=d)
    check(rc == 0 and os.path.exists(os.path.join(d, "libm2.a")), "a distinct output builds")


# --- issue 14 weak point 11: default names ---------------------------------------

def case_default_names(d):
    """-o libNAME.a names the library NAME (header NAME.h, NAME_run), so two
    models both called model.onnx link into one program; a name taken from a
    generic stem like 'model' draws a warning."""
    for sub in ("a", "b"):
        os.mkdir(os.path.join(d, sub))
        tiny_model(os.path.join(d, sub, "model.onnx"))
    rc, _, err = run("a/model.onnx", "-o", "liba.a", cwd=d)
    check(rc == 0 and "warning" not in err, "-o liba.a: exit 0, no warning")
    rc, _, err = run("b/model.onnx", "-o", "out/libdet_b.a", cwd=d)
    check(rc == 0 and "warning" not in err, "-o out/libdet_b.a: exit 0, no warning")
    check(sorted(os.listdir(d)) == ["a", "a.h", "b", "liba.a", "out"],
          f"a.h beside liba.a: {sorted(os.listdir(d))}")
    check(sorted(os.listdir(os.path.join(d, "out"))) == ["det_b.h", "libdet_b.a"], "det_b.h")
    hdr = open(os.path.join(d, "a.h")).read()
    check("int a_run(" in hdr, "a.h declares a_run")
    open(os.path.join(d, "two.c"), "w").write(
        '#include "a.h"\n#include "out/det_b.h"\n'
        "static _Alignas(64) unsigned char w1[A_WORKSPACE_SIZE + 64], w2[DET_B_WORKSPACE_SIZE + 64];\n"
        "int main(void) { float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, x2[6] = {0}, y1[6], y2[6];\n"
        "  if (a_run(x, x2, y1, w1) || det_b_run(x, x2, y2, w2)) return 2;\n"
        "  for (int i = 0; i < 6; ++i) if (y1[i] != y2[i]) return 1; return 0; }\n")
    p = subprocess.run(["cc", "-std=c11", "-I", d, os.path.join(d, "two.c"),
                        os.path.join(d, "liba.a"), os.path.join(d, "out", "libdet_b.a"), "-lm",
                        "-o", os.path.join(d, "two")])
    check(p.returncode == 0, "both libraries link into one program")
    check(subprocess.run([os.path.join(d, "two")]).returncode == 0, "and both give the same y")
    # The model's stem: 'model' is generic (warning, naming the file), 'tiny' is not.
    rc, _, err = run("a/model.onnx", "-o", "c/libm.o.a", "--emit=header", cwd=d)
    check(rc == 0 and "warning: the name 'model' comes from the generic file name 'a/model.onnx'"
          in err, "--emit=header keeps the model's stem and warns")
    rc, _, err = run("a/model.onnx", "-c", cwd=d)
    check(rc == 0 and os.path.exists(os.path.join(d, "model.o")) and "--name=NAME" in err,
          "-c from model.onnx: model.o and a warning suggesting --name")
    rc, _, err = run("a/model.onnx", "--name=det", "-c", "-o", "det.o", cwd=d)
    check(rc == 0 and "warning" not in err, "--name: no warning")
    tiny_model(os.path.join(d, "tiny.onnx"))
    rc, _, err = run("tiny.onnx", "-o", "lib.a", cwd=d)
    check(rc == 0 and "warning" not in err and os.path.exists(os.path.join(d, "tiny.h")),
          "-o lib.a leaves no name: the model's stem 'tiny'")


# --- issue 14 bug 6 / issue 12 item 6: signals, closed pipes, stale temporaries ---

def no_core():
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def start_and_wait_for_temp(d, args, preexec=None, **kw):
    """Starts mlcc |args| in |d| and returns once its temporary folder exists
    (or it ended)."""
    p = subprocess.Popen([dt.MLCC, *args], cwd=d, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, preexec_fn=preexec, **kw)
    out_dir = os.path.join(d, "out")
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None:
        if os.path.isdir(out_dir) and any(n.startswith(".mlcc-tmp-") for n in os.listdir(out_dir)):
            break
        time.sleep(0.005)
    return p


def temporaries(d):
    return [n for n in listing(d) if ".mlcc-" in n]


def case_fatal_signals(d):
    """SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGXCPU, SIGPROF and a
    real-time signal in the middle of codegen: mlcc dies by that signal and
    leaves nothing behind (only SIGINT, SIGTERM and SIGHUP were handled)."""
    dt.chain_model(os.path.join(d, "chain.onnx"))
    before = listing(d)
    sigs = [signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGVTALRM,
            signal.SIGXCPU, signal.SIGPROF, signal.SIGRTMIN + 3, signal.SIGTERM]
    killed = 0
    for sig in sigs:
        p = start_and_wait_for_temp(d, ["chain.onnx", "-o", "out/libchain.a", "-MD", "-j1",
                                        "--no-cache"], preexec=no_core)
        p.send_signal(sig)
        rc = p.wait()
        err = p.stderr.read().decode(errors="replace")
        print(f"signal {int(sig)}: rc {rc} {err[:200]}")
        if rc == 0:
            print("note: mlcc finished before the signal")
            shutil.rmtree(os.path.join(d, "out"))
            continue
        killed += 1
        check(rc == -sig, f"signal {int(sig)}: killed by it (rc {rc})")
        check(listing(d) == before, f"signal {int(sig)}: nothing left behind: {listing(d)}")
    check(killed >= len(sigs) - 2, f"most runs were interrupted ({killed}/{len(sigs)})")


def case_closed_pipe(d):
    """mlcc -v 2>&1 | head -1: the diagnostics pipe closes after the first
    line; the build finishes (the diagnostics are dropped), exit 0, a good
    library, no temporaries (SIGPIPE killed it and left .mlcc-tmp-*)."""
    dt.chain_model(os.path.join(d, "chain.onnx"), n=12)
    before = listing(d)
    p = subprocess.Popen([dt.MLCC, "chain.onnx", "-v", "-o", "out/libchain.a", "-MD", "-j1",
                          "--no-cache"], cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    first = p.stdout.readline()
    p.stdout.close()  # head -1 exits
    rc = p.wait()
    print("first line:", first, "rc", rc)
    check(first.startswith(b"mlcc version"), "the first line came")
    check(rc == 0, f"exit 0 after the pipe closed (got {rc})")
    check(temporaries(d) == [], f"no temporaries: {temporaries(d)}")
    check(sorted(os.listdir(os.path.join(d, "out"))) == ["chain.h", "libchain.a", "libchain.d"],
          "library, header, depfile")
    rc, _, _ = run("chain.onnx", "-o", "ref/libchain.a", "--no-cache", cwd=d)
    check(rc == 0 and open(os.path.join(d, "out", "libchain.a"), "rb").read() ==
          open(os.path.join(d, "ref", "libchain.a"), "rb").read(),
          "the library is byte-identical to a build with an open pipe")
    # The archiver writes to the closed pipe too: it must not die of SIGPIPE.
    ar = os.path.join(d, "noisy-ar")
    open(ar, "w").write('#!/bin/sh\nsleep 0.2\necho "ar: note" >&2\nexec llvm-ar-16 "$@"\n')
    os.chmod(ar, 0o755)
    shutil.rmtree(os.path.join(d, "out"))
    p = subprocess.Popen([dt.MLCC, "chain.onnx", "-v", "-o", "out/libchain.a", "--no-cache"],
                         cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         env=dict(os.environ, MLCC_AR=ar))
    p.stdout.readline()
    p.stdout.close()
    rc = p.wait()
    check(rc == 0 and open(os.path.join(d, "out", "libchain.a"), "rb").read() ==
          open(os.path.join(d, "ref", "libchain.a"), "rb").read(),
          f"a noisy archiver after the pipe closed: exit 0, the same library (rc {rc})")
    check(temporaries(d) == [], f"no temporaries: {temporaries(d)}")
    os.unlink(ar)
    # stdout closed while writing the output itself: a failure, not a partial file.
    shutil.rmtree(os.path.join(d, "out"))
    shutil.rmtree(os.path.join(d, "ref"))
    p = subprocess.Popen([dt.MLCC, "chain.onnx", "--emit=ir"], cwd=d, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.close()
    rc = p.wait()
    err = p.stderr.read().decode(errors="replace")
    check(rc == 1 and "standard output" in err, f"--emit=ir into a closed pipe: exit 1 ({rc})")
    check(listing(d) == before, "nothing written")


def case_file_size_limit(d):
    """ulimit -f: the write fails with EFBIG instead of SIGXFSZ killing mlcc;
    exit 1 with the reason, nothing left behind."""
    import resource
    dt.chain_model(os.path.join(d, "chain.onnx"))
    before = listing(d)

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))
        no_core()
    p = subprocess.run([dt.MLCC, "chain.onnx", "-o", "out/libchain.a", "-MD", "--no-cache"],
                       cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit)
    err = p.stderr.decode(errors="replace")
    print("rc", p.returncode, err[:500])
    check(p.returncode == 1, f"exit 1 (got {p.returncode})")
    check("File too large" in err, "the reason is given")
    check(listing(d) == before, f"nothing left behind: {listing(d)}")


def case_stale_temporaries(d):
    """A run killed by SIGKILL leaves its temporaries; the next run in that
    folder removes them, and only them: never a live run's (pid alive, or
    locked by an owner in another pid namespace) or someone else's file."""
    import fcntl
    dt.chain_model(os.path.join(d, "chain.onnx"))
    p = start_and_wait_for_temp(d, ["chain.onnx", "-o", "out/libchain.a", "-j1", "--no-cache"])
    p.kill()
    p.wait()
    out = os.path.join(d, "out")
    left = [n for n in os.listdir(out) if n.startswith(".mlcc-")]
    print("left by SIGKILL:", left)
    check(left and all(n.startswith(".mlcc-tmp-%d-" % p.pid) for n in left),
          f"SIGKILL leaves a temporary named with its pid: {left}")
    dead = subprocess.Popen(["true"])
    dead.wait()
    alive = subprocess.Popen(["sleep", "60"])
    try:
        keep = [".mlcc-tmp-%d-abcdef" % alive.pid,      # owner alive
                ".mlcc-tmp-%d-locked" % dead.pid,       # owner elsewhere, holds its lock
                ".mlcc-tmp-%d-young0" % dead.pid,       # just created
                ".mlcc-tmp-x-abcdef", "mlcc-tmp-%d-abcdef" % dead.pid, "notes.txt"]
        keep.append(".mlcc-tmp-Ab12cD")                 # pid-less (older mlcc), an hour old
        gone = [".mlcc-out-%d-abcdef" % dead.pid, ".mlcc-out-Zz99yY",  # pid-less, 2 days old
                ".mlcc-tmp-%d-emptyd" % dead.pid, ".mlcc-tmp-Xy34zW"]
        for n in keep[:4] + keep[6:] + gone[2:]:
            os.mkdir(os.path.join(out, n))
            open(os.path.join(out, n, "k.o"), "w").write("partial")
        for n in keep[4:6] + gone[:2]:
            open(os.path.join(out, n), "w").write("x")
        for n in left + keep + gone:
            age = 2 * 86400 if n in (gone[1], gone[3]) else 3600 if n == keep[6] else 30
            if n != keep[2]:
                os.utime(os.path.join(out, n), (time.time() - age, time.time() - age))
        lock = os.open(os.path.join(out, keep[1]), os.O_RDONLY)
        fcntl.flock(lock, fcntl.LOCK_EX)
        rc, _, _ = run("chain.onnx", "-o", "out/libchain.a", "-j2", cwd=d)
        check(rc == 0, "the next run builds")
        os.close(lock)
        now = sorted(os.listdir(out))
        print("after:", now)
        check(not any(n in now for n in left + gone), "the dead runs' temporaries are removed")
        check(all(n in now for n in keep), "everything else stays")
        check(os.path.exists(os.path.join(out, keep[0], "k.o")), "with its contents")
    finally:
        alive.kill()
        alive.wait()


# --- issue 12 item 6: gcc's depfile flags ------------------------------------------

def make_rules(text):
    """A depfile as its rules: one list of tokens per logical line (escaped
    blanks stay inside a token; backslash-newline joins lines)."""
    rules = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.strip():
            rules.append(re.split(r"(?<!\\)[ \t]+", line.strip()))
    return rules


def case_depfile_gcc(d):
    """-MD, -MMD, -MF, -MT, -MQ and -MP against gcc's own depfile for the same
    options: a C file at the model's path that includes a file at the
    external data's path gives the same rules, token for token (targets,
    escaping of blanks, '#' and '$', the phony rules of -MP, the default
    depfile path)."""
    ext = "tiny w#e$ight.bin"
    os.makedirs(os.path.join(d, "m", "my models"))
    tiny_model(os.path.join(d, "m", "my models", "tiny.onnx"), external=ext)
    g = os.path.join(d, "g")
    os.makedirs(os.path.join(g, "my models"))
    os.makedirs(os.path.join(g, "out lib"))
    open(os.path.join(g, "my models", "tiny.onnx"), "w").write('#include "%s"\n' % ext)
    open(os.path.join(g, "my models", ext), "w").write("int x;\n")
    model = "my models/tiny.onnx"
    for mlcc_flags in (["-MD", "-MF", "deps.d"], ["-MMD", "-MF", "deps.d"],
                       ["-MMD", "-MP", "-MF", "deps.d"],
                       ["-MD", "-MT", "a$b c", "-MQ", "q$r s#t", "-MP", "-MF", "deps.d"],
                       ["-MD", "-MQ", "x y", "-MTz", "-MFdeps.d"],
                       ["-MD", "-MQ", "q1", "-MQ", "q 2", "-MT", "t1", "-MQ", "q3", "-MT", "t2",
                        "-MF", "deps.d"],
                       ["-MD", "-MT", "t1", "-MQ", "q1", "-MQ", "q2", "-MQ", "q3", "-MT", "t2",
                        "-MT", "t3", "-MF", "deps.d"],
                       ["-MQ", "first", "-MD", "-MP", "-MF", "deps.d", "-c", "-o", "out lib/t.o"],
                       ["-MMD"], ["-MD", "-MP", "-c", "-o", "out lib/t.o"]):
        out = ["-o", "out lib/libtiny.a"] if "-o" not in mlcc_flags else []
        rc, _, err = run(model, *out, *mlcc_flags, cwd=os.path.join(d, "m"))
        check(rc == 0, f"{mlcc_flags}: exit 0")
        gcc_flags = ["-MMD" if f == "-MD" else f for f in mlcc_flags]
        if "-c" not in gcc_flags:
            gcc_flags = ["-c"] + gcc_flags
        p = subprocess.run(["gcc", "-x", "c", model, *out, *gcc_flags], cwd=g,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check(p.returncode == 0, f"gcc {gcc_flags}: {p.stderr.decode()[:300]}")
        dep = "deps.d" if any(f.endswith("deps.d") for f in mlcc_flags) else \
            ("out lib/t.d" if "out lib/t.o" in mlcc_flags else "out lib/libtiny.d")
        check(os.path.exists(os.path.join(g, dep)), f"gcc wrote {dep}")
        check(os.path.exists(os.path.join(d, "m", dep)), f"{mlcc_flags}: mlcc wrote {dep} too")
        mine = open(os.path.join(d, "m", dep)).read()
        theirs = open(os.path.join(g, dep)).read()
        print(f"{mlcc_flags}:\n  mlcc: {mine!r}\n  gcc:  {theirs!r}")
        check(make_rules(mine) == make_rules(theirs), f"{mlcc_flags}: the same rules as gcc's")
        check(mine.endswith("\n") and "\n\n" not in mine, "one rule per line, no blank lines")
        os.unlink(os.path.join(d, "m", dep))
        os.unlink(os.path.join(g, dep))
    # -MT and -MQ without -MD write nothing (gcc too).
    before = listing(os.path.join(d, "m"))
    rc, _, _ = run(model, "-MT", "x", "-MP", "-o", "out lib/libtiny.a", cwd=os.path.join(d, "m"))
    check(rc == 0 and listing(os.path.join(d, "m")) == before, "-MT/-MP alone: no depfile")
    rc, _, err = run(model, "-MD", "-MT", "", cwd=os.path.join(d, "m"))
    check(rc == 2 and "empty target" in err, "an empty -MT is a usage error")


# --- issue 12 item 6: the terminal status line ----------------------------------------

def run_on_tty(d, args, cols):
    """Runs mlcc with stderr on a pseudo-terminal |cols| wide; returns
    (exit code, the bytes it wrote there)."""
    import fcntl
    import pty
    import struct
    import termios
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    p = subprocess.Popen([dt.MLCC, *args], cwd=d, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=slave, env=dict(os.environ, TERM="xterm"))
    os.close(slave)
    buf = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        buf += chunk
    os.close(master)
    return p.wait(), buf


def case_progress_line(d):
    """On a terminal, each kernel's status line names its ops, its anchor
    node and the target (not only the kernel's hash), cut to the terminal's
    width; a node name cannot send control characters to the terminal."""
    tiny_model(os.path.join(d, "tiny.onnx"))
    m = onnx.load(os.path.join(d, "tiny.onnx"))
    m.graph.node[0].name = "mm\x1b]0;pwned\x07"
    onnx.save(m, os.path.join(d, "esc.onnx"))
    rc, out = run_on_tty(d, ["tiny.onnx", "-o", "o1/libtiny.a", "-j1"], 200)
    lines = [l for l in out.decode(errors="replace").split("\r") if l.startswith("[")]
    print("status lines:", lines)
    check(rc == 0 and lines, "exit 0 with status lines")
    check(all(re.fullmatch(r"\[\d/\d\] compiled [A-Za-z+0-9]+( '[^']*')? for x86_64-linux-gnu "
                           r"\(mlcc_k_[0-9a-f]{24}\)\x1b\[K", l) for l in lines),
          "each line: [n/N] compiled OPS 'node' for TRIPLE (symbol)")
    check(any("compiled MatMul+Add+Relu+1 'mm' for x86_64-linux-gnu" in l for l in lines),
          "the fused MatMul kernel is named by its ops and its anchor node")
    rc, out = run_on_tty(d, ["tiny.onnx", "-o", "o2/libtiny.a", "-j1"], 200)
    check(rc == 0 and b"cached MatMul+Add+Relu+1 'mm'" in out, "a cache hit says cached")
    rc, out = run_on_tty(d, ["tiny.onnx", "--target=aarch64", "-o", "o3/libtiny.a"], 200)
    check(rc == 0 and b" for aarch64-linux-gnu (" in out, "the target is named")
    rc, out = run_on_tty(d, ["esc.onnx", "-o", "o4/libesc.a", "--no-cache"], 200)
    check(rc == 0 and b"\x1b]" not in out and b"'mm?]0;pwned?'" in out,
          "control characters in a node name are replaced")
    rc, out = run_on_tty(d, ["tiny.onnx", "-o", "o5/libtiny.a", "--no-cache"], 40)
    lines = [l for l in out.split(b"\r") if l.startswith(b"[")]
    check(rc == 0 and lines and all(len(l) - len(b"\x1b[K") <= 39 and l.endswith(b"...\x1b[K")
                                    for l in lines), f"cut to 40 columns: {lines}")


# --- issue 12 item 6: a readable --emit=dot -------------------------------------------

def dot_parts(text):
    nodes = dict(re.findall(r'^  (n\d+|v\d+|out\d+) \[(.*)\];$', text, re.M))
    edges = re.findall(r'^  (\w+) -> (\w+)', text, re.M)
    return nodes, edges


def case_emit_dot(d):
    """--emit=dot lists a node's weights and constants in its label, so
    mobilenet_v2 is one column of ~100 boxes (it drew 211 constant notes;
    21395x15308 px, 22-36 s in dot -Tpng); --dot-all-constants draws every
    one as before. Both show the same node-to-node edges."""
    tiny_model(os.path.join(d, "tiny.onnx"))
    rc, dot, _ = run("--emit=dot", "tiny.onnx", cwd=d)
    check(rc == 0, "exit 0")
    check('  n0 [label="MatMul\\nmm\\nconst f32[4,3]"];' in dot and
          '  n1 [label="Add\\nbias\\nconst f32[3]"];' in dot, "constants in the node labels")
    check("shape=note" not in dot, "no constant notes")
    rc, full, _ = run("--emit=dot", "--dot-all-constants", "tiny.onnx", cwd=d)
    check(rc == 0 and full.count("shape=note") == 2, "--dot-all-constants: W and b drawn")
    models = os.environ.get("MLCC_SHARED_MODELS", "")
    model = os.path.join(models, "mobilenet_v2", "model.onnx")
    if not os.path.exists(model):
        print("note: %s is absent; the mobilenet_v2 part is skipped" % model)
        return
    rc, ir, _ = run(model, "--emit=ir", cwd=d)
    n_consts = len(re.findall(r"^  const ", ir, re.M))
    n_ops = len(re.findall(r"^  %.* = \w+\(", ir, re.M))
    rc1, dot, _ = run(model, "--emit=dot", cwd=d)
    rc2, full, _ = run(model, "--emit=dot", "--dot-all-constants", cwd=d)
    check(rc1 == 0 and rc2 == 0, "both render")
    nodes, edges = dot_parts(dot)
    fnodes, fedges = dot_parts(full)
    print(f"ops {n_ops}, constants {n_consts}; grouped: {len(nodes)} nodes, {len(edges)} edges; "
          f"all: {len(fnodes)} nodes, {len(fedges)} edges")
    check(sum(k.startswith("n") for k in nodes) == n_ops, "one box per op")
    check(len(nodes) <= n_ops + 2, "grouped: nothing but the ops, the input and the output")
    check(sum("shape=note" in v for v in fnodes.values()) == n_consts,
          "--dot-all-constants: one note per constant")
    node_edges = [e for e in fedges if not e[0].startswith("v")]
    check([e for e in edges if not e[0].startswith("v")] == node_edges,
          "the same node-to-node edges")
    convs = [v for v in nodes.values() if v.startswith('label="Conv')]
    check(convs and all(re.search(r"\\nconst f32\[\d+,\d+,\d+,\d+\] f32\[\d+\]\"$", v)
                        for v in convs), "each Conv box lists its weight and bias types")
    longest = max(len(line) for v in nodes.values() for line in v[7:-1].split("\\n"))
    check(longest <= 48, f"label lines stay short ({longest} characters)")


def set_mlcc(path):
    dt.MLCC = path


def main():
    return mlcc_e2e.main_of_cases(__doc__, globals(), "mlcc-hardening-", set_mlcc,
                                  private_cache=True)


if __name__ == "__main__":
    sys.exit(main())
