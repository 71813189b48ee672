#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Seeds for driver/cache_fuzz.c (run by scripts/fuzz.sh).

usage: cache_fuzz_seeds.py MLCC OUT_DIR

Compiles a small generated model (MatMul, Add, Exp, Tanh, Relu, Softmax) for
x86_64, aarch64 and riscv64 into a private cache and writes to OUT_DIR: every
cache entry file, every payload (a kernel or entry object), and for one
kernel per target the raw HTTP responses a remote cache would send (200 with
an unsigned and with an HMAC-signed ActionResult, then the blob; a 404).
The HMAC secret is the one cache_fuzz.c loads.
"""
import hashlib
import hmac
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

KEY = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
SECRET = b"fuzzing secret, long enough"


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def action_result(h, size, signed):
    digest = field(1, h.encode()) + varint(2 << 3) + varint(size)
    ar = field(2, field(1, b"kernel.o") + field(2, digest))
    if signed:
        msg = ("mlcc-remote-cache-v1\n%s\n%s\n%d\n" % (KEY, h, size)).encode()
        sig = hmac.new(SECRET, msg, hashlib.sha256).hexdigest()
        key_id = hashlib.sha256(SECRET).hexdigest()[:16]
        ar += field(5, ("mlcc-signature-v1 hmac-sha256 %s %s\n" % (key_id, sig)).encode())
    return ar


def http(body, status="200 OK"):
    return b"HTTP/1.1 %s\r\nContent-Length: %d\r\n\r\n" % (status.encode(), len(body)) + body


def main():
    mlcc, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    d = tempfile.mkdtemp(prefix="mlcc-cache-fuzz-seeds-")
    w = numpy_helper.from_array(np.ones((8, 8), np.float32), "w")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["a"]),
             helper.make_node("Exp", ["a"], ["b"]),
             helper.make_node("Tanh", ["b"], ["c"]),
             helper.make_node("Relu", ["c"], ["e"]),
             helper.make_node("Softmax", ["e"], ["y"], axis=1)]
    g = helper.make_graph(nodes, "seed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    model = os.path.join(d, "seed.onnx")
    onnx.save(m, model)
    cache = os.path.join(d, "cache")
    env = dict(os.environ, MLCC_CACHE_DIR=cache)
    env.pop("MLCC_REMOTE_CACHE", None)
    for t in ("x86", "aarch64", "riscv"):
        subprocess.run([mlcc, model, "--target=" + t, "-o", os.path.join(d, t, "libm.a"), "--name=m"],
                       env=env, check=True, stdout=subprocess.DEVNULL)
    n = 0
    for sub in sorted(os.listdir(cache)):
        sd = os.path.join(cache, sub)
        if len(sub) != 2 or not os.path.isdir(sd):
            continue
        for f in sorted(os.listdir(sd)):
            if f.startswith("."):
                continue
            entry = open(os.path.join(sd, f), "rb").read()
            size = int.from_bytes(entry[48:56], "little")
            payload = entry[56:56 + size]
            h = hashlib.sha256(payload).hexdigest()
            seeds = [entry, payload]
            if n % 3 == 0:
                seeds += [http(action_result(h, size, s)) + b"\n--mlcc--\n" + http(payload)
                          for s in (False, True)]
            for i, s in enumerate(seeds):
                open(os.path.join(out, "seed%03d_%d" % (n, i)), "wb").write(s)
            n += 1
    open(os.path.join(out, "seed_404"), "wb").write(
        http(b"not found", "404 Not Found") + b"\n--mlcc--\n" + http(b""))
    # Regression (fixed in remote_cache.c request_handle): a folded first
    # header in the blob response after a normal action-result response made
    # libcurl 7.88 read freed memory when the handle was reset and reused.
    open(os.path.join(out, "seed_folded_header"), "wb").write(
        http(action_result("ab" * 32, 4096, False)) + b"\n--mlcc--\n" +
        b"HTTP/1.1 200 OK\r\n hoC:t197\r\n\r\n")
    print("cache_fuzz_seeds: %d entries" % n)


if __name__ == "__main__":
    main()
