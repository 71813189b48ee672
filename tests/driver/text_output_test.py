#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""-S / --emit=ll / --emit=asm through the kernel cache (issue 12 item 2).

Usage: text_output_test.py MLCC CASE. Cases:
  warm        cold, warm and weights-changed builds of each text kind: the
              warm and retrained ones compile 0 kernels (-v), the warm output
              is byte-identical, the retrained one differs only in weights
  poisoned    a cached kernel text with foreign directives (.incbin) or a
              foreign global is rejected with a warning and rebuilt; the
              output never carries the planted line
  assembles   the joined assembly for x86-64, aarch64 and riscv64 assembles
              with the target's gcc and defines every symbol the library does
Each case prints "PASS" (exit 0) or "FAIL: " and the first mismatch (exit 1).
"""
import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import mlcc_e2e  # noqa: E402
from mlcc_e2e import Failure  # noqa: E402

MLCC = None


def fail(msg):
    raise Failure(msg)


def check(cond, msg):
    mlcc_e2e.check(cond, msg, say_ok=False)


def model(path, seed):
    """Conv+Relu -> MaxPool -> Gemm: three kernels; |seed| picks the weights."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    gw = rng.standard_normal((8 * 4 * 4, 10)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "gw"], ["y"])]
    g = helper.make_graph(
        nodes, "t", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b"),
                     numpy_helper.from_array(gw, "gw")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def mlcc(d, *args, env=None):
    e = dict(os.environ)
    e["MLCC_CACHE_DIR"] = os.path.join(d, "cache")
    e.pop("MLCC_REMOTE_CACHE", None)
    if env:
        e.update(env)
    return subprocess.run([MLCC] + list(args), cwd=d, capture_output=True, text=True, env=e,
                          timeout=600)


def compiled(stderr):
    for line in stderr.splitlines():
        m = re.match(r"mlcc: (\d+) kernels? compiled", line)
        if m:
            return int(m.group(1))
    fail("no 'N kernels compiled' line in:\n" + stderr)


def case_warm(d):
    model(os.path.join(d, "m.onnx"), 1)
    model(os.path.join(d, "m2.onnx"), 2)  # same shapes, new weights
    for kind, ext in (("asm", "s"), ("ll", "ll")):
        flag = ["-S"] if kind == "ll" else ["--emit=asm"]
        outs = []
        for i, (src, want) in enumerate((("m.onnx", None), ("m.onnx", 0), ("m2.onnx", 0))):
            out = "out%d.%s" % (i, ext)
            p = mlcc(d, src, *flag, "--name=t", "-o", out, "-v")
            check(p.returncode == 0, "%s run %d: %s" % (kind, i, p.stderr))
            n = compiled(p.stderr)
            if want is None:
                check(n == 3, "%s cold: %d kernels compiled, want 3" % (kind, n))
            else:
                check(n == want, "%s run %d (%s): %d kernels compiled, want 0"
                      % (kind, i, src, n))
            outs.append(open(os.path.join(d, out), "rb").read())
        check(outs[0] == outs[1], "%s: the warm output differs from the cold one" % kind)
        check(outs[0] != outs[2], "%s: new weights, same output" % kind)
        check(b"mlcc_k_" in outs[0] and b"t_run" in outs[0], "%s: no kernel or entry" % kind)
    # -c and the library share nothing with the texts, but reuse their own entries.
    p = mlcc(d, "m.onnx", "-o", "libt.a", "-v")
    check(p.returncode == 0 and compiled(p.stderr) == 3, "library after texts: %s" % p.stderr)


def cache_entries(d):
    root = os.path.join(d, "cache")
    for sub in sorted(os.listdir(root)):
        full = os.path.join(root, sub)
        if len(sub) == 2 and os.path.isdir(full):
            for f in sorted(os.listdir(full)):
                yield os.path.join(full, f)


def read_entry(path):
    """The payload of a cache entry (driver/cache.h, "Entry format")."""
    data = open(path, "rb").read()
    check(data[:8] == b"MLCCKOBJ", "%s: not a cache entry" % path)
    header = struct.unpack_from("<I", data, 12)[0]
    size = struct.unpack_from("<Q", data, 48)[0]
    return data[:header], data[header:header + size]


def write_entry(path, header, payload):
    header = header[:48] + struct.pack("<Q", len(payload)) + header[56:]
    with open(path, "wb") as f:
        f.write(header + payload + hashlib.sha256(payload).digest())


def case_poisoned(d):
    model(os.path.join(d, "m.onnx"), 1)
    for kind, ext, flag in (("asm", "s", "--emit=asm"), ("ll", "ll", "-S")):
        shutil.rmtree(os.path.join(d, "cache"), ignore_errors=True)
        p = mlcc(d, "m.onnx", flag, "--name=t", "-o", "good." + ext)
        check(p.returncode == 0, p.stderr)
        good = open(os.path.join(d, "good." + ext), "rb").read()
        texts = []
        for e in cache_entries(d):
            header, payload = read_entry(e)
            if b"mlcc_k_" in payload and (b"define " in payload or b".text" in payload):
                texts.append((e, header, payload))
        check(len(texts) == 3, "%s: %d kernel text entries in the cache, want 3"
              % (kind, len(texts)))
        if kind == "asm":
            plants = [b'\t.incbin "/etc/hostname"\n', b"\t.globl\tsystem_hook\nsystem_hook:\n"]
        else:
            plants = [b'\nmodule asm ".incbin \\22/etc/hostname\\22"\n',
                      b"\n@evil = global i32 1\n"]
        for plant in plants:
            e, header, payload = texts[0]
            write_entry(e, header, payload + plant)
            p = mlcc(d, "m.onnx", flag, "--name=t", "-o", "out." + ext, "-v")
            check(p.returncode == 0, "%s: a poisoned entry failed the build: %s" % (kind, p.stderr))
            check("rejected" in p.stderr, "%s: no rejection warning for %r:\n%s"
                  % (kind, plant, p.stderr))
            check(compiled(p.stderr) == 1, "%s: the rejected kernel was not rebuilt" % kind)
            out = open(os.path.join(d, "out." + ext), "rb").read()
            check(out == good, "%s: the output after a rejected entry differs (%r)" % (kind, plant))
            check(b"incbin" not in out and b"evil" not in out and b"system_hook" not in out,
                  "%s: the planted text reached the output" % kind)


def case_assembles(d):
    model(os.path.join(d, "m.onnx"), 1)
    toolchains = {"x86": ("gcc", "nm"), "aarch64": ("aarch64-linux-gnu-gcc", "nm"),
                  "riscv": ("riscv64-linux-gnu-gcc", "nm")}
    for target, (cc, nm) in toolchains.items():
        p = mlcc(d, "m.onnx", "--emit=asm", "--target=" + target, "--name=t", "-o", "t.s")
        check(p.returncode == 0, p.stderr)
        p = subprocess.run([cc, "-c", "t.s", "-o", "t.o"], cwd=d, capture_output=True, text=True)
        check(p.returncode == 0, "%s: %s -c t.s: %s" % (target, cc, p.stderr[:2000]))
        p = mlcc(d, "m.onnx", "--target=" + target, "-o", "libt.a")
        check(p.returncode == 0, p.stderr)

        def defined(path):
            r = subprocess.run([nm, "--defined-only", path], cwd=d, capture_output=True,
                               text=True)
            check(r.returncode == 0, r.stderr)
            return sorted({l.split()[-1] for l in r.stdout.splitlines()
                           if len(l.split()) == 3 and not l.split()[-1].startswith((".L", "$"))})

        check(defined("t.o") == defined("libt.a"),
              "%s: the assembled text defines %s, the library %s"
              % (target, defined("t.o"), defined("libt.a")))


def main():
    return mlcc_e2e.main_of_cases(__doc__, globals(), "mlcc-text-", None)


if __name__ == "__main__":
    sys.exit(main())
