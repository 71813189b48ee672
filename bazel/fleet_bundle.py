#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Lays out an mlcc fleet bundle (ml_model_fleet's action; docs/bundle.md, format 2).

  OUT/<triple>/lib/lib<symbol>.a
  OUT/<triple>/include/<symbol>.h
  OUT/manifest.json
and a tarball of OUT. The same bytes as CMake's ml_model_bundle() (cmake/MLModelBundle.cmake)
for the same model, targets and bundle name: the manifest copies each variant's `mlcc
--describe` JSON line for line, and the tarball is GNU tar | gzip -n with the same flags.
Keep the two in step.

Usage: fleet_bundle.py --mlcc MLCC --out-dir DIR --tarball FILE.tar.gz --symbol S --model M.onnx
                       (--member ALIAS,LIB,HEADER,DESCRIPTION)...
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def mlcc_identity(mlcc):
    """{version, commit, codegen, llvm} from `mlcc --version`; "unknown" where a line is missing."""
    text = subprocess.run([mlcc, "--version"], check=True, capture_output=True, text=True).stdout
    out = {}
    for key, pattern in (("version", r"mlcc version ([^\n ]+)"),
                         ("commit", r"(?:^|\n)commit: ([^\n ]+)"),
                         ("codegen", r"(?:^|\n)codegen: ([^\n ]+)"),
                         ("llvm", r"(?:^|\n)LLVM:? ([0-9][^\n ]*)")):
        m = re.search(pattern, text)
        out[key] = m.group(1) if m else "unknown"
    return out


def json_str(s):
    # The CMake bundler escapes exactly \\, ", newline and tab; names hold no other control bytes.
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace(
        "\t", "\\t") + '"'


def target_body(text, path):
    """The lines of the description's "target" object, re-indented for the manifest."""
    begin = text.find('\n  "target": {\n')
    end = text.rfind("\n  }\n}")
    if begin < 0 or end < begin:
        sys.exit("fleet_bundle: %s is not an mlcc --describe file" % path)
    return text[begin + 15:end].replace("\n", "\n      ")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mlcc", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--tarball", required=True)
    p.add_argument("--symbol", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--member", action="append", required=True)
    a = p.parse_args()
    ident = mlcc_identity(a.mlcc)
    out = a.out_dir
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    bundle = os.path.basename(os.path.normpath(out))
    model_sha = sha256(a.model)

    bodies = []
    triples = set()
    for member in sorted(a.member, key=lambda m: m.split(",", 1)[0]):
        alias, lib, header, desc_path = member.split(",", 3)
        with open(desc_path, encoding="utf-8") as f:
            text = f.read()
        desc = json.loads(text)
        if desc.get("format") != 2:
            sys.exit("fleet_bundle: %s has format %r; this bundler writes format 2 "
                     "(docs/bundle.md)" % (desc_path, desc.get("format")))
        t = desc["target"]
        if desc["model"]["sha256"] != model_sha:
            sys.exit("fleet_bundle: %s describes another model than %s" % (desc_path, a.model))
        if t["alias"] != alias or t["triple"] in triples:
            sys.exit("fleet_bundle: %s: unexpected or repeated target %s" % (desc_path, alias))
        triples.add(t["triple"])
        for src, rel, want in ((lib, t["library"], t["library_sha256"]),
                               (header, t["header"], t["header_sha256"])):
            dst = os.path.join(out, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)
            os.chmod(dst, 0o644)
            if sha256(dst) != want:
                sys.exit("fleet_bundle: %s does not describe %s" % (desc_path, src))
        bodies.append("\n        {\n      " + target_body(text, desc_path) + "\n        }")

    j = "{\n  \"format\": 2,\n  \"bundle\": %s,\n  \"mlcc\": {\n" % json_str(bundle)
    keys = ("version", "commit", "codegen", "llvm")
    j += "".join("    \"%s\": %s%s\n" % (k, json_str(ident[k]), "" if k == "llvm" else ",")
                 for k in keys)
    j += "  },\n  \"models\": ["
    j += ("\n    {\n      \"name\": %s,\n      \"file\": %s,\n      \"sha256\": \"%s\",\n"
          "      \"size\": %d,\n      \"targets\": [" %
          (json_str(a.symbol), json_str(os.path.basename(a.model)), model_sha,
           os.path.getsize(a.model)))
    j += ",".join(bodies) + "\n      ]\n    }"
    j += "\n  ]\n}\n"
    json.loads(j)  # well-formed
    with open(os.path.join(out, "manifest.json"), "w", encoding="utf-8", newline="\n") as f:
        f.write(j)

    # The tarball exactly as cmake/MLModelBundle.cmake makes it.
    tmp = a.tarball + ".tmp"
    with open(tmp, "wb") as f:
        tar = subprocess.Popen(
            ["tar", "--sort=name", "--format=gnu", "--owner=0", "--group=0", "--numeric-owner",
             "--mtime=@0", "--mode=u=rwX,go=rX", "-C", os.path.dirname(os.path.abspath(out)),
             "-cf", "-", bundle], stdout=subprocess.PIPE)
        gz = subprocess.run(["gzip", "-9", "-n"], stdin=tar.stdout, stdout=f)
        tar.stdout.close()
        if tar.wait() != 0 or gz.returncode != 0:
            os.unlink(tmp)
            sys.exit("fleet_bundle: tar | gzip failed")
    os.replace(tmp, a.tarball)
    return 0


if __name__ == "__main__":
    sys.exit(main())
