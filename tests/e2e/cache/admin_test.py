#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of kernel cache administration (issue 12 item 5) and of
the cache/remote bugs of issue 14 (items 2, 3, 4, 9, 10). docs/cache.md
describes what is tested here.

usage: admin_test.py MLCC CASE      (CASE: one of the functions named case_*)

Builds on the helpers of cache_test.py (models, entries, nginx). The remote
cases use small HTTP servers written below (loopback only, every wait
bounded) so that slow and failing servers take seconds, not minutes.
Exit 0 pass, 1 fail, 77 skip.
"""
import base64
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cache_test as ct  # noqa: E402
from cache_test import Failure, Skip, check, compiled, hits, same_bytes  # noqa: E402


def run(args, cache, extra_env=None, timeout=120):
    """mlcc |args| with MLCC_CACHE_DIR=|cache|; (rc, stdout, stderr, seconds).
    A run over |timeout| seconds is a failure (a hang), not an exception."""
    env = ct.base_env(cache)
    for k in ("MLCC_REMOTE_TIMEOUT", "MLCC_REMOTE_BUDGET", "MLCC_REMOTE_CACHE_CREDENTIALS",
              "MLCC_REMOTE_CACHE_NETRC", "MLCC_CACHE_READONLY"):
        env.pop(k, None)
    if extra_env:
        env.update(extra_env)
    t0 = time.monotonic()
    try:
        p = subprocess.run([ct.MLCC, *args], env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise Failure("mlcc %s did not finish within %d s (hung)" % (" ".join(args), timeout))
    return (p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace"),
            time.monotonic() - t0)


def build(model, out_dir, cache, extra=(), extra_env=None, timeout=120, name="m"):
    """-v build into out_dir/lib<name>.a; ({symbol: how}, stderr, seconds)."""
    os.makedirs(out_dir, exist_ok=True)
    rc, _, err, secs = run([model, "-o", os.path.join(out_dir, "lib%s.a" % name),
                            "--name=" + name, "-v", "-j2", *extra], cache, extra_env, timeout)
    if rc != 0:
        raise Failure("build exited %d:\n%s" % (rc, err[-3000:]))
    return ct.mlcc_e2e.kernel_lines(err), err, secs


def small_model(d, name="small.onnx", **kw):
    path = os.path.join(d, name)
    ct.conv_model(path, **kw)
    return path


def print_stats(cache, extra=()):
    rc, out, err, _ = run(["--print-stats", *extra], cache)
    if rc != 0:
        raise Failure("--print-stats exited %d: %s" % (rc, err))
    stats = {}
    for line in out.splitlines():
        k, v = line.split("\t")
        stats[k] = v
    return stats, out


# --- a bounded local HTTP server ---------------------------------------------------

class Server:
    """A loopback HTTP server in a thread. |mode|:
      "slow"   every request waits |delay| seconds (cut short by stop()), then 404
      "status" every request is answered with HTTP |status|
      "store"  an in-memory GET/PUT store (bazel-remote's /ac and /cas), 404 on a
               miss; with |auth| ("user:password") a request without those Basic
               credentials gets 401
    Every request is counted and its Authorization header kept."""

    def __init__(self, mode, delay=0.0, status=500, auth=None):
        self.mode, self.delay, self.status, self.auth = mode, delay, status, auth
        self.requests = []  # (method, path, authorization header)
        self.store = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        srv = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def reply(self, code, body=b""):
                try:
                    self.send_response(code)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # mlcc gave up on this request (its timeout)

            def handle_any(self, method):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                with srv.lock:
                    srv.requests.append((method, self.path, self.headers.get("Authorization")))
                if srv.mode == "slow":
                    srv.stopping.wait(srv.delay)
                    return self.reply(404)
                if srv.mode == "status":
                    return self.reply(srv.status)
                if srv.auth is not None:
                    want = "Basic " + base64.b64encode(srv.auth.encode()).decode()
                    if self.headers.get("Authorization") != want:
                        return self.reply(401)
                with srv.lock:
                    if method == "PUT":
                        srv.store[self.path] = body
                        return self.reply(201)
                    data = srv.store.get(self.path)
                if data is None:
                    return self.reply(404)
                return self.reply(200, data)

            def do_GET(self):
                self.handle_any("GET")

            def do_PUT(self):
                self.handle_any("PUT")

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, instance="ci", userinfo=""):
        return "http://%s127.0.0.1:%d/%s" % (userinfo + "@" if userinfo else "", self.port,
                                              instance)

    def count(self):
        with self.lock:
            return len(self.requests)

    def stop(self):
        self.stopping.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def remote_warnings(err):
    return [l for l in err.splitlines() if l.startswith("mlcc: warning: remote kernel cache")]


# --- issue 14 item 2: a FIFO in the cache -------------------------------------------

def case_fifo(d):
    cache = os.path.join(d, "cache")
    model = small_model(d)
    cold, _, _ = build(model, os.path.join(d, "cold"), cache)
    ents = sorted(ct.kernel_entries(cache).items())
    check(len(ents) >= 2, "a few kernel entries (%d)" % len(ents))
    key, path = ents[0]
    symbol = ct.symbol_of_file(path)
    os.unlink(path)
    os.mkfifo(path)
    # Before the fix this open blocked forever: a 30 s limit turns it into a failure.
    again, err, secs = build(model, os.path.join(d, "again"), cache, timeout=30)
    check(compiled(again) == [symbol], "a FIFO at an entry's path is a miss: only it is rebuilt")
    check(same_bytes(os.path.join(d, "cold", "libm.a"), os.path.join(d, "again", "libm.a")),
          "and the archive is identical")
    check(os.path.isfile(path) and ct.verify_entry(key, path) is None,
          "the rebuilt entry replaces the FIFO")
    # A FIFO as the stats file and as the configuration file.
    stats = os.path.join(cache, "stats")
    os.unlink(stats)
    os.mkfifo(stats)
    conf = os.path.join(cache, "mlcc.conf")
    if os.path.exists(conf):
        os.unlink(conf)
    os.mkfifo(conf)
    rc, out, err, _ = run(["--cache-stats"], cache, timeout=30)
    check(rc == 0 and "Entries:" in out, "--cache-stats does not block on a FIFO stats file")
    warm, err, _ = build(model, os.path.join(d, "warm"), cache, timeout=30)
    check(not compiled(warm), "a build does not block on FIFO stats/config files")
    # A symlink at an entry's path is not followed.
    key2, path2 = ents[1]
    target = os.path.join(d, "elsewhere")
    shutil.copyfile(path2, target)
    os.unlink(path2)
    os.symlink(target, path2)
    again2, err, _ = build(model, os.path.join(d, "again2"), cache, timeout=30)
    check(compiled(again2) == [ct.symbol_of_file(target)], "a symlinked entry is a miss")


# --- issue 14 item 3: an overall deadline for the remote cache ----------------------

def case_remote_slow(d):
    model = small_model(d)
    ref, _, cold_secs = build(model, os.path.join(d, "ref"), os.path.join(d, "c0"),
                              extra=("--no-cache",))
    srv = Server("slow", delay=30)
    try:
        env = {"MLCC_REMOTE_CACHE": srv.url(), "MLCC_REMOTE_TIMEOUT": "1"}
        k, err, secs = build(model, os.path.join(d, "a"), os.path.join(d, "c1"), extra_env=env,
                             timeout=25)
        check(secs < cold_secs + 6, "a server that answers after 30 s costs about one "
              "timeout (%.1f s, %.1f s without a remote)" % (secs, cold_secs))
        w = remote_warnings(err)
        check(len(w) == 1 and "timed out" in w[0] and "off for the rest of this run" in w[0],
              "one warning saying the remote timed out and is off: %r" % w)
        check(srv.count() <= 2, "no request after the first timeout (%d, one per thread in "
              "flight)" % srv.count())
        check(same_bytes(os.path.join(d, "ref", "libm.a"), os.path.join(d, "a", "libm.a")),
              "the archive is identical to a build without the cache")
        rc, out, _, _ = run(["--cache-stats"], os.path.join(d, "c1"))
        m = re.search(r"Remote errors:\s+(\d+)", out)
        check(m and 1 <= int(m.group(1)) <= 2, "--cache-stats counts the timeouts: %r" %
              (m.group(0) if m else out))
        m = re.search(r"Remote wait:\s+([0-9.]+) s", out)
        check(m and 0.9 <= float(m.group(1)) <= 10, "--cache-stats shows the time spent "
              "waiting for the remote: %r" % (m.group(0) if m else out))
        # The default timeout is a few seconds.
        k, err, secs = build(model, os.path.join(d, "b"), os.path.join(d, "c2"),
                             extra_env={"MLCC_REMOTE_CACHE": srv.url()}, timeout=25)
        check(secs < cold_secs + 12 and len(remote_warnings(err)) == 1,
              "default timeout: %.1f s and one warning" % secs)
    finally:
        srv.stop()
    # The budget: every answer comes in time, but together they exceed it.
    srv = Server("slow", delay=0.4)
    try:
        env = {"MLCC_REMOTE_CACHE": srv.url(), "MLCC_REMOTE_TIMEOUT": "5",
               "MLCC_REMOTE_BUDGET": "1"}
        k, err, secs = build(model, os.path.join(d, "c"), os.path.join(d, "c3"), extra_env=env,
                             timeout=25, extra=("-j1",))
        w = remote_warnings(err)
        check(len(w) == 1 and "budget" in w[0], "one warning when the budget is spent: %r" % w)
        check(srv.count() <= 4, "the budget of 1 s allows about 1 s / 0.4 s requests (%d)" %
              srv.count())
    finally:
        srv.stop()
    # Configured in the cache directory instead of the environment.
    srv = Server("slow", delay=30)
    try:
        c4 = os.path.join(d, "c4")
        rc, out, err, _ = run(["--set-config=remote_timeout=1"], c4)
        check(rc == 0, "--set-config=remote_timeout=1")
        k, err, secs = build(model, os.path.join(d, "e"), c4,
                             extra_env={"MLCC_REMOTE_CACHE": srv.url()}, timeout=25)
        check(secs < cold_secs + 6, "remote_timeout from mlcc.conf (%.1f s)" % secs)
    finally:
        srv.stop()


def case_remote_errors(d):
    model = small_model(d)
    srv = Server("status", status=403)
    try:
        env = {"MLCC_REMOTE_CACHE": srv.url()}
        k, err, _ = build(model, os.path.join(d, "a"), os.path.join(d, "c1"), extra_env=env,
                          extra=("-j1",))
        w = remote_warnings(err)
        check(len(w) == 1 and "HTTP status 403" in w[0], "one warning: %r" % w)
        check(srv.count() == 3, "a run of 3 errors switches the remote off (%d requests for %d "
              "kernels)" % (srv.count(), len(k)))
        stats, _ = print_stats(os.path.join(d, "c1"))
        check(stats.get("remote_errors") == "3", "--print-stats: remote_errors 3 (%s)" %
              stats.get("remote_errors"))
    finally:
        srv.stop()


# --- issue 14 item 4: credentials never printed -------------------------------------

def case_credentials(d):
    model = small_model(d)
    srv = Server("store", auth="alice:s3cret")
    port = srv.port
    try:
        url = srv.url(userinfo="alice:s3cret")
        a, err, _ = build(model, os.path.join(d, "a"), os.path.join(d, "c1"),
                          extra=("--remote-cache=" + url,))
        check("s3cret" not in err and "alice" not in err,
              "-v never prints the URL's userinfo")
        check("remote kernel cache: http://127.0.0.1:%d/ci" % port in err,
              "-v prints the URL without it")
        check(len(srv.store) == 2 * len(a) and not remote_warnings(err),
              "credentials from the URL: %d uploads" % len(srv.store))
        b, err, _ = build(model, os.path.join(d, "b"), os.path.join(d, "c2"),
                          extra=("--remote-cache=" + srv.url(),),
                          extra_env={"MLCC_REMOTE_CACHE_CREDENTIALS": "alice:s3cret"})
        check(all(v == "hit (remote)" for v in b.values()),
              "credentials from MLCC_REMOTE_CACHE_CREDENTIALS: remote hits")
        netrc = os.path.join(d, "netrc")
        with open(netrc, "w") as f:
            f.write("machine 127.0.0.1 login alice password s3cret\n")
        os.chmod(netrc, 0o600)
        c, err, _ = build(model, os.path.join(d, "c"), os.path.join(d, "c3"),
                          extra=("--remote-cache=" + srv.url(),),
                          extra_env={"MLCC_REMOTE_CACHE_NETRC": netrc})
        check(all(v == "hit (remote)" for v in c.values()),
              "credentials from a netrc file (MLCC_REMOTE_CACHE_NETRC): remote hits")
        home = os.path.join(d, "home")
        os.makedirs(home)
        shutil.copy(netrc, os.path.join(home, ".netrc"))
        e, err, _ = build(model, os.path.join(d, "e"), os.path.join(d, "c5"),
                          extra=("--remote-cache=" + srv.url(),), extra_env={"HOME": home})
        check(all(v == "hit (remote)" for v in e.values()), "credentials from ~/.netrc")
        bad = srv.url(userinfo="alice:wrong-pw")
        f, err, _ = build(model, os.path.join(d, "f"), os.path.join(d, "c6"),
                          extra=("--remote-cache=" + bad,))
        w = remote_warnings(err)
        check(len(w) == 1 and "401" in w[0] and "wrong-pw" not in err,
              "wrong credentials: one warning naming 401, no password: %r" % w)
        sent = [r[2] for r in srv.requests if r[2]]
        check(sent and all(s.startswith("Basic ") for s in sent), "sent as HTTP Basic auth")
    finally:
        srv.stop()
    # The server is gone: the warning names the URL without the password.
    url = "http://alice:s3cret@127.0.0.1:%d/inst" % port
    g, err, _ = build(model, os.path.join(d, "g"), os.path.join(d, "c7"),
                      extra=("--remote-cache=" + url,))
    w = remote_warnings(err)
    check(len(w) == 1 and "s3cret" not in err and "alice" not in err and
          "127.0.0.1:%d/inst" % port in w[0],
          "the server-down warning has no credentials: %r" % w)
    rc, _, err, _ = run([model, "-o", os.path.join(d, "x", "libm.a"),
                         "--remote-cache=ftp://alice:s3cret@127.0.0.1/x"], os.path.join(d, "c8"))
    check(rc == 2 and "s3cret" not in err and "invalid remote cache URL" in err,
          "a bad URL's usage error has no password: %r" % err.strip())


# --- issue 14 item 9: a read-only cache is read ------------------------------------

def snapshot(tree):
    out = {}
    for r, dirs, files in os.walk(tree):
        for f in dirs + files:
            p = os.path.join(r, f)
            st = os.lstat(p)
            out[p] = (st.st_size, st.st_mtime_ns)
    return out


def case_readonly(d):
    cache = os.path.join(d, "cache")
    model = small_model(d)
    other = small_model(d, "other.onnx", widths=(4, 4), hidden=16)
    cold, _, _ = build(model, os.path.join(d, "cold"), cache)
    before = snapshot(cache)
    # 1. Read-only by configuration (a cache a CI shares read-only).
    ro, err, _ = build(model, os.path.join(d, "ro"), cache, extra_env={"MLCC_CACHE_READONLY": "1"})
    check(not compiled(ro) and "(read-only)" in err, "MLCC_CACHE_READONLY=1: every kernel hits")
    o, err, _ = build(other, os.path.join(d, "o"), cache, extra_env={"MLCC_CACHE_READONLY": "1"})
    check(compiled(o) and "warning" not in err, "a miss compiles, without a warning")
    check(snapshot(cache) == before, "nothing in the cache changed (no entry, stats or mtime)")
    # 2. A read-only bind mount (needs a mount namespace).
    mlcc = ct.MLCC
    lib = os.path.join(d, "mnt", "libm.a")
    os.makedirs(os.path.dirname(lib))
    script = ('mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && '
              'exec "$@"')
    env = ct.base_env(cache)
    p = subprocess.run(["unshare", "--mount", "sh", "-c", "mount --bind %s %s" % (cache, cache)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        print("  skip: no mount namespace here (%s)" % p.stderr.decode().strip())
        return
    p = subprocess.run(["unshare", "--mount", "sh", "-c", script, "sh", cache, mlcc, model, "-o",
                        lib, "--name=m", "-v"], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    err = p.stderr.decode()
    n_compiled = err.count(": compiled")
    check(p.returncode == 0 and n_compiled == 0 and "(read-only)" in err and
          "warning" not in err,
          "a read-only bind mount: read, all hits, no warning (rc %d, %d compiled)\n%s" %
          (p.returncode, n_compiled, err if p.returncode or n_compiled else ""))
    check(same_bytes(lib, os.path.join(d, "cold", "libm.a")), "archive identical")
    p = subprocess.run(["unshare", "--mount", "sh", "-c", script, "sh", cache, mlcc, other, "-o",
                        lib, "--name=m"], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    check(p.returncode == 0 and b"warning" not in p.stderr,
          "a miss on a read-only mount compiles without trying to store: %r" % p.stderr[-500:])


# --- issue 14 item 10: rejected remote content warns once -----------------------------

def case_rejected_warning(d):
    model = small_model(d)
    srv = Server("store")
    try:
        env = {"MLCC_REMOTE_CACHE": srv.url()}
        first, first_err, _ = build(model, os.path.join(d, "a"), os.path.join(d, "c1"),
                                    extra_env=env)
        groups = int(re.search(r"for (\d+) kernel groups", first_err).group(1))
        # Flip a byte in two blobs: their digests no longer match.
        blobs = sorted(p for p in srv.store if "/cas/" in p)
        for p in blobs[:2]:
            b = bytearray(srv.store[p])
            b[len(b) // 2] ^= 0xFF
            srv.store[p] = bytes(b)
        rc, _, err, _ = run([model, "-o", os.path.join(d, "b", "libm.a"), "--name=m"],
                            os.path.join(d, "c2"), env)
        w = [l for l in err.splitlines() if "rejected" in l]
        check(rc == 0 and len(w) == 1 and w[0].startswith("mlcc: warning: remote kernel cache: 2 ")
              and "rejected" in w[0], "without -v: one warning with the count: %r" % w)
        stats, _ = print_stats(os.path.join(d, "c2"))
        check(stats.get("remote_rejected") == "2", "--print-stats: remote_rejected 2")
        recs = [f for r, _, fs in os.walk(os.path.join(d, "c2", "explain")) for f in fs]
        check(len(recs) == groups, "remote hits copied into the local cache get explain "
              "records too, one per kernel group (%d for %d)" % (len(recs), groups))
    finally:
        srv.stop()


# --- issue 12 item 5: administration -----------------------------------------------

def case_config(d):
    cache = os.path.join(d, "cache")
    rc, out, err, _ = run(["--show-config"], cache)
    check(rc == 0, "--show-config on a fresh cache")
    expected = ("(default) max_size = 5G\n"
                "(default) read_only = false\n"
                "(default) remote_budget = 60\n"
                "(default) remote_max_errors = 3\n"
                "(default) remote_timeout = 5\n")
    check(out == expected, "--show-config lists every key with its origin:\n" + out)
    rc, out, err, _ = run(["--set-config=max_size=2M"], cache)
    check(rc == 0 and os.path.isfile(os.path.join(cache, "mlcc.conf")),
          "--set-config writes mlcc.conf in the cache directory")
    check(out == "Set max_size = 2M in %s/mlcc.conf\n" % cache, "and says so: %r" % out)
    run(["--set-config", "remote_timeout=2.5"], cache)
    conf = open(os.path.join(cache, "mlcc.conf")).read()
    check(conf == "# mlcc kernel cache configuration (mlcc --set-config=KEY=VALUE)\n"
                  "max_size = 2M\nremote_timeout = 2.5\n", "mlcc.conf:\n" + conf)
    rc, out, _, _ = run(["--show-config"], cache)
    check("(%s/mlcc.conf) max_size = 2M\n" % cache in out and
          "(%s/mlcc.conf) remote_timeout = 2.5\n" % cache in out, "--show-config:\n" + out)
    rc, out, _, _ = run(["--show-config"], cache, {"MLCC_CACHE_MAXSIZE": "7G"})
    check("(environment) max_size = 7G\n" in out, "the environment overrides mlcc.conf")
    rc, out, _, _ = run(["--show-config", "--cache-max-size=9G"], cache)
    check("(command line) max_size = 9G\n" in out, "the command line overrides both")
    rc, out, _, _ = run(["--cache-stats"], cache)
    check("/ 2.0 MiB" in out, "--cache-stats uses max_size from mlcc.conf")
    # The limit from mlcc.conf is applied by builds.
    model = small_model(d)
    run(["--set-config=max_size=1K"], cache)
    build(model, os.path.join(d, "a"), cache)
    size = sum(os.path.getsize(p) for p in ct.entries(cache).values())
    check(size <= 1024, "a build trims to max_size from mlcc.conf (%d bytes left)" % size)
    # Unset, and errors.
    rc, out, _, _ = run(["--set-config=max_size="], cache)
    rc, out, _, _ = run(["--show-config"], cache)
    check("(default) max_size = 5G\n" in out, "KEY= removes the setting")
    for arg, what in (("--set-config=colour=blue", "unknown configuration key 'colour'"),
                      ("--set-config=max_size=lots", "invalid size 'lots'"),
                      ("--set-config=remote_timeout=-1", "remote_timeout"),
                      ("--set-config=read_only=maybe", "read_only"),
                      ("--set-config=max_size", "expected KEY=VALUE")):
        rc, out, err, _ = run([arg], cache)
        check(rc == 2 and what in err, "%s: usage error naming %r (%s)" % (arg, what,
                                                                          err.strip()[:200]))
    with open(os.path.join(cache, "mlcc.conf"), "a") as f:
        f.write("bogus line\n")
    rc, out, err, _ = run(["--show-config"], cache)
    check(rc == 0 and "mlcc.conf:3: ignoring this line: expected" in err, "a bad line in mlcc.conf is a warning "
          "naming the file and line: %r" % err.strip())


def case_zero_stats(d):
    cache = os.path.join(d, "cache")
    model = small_model(d)
    k, _, _ = build(model, os.path.join(d, "a"), cache)
    build(model, os.path.join(d, "b"), cache)
    n = len(ct.entries(cache))
    stats, _ = print_stats(cache)
    check(int(stats["local_hits"]) == len(k) + 1, "counters before -z")
    rc, out, _, _ = run(["-z"], cache)
    check(rc == 0 and out == "Statistics zeroed\n", "-z prints 'Statistics zeroed': %r" % out)
    stats, _ = print_stats(cache)
    check(all(stats[k] == "0" for k in ("local_hits", "remote_hits", "misses", "stores",
                                         "evictions", "remote_errors")),
          "every counter is zero")
    check(int(stats["entries"]) == n and len(ct.entries(cache)) == n, "entries are kept (%d)" % n)
    check(abs(int(stats["stats_zeroed_timestamp"]) - time.time()) < 60,
          "stats_zeroed_timestamp is now")
    rc, out, _, _ = run(["--zero-stats"], cache)
    check(rc == 0 and out == "Statistics zeroed\n", "--zero-stats is the long spelling")
    c, _, _ = build(model, os.path.join(d, "c"), cache)
    stats, _ = print_stats(cache)
    check(stats["local_hits"] == str(len(k) + 1) and stats["misses"] == "0",
          "counting resumes from zero")


def case_cleanup(d):
    cache = os.path.join(d, "cache")
    model = small_model(d)
    other = small_model(d, "other.onnx", widths=(4, 6, 10), hidden=16)
    build(model, os.path.join(d, "a"), cache)
    build(other, os.path.join(d, "b"), cache)
    ents = ct.entries(cache)
    total = sum(os.path.getsize(p) for p in ents.values())
    # A stale temporary (2 hours old) and a fresh one.
    sub = os.path.dirname(next(iter(ents.values())))
    stale, fresh = os.path.join(sub, ".tmp-stale"), os.path.join(sub, ".tmp-fresh")
    for p in (stale, fresh):
        open(p, "wb").write(b"x" * 10)
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    limit = total // 2
    rc, out, _, _ = run(["--cleanup", "--cache-max-size=%d" % limit], cache)
    left = ct.entries(cache)
    size = sum(os.path.getsize(p) for p in left.values())
    evicted = len(ents) - len(left)
    check(rc == 0 and size <= limit * 0.9 + 1 and evicted > 0,
          "--cleanup trims to 90%% of the limit (%d of %d bytes left)" % (size, total))
    check(not os.path.exists(stale) and os.path.exists(fresh),
          "--cleanup removes stale temporaries, keeps fresh ones")
    m = re.match(r"Cleaned up the kernel cache (\S+): (\d+) entr(y|ies) evicted, (\d+) "
                 r"temporar(y|ies) removed; (\d+) entr(y|ies), .* / .*\n$", out)
    check(m and m.group(1) == cache and int(m.group(2)) == evicted and m.group(4) == "1" and
          int(m.group(6)) == len(left), "--cleanup reports what it did: %r" % out)
    stats, _ = print_stats(cache)
    check(stats["evictions"] == str(evicted), "evictions counted")
    rc, out, _, _ = run(["--cache-trim", "--cache-max-size=%d" % limit], cache)
    check(rc == 0 and out.startswith("Cleaned up the kernel cache %s: 0 entries evicted" % cache),
          "--cache-trim is the same command; nothing more to do")
    run(["--set-config=max_size=0"], cache)
    rc, out, _, _ = run(["--cleanup"], cache)
    check(rc == 0 and ": 0 entries evicted" in out, "no limit: nothing evicted")


def case_print_stats(d):
    cache = os.path.join(d, "cache")
    stats, out = print_stats(cache)
    keys = [l.split("\t")[0] for l in out.splitlines()]
    check(keys == ["stats_zeroed_timestamp", "local_hits", "remote_hits", "misses", "damaged",
                   "stores", "evictions", "remote_errors", "remote_rejected",
                   "remote_wait_ms", "rejected_objects", "entries", "cache_size_bytes", "max_size_bytes",
                   "temporaries"],
          "--print-stats: one key per line, tab-separated, in a fixed order: %r" % keys)
    check(all(re.fullmatch(r"\d+", v) for v in stats.values()), "every value is an integer")
    check(stats["max_size_bytes"] == str(5 << 30) and stats["entries"] == "0", "empty cache")
    model = small_model(d)
    k, _, _ = build(model, os.path.join(d, "a"), cache)
    build(model, os.path.join(d, "b"), cache)
    stats, _ = print_stats(cache)
    n = len(ct.entries(cache))
    size = sum(os.path.getsize(p) for p in ct.entries(cache).values())
    check(stats["misses"] == str(len(k) + 1) and stats["stores"] == str(n) and
          stats["local_hits"] == str(len(k) + 1), "misses, stores, hits: %r" % stats)
    check(stats["entries"] == str(n) and stats["cache_size_bytes"] == str(size),
          "entries and size match the files (%d, %d)" % (n, size))
    stats, _ = print_stats(cache, ("--cache-max-size=1M",))
    check(stats["max_size_bytes"] == str(1 << 20), "max_size_bytes follows the limit")


def explain_lines(err):
    return [l for l in err.splitlines() if l.startswith("mlcc: explain: ")]


def case_explain(d):
    cache = os.path.join(d, "cache")
    # Every layer different, so that no two kernels share a key.
    model = small_model(d, widths=(4, 8, 12))
    k, err, _ = build(model, os.path.join(d, "a"), cache, extra=("-d", "explain-cache"))
    lines = explain_lines(err)
    check(len(lines) == len(k), "one explanation per miss (%d)" % len(lines))
    check(all(re.match(r"mlcc: explain: kernel \d+ mlcc_k_[0-9a-f]{24} \(node '[^']*', "
                       r"[A-Za-z+]+\): local: no entry ", l) for l in lines),
          "each names the kernel, node and op:\n" + "\n".join(lines))
    check(any("Conv+Relu" in l for l in lines) and any("Gemm" in l for l in lines),
          "the ops of fused kernels")
    check(all(l.endswith("; no previous entry for this node") for l in lines),
          "a cold cache: no previous entry")
    # A shape change: the last convolution gets 16 channels.
    wide = os.path.join(d, "wide.onnx")
    ct.conv_model(wide, widths=(4, 8, 16))
    k2, err, _ = build(wide, os.path.join(d, "b"), cache, extra=("-d", "explain-cache"))
    lines = explain_lines(err)
    check(lines and len(lines) == len(compiled(k2)) and
          all(re.search(r"previous entry for this node \(mlcc_k_[0-9a-f]{24}\): changed: shape "
                        r"\(", l) for l in lines),
          "a wider layer: each miss says the shape changed:\n" + "\n".join(lines))
    check(any("shape (input 1 float32[12,8,3,3] -> float32[16," in l for l in lines),
          "and shows the first differing input with both shapes")
    check(any("shape (input 0 float32[1,768] -> float32[1,1024]" in l for l in lines),
          "the Gemm after it: its input")
    check(not any("CPU" in l or "features" in l for l in lines), "the target did not change")
    # An attribute: Gemm's alpha.
    import onnx
    m = onnx.load(wide)
    for n in m.graph.node:
        if n.op_type == "Gemm":
            n.attribute.append(onnx.helper.make_attribute("alpha", 0.5))
            break
    attr = os.path.join(d, "attr.onnx")
    onnx.save(m, attr)
    k3, err, _ = build(attr, os.path.join(d, "c"), cache, extra=("-d", "explain-cache"))
    lines = explain_lines(err)
    check(len(lines) == 1 and lines[0].endswith("changed: attribute (alpha added)") and
          "Gemm" in lines[0], "an attribute: the one miss names it:\n" + "\n".join(lines))
    # Another CPU, then other features.
    k4, err, _ = build(attr, os.path.join(d, "e"), cache,
                       extra=("-d", "explain-cache", "-mcpu=skylake"))
    lines = explain_lines(err)
    check(len(lines) == len(k4) and
          all(l.endswith("changed: CPU (x86-64-v3 -> skylake)") for l in lines),
          "-mcpu: each miss names the CPU:\n" + "\n".join(lines[:3]))
    k5, err, _ = build(attr, os.path.join(d, "f"), cache,
                       extra=("-d", "explain-cache", "-mcpu=skylake", "-mattr=-fma"))
    lines = explain_lines(err)
    check(len(lines) == len(k5) and all(re.search(r"changed: features \([^)]*-> [^)]*-fma", l)
                                        for l in lines),
          "-mattr: each miss names the features:\n" + "\n".join(lines[:2]))
    # The entry itself removed: the record has the same key.
    run(["--cache-clear"], cache)
    build(model, os.path.join(d, "g"), cache)
    victim = sorted(ct.kernel_entries(cache).values())[0]
    sym = ct.symbol_of_file(victim)
    os.unlink(victim)
    k6, err, _ = build(model, os.path.join(d, "h"), cache, extra=("-d", "explain-cache"))
    lines = explain_lines(err)
    check(compiled(k6) == [sym] and len(lines) == 1 and
          lines[0].endswith("(%s) has the same key: the entry was removed (evicted, cleared or "
                            "damaged)" % sym), "a removed entry: %r" % lines)
    # A codegen hash change: another mlcc build (the store key's identity).
    rc, out, _, _ = run(["--cache-clear"], cache)
    build(model, os.path.join(d, "i"), cache)
    k7, err, _ = build(model, os.path.join(d, "j"), cache, extra=("-d", "explain-cache"),
                       extra_env={"MLCC_CACHE_COMPILER_CHECK": "version"})
    lines = explain_lines(err)
    check(lines and all(l.endswith("changed: codegen hash (another mlcc build: the store key's "
                                   "compiler identity)") for l in lines),
          "another compiler identity: 'codegen hash':\n" + "\n".join(lines[:2]))
    run(["--cache-clear"], cache)
    check(not os.path.exists(os.path.join(cache, "explain")), "--cache-clear removes the records")
    # Two layers with one key: the second is not compiled, yet gets a record.
    twin = small_model(d, "twin.onnx", widths=(8, 8, 8))
    build(twin, os.path.join(d, "t1"), cache)
    twin2 = small_model(d, "twin2.onnx", widths=(8, 8, 16))
    k8, err, _ = build(twin2, os.path.join(d, "t2"), cache, extra=("-d", "explain-cache"))
    lines = [l for l in explain_lines(err) if "node '#4'" in l]
    check(len(lines) == 1 and "changed: shape (input 1 float32[8,8,3,3] -> float32[16," in lines[0],
          "a kernel that shared its key with another still has a previous entry: %r" % lines)
    run(["--cache-clear"], cache)
    # Read-only: records are not written.
    build(model, os.path.join(d, "k"), cache, extra_env={"MLCC_CACHE_READONLY": "1"})
    check(not os.path.exists(os.path.join(cache, "explain")), "a read-only cache gets no records")


def set_mlcc(path):
    ct.MLCC = path


def main():
    return ct.mlcc_e2e.main_of_cases(__doc__, globals(), "mlcc-admin-test-", set_mlcc,
                                     ct.FAILURES)


if __name__ == "__main__":
    sys.exit(main())
