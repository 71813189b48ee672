#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of the CMake rules (cmake/MLModel.cmake) through a consumer project.

usage: consumer_test.py --mlcc MLCC --source MLCC_SOURCE_DIR [--build MLCC_BUILD_DIR] CASE

CASE is one of:
  native-ninja, native-make   configure + build tests/cmake/consumer (TARGETS x86 aarch64
                              riscv) with that generator; ctest; check every variant; a
                              rebuild with no change runs nothing; touching the model or its
                              external data file reruns mlcc once per target and nothing
                              else; the fleet bundle (manifest + tarball) is byte-identical
                              when rebuilt from scratch
  toolchain-x86_64, toolchain-aarch64, toolchain-riscv64
                              the same consumer configured with toolchains/<t>-linux-gnu.cmake:
                              `tiny` is that target's variant, the app is built for it and
                              its test runs through ctest (qemu via CMAKE_CROSSCOMPILING_EMULATOR)
  install                     `cmake --install` of the mlcc build to a scratch prefix, then the
                              consumer with find_package(mlcc) via CMAKE_PREFIX_PATH, natively
                              and with the aarch64 toolchain file; and a bare-metal board app
                              with the installed riscv32 toolchain file under qemu-system
  errors                      wrong add_ml_model()/ml_model_bundle() calls fail at configure time
  bundle-identity             the fleet bundle from CMake for the host, with the aarch64
                              toolchain file, and from bazel/fleet_bundle.py (ml_model_fleet's
                              bundler) on the same variants: libraries, headers, manifest and
                              tarball identical
  example                     examples/detector built once: the detector for x86, aarch64 and
                              riscv, each app run (natively / under qemu), same top boxes
  example-kws                 examples/kws built once: x86 aarch64 riscv cortex-m4 rv32, each
                              app run by ctest (natively / qemu-user / qemu-system), scores
                              against the reference and each other (skipped, exit 77,
                              without ../shared)
  mcu-fleet                   tests/cmake/mcu_fleet: x86 aarch64 riscv cortex-m4 rv32 in one
                              build, the board apps under qemu-system through ctest, the
                              bundle's RAM/flash per variant = mlcc -v = the header

Every case works in a fresh temporary directory (a copy of the consumer project plus the
generated tiny.onnx), so the source tree is never touched. Exit 0 = pass, 1 = fail.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from mlcc_e2e import (Failure, Skip, check, cmake_build_cmd, cmake_configure,  # noqa: E402
                      sha256, sh)

ARGS = None

# ELF e_machine values
MACHINE = {"x86": 62, "aarch64": 183, "riscv": 243}
TRIPLE = {"x86": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu", "riscv": "riscv64-linux-gnu"}


def elf_machine(path):
    """e_machine of an ELF file, or of the first ELF member of an ar archive."""
    data = open(path, "rb").read()
    if data.startswith(b"!<arch>\n"):
        pos = 8
        while pos + 60 <= len(data):
            size = int(data[pos + 48:pos + 58].decode().strip())
            body = data[pos + 60:pos + 60 + size]
            if body.startswith(b"\x7fELF"):
                return int.from_bytes(body[18:20], "little")
            pos += 60 + size + (size & 1)
        return None
    if data.startswith(b"\x7fELF"):
        return int.from_bytes(data[18:20], "little")
    return None


# --- the consumer project --------------------------------------------------------------

def write_tiny_model(d):
    """tiny.onnx: y = Relu(x @ W + b), x [2,4]; W [4,3] in the external file
    tiny_weights.bin, W[i][j] = (i - 2j)/4 + 1/8; b[j] = 1/2 - 3j/4 (see consumer/main.c)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    import onnx_case  # tests/e2e, on the path beside mlcc_e2e
    w = np.array([[(i - 2 * j) * 0.25 + 0.125 for j in range(3)] for i in range(4)], np.float32)
    b = np.array([0.5 - 0.75 * j for j in range(3)], np.float32)
    wt = onnx_case.external_tensor(d, "W", w, "tiny_weights.bin")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["m"]),
         helper.make_node("Add", ["m", "b"], ["a"]),
         helper.make_node("Relu", ["a"], ["y"])],
        "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [wt, numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    with open(os.path.join(d, "tiny.onnx"), "wb") as f:
        f.write(model.SerializeToString())


def consumer_copy(work):
    src = os.path.join(work, "src")
    shutil.copytree(os.path.join(HERE, "consumer"), src)
    write_tiny_model(src)
    return src


def mlcc_wrapper(work):
    """A shell script that logs each mlcc invocation, then runs the real mlcc;
    compile runs (those writing a depfile) get -v, their stderr going to
    mlcc-v.log.<pid> (where "mlcc: N kernels compiled" tells what each run compiled;
    one file per run, since parallel runs appending to one file can interleave lines)."""
    log = os.path.join(work, "mlcc.log")
    vlog = os.path.join(work, "mlcc-v.log")
    wrapper = os.path.join(work, "mlcc-logged")
    with open(wrapper, "w") as f:
        f.write('#!/bin/sh\nprintf "%%s\\n" "$*" >> "%s"\n'
                'case " $* " in *" -MD "*) exec "%s" -v "$@" 2>"%s.$$";; esac\n'
                'exec "%s" "$@"\n' % (log, ARGS.mlcc, vlog, ARGS.mlcc))
    os.chmod(wrapper, 0o755)
    open(log, "w").close()
    return wrapper, log


def kernels_compiled(work):
    """The N of every "mlcc: N kernels compiled" line in the mlcc-v.log.<pid> files, then removes them."""
    counts = []
    for name in sorted(os.listdir(work)):
        if name.startswith("mlcc-v.log."):
            path = os.path.join(work, name)
            text = open(path).read()
            os.unlink(path)
            counts += [int(n) for n in re.findall(r"^mlcc: (\d+) kernels? compiled", text, re.M)]
    return counts


def compiles_since(log, start):
    """mlcc compile invocations (those writing a depfile) logged after line |start|,
    as a sorted list of their --target values."""
    lines = open(log).read().splitlines()[start:]
    targets = []
    for l in lines:
        if " -MD " in l:
            m = re.search(r"--target=(\S+)", l)
            targets.append(m.group(1) if m else "?")
    return sorted(targets), start + len(lines)


def touch(path):
    """Like touch(1): the current time (after a pause, so it is newer than the outputs)."""
    time.sleep(0.2)
    os.utime(path, None)


def check_variants(bld, current):
    """Each variant's library holds code for its CPU; headers exist and agree."""
    headers = []
    for a in ("x86", "aarch64", "riscv"):
        vdir = os.path.join(bld, "mlcc", "tiny", a)
        lib = os.path.join(vdir, "libtiny.a")   # every variant alike, archived by mlcc
        check(os.path.exists(lib), "%s: %s exists" % (a, os.path.relpath(lib, bld)))
        check(not os.path.exists(os.path.join(vdir, "tiny.o")), "%s: no separate object" % a)
        check(elf_machine(lib) == MACHINE[a], "%s: library is %s code" % (a, a))
        desc = json.load(open(os.path.join(vdir, "tiny.json")))
        check(desc["target"]["alias"] == a and desc["target"]["library_sha256"] == sha256(lib)
              and desc["target"]["header_sha256"] == sha256(os.path.join(vdir, "tiny.h")),
              "%s: the description names the alias and the library's and header's sha256" % a)
        dep = open(os.path.join(vdir, "tiny.d")).read()
        print("  depfile %s: %s" % (a, dep.strip()))
        first = dep.split(":", 1)[0]
        want = os.path.join(vdir, "tiny.stamp")
        check(os.path.relpath(first, bld) == os.path.relpath(want, bld),
              "%s: depfile target is the rule's stamp" % a)
        check("tiny.onnx" in dep and "tiny_weights.bin" in dep,
              "%s: depfile lists the model and its external data" % a)
        headers.append(open(os.path.join(vdir, "tiny.h")).read())
    check(all(h == headers[0] for h in headers), "the header is the same for every target")


def check_bundle(bld, src, current, name="fleet"):
    """The bundle's manifest (docs/bundle.md, format 2) against the build, the
    model and mlcc; returns the tarball's sha256."""
    tarball = os.path.join(bld, name + ".tar.gz")
    manifest = json.load(open(os.path.join(bld, name, "manifest.json")))
    print(json.dumps(manifest, indent=1)[:3000])
    _, ver = sh([ARGS.mlcc, "--version"])
    check(manifest["format"] == 2 and manifest["bundle"] == name, "manifest: format 2, bundle name")
    check(manifest["mlcc"]["version"] == re.search(r"mlcc version (\S+)", ver).group(1),
          "manifest: mlcc version")
    check(manifest["mlcc"]["llvm"] == re.search(r"LLVM:? (\S+)", ver).group(1),
          "manifest: LLVM version")
    for field in ("commit", "codegen"):
        m = re.search(r"^%s: (\S+)" % field, ver, re.M)
        check(manifest["mlcc"][field] == (m.group(1) if m else "unknown"), "manifest: " + field)
    (m,) = manifest["models"]
    model = os.path.join(src, "tiny.onnx")
    check(m["name"] == "tiny" and m["file"] == "tiny.onnx", "manifest: model name")
    check(m["sha256"] == sha256(model) and m["size"] == os.path.getsize(model),
          "manifest: model sha256 and size")
    want_cpu = {"x86": "x86-64-v2", "aarch64": "cortex-a53", "riscv": "generic-rv64"}
    # FEATURES riscv=-c: mlcc merges -mattr into the target's defaults (an
    # entry for a feature already there replaces it).
    want_feat = {"aarch64": "+neon", "riscv": "+m,+a,+f,+d,-c"}
    with tarfile.open(tarball) as tf:
        members = tf.getmembers()
        names = [t.name for t in members]
        check(names == sorted(names), "tarball: names sorted")
        check(all(t.mtime == 0 and t.uid == 0 and t.gid == 0 for t in members),
              "tarball: mtime 0, owner 0")
        for t in m["targets"]:
            a = t["alias"]
            check(t["triple"] == TRIPLE[a], "manifest %s: triple %s" % (a, t["triple"]))
            check(t["cpu"] == want_cpu[a], "manifest %s: cpu %s" % (a, t["cpu"]))
            if a in want_feat:
                check(t["features"] == want_feat[a], "manifest %s: features" % a)
            check(t["opt_level"] == 3 and t["options"] == [] and t["entry_abi"] == 3,
                  "manifest %s: -O3, no other code options, entry ABI 3" % a)
            vdir = os.path.join(bld, "mlcc", "tiny", a)
            hdr = open(os.path.join(vdir, "tiny.h")).read()
            for key, macro in (("workspace_size", "WORKSPACE_SIZE"),
                               ("workspace_align", "WORKSPACE_ALIGN"),
                               ("stack_size", "STACK_SIZE")):
                v = int(re.search(r"#define TINY_%s (\d+)" % macro, hdr).group(1))
                check(t[key] == v, "manifest %s: %s %d" % (a, key, v))
            check(t["inputs"] == [{"name": "x", "dtype": "float32", "shape": [2, 4], "bounded": []}]
                  and t["outputs"] == [{"name": "y", "dtype": "float32", "shape": [2, 3],
                                        "bounded": []}],
                  "manifest %s: input/output names, dtypes, shapes" % a)
            lib_src = os.path.join(vdir, "libtiny.a")
            check(t["library"] == "%s/lib/libtiny.a" % TRIPLE[a], "manifest %s: layout" % a)
            data = tf.extractfile(name + "/" + t["library"]).read()
            check(hashlib.sha256(data).hexdigest() == t["library_sha256"] == sha256(lib_src),
                  "manifest %s: library sha256 matches the tarball and the build" % a)
            hdata = tf.extractfile(name + "/" + t["header"]).read()
            check(hashlib.sha256(hdata).hexdigest() == t["header_sha256"],
                  "manifest %s: header sha256" % a)
        check([t["alias"] for t in m["targets"]] == ["aarch64", "riscv", "x86"],
              "manifest: three targets, sorted by alias")
    return sha256(tarball)


def bundle_files(bld, name="fleet"):
    """{path inside the bundle: bytes} of every file of the laid-out bundle."""
    root = os.path.join(bld, name)
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            out[os.path.relpath(p, root)] = open(p, "rb").read()
    return out


# --- cases -------------------------------------------------------------------------

def case_native(work, gen):
    src = consumer_copy(work)
    bld = os.path.join(work, "build")
    wrapper, log = mlcc_wrapper(work)
    cmake_configure(src, bld, gen, ["-DMLCC_SOURCE_DIR=" + ARGS.source,
                              "-DMLCC_EXECUTABLE=" + wrapper])
    sh(cmake_build_cmd(bld))
    got, n = compiles_since(log, 0)
    check(got == ["aarch64", "riscv", "x86"], "first build: mlcc once per target (%s)" % got)
    _, out = sh(["ctest", "--test-dir", bld, "--output-on-failure"])
    check("100% tests passed" in out, "ctest: the app's values match the reference")
    check_variants(bld, "x86")

    def check_noop(what):
        nonlocal n
        rc, out = sh(cmake_build_cmd(bld))
        got, n = compiles_since(log, n)
        check(got == [], "%s: rebuild runs no mlcc" % what)
        check("mlcc tiny.onnx" not in out, "%s: no model rule in the build output" % what)
        if gen == "Ninja":
            _, out = sh(["ninja", "-C", bld, "-n", "-d", "explain"])
            print(out.strip())
            check("no work to do" in out and "explain" not in out,
                  "%s: ninja -n -d explain: nothing to do" % what)

    check_noop("no change")
    app = os.path.join(bld, "app")
    app_obj = os.path.join(bld, "CMakeFiles", "app.dir", "main.c.o")
    hdr = os.path.join(bld, "mlcc", "tiny", "x86", "tiny.h")

    def stamps():
        return {p: os.stat(p).st_mtime_ns for p in (app, app_obj, hdr)}

    for f in ("tiny.onnx", "tiny_weights.bin"):
        touch(os.path.join(src, f))
        before = stamps()
        kernels_compiled(work)
        _, out = sh(cmake_build_cmd(bld))
        got, n = compiles_since(log, n)
        check(got == ["aarch64", "riscv", "x86"], "touch %s: mlcc reruns once per target (%s)" % (f, got))
        k = kernels_compiled(work)
        check(k == [0, 0, 0], "touch %s: every variant from the cache, 0 kernels compiled (%s)"
              % (f, k))
        after = stamps()
        check(after[hdr] == before[hdr], "touch %s: the header keeps its mtime" % f)
        check(after[app_obj] == before[app_obj], "touch %s: main.c is not recompiled" % f)
        check(after[app] == before[app], "touch %s: the app is not relinked (same library)" % f)
        check_noop("after touching " + f)

    # Weights-only changes (external data; an initializer inside the model):
    # every variant reruns from the cache, the app relinks, no C file recompiles.
    import onnx
    from onnx import numpy_helper
    saved = {f: open(os.path.join(src, f), "rb").read() for f in ("tiny.onnx", "tiny_weights.bin")}
    for what in ("external data", "initializer"):
        time.sleep(0.2)
        if what == "external data":
            w = bytearray(saved["tiny_weights.bin"])
            w[0:4] = bytes([0, 0, 0x80, 0x3f])   # W[0][0] = 1.0
            open(os.path.join(src, "tiny_weights.bin"), "wb").write(bytes(w))
        else:
            m = onnx.load(os.path.join(src, "tiny.onnx"), load_external_data=False)
            for t in m.graph.initializer:
                if t.name == "b":
                    t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t) + 1, "b"))
            open(os.path.join(src, "tiny.onnx"), "wb").write(m.SerializeToString())
        before = stamps()
        kernels_compiled(work)
        sh(cmake_build_cmd(bld))
        got, n = compiles_since(log, n)
        check(got == ["aarch64", "riscv", "x86"], "new %s: mlcc reruns once per target" % what)
        k = kernels_compiled(work)
        check(k == [0, 0, 0], "new %s: 0 kernels compiled for every variant (%s)" % (what, k))
        after = stamps()
        check(after[hdr] == before[hdr], "new %s: the header keeps its mtime" % what)
        check(after[app_obj] == before[app_obj], "new %s: main.c is not recompiled" % what)
        check(after[app] > before[app], "new %s: the app is relinked" % what)
        check_noop("after new " + what)
    for f, data in saved.items():
        open(os.path.join(src, f), "wb").write(data)
    sh(cmake_build_cmd(bld))
    got, n = compiles_since(log, n)
    _, out = sh(["ctest", "--test-dir", bld, "--output-on-failure"])
    check("100% tests passed" in out, "weights restored: the app's values match again")

    # Fleet bundle: byte-identical when rebuilt from scratch.
    sh(cmake_build_cmd(bld, "fleet"))
    first = check_bundle(bld, src, "x86")
    got, n = compiles_since(log, n)
    check(got == [], "the bundle reuses the built libraries")
    sh(cmake_build_cmd(bld, "fleet"))
    got, n = compiles_since(log, n)
    check(got == [], "bundle up to date: nothing reruns")
    shutil.rmtree(bld)
    time.sleep(1.1)   # a different wall clock for every file of the rebuild
    cmake_configure(src, bld, gen, ["-DMLCC_SOURCE_DIR=" + ARGS.source,
                              "-DMLCC_EXECUTABLE=" + wrapper])
    sh(cmake_build_cmd(bld, "fleet"))
    second = sha256(os.path.join(bld, "fleet.tar.gz"))
    print("  bundle sha256: %s / %s" % (first, second))
    check(first == second, "fleet.tar.gz is byte-identical after a rebuild from scratch")


def case_toolchain(work, arch):
    alias = {"x86_64": "x86", "aarch64": "aarch64", "riscv64": "riscv"}[arch]
    src = consumer_copy(work)
    bld = os.path.join(work, "build")
    tc = os.path.join(ARGS.source, "toolchains", arch + "-linux-gnu.cmake")
    cmake_configure(src, bld, "Ninja", ["-DMLCC_SOURCE_DIR=" + ARGS.source,
                                  "-DMLCC_EXECUTABLE=" + ARGS.mlcc,
                                  "-DCMAKE_TOOLCHAIN_FILE=" + tc])
    sh(cmake_build_cmd(bld))
    check(elf_machine(os.path.join(bld, "app")) == MACHINE[alias], "the app is %s code" % arch)
    check(elf_machine(os.path.join(bld, "mlcc", "tiny", alias, "libtiny.a")) == MACHINE[alias],
          "`tiny` is the %s variant" % alias)
    check_variants(bld, alias)
    _, out = sh(["ctest", "--test-dir", bld, "--output-on-failure", "-V"])
    print(out[-2500:])
    if alias != "x86":
        check("qemu-%s" % arch in out, "ctest runs the app under qemu-%s" % arch)
    check("tiny: ok" in out and "100% tests passed" in out,
          "ctest: the %s app's values match the reference" % arch)


def case_bundle_identity(work):
    """The same fleet bundle from CMake configured for the host and with the
    aarch64 toolchain file: every file (libraries, headers, manifest) and the
    tarball byte-identical. The second build shares the first's kernel cache
    and compiles no kernel."""
    src = consumer_copy(work)
    env = {"MLCC_CACHE_DIR": os.path.join(work, "cache")}
    wrapper, log = mlcc_wrapper(work)
    results = {}
    for config, extra in (("host", []),
                          ("aarch64-toolchain", ["-DCMAKE_TOOLCHAIN_FILE=" + os.path.join(
                              ARGS.source, "toolchains", "aarch64-linux-gnu.cmake")])):
        bld = os.path.join(work, "build-" + config)
        cmake_configure(src, bld, "Ninja", ["-DMLCC_SOURCE_DIR=" + ARGS.source,
                                            "-DMLCC_EXECUTABLE=" + wrapper] + extra, env=env)
        kernels_compiled(work)
        sh(cmake_build_cmd(bld, "fleet"), env=env)
        k = kernels_compiled(work)
        print("  %s: kernels compiled per variant %s" % (config, k))
        if config != "host":
            check(k == [0, 0, 0], "%s: every variant from the shared cache (%s)" % (config, k))
        check_bundle(bld, src, "x86" if config == "host" else "aarch64")
        results[config] = (bundle_files(bld), sha256(os.path.join(bld, "fleet.tar.gz")))
    # Bazel's bundler (ml_model_fleet's action) on the host build's variants.
    py = os.path.join(work, "bazel-bundler")
    os.mkdir(py)
    cmd = [sys.executable, os.path.join(ARGS.source, "bazel", "fleet_bundle.py"),
           "--mlcc", ARGS.mlcc, "--out-dir", os.path.join(py, "fleet"),
           "--tarball", os.path.join(py, "fleet.tar.gz"), "--symbol", "tiny",
           "--model", os.path.join(src, "tiny.onnx")]
    for a in ("riscv", "x86", "aarch64"):   # any order: the bundler sorts by alias
        v = os.path.join(work, "build-host", "mlcc", "tiny", a)
        cmd += ["--member", ",".join([a] + [os.path.join(v, f) for f in
                                             ("libtiny.a", "tiny.h", "tiny.json")])]
    sh(cmd)
    results["bazel-bundler"] = (bundle_files(py), sha256(os.path.join(py, "fleet.tar.gz")))
    fa, ta = results["host"]
    for config in ("aarch64-toolchain", "bazel-bundler"):
        fb, tb = results[config]
        check(sorted(fa) == sorted(fb), "%s: the same files: %s" % (config, ", ".join(sorted(fa))))
        for p in sorted(fa):
            check(fa[p] == fb[p], "%s: %s byte-identical to the host build's" % (config, p))
        print("  tarball sha256: host %s / %s %s" % (ta, config, tb))
        check(ta == tb, "%s: fleet.tar.gz byte-identical to the host build's" % config)


MCU_FLEET = ("aarch64", "cortex-m4", "riscv", "rv32", "x86")
MCU_TRIPLE = dict(TRIPLE, **{"cortex-m4": "thumbv7em-none-eabihf", "rv32": "riscv32-unknown-elf"})
MCU_MACHINE = dict(MACHINE, **{"cortex-m4": 40, "rv32": 243})


def case_mcu_fleet(work):
    """x86 + aarch64 + riscv + cortex-m4 + rv32 in one host build (tests/cmake/mcu_fleet):
    every variant for its machine, the x86 app natively and the two board apps under
    qemu-system through ctest, and the bundle's RAM/flash figures per variant against
    `mlcc -v` and the header."""
    src = os.path.join(work, "src")
    shutil.copytree(os.path.join(HERE, "mcu_fleet"), src)
    shutil.copy(os.path.join(HERE, "consumer", "main.c"), src)
    write_tiny_model(src)
    bld = os.path.join(work, "build")
    wrapper, log = mlcc_wrapper(work)
    cmake_configure(src, bld, "Ninja", ["-DMLCC_SOURCE_DIR=" + ARGS.source,
                                  "-DMLCC_EXECUTABLE=" + wrapper])
    sh(cmake_build_cmd(bld))
    got, n = compiles_since(log, 0)
    want = sorted(["aarch64", "riscv", "rv32", "thumbv7em-none-eabihf", "x86"])
    check(got == want, "one build: mlcc once per target (%s)" % got)
    _, out = sh(["ctest", "--test-dir", bld, "--output-on-failure", "-V"])
    print(out[-3000:])
    check("100% tests passed" in out and "qemu-system-arm" in out and
          "qemu-system-riscv32" in out,
          "ctest: x86 natively, cortex-m4 and rv32 under qemu-system, values match")
    for a in MCU_FLEET:
        lib = os.path.join(bld, "mlcc", "tiny", a, "libtiny.a")
        check(elf_machine(lib) == MCU_MACHINE[a], "%s: library is %s code" % (a, a))
    for a in ("cortex-m4", "rv32"):
        check(elf_machine(os.path.join(bld, "app_%s.elf" % a)) == MCU_MACHINE[a],
              "%s: the board app is %s code" % (a, a))
    _, ninja = sh(["ninja", "-C", bld, "-t", "commands", "app"])
    check(" -lm" in ninja, "the x86 app links libm")
    for a in ("cortex-m4", "rv32"):
        _, cmds = sh(["ninja", "-C", bld, "-t", "commands", "app_" + a])
        link = [l for l in cmds.splitlines() if "app_%s.elf" % a in l and " -o " in l][-1]
        check(" -lm" not in link and "-T" in link and "semihost.c" in link,
              "%s: the board link has the linker script and start-up, no -lm" % a)
    sh(cmake_build_cmd(bld, "fleet"))
    manifest = json.load(open(os.path.join(bld, "fleet", "manifest.json")))
    check(manifest["format"] == 2, "manifest: format 2")
    (m,) = manifest["models"]
    check([t["alias"] for t in m["targets"]] == list(MCU_FLEET),
          "manifest: five targets sorted by alias")
    scratch = os.path.join(work, "v")
    for t in m["targets"]:
        a = t["alias"]
        check(t["triple"] == MCU_TRIPLE[a], "manifest %s: triple %s" % (a, t["triple"]))
        hdr = open(os.path.join(bld, "mlcc", "tiny", a, "tiny.h")).read()
        macro = lambda k: int(re.search(r"#define TINY_%s (\d+)" % k, hdr).group(1))
        # The same variant once more, with -v: its RAM and flash line.
        p = subprocess.run([ARGS.mlcc, os.path.join(src, "tiny.onnx"), "--name=tiny",
                            "--target=" + a, "-o", os.path.join(scratch, a, "libtiny.a"), "-v"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        err = p.stderr.decode()
        v = re.search(r"^mlcc: RAM (\d+) bytes \(workspace (\d+), stack (\d+), static (\d+)\); "
                      r"flash (\d+) bytes \(code (\d+), weights (\d+),", err, re.M)
        check(p.returncode == 0 and v is not None, "%s: mlcc -v prints RAM and flash" % a)
        ram, ws, stack, static, flash, code, weights = map(int, v.groups())
        check(t["workspace_size"] == ws == macro("WORKSPACE_SIZE")
              and t["stack_size"] == stack == macro("STACK_SIZE")
              and t["weights_size"] == weights == macro("WEIGHTS_SIZE"),
              "manifest %s: workspace %d, stack %d, weights %d = -v = the header"
              % (a, ws, stack, weights))
        check(t["ram_size"] == ram == ws + stack + static and t["flash_size"] == flash
              and t["code_size"] == code > 0 and flash >= code + weights,
              "manifest %s: RAM %d (workspace + stack + static), flash %d (code %d + weights "
              "%d + ...) = -v" % (a, ram, flash, code, weights))
        if a in ("cortex-m4", "rv32"):
            check(stack <= 4096, "manifest %s: the microcontroller's own stack bound %d" % (a, stack))


def case_install(work):
    if not ARGS.build:
        raise Failure("--build (the mlcc build folder) is required for the install case")
    prefix = os.path.join(work, "prefix with space")
    sh(["cmake", "--install", ARGS.build, "--prefix", prefix])
    for f in ("bin/mlcc", "lib/cmake/mlcc/mlccConfig.cmake",
              "lib/cmake/mlcc/mlccConfigVersion.cmake", "lib/cmake/mlcc/MLModel.cmake",
              "lib/cmake/mlcc/MLModelBundle.cmake",
              "share/mlcc/toolchains/aarch64-linux-gnu.cmake",
              "share/mlcc/toolchains/arm-none-eabi.cmake",
              "share/mlcc/toolchains/riscv32-unknown-elf.cmake", "share/mlcc/mcu/semihost.h",
              "share/mlcc/mcu/mps2-an386.ld"):
        check(os.path.exists(os.path.join(prefix, f)), "installed " + f)
    src = consumer_copy(work)
    for name, extra, alias in (
            ("native", [], "x86"),
            ("aarch64", ["-DCMAKE_TOOLCHAIN_FILE=" + os.path.join(
                prefix, "share/mlcc/toolchains/aarch64-linux-gnu.cmake")], "aarch64")):
        bld = os.path.join(work, "build-" + name)
        cmake_configure(src, bld, "Ninja", ["-DCMAKE_PREFIX_PATH=" + prefix] + extra)
        cache = open(os.path.join(bld, "CMakeCache.txt")).read()
        check("mlcc_DIR:PATH=%s/lib/cmake/mlcc" % prefix in cache,
              "%s: find_package(mlcc) found the installed package" % name)
        check("MLCC_EXECUTABLE:" not in cache or "MLCC_EXECUTABLE:FILEPATH=\n" in cache
              or "MLCC_EXECUTABLE-NOTFOUND" in cache,
              "%s: no find_program fallback was needed" % name)
        _, out = sh(["ninja", "-C", bld, "-t", "commands"])
        mlcc_cmds = [l for l in out.splitlines() if "tiny.onnx" in l and "-MD" in l]
        check(len(mlcc_cmds) == 3 and all(("%s/bin/mlcc" % prefix) in l for l in mlcc_cmds),
              "%s: the three model commands run the installed mlcc" % name)
        sh(cmake_build_cmd(bld))
        _, out = sh(["ctest", "--test-dir", bld, "--output-on-failure"])
        check("100% tests passed" in out, "%s: ctest passes" % name)
        check(elf_machine(os.path.join(bld, "app")) == MACHINE[alias], "%s: app is %s code"
              % (name, alias))
        sh(cmake_build_cmd(bld, "fleet"))
        check_bundle(bld, src, alias)
    # A bare-metal consumer of the installed package: the installed rv32 toolchain file,
    # find_package(mlcc) (a 32-bit configuration), the board files from share/mlcc/mcu,
    # and the board app run by ctest under qemu-system-riscv32.
    msrc = os.path.join(work, "mcu-src")
    os.mkdir(msrc)
    shutil.copy(os.path.join(HERE, "mcu_fleet", "main_mcu.c"), msrc)
    write_tiny_model(msrc)
    with open(os.path.join(msrc, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.20)\nproject(inst C ASM)\n"
                "find_package(mlcc 0.1 REQUIRED)\n"
                "add_ml_model(tiny tiny.onnx TARGETS x86 ${MLCC_TARGET_ALIAS})\n"
                "ml_model_board_executable(app TARGET ${MLCC_TARGET_ALIAS} SOURCES main_mcu.c "
                "MODELS tiny)\nenable_testing()\nadd_test(NAME app COMMAND app)\n"
                "set_tests_properties(app PROPERTIES PASS_REGULAR_EXPRESSION \"tiny: ok\")\n")
    mbld = os.path.join(work, "build-rv32")
    cmake_configure(msrc, mbld, "Ninja", ["-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_TOOLCHAIN_FILE=" +
                    os.path.join(prefix, "share/mlcc/toolchains/riscv32-unknown-elf.cmake")])
    sh(cmake_build_cmd(mbld))
    _, out = sh(["ctest", "--test-dir", mbld, "--output-on-failure", "-V"])
    check("100% tests passed" in out and "qemu-system-riscv32" in out
          and os.path.join(prefix, "share/mlcc/mcu") in open(os.path.join(mbld, "build.ninja")).read(),
          "rv32 from the installed package: the board app passes under qemu-system-riscv32")


def case_example(work):
    bld = os.path.join(work, "build")
    cmake_configure(os.path.join(ARGS.source, "examples", "detector"), bld, "Ninja",
                    ["-DMLCC_EXECUTABLE=" + ARGS.mlcc])
    sh(cmake_build_cmd(bld))
    _, out = sh(["ctest", "--test-dir", bld, "--output-on-failure", "-V"])
    check("100% tests passed" in out, "ctest: the detector app passes on every target")
    boxes = {}
    for a in ("x86", "aarch64", "riscv"):
        exe = os.path.join(bld, "detector_app" if a == "x86" else "detector_app_" + a)
        check(elf_machine(exe) == MACHINE[a], "detector app for %s is %s code" % (a, a))
        runner = {"x86": [], "aarch64": ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"],
                  "riscv": ["qemu-riscv64", "-L", "/usr/riscv64-linux-gnu"]}[a]
        _, out = sh(runner + [exe, "1"])
        print(out)
        boxes[a] = [l for l in out.splitlines() if " box " in l]
        check(len(boxes[a]) == 5, "%s: five top boxes" % a)
    check(boxes["x86"] == boxes["aarch64"] == boxes["riscv"],
          "the same top boxes on x86, aarch64 and riscv")


def case_example_kws(work):
    """examples/kws (the README quick start's fleet with microcontrollers): x86, aarch64,
    riscv, cortex-m4 and rv32 in one build; ctest runs each app (natively, qemu-user,
    qemu-system), each compares its 12 scores with the reference, compare.py compares the
    five with the reference and with each other."""
    model_dir = os.path.join(ARGS.source, "..", "shared", "models", "tiny", "kws_dscnn")
    if not os.path.exists(os.path.join(model_dir, "model.onnx")):
        raise Skip("%s not found (the shared tiny models are not here)" % model_dir)
    bld = os.path.join(work, "build")
    cmake_configure(os.path.join(ARGS.source, "examples", "kws"), bld, "Ninja",
                    ["-DMLCC_EXECUTABLE=" + ARGS.mlcc, "-DKWS_MODEL_DIR=" + model_dir])
    sh(cmake_build_cmd(bld))
    _, out = sh(["ctest", "--test-dir", bld, "--output-on-failure", "-V"])
    print(out[-4000:])
    check("100% tests passed" in out and "out of 6" in out,
          "ctest: five apps match the reference, compare.py agrees")
    for a, exe, runner in (("x86", "kws_app", None),
                           ("aarch64", "kws_app_aarch64", "qemu-aarch64"),
                           ("riscv", "kws_app_riscv", "qemu-riscv64"),
                           ("cortex-m4", "kws_app_cortex_m4.elf", "qemu-system-arm"),
                           ("rv32", "kws_app_rv32.elf", "qemu-system-riscv32")):
        check(elf_machine(os.path.join(bld, exe)) == MCU_MACHINE[a], "%s app is %s code" % (a, a))
        check("top class" in out and ("kws: top class" in out) and
              (runner is None or runner in out), "%s app ran%s" % (a, " under " + runner
                                                                if runner else " natively"))
        check(re.search(r"kws: top class \d+ \(%s\)" % re.escape(a), out) is not None,
              "%s: the app printed its top class" % a)
    check("compare: the same scores on x86, aarch64, riscv, cortex-m4, rv32" in out,
          "compare.py: the five targets agree with the reference and each other")


def case_errors(work):
    """Wrong add_ml_model()/ml_model_bundle() calls fail at configure time with a message."""
    src = consumer_copy(work)
    bad = [
        ("add_ml_model(m tiny.onnx TARGETS sparc)", "unknown target 'sparc'"),
        ("add_ml_model(m tiny.onnx TARGETS x86 x86_64-linux-gnu)", "given twice"),
        ("add_ml_model(m tiny.onnx TARGETS x86 CPU riscv=generic-rv64)", "not in TARGETS"),
        ("add_ml_model(m tiny.onnx TARGETS x86 FEATURES +v)", "is not <target>=<value>"),
        ("add_ml_model(m tiny.onnx OPT_LEVEL 5)", "OPT_LEVEL must be 0, 1, 2 or 3"),
        ("add_ml_model(9m tiny.onnx)", "is not a C identifier"),
        ("add_ml_model(m missing.onnx)", "does not exist"),
        ("add_ml_model(m tiny.onnx BOGUS TARGETS x86)", "unexpected arguments: BOGUS"),
        ("add_ml_model(m tiny.onnx TARGETS x86)\nml_model_bundle(b MODELS m TARGETS aarch64)",
         "was not added with target aarch64"),
        ("ml_model_bundle(b MODELS nosuch)", "is not a model added with add_ml_model"),
        ("add_ml_model(m tiny.onnx TARGETS cortex-m4 thumbv7em-none-eabihf)", "given twice"),
        ("add_ml_model(m tiny.onnx TARGETS x86)\nml_model_board_executable(e TARGET x86 "
         "SOURCES a.c MODELS m)", "is not a microcontroller target"),
        ("add_ml_model(m tiny.onnx TARGETS x86)\nml_model_board_executable(e TARGET rv32 "
         "SOURCES a.c MODELS m)", "was not added with add_ml_model(... TARGETS rv32)"),
    ]
    for i, (call, msg) in enumerate(bad):
        d = os.path.join(work, "bad%d" % i)
        os.mkdir(d)
        shutil.copy(os.path.join(src, "tiny.onnx"), d)
        with open(os.path.join(d, "CMakeLists.txt"), "w") as f:
            f.write("cmake_minimum_required(VERSION 3.20)\nproject(bad LANGUAGES C)\n"
                    "include(%s/cmake/MLModel.cmake)\n%s\n" % (ARGS.source, call.replace("\\n", "\n")))
        rc, out = cmake_configure(d, os.path.join(d, "b"), "Ninja",
                                  ["-DMLCC_EXECUTABLE=" + ARGS.mlcc], ok=False)
        flat = " ".join(out.split())
        check(rc != 0 and msg in flat, "%s -> configure fails: %s" % (call, msg))


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("--source", required=True, help="the mlcc source tree")
    ap.add_argument("--build", help="the mlcc build tree (install case)")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("case")
    ARGS = ap.parse_args()
    ARGS.mlcc = os.path.abspath(ARGS.mlcc)
    ARGS.source = os.path.abspath(ARGS.source)
    cases = {
        "native-ninja": lambda w: case_native(w, "Ninja"),
        "native-make": lambda w: case_native(w, "Unix Makefiles"),
        "toolchain-x86_64": lambda w: case_toolchain(w, "x86_64"),
        "toolchain-aarch64": lambda w: case_toolchain(w, "aarch64"),
        "toolchain-riscv64": lambda w: case_toolchain(w, "riscv64"),
        "install": case_install,
        "bundle-identity": case_bundle_identity,
        "example": case_example,
        "errors": case_errors,
        "mcu-fleet": case_mcu_fleet,
        "example-kws": case_example_kws,
    }
    if ARGS.case not in cases:
        print("unknown case %s (known: %s)" % (ARGS.case, ", ".join(cases)))
        return 2
    work = tempfile.mkdtemp(prefix="mlcc-cmake-")
    # A kernel cache of this run's own: "0 kernels compiled" then means this run's cache.
    os.environ["MLCC_CACHE_DIR"] = os.path.join(work, "kernel-cache")
    ok = False
    try:
        cases[ARGS.case](work)
        ok = True
    except Skip as e:
        print("SKIP: " + str(e))
        shutil.rmtree(work, ignore_errors=True)
        return 77
    except Failure as e:
        print("FAIL: " + str(e))
    finally:
        if ok and not ARGS.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("(work folder kept: %s)" % work)
    if ok:
        print("PASS")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
