#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the kernel cache (issue 4, DESIGN.md section 5).

usage: cache_test.py MLCC CASE      (CASE: one of the functions named case_*)

Each case runs in a fresh temporary directory with its own cache directory
(MLCC_CACHE_DIR), so the user's ~/.cache/mlcc is never touched. Models: the
repo's examples/detector (with its reference output) and small generated
models whose outputs are checked against numpy. Exit 0 pass, 1 fail, 77 skip.
"""
import hashlib
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
DETECTOR = os.path.join(ROOT, "examples", "detector")
HARNESS = os.path.join(ROOT, "tests", "e2e", "harness.c")
MLCC = None

sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import mlcc_e2e  # noqa: E402
from mlcc_e2e import Failure, Skip, check, same_bytes  # noqa: E402,F401  (the scripts beside use them)

# What fails a case: a check, an assertion or a helper command (cc, the harness).
FAILURES = (Failure, AssertionError, subprocess.CalledProcessError)


def base_env(cache):
    return mlcc_e2e.clean_env(cache)


def mlcc(args, cache, extra_env=None, check_rc=True):
    rc, out, err = mlcc_e2e.run_mlcc(MLCC, args, env=mlcc_e2e.clean_env(cache, extra_env),
                                     timeout=900, echo=False)
    if check_rc and rc != 0:
        raise Failure("mlcc %s exited %d:\n%s" % (" ".join(args), rc, err[-3000:]))
    return rc, out, err


def build(model, out_dir, cache, name="m", extra=(), extra_env=None):
    """Compiles |model| into out_dir/lib<name>.a with -v; returns the kernel
    lines as {symbol: "compiled" | "hit" | "hit (remote)"} and stderr."""
    os.makedirs(out_dir, exist_ok=True)
    lib = os.path.join(out_dir, "lib%s.a" % name)
    _, _, err = mlcc([model, "-o", lib, "--name=" + name, "-v", *extra], cache, extra_env)
    return mlcc_e2e.kernel_lines(err), err


def compiled(kernels):
    return sorted(k for k, v in kernels.items() if v == "compiled")


def hits(kernels):
    return sorted(k for k, v in kernels.items() if v.startswith("hit"))


def run_lib(out_dir, name, inputs, n_outputs):
    """Links out_dir/lib<name>.a with the generic harness, feeds |inputs|
    (float32 arrays, graph order), returns the raw outputs as float32 arrays."""
    exe = os.path.join(out_dir, "harness")
    subprocess.run(["cc", "-O1", "-std=c11", "-include", os.path.join(out_dir, name + ".h"),
                    "-DMLCC_INFO=%s_info" % name, HARNESS,
                    os.path.join(out_dir, "lib%s.a" % name), "-lm", "-o", exe], check=True)
    argv = []
    for i, arr in enumerate(inputs):
        path = os.path.join(out_dir, "in_%d.bin" % i)
        np.ascontiguousarray(arr, dtype=np.float32).tofile(path)
        argv.append(path)
    outs = [os.path.join(out_dir, "out_%d.bin" % i) for i in range(n_outputs)]
    subprocess.run([exe, *argv, *outs], check=True, timeout=600)
    return [np.fromfile(p, dtype=np.float32) for p in outs]


def close(got, ref, rtol=1e-4, atol=1e-5):
    ref = ref.reshape(-1).astype(np.float64)
    got = got.reshape(-1).astype(np.float64)
    return got.shape == ref.shape and bool(np.all(np.abs(got - ref) <= atol + rtol * np.abs(ref)))


# --- models ---------------------------------------------------------------------

def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def detector_model():
    model = os.path.join(DETECTOR, "detector.onnx")
    if not os.path.exists(model):
        raise Skip("examples/detector/detector.onnx is missing")
    x = load_pb(os.path.join(DETECTOR, "test_data_set_0", "input_0.pb"))
    y = load_pb(os.path.join(DETECTOR, "test_data_set_0", "output_0.pb"))
    return model, x, y


def check_detector(out_dir, name, x, y, what):
    (got,) = run_lib(out_dir, name, [x], 1)
    check(close(got, y), what + ": output matches the reference")


# Layers that only pass structure, not weights: their constant inputs are
# shapes, scales or indices and stay as they are.
STRUCTURAL = {"Resize", "Reshape", "Expand", "Tile", "Slice", "Pad", "Squeeze", "Unsqueeze",
              "ConstantOfShape", "TopK", "Range", "Split", "Upsample", "Gather"}


def perturb_weights(src, dst, seed=1):
    """A copy of |src| with every float weight changed (a retrained model)."""
    m = onnx.load(src)
    structural = {x for n in m.graph.node if n.op_type in STRUCTURAL for x in n.input[1:]}
    rng = np.random.default_rng(seed)
    changed = 0
    for i, init in enumerate(m.graph.initializer):
        if init.data_type != TensorProto.FLOAT or init.name in structural:
            continue
        w = numpy_helper.to_array(init).astype(np.float32)
        u = rng.uniform(-1, 1, w.shape).astype(np.float32)
        if init.name.endswith("var"):
            w2 = w * (1 + 0.05 * u) + 1e-3 * np.abs(u)
        else:
            w2 = w * (1 + 0.05 * u) + 1e-3 * u
        assert not np.array_equal(w, w2)
        m.graph.initializer[i].CopyFrom(numpy_helper.from_array(w2.astype(np.float32), init.name))
        changed += 1
    onnx.save(m, dst)
    return changed


def conv_model(path, widths=(8, 8, 8), hidden=32, seed=0):
    """x[1,3,16,16] -> Conv3x3+Relu (x3, widths) -> MaxPool2 -> Flatten ->
    Gemm(hidden)+Relu -> Gemm(10). Returns (weights dict, reference fn)."""
    rng = np.random.default_rng(seed)
    inits, nodes, params = [], [], {}
    cur, cin = "x", 3
    for i, cout in enumerate(widths):
        w = (rng.standard_normal((cout, cin, 3, 3)) * 0.3).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        inits += [numpy_helper.from_array(w, "w%d" % i), numpy_helper.from_array(b, "b%d" % i)]
        params["conv%d" % i] = (w, b)
        nodes.append(helper.make_node("Conv", [cur, "w%d" % i, "b%d" % i], ["c%d" % i],
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", ["c%d" % i], ["r%d" % i]))
        cur, cin = "r%d" % i, cout
    nodes.append(helper.make_node("MaxPool", [cur], ["p"], kernel_shape=[2, 2], strides=[2, 2]))
    nodes.append(helper.make_node("Flatten", ["p"], ["f"], axis=1))
    feat = cin * 8 * 8
    g1 = (rng.standard_normal((hidden, feat)) * 0.05).astype(np.float32)
    gb1 = (rng.standard_normal(hidden) * 0.1).astype(np.float32)
    g2 = (rng.standard_normal((10, hidden)) * 0.2).astype(np.float32)
    gb2 = (rng.standard_normal(10) * 0.1).astype(np.float32)
    inits += [numpy_helper.from_array(a, n) for a, n in
              ((g1, "g1"), (gb1, "gb1"), (g2, "g2"), (gb2, "gb2"))]
    nodes.append(helper.make_node("Gemm", ["f", "g1", "gb1"], ["h"], transB=1))
    nodes.append(helper.make_node("Relu", ["h"], ["hr"]))
    nodes.append(helper.make_node("Gemm", ["hr", "g2", "gb2"], ["y"], transB=1))
    graph = helper.make_graph(
        nodes, "convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)

    def reference(x):
        a = x.astype(np.float64)
        for i in range(len(widths)):
            w, b = params["conv%d" % i]
            pad = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
            out = np.zeros((1, w.shape[0], 16, 16))
            for ky in range(3):
                for kx in range(3):
                    out += np.einsum("nchw,oc->nohw", pad[:, :, ky:ky + 16, kx:kx + 16],
                                     w[:, :, ky, kx])
            a = np.maximum(out + b[None, :, None, None], 0)
        a = a.reshape(1, a.shape[1], 8, 2, 8, 2).max(axis=(3, 5)).reshape(1, -1)
        h = np.maximum(a @ g1.T + gb1, 0)
        return h @ g2.T + gb2

    return reference


# --- cache entries -------------------------------------------------------------

def entries(cache):
    """{key: path} of the entries (fan-out ab/cdef...)."""
    out = {}
    if not os.path.isdir(cache):
        return out
    for sub in sorted(os.listdir(cache)):
        d = os.path.join(cache, sub)
        if len(sub) != 2 or not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if not f.startswith("."):
                out[sub + f] = os.path.join(d, f)
    return out


def is_entry_object(path):
    """True for the cached entry object (it defines <name>_run_parallel); kernels don't."""
    return b"_run_parallel" in open(path, "rb").read()


def kernel_entries(cache):
    """{key: path} of the kernel entries (every entry but the entry objects)."""
    return {k: p for k, p in entries(cache).items() if not is_entry_object(p)}


def temporaries(cache):
    return [os.path.join(r, f) for r, _, fs in os.walk(cache) for f in fs if f.startswith(".tmp-")]


def verify_entry(key, path):
    """The entry format of driver/cache.h, checked independently."""
    data = open(path, "rb").read()
    if len(data) < 56 + 32 or data[:8] != b"MLCCKOBJ":
        return "bad magic or short"
    if int.from_bytes(data[8:12], "little") != 1 or int.from_bytes(data[12:16], "little") != 56:
        return "bad version/header size"
    if data[16:48].hex() != key:
        return "key mismatch"
    n = int.from_bytes(data[48:56], "little")
    if len(data) != 56 + n + 32:
        return "size mismatch"
    payload = data[56:56 + n]
    if hashlib.sha256(payload).digest() != data[56 + n:]:
        return "checksum mismatch"
    if payload[:4] != b"\x7fELF":
        return "payload is not an ELF object"
    return None


def check_consistent(cache, what):
    bad = {k: verify_entry(k, p) for k, p in entries(cache).items()}
    bad = {k: v for k, v in bad.items() if v}
    check(not bad, "%s: every cache entry verifies (%d entries)%s" % (
        what, len(entries(cache)), "" if not bad else ": " + repr(bad)))


def symbol_in(obj_bytes):
    """The kernel symbol an object (or a cache entry holding one) defines.

    Cache keys are not symbols: the store key adds mlcc's own identity to the
    kernel key the symbol is named from, so tests read the name off the bytes."""
    m = re.search(rb"mlcc_k_[0-9a-f]{24}", obj_bytes)
    assert m, "no kernel symbol in the object"
    return m.group(0).decode()


def symbol_of_file(path):
    return symbol_in(open(path, "rb").read())


# --- cases -----------------------------------------------------------------------

def case_cold_warm(d):
    model, x, y = detector_model()
    cache = os.path.join(d, "cache")
    cold, _ = build(model, os.path.join(d, "cold"), cache)
    check(len(compiled(cold)) > 0 and not hits(cold), "cold: %d kernels compiled, no hits" %
          len(compiled(cold)))
    check(len(kernel_entries(cache)) == len(cold), "cold: one entry per distinct kernel")
    check(len(entries(cache)) == len(cold) + 1, "cold: plus one entry object")
    warm, err = build(model, os.path.join(d, "warm"), cache)
    check(not compiled(warm) and len(hits(warm)) == len(cold),
          "warm: 0 kernels compiled, %d hits" % len(hits(warm)))
    check("mlcc: 0 kernels compiled, %d from the cache" % len(cold) in err, "warm: -v summary")
    check('"codegen-kernel"' not in err, "warm: no kernel compile job runs")
    for f in ("libm.a", "m.h"):
        check(same_bytes(os.path.join(d, "cold", f), os.path.join(d, "warm", f)),
              "warm %s is byte-identical to cold" % f)
    nocache, _ = build(model, os.path.join(d, "nocache"), os.path.join(d, "unused"),
                       extra=("--no-cache",))
    check(len(compiled(nocache)) == len(cold), "--no-cache compiles every kernel")
    check(not os.path.exists(os.path.join(d, "unused")), "--no-cache creates no cache")
    check(same_bytes(os.path.join(d, "cold", "libm.a"), os.path.join(d, "nocache", "libm.a")),
          "archive byte-identical with and without the cache")
    j1, _ = build(model, os.path.join(d, "j1"), os.path.join(d, "cache_j1"), extra=("-j1",))
    j4, _ = build(model, os.path.join(d, "j4"), os.path.join(d, "cache_j4"), extra=("-j4",))
    check(same_bytes(os.path.join(d, "j1", "libm.a"), os.path.join(d, "j4", "libm.a")) and
          same_bytes(os.path.join(d, "j1", "libm.a"), os.path.join(d, "cold", "libm.a")),
          "archive byte-identical across -j1, -j4 and the default")
    check_detector(os.path.join(d, "warm"), "m", x, y, "warm build")
    _, out, _ = mlcc(["--cache-stats"], cache)
    print(out)
    # The kernels and the entry object, each looked up twice, hit once.
    check("Hits:             %d / %d" % (len(cold) + 1, 2 * (len(cold) + 1)) in out,
          "--cache-stats counts the hits and lookups")
    check("Entries:            %d" % (len(cold) + 1) in out, "--cache-stats counts the entries")
    check("/ 5.0 GiB" in out, "--cache-stats shows the default 5 GiB limit")
    check_consistent(cache, "after cold+warm")


def case_mcu_targets(d):
    """The microcontroller targets' ELF32 kernels and entry go through the cache like the
    Linux ones: a warm build hits every kernel, rejects nothing and gives the same bytes."""
    model, _, _ = detector_model()
    for target in ("cortex-m4", "cortex-m55", "rv32", "rv32f"):
        cache = os.path.join(d, "cache-" + target)
        extra = ("--target=" + target,)
        cold, _ = build(model, os.path.join(d, target, "cold"), cache, extra=extra)
        warm, err = build(model, os.path.join(d, target, "warm"), cache, extra=extra)
        check(len(compiled(cold)) > 0, "%s cold: kernels compiled" % target)
        check(not compiled(warm) and len(hits(warm)) == len(cold),
              "%s warm: %d compiled, %d of %d hit" % (target, len(compiled(warm)),
                                                     len(hits(warm)), len(cold)))
        check("rejected" not in err, "%s warm: a cached object was rejected:\n%s" % (target, err))
        check("mlcc: entry object from the cache" in err, "%s warm: the entry from the cache"
              % target)
        check(same_bytes(os.path.join(d, target, "cold", "libm.a"),
                         os.path.join(d, target, "warm", "libm.a")),
              "%s: warm archive byte-identical to cold" % target)


def case_weights_changed(d):
    model, x, y = detector_model()
    cache = os.path.join(d, "cache")
    cold, _ = build(model, os.path.join(d, "orig"), cache)
    retrained = os.path.join(d, "retrained.onnx")
    n = perturb_weights(model, retrained)
    check(n >= 20, "perturbed all %d float weight tensors" % n)
    re, err = build(retrained, os.path.join(d, "re"), cache)
    check(not compiled(re) and len(hits(re)) == len(cold),
          "new weights, same shapes: 0 kernels compiled, %d hits" % len(hits(re)))
    fresh, _ = build(retrained, os.path.join(d, "fresh"), os.path.join(d, "cache2"),
                     extra=("--no-cache",))
    check(same_bytes(os.path.join(d, "re", "libm.a"), os.path.join(d, "fresh", "libm.a")),
          "archive identical to a --no-cache build of the retrained model")
    (got,) = run_lib(os.path.join(d, "re"), "m", [x], 1)
    (want,) = run_lib(os.path.join(d, "fresh"), "m", [x], 1)
    check(np.array_equal(got, want), "outputs identical to the --no-cache build")
    check(not close(got, y), "outputs differ from the original model's (weights took effect)")
    check_detector(os.path.join(d, "orig"), "m", x, y, "original model")


def case_shape_changed(d):
    cache = os.path.join(d, "cache")
    a, b = os.path.join(d, "a.onnx"), os.path.join(d, "b.onnx")
    ref_a = conv_model(a, widths=(8, 8, 8), hidden=32)
    ref_b = conv_model(b, widths=(8, 8, 8), hidden=24)  # only the classifier layer changes
    ka, _ = build(a, os.path.join(d, "a"), cache)
    kb, err = build(b, os.path.join(d, "b"), cache)
    print("a:", ka)
    print("b:", kb)
    check(len(compiled(kb)) > 0 and len(hits(kb)) > 0,
          "changed model: %d compiled, %d hits" % (len(compiled(kb)), len(hits(kb))))
    check(all(k in ka for k in hits(kb)), "every hit is a kernel of the first model")
    check(all(k not in ka for k in compiled(kb)),
          "every compiled kernel is new (only the affected kernels recompile)")
    check(len(compiled(kb)) <= 3, "at most the two Gemm layers' kernels recompile")
    x = np.random.default_rng(5).standard_normal((1, 3, 16, 16)).astype(np.float32)
    (ga,) = run_lib(os.path.join(d, "a"), "m", [x], 1)
    (gb,) = run_lib(os.path.join(d, "b"), "m", [x], 1)
    check(close(ga, ref_a(x)), "model a matches numpy")
    check(close(gb, ref_b(x)), "model b (partly from the cache) matches numpy")


def case_concurrent(d):
    model, x, y = detector_model()
    cache = os.path.join(d, "cache")
    env = base_env(cache)
    procs = []
    for i in range(8):
        out = os.path.join(d, "p%d" % i)
        os.makedirs(out)
        procs.append(subprocess.Popen([MLCC, model, "-o", os.path.join(out, "libm.a"),
                                       "--name=m", "-v", "-j2"], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    errs = []
    for p in procs:
        _, err = p.communicate(timeout=1800)
        errs.append(err.decode(errors="replace"))
        check(p.returncode == 0, "concurrent mlcc exited 0")
    ref, _ = build(model, os.path.join(d, "ref"), os.path.join(d, "none"), extra=("--no-cache",))
    for i in range(8):
        check(same_bytes(os.path.join(d, "p%d" % i, "libm.a"), os.path.join(d, "ref", "libm.a")),
              "process %d: archive identical to a --no-cache build" % i)
    check_detector(os.path.join(d, "p0"), "m", x, y, "a concurrent build")
    check(len(kernel_entries(cache)) == len(ref), "one entry per kernel (%d)" % len(ref))
    check_consistent(cache, "after 8 concurrent builds")
    check(not temporaries(cache), "no temporaries left")
    warm, _ = build(model, os.path.join(d, "warm"), cache)
    check(not compiled(warm), "the shared cache then serves every kernel")


def case_killed(d):
    model, x, y = detector_model()
    cache = os.path.join(d, "cache")
    env = base_env(cache)
    # Kill builds at several points of their work, some while entries are written.
    for delay in (0.05, 0.2, 0.5, 0.9, 1.5, 2.5):
        out = os.path.join(d, "k")
        os.makedirs(out, exist_ok=True)
        p = subprocess.Popen([MLCC, model, "-o", os.path.join(out, "libm.a"), "--name=m", "-j2"],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        print("  killed after %.2fs: %d entries, %d temporaries" % (
            delay, len(entries(cache)), len(temporaries(cache))))
    # A writer killed mid-write leaves a partial temporary; plant one for
    # sure, beside a real entry, plus one under an entry's own name pattern.
    ents = entries(cache)
    if ents:
        key, path = sorted(ents.items())[0]
        data = open(path, "rb").read()
        with open(os.path.join(os.path.dirname(path), ".tmp-%s-999999-0-AbCdEf" % key[2:18]),
                  "wb") as f:
            f.write(data[:len(data) // 2])
    check_consistent(cache, "after kill -9 (complete entries only)")
    k, _ = build(model, os.path.join(d, "next"), cache)
    ref, _ = build(model, os.path.join(d, "ref"), os.path.join(d, "none"), extra=("--no-cache",))
    check(same_bytes(os.path.join(d, "next", "libm.a"), os.path.join(d, "ref", "libm.a")),
          "the next run's archive is identical to a --no-cache build")
    check_detector(os.path.join(d, "next"), "m", x, y, "the run after kill -9")
    check(len(kernel_entries(cache)) == len(ref) and len(entries(cache)) == len(ref) + 1,
          "the cache is complete again")
    check_consistent(cache, "after the next run")


def case_damaged(d):
    model, x, y = detector_model()
    cache = os.path.join(d, "cache")
    cold, _ = build(model, os.path.join(d, "cold"), cache)
    ents = sorted(kernel_entries(cache).items())
    check(len(ents) >= 6, "enough entries to damage (%d)" % len(ents))
    (k0, p0), (k1, p1), (k2, p2), (k3, p3), (k4, p4), (k5, p5) = ents[:6]
    damaged = {symbol_of_file(p) for p in (p0, p1, p2, p3, p4, p5)}
    data = bytearray(open(p0, "rb").read())
    data[56 + len(data) // 3] ^= 0x5A  # a flipped byte in the payload
    open(p0, "wb").write(bytes(data))
    data = open(p1, "rb").read()
    open(p1, "wb").write(data[:len(data) - 100])  # truncated
    shutil.copyfile(p3, p2)  # foreign: another key's (valid) entry
    open(p3, "wb").write(b"\x7fELF not a cache entry at all" * 4)  # wrong magic
    data = bytearray(open(p4, "rb").read())
    data[8] = 99  # a future format version
    open(p4, "wb").write(bytes(data))
    open(p5, "wb").write(b"")  # empty (power loss)
    again, err = build(model, os.path.join(d, "again"), cache, extra=("-d", "explain-cache"))
    print(err)
    check(set(compiled(again)) == damaged,
          "exactly the 6 damaged entries are rebuilt (%d compiled, %d hits)" % (
              len(compiled(again)), len(hits(again))))
    for word in ("checksum mismatch", "truncated", "foreign entry", "bad magic",
                 "format version 99"):
        check(word in err, "-v notes a damaged entry: '%s'" % word)
    check(err.count("mlcc: explain: ") == 6, "-d explain-cache explains each miss")
    check(same_bytes(os.path.join(d, "cold", "libm.a"), os.path.join(d, "again", "libm.a")),
          "archive identical to the cold build")
    check_detector(os.path.join(d, "again"), "m", x, y, "rebuilt from damaged entries")
    check_consistent(cache, "after the rebuild (damaged entries replaced)")
    warm, err = build(model, os.path.join(d, "warm"), cache, extra=("-d", "explain-cache"))
    check(not compiled(warm) and "explain" not in err, "then everything hits again")


def case_size_limit(d):
    cache = os.path.join(d, "cache")
    model = os.path.join(d, "used.onnx")
    conv_model(model, widths=(8, 8, 8), hidden=32)
    small = os.path.join(d, "small.onnx")
    conv_model(small, widths=(4, 6, 10, 12, 14), hidden=16)
    kd, _ = build(model, os.path.join(d, "det"), cache)
    det_keys = set(entries(cache))
    ks, _ = build(small, os.path.join(d, "small"), cache)
    small_keys = set(entries(cache)) - det_keys
    check(len(small_keys) >= 2, "the small model adds %d entries" % len(small_keys))
    # Make the used model's entries the oldest, the small model's newer, in a
    # known order; then a warm build of the used model refreshes its entries,
    # so the small model's become the least recently used.
    now = time.time()
    ents = entries(cache)
    for i, k in enumerate(sorted(det_keys)):
        os.utime(ents[k], (now - 5000 + i, now - 5000 + i))
    order = sorted(small_keys)
    for i, k in enumerate(order):
        os.utime(ents[k], (now - 1000 + i, now - 1000 + i))
    det_size = sum(os.path.getsize(ents[k]) for k in det_keys)
    total = sum(os.path.getsize(p) for p in ents.values())
    # Room for the used model's entries plus about half of the small model's.
    small_sizes = [os.path.getsize(ents[k]) for k in order]
    limit = int((det_size + sum(small_sizes[len(order) // 2:])) / 0.9) + 1
    check(limit < total, "limit %d below the cache size %d" % (limit, total))
    warm, _ = build(model, os.path.join(d, "warm"), cache, extra=("--cache-max-size=%d" % limit,))
    check(not compiled(warm), "the build itself hits")
    left = entries(cache)
    size = sum(os.path.getsize(p) for p in left.values())
    check(size <= limit, "the cache stays under its limit (%d <= %d)" % (size, limit))
    check(det_keys <= set(left), "the just-used entries survive (LRU, refreshed by hits)")
    gone = [k for k in order if k not in left]
    kept = [k for k in order if k in left]
    check(gone and kept, "some of the older entries are evicted (%d of %d)" % (len(gone), len(order)))
    check(all(order.index(g) < order.index(k) for g in gone for k in kept),
          "the least recently used go first")
    _, out, _ = mlcc(["--cache-stats", "--cache-max-size=%d" % limit], cache)
    check("Entries evicted:    %d" % len(gone) in out, "--cache-stats counts the evictions")
    # The environment variable with a suffix, and a build that must evict.
    _, _, err = mlcc([small, "-o", os.path.join(d, "small2", "libm.a"), "--name=m"], cache,
                     {"MLCC_CACHE_MAXSIZE": "1K"})
    size = sum(os.path.getsize(p) for p in entries(cache).values())
    check(size <= 1024, "MLCC_CACHE_MAXSIZE=1K is honored (%d bytes left)" % size)
    rc, _, err = mlcc([small, "-o", os.path.join(d, "x", "libm.a"), "--cache-max-size=5Q"],
                      cache, check_rc=False)
    check(rc == 2 and "invalid size '5Q'" in err, "a bad --cache-max-size is a usage error")
    rc, _, err = mlcc([small, "-o", os.path.join(d, "x", "libm.a")], cache,
                      {"MLCC_CACHE_MAXSIZE": "lots"}, check_rc=False)
    check(rc == 2 and "MLCC_CACHE_MAXSIZE" in err, "a bad MLCC_CACHE_MAXSIZE is a usage error")


def case_stats_clear(d):
    cache = os.path.join(d, "cache")
    small = os.path.join(d, "small.onnx")
    conv_model(small)
    _, out, _ = mlcc(["--cache-stats"], cache)
    check("Entries:            0" in out and cache in out, "--cache-stats on an empty cache")
    k, _ = build(small, os.path.join(d, "a"), cache)
    n = len(entries(cache))
    check(n == len(k) + 1 and len(k) > 0, "%d entries stored (kernels + entry object)" % n)
    check(os.path.exists(os.path.join(cache, "CACHEDIR.TAG")), "CACHEDIR.TAG marks the cache")
    _, out, _ = mlcc(["--cache-clear"], cache)
    check("%d entries removed" % n in out or "%d entry removed" % n in out,
          "--cache-clear reports what it removed")
    check(not entries(cache), "--cache-clear empties the cache")
    _, out, _ = mlcc(["--cache-stats"], cache)
    check("Hits:             0 / 0" in out, "--cache-clear resets the counters")
    k2, _ = build(small, os.path.join(d, "b"), cache, extra=("--cache-clear",))
    check(len(compiled(k2)) == len(k), "a build after --cache-clear compiles everything")
    check(same_bytes(os.path.join(d, "a", "libm.a"), os.path.join(d, "b", "libm.a")),
          "and produces the same archive")
    _, out, _ = mlcc([small, "-o", os.path.join(d, "c", "libm.a"), "--name=m", "--cache-stats"],
                     cache)
    check("Local:          %d" % (len(k) + 1) in out,
          "--cache-stats with a model prints after the build (kernels + entry object hits)")
    _, out, _ = mlcc(["--cache-stats", "--cache-dir", os.path.join(d, "other")], cache)
    check(os.path.join(d, "other") in out, "--cache-dir wins over MLCC_CACHE_DIR")
    # The default location comes from XDG_CACHE_HOME, then HOME.
    env = {"MLCC_CACHE_DIR": "", "XDG_CACHE_HOME": os.path.join(d, "xdg"), "HOME": d}
    _, out, _ = mlcc(["--cache-stats"], cache, env)
    check(os.path.join(d, "xdg", "mlcc") in out, "$XDG_CACHE_HOME/mlcc")
    env["XDG_CACHE_HOME"] = ""
    _, out, _ = mlcc(["--cache-stats"], cache, env)
    check(os.path.join(d, ".cache", "mlcc") in out, "~/.cache/mlcc")


# --- remote ------------------------------------------------------------------------

NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ worker_connections 64; }}
http {{
  access_log {tmp}/access.log;
  client_body_temp_path {tmp}/body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;
  server {{
    listen 127.0.0.1:{port};
    root {tmp}/root;
    client_max_body_size 0;
    location / {{
      dav_methods PUT DELETE;
      create_full_put_path on;
      dav_access user:rw group:r all:r;
    }}
  }}
}}
"""


class Nginx:
    def __init__(self, d):
        exe = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx")
                                        else None)
        if exe is None:
            raise Skip("nginx is not installed (Debian package nginx)")
        self.tmp = os.path.join(d, "nginx")
        os.makedirs(os.path.join(self.tmp, "root"))
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        conf = os.path.join(self.tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(tmp=self.tmp, port=self.port))
        self.proc = subprocess.Popen([exe, "-p", self.tmp, "-c", conf, "-e",
                                      os.path.join(self.tmp, "error.log")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                break
            except OSError:
                if self.proc.poll() is not None:
                    raise Failure("nginx failed: " + self.proc.stderr.read().decode())
                time.sleep(0.05)
        self.root = os.path.join(self.tmp, "root")

    def url(self, instance="ci"):
        return "http://127.0.0.1:%d/%s" % (self.port, instance)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def read_varint(b, i):
    v, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def proto_fields(b):
    """[(field number, wire type, value)] of one protobuf message."""
    out, i = [], 0
    while i < len(b):
        tag, i = read_varint(b, i)
        field, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = read_varint(b, i)
        elif wt == 2:
            n, i = read_varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("unexpected wire type %d" % wt)
        out.append((field, wt, v))
    return out


def decode_action_result(b):
    """REv2 ActionResult -> [(path, hash, size)] of output_files (field 2)."""
    files = []
    for f, wt, v in proto_fields(b):
        if f == 2 and wt == 2:
            path, h, size = None, None, None
            for f2, wt2, v2 in proto_fields(v):
                if f2 == 1:
                    path = v2.decode()
                elif f2 == 2:
                    for f3, _, v3 in proto_fields(v2):
                        if f3 == 1:
                            h = v3.decode()
                        elif f3 == 2:
                            size = v3
            files.append((path, h, size))
    return files


def case_remote(d):
    model, x, y = detector_model()
    srv = Nginx(d)
    try:
        env = {"MLCC_REMOTE_CACHE": srv.url()}
        first, err = build(model, os.path.join(d, "first"), os.path.join(d, "cache1"),
                           extra_env=env)
        check(len(compiled(first)) == len(first) > 0, "first machine compiles every kernel")
        check("remote kernel cache: " + srv.url() in err, "-v shows the remote cache")
        ac_dir = os.path.join(srv.root, "ci", "ac")
        cas_dir = os.path.join(srv.root, "ci", "cas")
        acs = sorted(os.listdir(ac_dir)) if os.path.isdir(ac_dir) else []
        check(len(acs) == len(first), "one /ac/<key> per kernel on the server (%d)" % len(acs))
        for key in acs:
            files = decode_action_result(open(os.path.join(ac_dir, key), "rb").read())
            path, h, size = files[0]
            blob = open(os.path.join(cas_dir, h), "rb").read()
            assert len(files) == 1 and path == "kernel.o", files
            assert hashlib.sha256(blob).hexdigest() == h and len(blob) == size, key
            assert symbol_in(blob) in first
        check(True, "every /ac entry is an ActionResult whose output_files[0] names its "
                    "/cas/<sha256> blob with the right size")
        second, err = build(model, os.path.join(d, "second"), os.path.join(d, "cache2"),
                            extra_env=env)
        check(not compiled(second) and all(v == "hit (remote)" for v in second.values()),
              "a fresh local cache gets all %d kernels from the server" % len(second))
        check(same_bytes(os.path.join(d, "first", "libm.a"), os.path.join(d, "second", "libm.a")),
              "byte-identical archive from remote hits")
        check(len(kernel_entries(os.path.join(d, "cache2"))) == len(second),
              "remote hits are copied into the local cache")
        check_consistent(os.path.join(d, "cache2"), "local copies of remote hits")
        third, _ = build(model, os.path.join(d, "third"), os.path.join(d, "cache2"),
                         extra_env=env)
        check(all(v == "hit" for v in third.values()), "then the local cache answers first")
        check_detector(os.path.join(d, "second"), "m", x, y, "build from remote hits")

        # A poisoned blob: same name, other content. Rejected, rebuilt, healed.
        key = acs[0]
        h = decode_action_result(open(os.path.join(ac_dir, key), "rb").read())[0][1]
        blob_path = os.path.join(cas_dir, h)
        tampered_symbol = symbol_of_file(blob_path)
        data = bytearray(open(blob_path, "rb").read())
        data[len(data) // 2] ^= 0xFF
        open(blob_path, "wb").write(bytes(data))
        fourth, err = build(model, os.path.join(d, "fourth"), os.path.join(d, "cache4"),
                            extra_env=env)
        check(compiled(fourth) == [tampered_symbol], "the tampered kernel is rebuilt, only it")
        check("does not match its digest" in err and "rejected" in err,
              "-v says the blob was rejected")
        check(same_bytes(os.path.join(d, "first", "libm.a"), os.path.join(d, "fourth", "libm.a")),
              "the poisoned blob is not linked (archive identical)")
        check(hashlib.sha256(open(blob_path, "rb").read()).hexdigest() == h,
              "the rebuild uploads the good blob again")
        # A poisoned action result (points at another kernel's blob).
        other = acs[1]
        other_h = decode_action_result(open(os.path.join(ac_dir, other), "rb").read())[0][1]
        other_symbol = symbol_of_file(os.path.join(cas_dir, other_h))
        shutil.copyfile(os.path.join(ac_dir, acs[2]), os.path.join(ac_dir, other))
        fifth, err = build(model, os.path.join(d, "fifth"), os.path.join(d, "cache5"),
                           extra_env=env)
        check(compiled(fifth) == [other_symbol] and "does not define" in err,
              "an action result pointing at another kernel's object is rejected")
        check(same_bytes(os.path.join(d, "first", "libm.a"), os.path.join(d, "fifth", "libm.a")),
              "archive still identical")

        # Read-only: downloads, never uploads.
        ro_env = {"MLCC_REMOTE_CACHE": srv.url("ro"), "MLCC_REMOTE_CACHE_READONLY": "1"}
        ro, err = build(model, os.path.join(d, "ro"), os.path.join(d, "cache6"),
                        extra_env=ro_env)
        check(len(compiled(ro)) == len(ro) and "(read-only)" in err, "read-only: compiles")
        check(not os.path.exists(os.path.join(srv.root, "ro")), "read-only: nothing uploaded")
        ro2, _ = build(model, os.path.join(d, "ro2"), os.path.join(d, "cache7"),
                       extra=("--remote-cache=" + srv.url(), "--remote-cache-readonly"))
        check(all(v == "hit (remote)" for v in ro2.values()), "read-only: still downloads")
    finally:
        srv.stop()
    # The server is gone: a warning, never a failure.
    down, err = build(model, os.path.join(d, "down"), os.path.join(d, "cache8"),
                      extra_env={"MLCC_REMOTE_CACHE": srv.url()})
    check(len(compiled(down)) == len(down), "server down: the build compiles")
    check(err.count("mlcc: warning: remote kernel cache") == 1, "one warning about the server")
    check(same_bytes(os.path.join(d, "first", "libm.a"), os.path.join(d, "down", "libm.a")),
          "and the archive is identical")
    rc, _, err = mlcc([model, "-o", os.path.join(d, "bad", "libm.a")], os.path.join(d, "c9"),
                      {"MLCC_REMOTE_CACHE": "ftp://example"}, check_rc=False)
    check(rc == 2 and "invalid remote cache URL" in err, "a bad URL is a usage error")


def main():
    return mlcc_e2e.main_of_cases(__doc__, globals(), "mlcc-cache-test-", None,
                                  FAILURES)


if __name__ == "__main__":
    sys.exit(main())
