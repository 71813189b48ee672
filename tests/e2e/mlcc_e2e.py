# SPDX-License-Identifier: Apache-2.0
"""The shared pieces of the end-to-end test scripts that run mlcc and CMake as
subprocesses (tests/driver/driver_test.py, tests/e2e/cache/cache_test.py,
tests/cmake/driver_targets_test.py, tests/cmake/consumer_test.py and the
scripts built on them):

  Failure, Skip, check(cond, what)    a case fails by raising Failure (check
                                      does it) and skips by raising Skip
  run_mlcc(mlcc, args, ...)           mlcc with its exit code, stdout and stderr
  clean_env(cache)                    an environment with a private kernel cache
                                      and no remote cache or proxy settings
  sh(cmd, ...)                        any other command (cmake, ctest, cc), output
                                      merged, MAKEFLAGS dropped
  cmake_configure, cmake_build_cmd    the CMake steps of the consumer tests
  listing(d), sha256(path), same_bytes(a, b)
  kernel_lines(stderr)                the kernels of mlcc -v: compiled or hit
  main_of_cases(...)                  the command line of a script whose cases
                                      are its case_<name> functions

Exit codes of main_of_cases: 0 pass, 1 fail, 2 usage, 77 skip (CTest's
SKIP_RETURN_CODE).
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time


class Failure(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, what, say_ok=True):
    """Raises Failure(what) unless |cond|; prints '  ok: what' otherwise."""
    if not cond:
        raise Failure(what)
    if say_ok:
        print("  ok: " + what)


# Variables that would send the kernel cache elsewhere or through a proxy.
_FOREIGN_ENV = ("MLCC_REMOTE_CACHE", "MLCC_REMOTE_CACHE_READONLY", "MLCC_CACHE_MAXSIZE",
                "http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy",
                "ALL_PROXY")


def clean_env(cache, extra=None):
    """os.environ with MLCC_CACHE_DIR=|cache|, no remote cache, size limit or
    proxy, loopback never proxied, then |extra| applied."""
    env = dict(os.environ)
    for k in _FOREIGN_ENV:
        env.pop(k, None)
    env["MLCC_CACHE_DIR"] = cache
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    if extra:
        env.update(extra)
    return env


def _show(text, width, indent):
    return text[:width].replace("\n", "\n" + " " * indent)


def run_mlcc(mlcc, args, cwd=None, env=None, stdin=subprocess.DEVNULL, timeout=600,
             echo=True, echo_chars=2000):
    """Runs |mlcc| with |args|. env: the whole environment (None: os.environ).
    With |echo|, prints the command line, its exit code and the first
    |echo_chars| of each stream. Returns (returncode, stdout, stderr) as text."""
    p = subprocess.run([mlcc, *args], cwd=cwd, env=env, stdin=stdin,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    out = p.stdout.decode(errors="replace")
    err = p.stderr.decode(errors="replace")
    if echo:
        print("$ mlcc %s  -> %d" % (" ".join(args), p.returncode))
        if out:
            print("  stdout: " + _show(out, echo_chars, 10))
        if err:
            print("  stderr: " + _show(err, echo_chars, 10))
    return p.returncode, out, err


def sh(cmd, cwd=None, env=None, ok=True, timeout=1800):
    """Runs |cmd| (a list) with stdout and stderr merged and MAKEFLAGS/MFLAGS
    dropped (a make or ninja above must not steer the one below); env entries
    are added to os.environ. Prints the command, exit code and time; with |ok|
    a non-zero exit prints the output's tail and raises Failure. Returns
    (returncode, output)."""
    full_env = dict(os.environ)
    full_env.pop("MAKEFLAGS", None)
    full_env.pop("MFLAGS", None)
    if env:
        full_env.update(env)
    t0 = time.time()
    p = subprocess.run(cmd, cwd=cwd, env=full_env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=timeout)
    out = p.stdout.decode(errors="replace")
    print("$ %s  -> %d (%.1fs)" % (" ".join(cmd), p.returncode, time.time() - t0))
    if ok and p.returncode != 0:
        print(out[-6000:])
        raise Failure("command failed: " + " ".join(cmd))
    return p.returncode, out


def cmake_configure(src, bld, generator, extra=(), **kw):
    """cmake -S src -B bld -G generator extra... through sh (kw: env, ok, ...)."""
    return sh(["cmake", "-S", src, "-B", bld, "-G", generator, *extra], **kw)


def cmake_build_cmd(bld, target=None, jobs=2):
    """The command line of cmake --build bld -jJOBS [--target target] (-j2: the
    machine's two cores are shared)."""
    return ["cmake", "--build", bld, "-j%d" % jobs] + (["--target", target] if target else [])


def listing(d):
    """Every file and folder below |d|, relative and sorted."""
    return sorted(os.path.relpath(os.path.join(r, f), d)
                  for r, ds, fs in os.walk(d) for f in fs + ds)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def same_bytes(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        return fa.read() == fb.read()


def kernel_lines(err):
    """The kernels mlcc -v reports on stderr ('mlcc: kernel 3 mlcc_k_<hex>:
    compiled'), as {symbol: "compiled" | "hit" | "hit (remote)" | ...}."""
    kernels = {}
    for line in err.splitlines():
        if line.startswith("mlcc: kernel ") and ": " in line[13:]:
            head, how = line[13:].split(": ", 1)
            parts = head.split()
            if len(parts) == 2 and parts[1].startswith("mlcc_k_"):
                kernels[parts[1]] = how
    return kernels


def main_of_cases(doc, cases, prefix, set_mlcc=None, failures=(Failure,), private_cache=False,
                  chdir=False):
    """The command line `SCRIPT MLCC CASE` of a test script. |cases| maps
    names to functions (the script's globals(): case_<CASE> is picked);
    set_mlcc(path) hands the script the absolute path of mlcc (None: it
    becomes cases["MLCC"], the script's global MLCC). Each case runs
    with a fresh temporary folder (prefix |prefix|) as its argument, removed
    after a pass or a skip and kept for inspection after a failure (one of
    |failures|). private_cache: MLCC_CACHE_DIR is a fresh folder for the case
    and MLCC_REMOTE_CACHE is unset (reruns see the same cold cache and the
    user's ~/.cache/mlcc is never touched). chdir: the case runs inside its
    folder. Returns the exit code (0 pass, 1 fail, 2 usage, 77 skip)."""
    if len(sys.argv) != 3:
        print(doc)
        return 2
    fn = cases.get("case_" + sys.argv[2])
    if fn is None:
        print("unknown case " + sys.argv[2])
        return 2
    if set_mlcc is None:
        cases["MLCC"] = os.path.abspath(sys.argv[1])
    else:
        set_mlcc(os.path.abspath(sys.argv[1]))
    d = tempfile.mkdtemp(prefix=prefix)
    cache = None
    if private_cache:
        cache = tempfile.mkdtemp(prefix=prefix + "cache-")
        os.environ["MLCC_CACHE_DIR"] = cache
        os.environ.pop("MLCC_REMOTE_CACHE", None)
    cwd = os.getcwd()
    if chdir:
        os.chdir(d)
    try:
        fn(d)
    except Skip as e:
        print("SKIP: " + str(e))
        os.chdir(cwd)
        shutil.rmtree(d, ignore_errors=True)
        return 77
    except tuple(failures) as e:
        print("FAIL: " + str(e))
        print("(left " + d + " for inspection)")
        return 1
    finally:
        os.chdir(cwd)
        if cache:
            shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(d, ignore_errors=True)
    print("PASS")
    return 0
