#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Trust tests of the kernel cache (issue 14 items 7 and 8, docs/cache.md).

usage: trust_test.py MLCC CASE      (CASE: one of the functions named case_*)

A cache entry is code that every build links, so these cases forge entries
the way an attacker who can write to a cache would: objects with the right
digest and a valid cache checksum whose code calls system(), or that carry a
constructor or an extra global. Every forged object must be rejected (warned
once, counted in --cache-stats), the kernel rebuilt, and the library must be
byte-identical to a clean build and compute the right values. The remote
cases run nginx (WebDAV) on a loopback port, like cache_test.py's. Exit 0
pass, 1 fail, 77 skip.
"""
import hashlib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cache_test as ct  # noqa: E402  (helpers: mlcc runs, entries, nginx)
from cache_test import Failure, Skip, check  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402

# Forged kernels: C compiled with the host compiler for x86_64 (the default
# target). SYM is replaced by the kernel's symbol.
FORGED = {
    # Right symbol, but calls system(): the classic cache poisoning.
    "system": """
#include <stdlib.h>
__attribute__((visibility("hidden"))) void SYM(float* out) {
  system("touch PWNED");
  out[0] = 0;
}
""",
    # Only allowlisted calls, but a constructor runs at load time.
    "ctor": """
#include <string.h>
static char buf[16];
__attribute__((constructor)) static void init(void) { memset(buf, 1, sizeof(buf)); }
__attribute__((visibility("hidden"))) void SYM(float* out) { out[0] = buf[0]; }
""",
    # An extra global that other objects could link against.
    "extra": """
__attribute__((visibility("hidden"))) void SYM(float* out) { out[0] = 1; }
void mlcc_evil(void) {}
""",
}

# Why each forged object must be refused (a part of mlcc's message).
REASON = {
    "system": "'system', which is not on the allowlist",
    "ctor": "a constructor or destructor section",
    "extra": "defines 'mlcc_evil'",
}


def compile_forged(d, kind, symbol):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise Skip("no host C compiler")
    src = os.path.join(d, "forged_%s.c" % kind)
    obj = os.path.join(d, "forged_%s.o" % kind)
    with open(src, "w") as f:
        f.write(FORGED[kind].replace("SYM", symbol))
    subprocess.run([cc, "-O1", "-c", "-fno-stack-protector", src, "-o", obj], check=True)
    return open(obj, "rb").read()


def write_entry(path, key, payload):
    """A well-formed cache entry (driver/cache.h format) holding |payload|."""
    data = (b"MLCCKOBJ" + (1).to_bytes(4, "little") + (56).to_bytes(4, "little") +
            bytes.fromhex(key) + len(payload).to_bytes(8, "little") + payload +
            hashlib.sha256(payload).digest())
    tmp = path + ".forging"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def action_result(h, size):
    """REv2 ActionResult with one output "kernel.o" -> Digest(h, size)."""
    digest = field(1, h.encode()) + varint(2 << 3) + varint(size)
    return field(2, field(1, b"kernel.o") + field(2, digest))


def model(d):
    path = os.path.join(d, "convnet.onnx")
    ref = ct.conv_model(path)
    x = np.random.default_rng(3).standard_normal((1, 3, 16, 16)).astype(np.float32)
    return path, x, ref(x)


def nm_undefined(lib):
    nm = shutil.which("nm")
    if nm is None:
        return set()
    out = subprocess.run([nm, "-u", lib], stdout=subprocess.PIPE, check=True).stdout.decode()
    return {line.split()[-1] for line in out.splitlines() if line.strip() and ":" not in line}


def check_clean_library(out_dir, first_dir, x, y, what):
    lib = os.path.join(out_dir, "libm.a")
    check(ct.same_bytes(lib, os.path.join(first_dir, "libm.a")),
          what + ": archive byte-identical to the clean build")
    check("system" not in nm_undefined(lib), what + ": the library does not call system()")
    (got,) = ct.run_lib(out_dir, "m", [x], 1)
    check(ct.close(got, y), what + ": output matches numpy")


def stats(cache):
    _, out, _ = ct.mlcc(["--cache-stats"], cache)
    for line in out.splitlines():
        if "Rejected objects:" in line:
            return int(line.split(":")[1].split()[0])
    raise Failure("--cache-stats has no 'Rejected objects' line:\n" + out)


# --- cases -----------------------------------------------------------------------

def case_forged_local(d):
    """A forged object in the local cache, with a valid entry checksum."""
    path, x, y = model(d)
    cache = os.path.join(d, "cache")
    first, _ = ct.build(path, os.path.join(d, "first"), cache)
    check(len(ct.compiled(first)) == len(first) > 0, "first build compiles every kernel")
    kernels = ct.kernel_entries(cache)
    for n, kind in enumerate(sorted(FORGED)):
        key = sorted(kernels)[n % len(kernels)]
        entry = kernels[key]
        original = open(entry, "rb").read()
        symbol = ct.symbol_in(original)
        forged = compile_forged(d, kind, symbol)
        write_entry(entry, key, forged)
        check(ct.verify_entry(key, entry) is None, "%s: the forged entry is well formed" % kind)
        out = os.path.join(d, "after_" + kind)
        kernels_seen, err = ct.build(path, out, cache)
        check(ct.compiled(kernels_seen) == [symbol], "%s: only the forged kernel is rebuilt" % kind)
        check(REASON[kind] in err, "%s: -v says why (%s)" % (kind, REASON[kind]))
        check(err.count("mlcc: warning: 1 cached kernel object rejected") == 1,
              "%s: one warning" % kind)
        check(not os.path.exists(os.path.join(out, "PWNED")) and
              not os.path.exists("PWNED"), "%s: nothing ran" % kind)
        check_clean_library(out, os.path.join(d, "first"), x, y, kind)
        check(open(entry, "rb").read() == original, "%s: the rebuild heals the entry" % kind)
    check(stats(cache) == len(FORGED), "--cache-stats counts %d rejected objects" % len(FORGED))
    again, err = ct.build(path, os.path.join(d, "again"), cache)
    check(not ct.compiled(again) and "rejected" not in err, "then every kernel hits again")


def case_forged_entry(d):
    """The cached entry object (NAME_run...) is checked too."""
    path, x, y = model(d)
    cache = os.path.join(d, "cache")
    ct.build(path, os.path.join(d, "first"), cache)
    entry_objects = {k: p for k, p in ct.entries(cache).items() if ct.is_entry_object(p)}
    check(len(entry_objects) == 1, "one cached entry object")
    key, p = next(iter(entry_objects.items()))
    original = open(p, "rb").read()
    src = os.path.join(d, "entry.c")
    with open(src, "w") as f:
        f.write('#include <stdlib.h>\nvoid m_run_parallel(void) { system("touch PWNED"); }\n')
    subprocess.run(["cc", "-O1", "-c", src, "-o", src + ".o"], check=True)
    write_entry(p, key, open(src + ".o", "rb").read())
    _, err = ct.build(path, os.path.join(d, "second"), cache)
    check("the cached entry object calls or references 'system'" in err and "rejected" in err,
          "the forged entry object is rejected with a warning")
    check_clean_library(os.path.join(d, "second"), os.path.join(d, "first"), x, y, "entry")
    check(open(p, "rb").read() == original, "the rebuild heals the entry object")


def case_forged_remote(d):
    """A forged blob with the right digest and a matching ActionResult."""
    path, x, y = model(d)
    srv = ct.Nginx(d)
    try:
        env = {"MLCC_REMOTE_CACHE": srv.url()}
        first, _ = ct.build(path, os.path.join(d, "first"), os.path.join(d, "c1"), extra_env=env)
        ac_dir = os.path.join(srv.root, "ci", "ac")
        cas_dir = os.path.join(srv.root, "ci", "cas")
        acs = sorted(os.listdir(ac_dir))
        check(len(acs) == len(first) > 0, "every kernel uploaded")
        for n, kind in enumerate(sorted(FORGED)):
            key = acs[n % len(acs)]
            h = ct.decode_action_result(open(os.path.join(ac_dir, key), "rb").read())[0][1]
            original_ac = open(os.path.join(ac_dir, key), "rb").read()
            symbol = ct.symbol_of_file(os.path.join(cas_dir, h))
            forged = compile_forged(d, kind, symbol)
            fh = hashlib.sha256(forged).hexdigest()
            with open(os.path.join(cas_dir, fh), "wb") as f:
                f.write(forged)
            with open(os.path.join(ac_dir, key), "wb") as f:
                f.write(action_result(fh, len(forged)))
            cache = os.path.join(d, "c_" + kind)
            out = os.path.join(d, "after_" + kind)
            seen, err = ct.build(path, out, cache, extra_env=env)
            check(ct.compiled(seen) == [symbol], "%s: only the forged kernel is rebuilt" % kind)
            check("does not match its digest" not in err and REASON[kind] in err,
                  "%s: the digest matched, the object check refused it" % kind)
            check(err.count("mlcc: warning: 1 cached kernel object rejected") == 1,
                  "%s: one warning" % kind)
            check_clean_library(out, os.path.join(d, "first"), x, y, kind)
            local = ct.kernel_entries(cache)
            check(all(ct.verify_entry(k, p) is None and forged not in open(p, "rb").read()
                      for k, p in local.items()),
                  "%s: the forged object was not copied into the local cache" % kind)
            check(stats(cache) == 1, "%s: --cache-stats counts it" % kind)
            # The rebuild uploaded the good object again.
            check(open(os.path.join(ac_dir, key), "rb").read() == original_ac,
                  "%s: the rebuild repairs the remote entry" % kind)
    finally:
        srv.stop()


def signature_of(ac_bytes):
    """The stdout_raw (field 5) of an ActionResult, or b""."""
    for f, wt, v in ct.proto_fields(ac_bytes):
        if f == 5 and wt == 2:
            return v
    return b""


def case_signed_remote(d):
    """--remote-cache-key: HMAC-SHA256 and Ed25519 (private signs, public verifies)."""
    path, x, y = model(d)
    if shutil.which("openssl") is None:
        raise Skip("openssl is not installed")
    secret = os.path.join(d, "ci.key")
    with open(secret, "w") as f:
        f.write(hashlib.sha256(b"trust test secret").hexdigest() + "\n")
    other = os.path.join(d, "other.key")
    with open(other, "w") as f:
        f.write("a different secret, long enough\n")
    srv = ct.Nginx(d)
    try:
        env = {"MLCC_REMOTE_CACHE": srv.url()}
        ac_dir = os.path.join(srv.root, "ci", "ac")
        cas_dir = os.path.join(srv.root, "ci", "cas")
        first, err = ct.build(path, os.path.join(d, "first"), os.path.join(d, "c1"),
                              extra=("--remote-cache-key=" + secret,), extra_env=env)
        check("signed entries only (hmac-sha256 key" in err, "-v names the key (by id)")
        acs = sorted(os.listdir(ac_dir))
        check(len(acs) == len(first) > 0, "the CI build uploads every kernel")
        sigs = [signature_of(open(os.path.join(ac_dir, k), "rb").read()) for k in acs]
        check(all(sg.startswith(b"mlcc-signature-v1 hmac-sha256 ") for sg in sigs),
              "every action result carries an HMAC-SHA256 signature")
        check(hashlib.sha256(b"trust test secret").hexdigest().encode() not in
              b"".join(sigs), "the secret itself is not uploaded")
        # A developer with the key gets every kernel from the server.
        dev_env = dict(env, MLCC_REMOTE_CACHE_KEY=secret)
        dev, _ = ct.build(path, os.path.join(d, "dev"), os.path.join(d, "c2"), extra_env=dev_env)
        check(all(v == "hit (remote)" for v in dev.values()), "signed entries verify (env key)")
        check_clean_library(os.path.join(d, "dev"), os.path.join(d, "first"), x, y, "signed")
        # Someone who can only write to the HTTP server: a forged object with
        # the right digest and an unsigned action result; a signed action
        # result replayed under another kernel's key.
        key0, key1, key2 = acs[0], acs[1], acs[2]
        sym0 = ct.symbol_of_file(os.path.join(cas_dir, ct.decode_action_result(
            open(os.path.join(ac_dir, key0), "rb").read())[0][1]))
        sym1 = ct.symbol_of_file(os.path.join(cas_dir, ct.decode_action_result(
            open(os.path.join(ac_dir, key1), "rb").read())[0][1]))
        forged = compile_forged(d, "system", sym0)
        fh = hashlib.sha256(forged).hexdigest()
        with open(os.path.join(cas_dir, fh), "wb") as f:
            f.write(forged)
        with open(os.path.join(ac_dir, key0), "wb") as f:
            f.write(action_result(fh, len(forged)))
        shutil.copyfile(os.path.join(ac_dir, key2), os.path.join(ac_dir, key1))
        atk, err = ct.build(path, os.path.join(d, "atk"), os.path.join(d, "c3"),
                            extra_env=dev_env)
        check(sorted(ct.compiled(atk)) == sorted([sym0, sym1]),
              "the unsigned and the replayed entry are rebuilt, only they")
        check("is not signed: rejected" in err and "has a bad signature: rejected" in err,
              "-v says why (not signed; bad signature)")
        check_clean_library(os.path.join(d, "atk"), os.path.join(d, "first"), x, y, "attacked")
        sigs = [signature_of(open(os.path.join(ac_dir, k), "rb").read()) for k in (key0, key1)]
        check(all(sg.startswith(b"mlcc-signature-v1 hmac-sha256 ") for sg in sigs),
              "the rebuilds upload signed entries again")
        # Another key: nothing verifies, everything is compiled.
        oth, err = ct.build(path, os.path.join(d, "oth"), os.path.join(d, "c4"),
                            extra=("--remote-cache-key=" + other,),
                            extra_env=dict(env, MLCC_REMOTE_CACHE_READONLY="1"))
        check(len(ct.compiled(oth)) == len(oth) and "is signed with hmac-sha256 key" in err,
              "entries signed with another key are rejected")
        # Without a key the signature is ignored (older readers keep working).
        plain, _ = ct.build(path, os.path.join(d, "plain"), os.path.join(d, "c5"), extra_env=env)
        check(all(v == "hit (remote)" for v in plain.values()), "unsigned readers still read")
        # Ed25519: the CI holds the private key, developers the public one.
        ed = dict(env, MLCC_REMOTE_CACHE=srv.url("ed"))
        priv, pub = os.path.join(d, "ci.pem"), os.path.join(d, "ci.pub")
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", priv], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run(["openssl", "pkey", "-in", priv, "-pubout", "-out", pub], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pubdev, err = ct.build(path, os.path.join(d, "pub0"), os.path.join(d, "c6"),
                               extra=("--remote-cache-key=" + pub,), extra_env=ed)
        check(len(ct.compiled(pubdev)) == len(pubdev) and "verify only: no uploads" in err,
              "ed25519 public key: compiles")
        check(not os.path.exists(os.path.join(srv.root, "ed")), "a public key never uploads")
        ct.build(path, os.path.join(d, "ci_ed"), os.path.join(d, "c7"),
                 extra=("--remote-cache-key=" + priv,), extra_env=ed)
        sg = signature_of(open(os.path.join(srv.root, "ed", "ac", acs[0]), "rb").read())
        check(sg.startswith(b"mlcc-signature-v1 ed25519 "), "the private key signs (ed25519)")
        pubdev, _ = ct.build(path, os.path.join(d, "pub1"), os.path.join(d, "c8"),
                             extra=("--remote-cache-key=" + pub,), extra_env=ed)
        check(all(v == "hit (remote)" for v in pubdev.values()), "the public key verifies")
        check_clean_library(os.path.join(d, "pub1"), os.path.join(d, "first"), x, y, "ed25519")
        hm, err = ct.build(path, os.path.join(d, "hm"), os.path.join(d, "c9"),
                           extra=("--remote-cache-key=" + secret, "--remote-cache-readonly"),
                           extra_env=ed)
        check(len(ct.compiled(hm)) == len(hm) and "is signed with ed25519 key" in err,
              "an HMAC key does not accept Ed25519 entries")
    finally:
        srv.stop()
    # A key that cannot be loaded is a usage error naming the file.
    for bad, what in ((os.path.join(d, "missing.key"), "missing"),
                      (os.path.join(d, "short.key"), "short")):
        if what == "short":
            with open(bad, "w") as f:
                f.write("short\n")
        rc, _, err = ct.mlcc([path, "-o", os.path.join(d, "bad", "libm.a"),
                              "--remote-cache-key=" + bad], os.path.join(d, "c10"),
                             {"MLCC_REMOTE_CACHE": "http://127.0.0.1:9/x"}, check_rc=False)
        check(rc == 2 and bad in err and not os.path.exists(os.path.join(d, "bad", "libm.a")),
              "a %s key file: exit 2 naming it, no output" % what)


def math_model(path):
    """x[4,16] -> one output per op whose kernels call libm or compiler helpers
    (trigonometric, hyperbolic, erf, pow, fmod, rounding, float16 and double
    casts), the calls the allowlist must cover."""
    from onnx import TensorProto, helper
    unary = ["Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asinh", "Erf", "Exp", "Round",
             "Floor", "Ceil", "Softplus", "Sqrt", "Tanh", "Sigmoid", "Log"]
    nodes = [helper.make_node("Abs", ["x"], ["ax"]),
             helper.make_node("Sigmoid", ["x"], ["sx"])]
    outs = []
    for op in unary:
        src = "ax" if op in ("Sqrt", "Log") else "x"
        nodes.append(helper.make_node(op, [src], ["o_" + op]))
        outs.append("o_" + op)
    nodes += [helper.make_node("Asin", ["sx"], ["o_Asin"]), helper.make_node("Acos", ["sx"], ["o_Acos"]),
              helper.make_node("Pow", ["ax", "x"], ["o_Pow"]),
              helper.make_node("Mod", ["x", "ax"], ["o_Mod"], fmod=1),
              helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
              helper.make_node("Cast", ["h"], ["o_Half"], to=TensorProto.FLOAT),
              helper.make_node("Cast", ["x"], ["dx"], to=TensorProto.DOUBLE),
              helper.make_node("Exp", ["dx"], ["de"]),
              helper.make_node("Cast", ["de"], ["o_Double"], to=TensorProto.FLOAT)]
    outs += ["o_Asin", "o_Acos", "o_Pow", "o_Mod", "o_Half", "o_Double"]
    g = helper.make_graph(nodes, "math", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, [4, 16]) for o in outs])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, path)


def case_no_false_rejection(d):
    """Real kernels for x86_64, aarch64 and riscv64 (a convnet and libm-heavy
    elementwise ops) all pass the object check: the second build hits every
    kernel and the entry object, and nothing is rejected."""
    path, _, _ = model(d)
    mpath = os.path.join(d, "math.onnx")
    math_model(mpath)
    for target in ("x86", "aarch64", "riscv"):
        for m in (path, mpath):
            cache = os.path.join(d, "c_%s_%s" % (target, os.path.basename(m)))
            out = os.path.join(d, "o_%s_%s" % (target, os.path.basename(m)))
            first, _ = ct.build(m, out, cache, extra=("--target=" + target,))
            again, err = ct.build(m, out, cache, extra=("--target=" + target,))
            check(len(first) > 0 and not ct.compiled(again) and "rejected" not in err and
                  "entry object from the cache" in err,
                  "%s %s: all %d kernels and the entry object pass the check"
                  % (target, os.path.basename(m), len(again)))
            check(stats(cache) == 0, "%s %s: no rejection counted" % (target, os.path.basename(m)))


class RawServer:
    """A loopback HTTP server that answers each request with raw bytes:
    |respond(path)| returns the whole response (status line, headers, body)."""

    def __init__(self, respond):
        import socket
        import threading
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.respond = respond
        self.paths = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            with c:
                req = b""
                while b"\r\n\r\n" not in req:
                    chunk = c.recv(4096)
                    if not chunk:
                        break
                    req += chunk
                path = req.split(b" ")[1].decode() if req.count(b" ") >= 2 else "/"
                self.paths.append(path)
                try:
                    c.sendall(self.respond(path))
                except OSError:
                    pass

    def url(self):
        return "http://127.0.0.1:%d/ci" % self.port

    def stop(self):
        self.sock.close()


def case_hostile_headers(d):
    """A server whose blob response starts with a folded header line. libcurl
    7.88 (Debian 12) read freed memory here when one handle was reset and
    reused (cache_fuzz found it; mlcc now takes a fresh handle per request).
    The build must finish with one warning and a library identical to a
    --no-cache build; under ASan (the asan-ubsan preset) any use-after-free
    fails the run."""
    path, x, y = model(d)
    ref = os.path.join(d, "ref")
    os.makedirs(ref)
    ct.mlcc([path, "-o", os.path.join(ref, "libm.a"), "--name=m", "--no-cache"], os.path.join(d, "c0"))

    def respond(p):
        if "/ac/" in p:
            body = action_result("ab" * 32, 4096)
            return (b"HTTP/1.1 200 OK\r\nX-Pad: 1\r\nContent-Length: %d\r\n\r\n" % len(body)) + body
        return b"HTTP/1.1 200 OK\r\n hoC:t197\r\n\r\n"

    srv = RawServer(respond)
    try:
        kernels, err = ct.build(path, os.path.join(d, "out"), os.path.join(d, "c1"),
                                extra=("--remote-cache=" + srv.url(), "--remote-cache-readonly"))
    finally:
        srv.stop()
    check(any("/cas/" in p for p in srv.paths), "mlcc fetched the blob after the action result")
    check(len(ct.compiled(kernels)) == len(kernels) > 0, "every kernel is compiled")
    check(err.count("mlcc: warning: remote kernel cache") == 1, "one warning about the server")
    check(ct.same_bytes(os.path.join(d, "out", "libm.a"), os.path.join(ref, "libm.a")),
          "the library is identical to a --no-cache build")


def set_mlcc(path):
    ct.MLCC = path


def main():  # a forged object that ran would leave PWNED in the case folder
    return ct.mlcc_e2e.main_of_cases(__doc__, globals(), "mlcc-trust-test-", set_mlcc,
                                     ct.FAILURES, chdir=True)


if __name__ == "__main__":
    sys.exit(main())
