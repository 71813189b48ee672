#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""A kernel cache that a CI fleet shares (issue 12, item 3; driver/build_id.h).

usage: fleet_test.py CASE --mlcc MLCC --src SRC --twin DIR [--build-type T] [--cc CC]
                     [--c-flags FLAGS]

Cases (one CTest test each, tests/e2e/cache/tests.cmake):
  twin_build      copies the source tree (tracked and untracked files, like a fresh
                  clone) to DIR/src and builds mlcc there in a second CMake build folder
                  DIR/build with the same compiler, build type and flags: a separately
                  built mlcc of the same commit, at other paths (the CTest fixture the
                  other cases need).
  twin_share      both binaries print the same commit and codegen hash although their
                  bytes differ; a kernel cache filled by one serves every kernel to the
                  other with byte-identical output. MLCC_CACHE_COMPILER_CHECK=content (the
                  stricter check) does not share between them, =version does.
  emitter_edit    a one-line edit of an emitter in the twin's sources rebuilds it
                  (elementwise.c.o is recompiled) with another codegen hash, and every
                  kernel misses the cache the unedited mlcc filled; restoring the file
                  (new mtime, old content) gives back the original hash.
  two_host        two hosts in network namespaces joined by a veth pair, an nginx WebDAV
                  cache on host A. Host A builds the model with --remote-cache; host B,
                  with an empty local cache and the twin mlcc, compiles 0 kernels and
                  writes byte-identical files.
  two_host_bazel  the same two hosts with Bazel: host A builds the model with
                  --remote_cache and --@mlcc//bazel:kernel_cache at that nginx; host B
                  (its own workspace and output root) rebuilds it from the caches, then a
                  weights-only change compiles 0 kernels on host B and matches mlcc run
                  directly with --no-cache. The mlcc Bazel built has the CMake build's
                  codegen hash when the compiler settings agree.

The namespace cases skip (77) with a message when `ip netns add` is not permitted (or
nginx/bazel is missing); they delete their namespaces and stop their servers at the end,
also on failure, and delete leftovers of killed runs (names mlccf<pid>a/b whose process is
gone). Every address is inside those namespaces. MLCC_FLEET_MODEL=path replaces the
detector example (for measurements). Exit 0 pass, 1 fail, 77 skip.
"""
import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
MODEL = os.environ.get("MLCC_FLEET_MODEL") or os.path.join(ROOT, "examples", "detector",
                                                           "detector.onnx")
# The emitter the edit case changes, and the line it adds (real code, no warning).
EDITED = os.path.join("targets", "kernels", "elementwise.c")
EDIT_LINE = "static inline int mlcc_fleet_test_edit(void) { return 1; }\n"
SUBNET = "10.123.45"
PORT = 8080
ARGS = None

sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import mlcc_e2e  # noqa: E402
from mlcc_e2e import Failure, Skip, check  # noqa: E402


sha = mlcc_e2e.sha256


def run(argv, env=None, timeout=600, cwd=None, netns=None):
    """Runs argv (inside |netns| if given); returns (rc, stdout, stderr)."""
    if netns:
        argv = ["ip", "netns", "exec", netns, *argv]
    p = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def must(argv, what, **kw):
    rc, out, err = run(argv, **kw)
    if rc != 0:
        raise Failure("%s: %s exited %d:\n%s%s" % (what, " ".join(argv), rc, out[-2000:],
                                                    err[-3000:]))
    return out, err


def mlcc_env(cache):
    env = mlcc_e2e.clean_env(cache)
    env.pop("MLCC_CACHE_COMPILER_CHECK", None)
    return env


def version(mlcc):
    """The four stable lines of `mlcc --version` as a dict."""
    out, _ = must([mlcc, "--version"], "version")
    lines = out.splitlines()
    m = [re.fullmatch(p, l) for p, l in zip(
        (r"mlcc version (\S+)", r"commit: ([0-9a-f]{40}|unknown)", r"codegen: ([0-9a-f]{64})",
         r"LLVM: (\S+)"), lines)]
    if len(m) != 4 or not all(m):
        raise Failure("%s --version: unexpected first four lines:\n%s" % (mlcc, out))
    return {"version": m[0].group(1), "commit": m[1].group(1), "codegen": m[2].group(1),
            "llvm": m[3].group(1)}


def compile_model(mlcc, out_dir, cache, model=MODEL, extra=(), check_env=None, netns=None):
    """mlcc -v MODEL -o out_dir/libm.a; returns {"compiled": n, "hit": n, "remote": n}."""
    os.makedirs(out_dir, exist_ok=True)
    env = mlcc_env(cache)
    if check_env is not None:
        env["MLCC_CACHE_COMPILER_CHECK"] = check_env
    _, err = must([mlcc, model, "-o", os.path.join(out_dir, "libm.a"), "--name=m", "-v",
                   *extra], "compile", env=env, netns=netns)
    counts = {"compiled": 0, "hit": 0, "remote": 0}
    for line in err.splitlines():
        m = re.match(r"mlcc: kernel \d+ \S+: (compiled|hit \(remote\)|hit)", line)
        if m:
            counts[{"compiled": "compiled", "hit": "hit", "hit (remote)": "remote"}[
                m.group(1)]] += 1
        if "warning" in line:
            print("  " + line)
    if sum(counts.values()) == 0:
        raise Failure("no kernel lines in mlcc -v output:\n" + err[-3000:])
    return counts


def same_outputs(a, b):
    return all(sha(os.path.join(a, f)) == sha(os.path.join(b, f)) for f in ("libm.a", "m.h"))


def twin_paths():
    twin = os.path.abspath(ARGS.twin)
    return os.path.join(twin, "src"), os.path.join(twin, "build"), os.path.join(twin, "build",
                                                                                "mlcc")


def snapshot_source(dest):
    """Copies the source tree like a fresh clone (tracked + untracked, not ignored) to
    |dest|, keeping mtimes (tar), so an unchanged file does not rebuild."""
    src = os.path.abspath(ARGS.src)
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    os.makedirs(dest)
    rc, out, _ = run(["git", "-C", src, "ls-files", "-co", "--exclude-standard", "-z"])
    if rc == 0:
        names = [n for n in out.split("\0") if n and os.path.exists(os.path.join(src, n))]
        listing = "\0".join(names) + "\0"
        p = subprocess.run("tar --null -T - -cf - | tar -xf - -C '%s'" % dest, shell=True,
                           cwd=src, input=listing.encode(), timeout=300)
    else:
        p = subprocess.run("tar --exclude='./build*' --exclude='./bazel-*' -cf - . | "
                           "tar -xf - -C '%s'" % dest, shell=True, cwd=src, timeout=300)
    if p.returncode != 0:
        raise Failure("copying %s to %s failed" % (src, dest))


def build_twin(target="mlcc"):
    """(Re)builds the twin; returns ninja's output."""
    _, build, _ = twin_paths()
    out, _ = must(["cmake", "--build", build, "--target", target, "-j2"], "twin build",
                  timeout=900)
    return out


# --- twin_build / twin_share / emitter_edit ----------------------------------------------

def case_twin_build():
    src, build, mlcc = twin_paths()
    main = version(ARGS.mlcc)
    t0 = time.time()
    snapshot_source(src)
    commit = "" if main["commit"] == "unknown" else main["commit"]
    configure = ["cmake", "-S", src, "-B", build, "-G", "Ninja", "-DBUILD_TESTING=OFF",
                 "-DCMAKE_BUILD_TYPE=" + ARGS.build_type, "-DMLCC_GIT_COMMIT=" + commit,
                 "-DCMAKE_C_FLAGS=" + ARGS.c_flags]
    if ARGS.cc:
        configure.append("-DCMAKE_C_COMPILER=" + ARGS.cc)
    must(configure, "twin configure", timeout=300)
    build_twin()
    print("  twin: %s (%.1f s)" % (mlcc, time.time() - t0))
    check(os.access(mlcc, os.X_OK), "a second mlcc built from a copy at " + src)


def twin_or_fail():
    _, _, mlcc = twin_paths()
    if not os.access(mlcc, os.X_OK):
        raise Failure("no twin mlcc at %s (the fixture cache.fleet.twin_build failed)" % mlcc)
    return mlcc


def case_twin_share():
    twin = twin_or_fail()
    a, b = version(ARGS.mlcc), version(twin)
    check(a == b, "same version, commit, codegen hash and LLVM: %s" % a)
    differ = sha(ARGS.mlcc) != sha(twin)
    if ARGS.build_type in ("RelWithDebInfo", "Debug"):
        check(differ, "the two executables differ in their bytes (debug info names their paths)")
    elif not differ:
        print("  note: the two executables are byte-identical (no debug info)")
    with tempfile.TemporaryDirectory(prefix="mlcc-fleet-") as d:
        cache = os.path.join(d, "cache")
        first = compile_model(ARGS.mlcc, os.path.join(d, "a"), cache)
        n = first["compiled"]
        check(n > 0 and first["hit"] == 0, "main mlcc, empty cache: %d kernels compiled" % n)
        second = compile_model(twin, os.path.join(d, "b"), cache)
        check(second == {"compiled": 0, "hit": n, "remote": 0},
              "twin mlcc, same cache: 0 compiled, %d hits (%s)" % (n, second))
        check(same_outputs(os.path.join(d, "a"), os.path.join(d, "b")),
              "library and header byte-identical")
        if differ:
            strict = os.path.join(d, "strict")
            c1 = compile_model(ARGS.mlcc, os.path.join(d, "c"), strict, check_env="content")
            c2 = compile_model(twin, os.path.join(d, "d"), strict, check_env="content")
            c3 = compile_model(ARGS.mlcc, os.path.join(d, "e"), strict, check_env="content")
            check(c1["compiled"] == n and c2["compiled"] == n and c3["hit"] == n,
                  "MLCC_CACHE_COMPILER_CHECK=content: only the same executable shares "
                  "(%s, %s, %s)" % (c1, c2, c3))
        loose = os.path.join(d, "loose")
        v1 = compile_model(ARGS.mlcc, os.path.join(d, "f"), loose, check_env="version")
        v2 = compile_model(twin, os.path.join(d, "g"), loose, check_env="version")
        check(v1["compiled"] == n and v2["hit"] == n,
              "MLCC_CACHE_COMPILER_CHECK=version shares too (%s, %s)" % (v1, v2))
        c4 = compile_model(twin, os.path.join(d, "h"), cache, check_env="codegen")
        check(c4["hit"] == n, "MLCC_CACHE_COMPILER_CHECK=codegen is the default (%s)" % c4)


def case_emitter_edit():
    twin = twin_or_fail()
    src, build, _ = twin_paths()
    main = version(ARGS.mlcc)
    check(version(twin)["codegen"] == main["codegen"], "twin starts with the main codegen hash")
    path = os.path.join(src, EDITED)
    with open(path, "rb") as f:
        original = f.read()
    try:
        with open(path, "wb") as f:
            f.write(original + EDIT_LINE.encode())
        before = sha(twin)
        out = build_twin()
        check(re.search(r"Building C object \S*targets/kernels/elementwise\.c\.o", out) is not None,
              "the twin build recompiled targets/kernels/elementwise.c")
        check(sha(twin) != before, "and relinked mlcc")
        edited = version(twin)
        check(edited["codegen"] != main["codegen"],
              "one added line in %s: codegen %s... -> %s..." % (EDITED, main["codegen"][:16],
                                                               edited["codegen"][:16]))
        check(edited["commit"] == main["commit"], "same commit line (the tree is dirty)")
        with tempfile.TemporaryDirectory(prefix="mlcc-fleet-") as d:
            cache = os.path.join(d, "cache")
            first = compile_model(ARGS.mlcc, os.path.join(d, "a"), cache)
            n = first["compiled"]
            again = compile_model(twin, os.path.join(d, "b"), cache)
            check(again == {"compiled": n, "hit": 0, "remote": 0},
                  "every kernel misses the unedited mlcc's entries: %s" % again)
            third = compile_model(twin, os.path.join(d, "c"), cache)
            check(third["hit"] == n, "the edited mlcc then hits its own entries")
    finally:
        with open(path, "wb") as f:
            f.write(original)
    # New mtime, original content: the codegen hash follows the content.
    out = build_twin()
    check(version(twin)["codegen"] == main["codegen"],
          "restored file (new mtime): the original codegen hash again")


# --- two hosts in network namespaces -----------------------------------------------------

NGINX_CONF = """
daemon off;
master_process off;
worker_processes 1;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ worker_connections 128; }}
http {{
  log_format fleet '$remote_addr $request_method $uri $status';
  access_log {tmp}/access.log fleet;
  client_body_temp_path {tmp}/body;
  proxy_temp_path {tmp}/proxy;
  fastcgi_temp_path {tmp}/fastcgi;
  uwsgi_temp_path {tmp}/uwsgi;
  scgi_temp_path {tmp}/scgi;
  server {{
    listen {addr}:{port};
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


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Hosts:
    """Host A (mlccf<pid>a, SUBNET.1, runs nginx) and host B (mlccf<pid>b, SUBNET.2),
    joined by a veth pair. Use as a context manager: the exit stops nginx and every
    registered cleanup and deletes both namespaces, on failure too."""

    def __init__(self, work):
        if shutil.which("ip") is None:
            raise Skip("iproute2's ip is not installed")
        self.nginx_exe = shutil.which("nginx") or (
            "/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
        if self.nginx_exe is None:
            raise Skip("nginx is not installed (Debian package nginx)")
        self.work = work
        self.a = "mlccf%da" % os.getpid()
        self.b = "mlccf%db" % os.getpid()
        self.created = []
        self.cleanups = []
        self.nginx = None

    def __enter__(self):
        self.sweep()
        rc, _, err = run(["ip", "netns", "add", self.a])
        if rc != 0:
            raise Skip("`ip netns add` is not permitted here (%s)" % err.strip())
        self.created.append(self.a)
        rc, _, err = run(["ip", "netns", "exec", self.a, "true"])
        if rc != 0:
            self.__exit__(None, None, None)
            raise Skip("`ip netns exec` is not permitted here (%s)" % err.strip())
        try:
            must(["ip", "netns", "add", self.b], "netns add")
            self.created.append(self.b)
            veth_a, veth_b = "mf%da" % os.getpid(), "mf%db" % os.getpid()
            must(["ip", "link", "add", veth_a, "netns", self.a, "type", "veth", "peer", "name",
                  veth_b, "netns", self.b], "veth pair")
            for ns, dev, ip in ((self.a, veth_a, SUBNET + ".1"), (self.b, veth_b, SUBNET + ".2")):
                must(["ip", "-n", ns, "link", "set", "lo", "up"], "lo up")
                must(["ip", "-n", ns, "addr", "add", ip + "/24", "dev", dev], "address")
                must(["ip", "-n", ns, "link", "set", dev, "up"], "veth up")
            self.start_nginx()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def sweep(self):
        """Deletes namespaces left by killed runs of this test (their pid is gone)."""
        rc, out, _ = run(["ip", "netns", "list"])
        for line in out.splitlines() if rc == 0 else []:
            m = re.match(r"(mlccf(\d+)[ab])\b", line)
            if m and not pid_alive(int(m.group(2))):
                run(["ip", "netns", "del", m.group(1)])
                print("  removed the stale namespace " + m.group(1))

    def start_nginx(self):
        tmp = os.path.join(self.work, "nginx")
        os.makedirs(os.path.join(tmp, "root"))
        conf = os.path.join(tmp, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(tmp=tmp, addr=SUBNET + ".1", port=PORT))
        self.log = os.path.join(tmp, "access.log")
        # `ip netns exec` execs nginx: the Popen's pid is nginx's.
        self.nginx = subprocess.Popen(["ip", "netns", "exec", self.a, self.nginx_exe, "-p", tmp,
                                       "-c", conf, "-e", os.path.join(tmp, "error.log")],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(100):
            rc, _, _ = run(["curl", "-s", "-o", "/dev/null", "-m", "1", self.url("")],
                           netns=self.b, timeout=10)
            if rc == 0:
                return
            if self.nginx.poll() is not None:
                raise Failure("nginx failed: " + self.nginx.stderr.read().decode())
            time.sleep(0.1)
        raise Failure("nginx on %s:%d is not reachable from host B" % (SUBNET + ".1", PORT))

    def url(self, instance):
        return "http://%s.1:%d/%s" % (SUBNET, PORT, instance)

    def requests(self):
        """The access log so far: [(client, method, uri, status)]."""
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return [tuple(l.split()) for l in f if len(l.split()) == 4]

    def __exit__(self, *exc):
        for fn in reversed(self.cleanups):
            try:
                fn()
            except Exception as e:  # a cleanup failure must not hide the test's result
                print("  cleanup: %s" % e)
        if self.nginx is not None and self.nginx.poll() is None:
            self.nginx.terminate()
            try:
                self.nginx.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.nginx.kill()
                self.nginx.wait(timeout=10)
        for ns in reversed(self.created):
            run(["ip", "netns", "del", ns])
        rc, out, _ = run(["ip", "netns", "list"])
        left = [ns for ns in self.created if re.search(r"^%s\b" % ns, out, re.M)]
        if left:
            print("  WARNING: namespaces still present: %s" % left)
        return False


def kernel_requests(reqs, client, instance):
    """(uploads, hits) of kernel AC entries by |client| under /|instance|/ac/."""
    put = sum(1 for c, m, u, s in reqs
              if c == client and m == "PUT" and u.startswith("/%s/ac/" % instance))
    hit = sum(1 for c, m, u, s in reqs
              if c == client and m == "GET" and u.startswith("/%s/ac/" % instance) and s == "200")
    return put, hit


def case_two_host():
    twin = twin_or_fail()
    check(version(twin)["codegen"] == version(ARGS.mlcc)["codegen"],
          "host B's own mlcc (the twin build) has host A's codegen hash")
    with tempfile.TemporaryDirectory(prefix="mlcc-2host-") as d, Hosts(d) as hosts:
        url = hosts.url("fleet")
        a_out, b_out = os.path.join(d, "a", "out"), os.path.join(d, "b", "out")
        t0 = time.time()
        a = compile_model(ARGS.mlcc, a_out, os.path.join(d, "a", "cache"),
                          extra=["--remote-cache=" + url], netns=hosts.a)
        ta = time.time() - t0
        n = a["compiled"]
        check(n > 0, "host A (%s.1), empty caches: %d kernels compiled (%.2f s)" % (SUBNET, n, ta))
        put_a, _ = kernel_requests(hosts.requests(), SUBNET + ".1", "fleet")
        check(put_a == n, "host A uploaded %d kernels to %s" % (put_a, url))
        t0 = time.time()
        b = compile_model(twin, b_out, os.path.join(d, "b", "cache"),
                          extra=["--remote-cache=" + url], netns=hosts.b)
        tb = time.time() - t0
        check(b == {"compiled": 0, "hit": 0, "remote": n},
              "host B (%s.2), empty local cache, its own mlcc: 0 compiled, %d remote hits "
              "(%.2f s)" % (SUBNET, n, tb))
        put_b, hit_b = kernel_requests(hosts.requests(), SUBNET + ".2", "fleet")
        check(hit_b == n and put_b == 0, "nginx saw host B's %d hits over the veth pair" % hit_b)
        check(same_outputs(a_out, b_out), "host B's library and header are byte-identical")


# --- Bazel on the two hosts ----------------------------------------------------------------

BAZELRC = """
build --repository_cache=
fetch --repository_cache=
build --experimental_repository_disable_download
build --spawn_strategy=processwrapper-sandbox
build --remote_cache={bazel_url}
build --@mlcc//bazel:kernel_cache={mlcc_url}
"""

CONSUMER_BUILD = """
load("@mlcc//bazel:ml_model.bzl", "ml_model_library")

ml_model_library(name = "m", model = "m.onnx")
"""

CONSUMER_WORKSPACE = """
workspace(name = "fleet_consumer")

local_repository(name = "mlcc", path = "{mlcc}")

load("@mlcc//bazel:deps.bzl", "mlcc_dependencies")

mlcc_dependencies()
"""


def changed_weights(src, dst):
    """|src| with every float weight tensor (2-D or more: not a shape, scale or bias
    vector, which may steer shapes) scaled by 1.5: same graph, other weights."""
    code = ("import sys, onnx, numpy as np\n"
            "from onnx import numpy_helper\n"
            "m = onnx.load(sys.argv[1])\n"
            "for i, t in enumerate(m.graph.initializer):\n"
            "    a = numpy_helper.to_array(t)\n"
            "    if a.dtype == np.float32 and a.ndim >= 2:\n"
            "        m.graph.initializer[i].CopyFrom(numpy_helper.from_array(a * 1.5, t.name))\n"
            "onnx.save(m, sys.argv[2])\n")
    must(["/usr/bin/python3", "-c", code, src, dst], "changing the weights")


def case_two_host_bazel():
    bazel = shutil.which("bazel")
    if bazel is None:
        raise Skip("bazel is not installed (Debian: bazel-bootstrap bazel-rules-java)")
    with tempfile.TemporaryDirectory(prefix="mlcc-2host-bazel-") as d, Hosts(d) as hosts:
        bazel_url, mlcc_url = hosts.url("bazel"), hosts.url("mlcc")
        env = dict(os.environ)
        for k in ("MLCC_REMOTE_CACHE", "MLCC_CACHE_DIR", "MLCC_CACHE_COMPILER_CHECK"):
            env.pop(k, None)
        # No network but the namespaces: anything that tried to download would fail.
        env.update(HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9",
                   http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9",
                   NO_PROXY=SUBNET + ".1", no_proxy=SUBNET + ".1")
        hosts_dirs = {}
        for host, ns in (("a", hosts.a), ("b", hosts.b)):
            h = os.path.join(d, host)
            snapshot_source(os.path.join(h, "mlcc"))
            ws = os.path.join(h, "ws")
            os.makedirs(ws)
            with open(os.path.join(ws, "WORKSPACE"), "w") as f:
                f.write(CONSUMER_WORKSPACE.format(mlcc=os.path.join(h, "mlcc")))
            with open(os.path.join(ws, "BUILD"), "w") as f:
                f.write(CONSUMER_BUILD)
            with open(os.path.join(ws, ".bazelrc"), "w") as f:
                f.write(BAZELRC.format(bazel_url=bazel_url, mlcc_url=mlcc_url))
            shutil.copyfile(MODEL, os.path.join(ws, "m.onnx"))
            startup = ["--output_user_root=" + os.path.join(h, "root")]
            hosts_dirs[host] = (ns, ws, startup)

            def shutdown(ns=ns, ws=ws, startup=startup, h=h):
                try:
                    run([bazel, *startup, "shutdown"], env=env, cwd=ws, netns=ns, timeout=60)
                finally:
                    # A server that did not stop (this run started it) would keep the
                    # namespace alive.
                    for pid_file in glob.glob(os.path.join(h, "root", "*", "server",
                                                           "server.pid.txt")):
                        try:
                            pid = int(open(pid_file).read().strip())
                            with open("/proc/%d/cmdline" % pid, "rb") as f:
                                ours = os.path.join(h, "root").encode() in f.read()
                            if ours:
                                os.kill(pid, signal.SIGKILL)
                        except (OSError, ValueError):
                            pass
            hosts.cleanups.append(shutdown)

        def bazel_build(host, what, flags=()):
            ns, ws, startup = hosts_dirs[host]
            before = len(hosts.requests())
            t0 = time.time()
            rc, out, err = run([bazel, *startup, "build", "--color=no", "--curses=no",
                                "--symlink_prefix=/", *flags, "//:m"], env=env, cwd=ws,
                               netns=ns, timeout=600)
            dt = time.time() - t0
            if rc != 0:
                raise Failure("host %s: bazel build //:m (%s) failed:\n%s" % (host, what,
                                                                              err[-4000:]))
            summary = [l for l in err.splitlines() if re.match(r"INFO: \d+ process", l)]
            reqs = hosts.requests()[before:]
            client = SUBNET + (".1" if host == "a" else ".2")
            put, hit = kernel_requests(reqs, client, "mlcc")
            _, bin_dir, _ = run([bazel, *startup, "info", "--symlink_prefix=/", "bazel-bin"],
                                env=env, cwd=ws, netns=ns, timeout=120)
            out_dir = os.path.join(bin_dir.strip(), "_mlcc", "m")
            print("  host %s, %s: %.1f s, %s, kernels compiled %d, kernel cache hits %d"
                  % (host, what, dt, summary[-1][6:] if summary else "?", put, hit))
            return out_dir, put, hit, (summary[-1] if summary else "")

        a_dir, a_put, _, _ = bazel_build("a", "cold")
        check(a_put > 0, "host A, cold: mlcc compiled %d kernels and uploaded them" % a_put)
        a_files = {f: sha(os.path.join(a_dir, f)) for f in ("libm.a", "m.h")}
        # The mlcc Bazel built (exec configuration) against the CMake one: with the same
        # compiler settings (the "Codegen hash inputs" line), the same codegen hash.
        bazel_mlcc = glob.glob(os.path.join(d, "a", "root", "*", "execroot", "fleet_consumer",
                                            "bazel-out", "*", "bin", "external", "mlcc", "mlcc"))
        check(len(bazel_mlcc) == 1, "host A's Bazel-built mlcc: %s" % bazel_mlcc)
        inputs = lambda m: [l for l in must([m, "--version"], "version")[0].splitlines()
                            if l.startswith("Codegen hash inputs:")]
        vb, vc = version(bazel_mlcc[0]), version(ARGS.mlcc)
        if inputs(bazel_mlcc[0]) == inputs(ARGS.mlcc):
            check(vb["codegen"] == vc["codegen"] and vb["commit"] == "unknown",
                  "Bazel's mlcc: commit unknown, the CMake build's codegen hash %s..."
                  % vc["codegen"][:16])
        else:
            print("  note: Bazel's and CMake's mlcc were built with other compiler settings "
                  "(%s / %s)" % (inputs(bazel_mlcc[0]), inputs(ARGS.mlcc)))
        b_dir, b_put, _, b_summary = bazel_build("b", "second host")
        check(b_put == 0, "host B: 0 kernels compiled")
        check("remote cache hit" in b_summary and "processwrapper-sandbox" not in b_summary,
              "host B: every action came from Bazel's remote cache (%s)" % b_summary[6:])
        check({f: sha(os.path.join(b_dir, f)) for f in a_files} == a_files,
              "host B's library and header are byte-identical to host A's")
        # A retrained model on host B: the model action runs, every kernel comes from mlcc's
        # remote cache (host A's uploads), and the result equals an uncached compile.
        ns_b, ws_b, _ = hosts_dirs["b"]
        changed_weights(MODEL, os.path.join(ws_b, "m.onnx.new"))
        os.replace(os.path.join(ws_b, "m.onnx.new"), os.path.join(ws_b, "m.onnx"))
        c_dir, c_put, c_hit, c_summary = bazel_build("b", "weights changed")
        check(c_put == 0 and c_hit == a_put,
              "host B, weights changed: 0 kernels compiled, %d from mlcc's remote cache" % c_hit)
        check("processwrapper-sandbox" in c_summary, "the model action ran (%s)" % c_summary[6:])
        with tempfile.TemporaryDirectory(prefix="mlcc-direct-") as direct:
            e = mlcc_env(os.path.join(direct, "unused"))
            e["MLCC_AR"] = shutil.which("ar")
            must([ARGS.mlcc, os.path.join(ws_b, "m.onnx"), "-o",
                  os.path.join(direct, "libm.a"), "--name=m", "--target=x86", "--no-cache"],
                 "direct compile", env=e)
            check(same_outputs(direct, c_dir),
                  "its library and header equal mlcc --no-cache run directly")
        if os.environ.get("MLCC_FLEET_MEASURE"):
            # For BENCHMARKS.md: host A rebuilt unchanged, then host B's next weights-only
            # change without the kernel cache (every kernel compiled).
            bazel_build("a", "warm (unchanged)")
            changed_weights(os.path.join(ws_b, "m.onnx"), os.path.join(ws_b, "m.onnx.new"))
            os.replace(os.path.join(ws_b, "m.onnx.new"), os.path.join(ws_b, "m.onnx"))
            bazel_build("b", "weights changed, no kernel cache",
                        ["--@mlcc//bazel:kernel_cache="])


def main():
    global ARGS
    p = argparse.ArgumentParser()
    p.add_argument("case")
    p.add_argument("--mlcc", required=True)
    p.add_argument("--src", default=ROOT)
    p.add_argument("--twin", required=True)
    p.add_argument("--build-type", default="RelWithDebInfo")
    p.add_argument("--cc", default="")
    p.add_argument("--c-flags", default="")
    ARGS = p.parse_args()
    ARGS.mlcc = os.path.abspath(ARGS.mlcc)
    fn = globals().get("case_" + ARGS.case)
    if fn is None:
        print("unknown case " + ARGS.case)
        return 2
    # CTest's timeout and ^C: run the cleanups (namespaces, servers) before exiting.
    sys.stdout.reconfigure(line_buffering=True)

    def terminated(*_):
        print("FAIL: terminated (SIGTERM); cleaning up")
        sys.exit(1)
    signal.signal(signal.SIGTERM, terminated)
    t0 = time.time()
    try:
        fn()
    except Skip as e:
        print("SKIP: %s" % e)
        return 77
    except Failure as e:
        print("FAIL: %s" % e)
        return 1
    print("PASS: %s (%.1f s)" % (ARGS.case, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
