#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Lays out an mlcc fleet bundle (ml_model_fleet's action; see docs/bazel.md).

  OUT/<alias>/lib/lib<symbol>.a
  OUT/<alias>/include/<symbol>.h
  OUT/manifest.json      model name + sha256, mlcc + LLVM versions, and per target: triple,
                         CPU, features, workspace size/alignment, library + header sha256
and a tarball of the same tree. Both are byte-identical when rebuilt (sorted entries, fixed
mtimes/owners, gzip without a timestamp).

Usage: fleet_bundle.py --mlcc MLCC --out-dir DIR --tarball FILE.tar.gz --symbol S
                       (--model M.onnx --member ALIAS,LIB,HEADER,CPU,FEATURES)...
"""
import argparse
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def mlcc_facts(mlcc):
    """Returns (mlcc version, LLVM version, {alias: (triple, cpu, features)})."""
    version = subprocess.run([mlcc, "--version"], check=True, capture_output=True, text=True).stdout
    m = re.search(r"mlcc version (\S+)", version)
    l = re.search(r"^LLVM:? (\S+)", version, re.M)
    if not m or not l:
        sys.exit("fleet_bundle: cannot parse `mlcc --version`:\n" + version)
    targets = {}
    listing = subprocess.run([mlcc, "--print-targets"], check=True, capture_output=True,
                             text=True).stdout
    for line in listing.splitlines():
        f = line.split()
        if len(f) == 4:
            targets[f[0]] = (f[1], f[2], "" if f[3] == "-" else f[3])
    return m.group(1), l.group(1), targets


def header_define(path, symbol, what):
    with open(path, encoding="utf-8") as f:
        m = re.search(r"#define %s_%s (\d+)" % (re.escape(symbol.upper()), what), f.read())
    if not m:
        sys.exit("fleet_bundle: %s has no %s_%s" % (path, symbol.upper(), what))
    return int(m.group(1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mlcc", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--tarball", required=True)
    p.add_argument("--symbol", action="append", required=True)
    p.add_argument("--model", action="append", required=True)
    p.add_argument("--member", action="append", required=True)
    a = p.parse_args()
    if len(set(a.symbol)) != 1 or len(set(a.model)) != 1:
        sys.exit("fleet_bundle: every member must come from the same model and symbol")
    symbol, model = a.symbol[0], a.model[0]
    mlcc_version, llvm_version, defaults = mlcc_facts(a.mlcc)

    out = a.out_dir
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    targets = []
    for member in a.member:
        alias, lib, header, cpu, features = member.split(",", 4)
        if alias not in defaults:
            sys.exit("fleet_bundle: mlcc does not list target %s" % alias)
        triple, default_cpu, default_features = defaults[alias]
        lib_rel = "%s/lib/%s" % (alias, os.path.basename(lib))
        hdr_rel = "%s/include/%s" % (alias, os.path.basename(header))
        for src, rel in ((lib, lib_rel), (header, hdr_rel)):
            os.makedirs(os.path.join(out, os.path.dirname(rel)), exist_ok=True)
            shutil.copyfile(src, os.path.join(out, rel))
        targets.append({
            "target": alias,
            "triple": triple,
            "cpu": cpu or default_cpu,
            "features": features or default_features,
            "workspace_size": header_define(header, symbol, "WORKSPACE_SIZE"),
            "workspace_align": header_define(header, symbol, "WORKSPACE_ALIGN"),
            "library": lib_rel,
            "library_sha256": sha256(lib),
            "header": hdr_rel,
            "header_sha256": sha256(header),
        })
    manifest = {
        "format": 1,
        "model": {"name": symbol, "file": os.path.basename(model), "sha256": sha256(model)},
        "mlcc_version": mlcc_version,
        "llvm_version": llvm_version,
        "targets": sorted(targets, key=lambda t: t["target"]),
    }
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")

    # A reproducible tarball: sorted paths, mtime 0, root-owned, no gzip timestamp.
    prefix = os.path.basename(os.path.normpath(out))
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        paths = []
        for root, dirs, files in os.walk(out):
            dirs.sort()
            for name in dirs + files:
                paths.append(os.path.join(root, name))
        for path in sorted(paths):
            info = tar.gettarinfo(path, arcname=os.path.join(prefix, os.path.relpath(path, out)))
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mode = 0o755 if info.isdir() else 0o644
            if info.isfile():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    with open(a.tarball, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as gz:
            gz.write(raw.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
