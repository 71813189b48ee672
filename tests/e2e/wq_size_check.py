#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""wq_matmul.size: a 1024x1024 int4 weight (block_size 32, no zero point)
stays packed. Compiles MODEL (tests/e2e/make_wq_matmul_cases.py's
wq_i4_b32_1024) with mlcc's default pipeline and with the same pipeline
minus quant-fuse (the DequantizeLinear folded into a float32 constant, what
mlcc did before WQMatMul), and checks NAME_WEIGHTS_SIZE of both headers and
the size of the weights section (.rodata.mlcc_weights) of the packed
library's weights object: the codes are 512 KiB and the scales 32 x 1024
float32 (128 KiB), so the packed weights must lie within 640 KiB + 1 KiB of
alignment, and the float32 form holds the 4 MiB weight.

Usage: wq_size_check.py MLCC MODEL"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

UNFUSED = ("infer-shapes,remove-identity,fold-constants,fold-batchnorm,fold-constants,"
           "canonicalize,expand-attention,dce,quant-pack,pack-weights,fuse,plan-memory")


def weights_size(mlcc, model, work, tag, extra):
    lib = os.path.join(work, "lib%s.a" % tag)
    subprocess.run([mlcc, model, "-o", lib, "--name=" + tag, "--target=x86", "--no-cache"] +
                   extra, check=True)
    hdr = open(os.path.join(work, tag + ".h")).read()
    m = re.search(r"#define %s_WEIGHTS_SIZE (\d+)" % tag.upper(), hdr)
    return lib, int(m.group(1))


def section_size(lib, work):
    """Bytes of .rodata.mlcc_weights over the archive's members (llvm-readelf)."""
    readelf = shutil.which("llvm-readelf-16") or shutil.which("llvm-readelf") or \
        shutil.which("readelf")
    out = subprocess.run([readelf, "-S", "-W", lib], capture_output=True, text=True,
                         check=True).stdout
    total = 0
    for line in out.splitlines():
        if ".rodata.mlcc_weights" in line:
            f = line.split("]", 1)[1].split()
            total += int(f[4], 16)  # Name Type Address Off Size
    return total


def main():
    mlcc, model = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp(prefix="mlcc-wq-size-")
    try:
        lib, packed = weights_size(mlcc, model, work, "wq", [])
        sec = section_size(lib, work)
        _, flt = weights_size(mlcc, model, work, "wf", ["--passes=" + UNFUSED])
        want = 1024 * 1024 // 2 + 32 * 1024 * 4
        print("weights: int4 packed %d bytes (section %d), float32 %d bytes, ratio %.3f; "
              "expected packed %d" % (packed, sec, flt, packed / flt, want))
        ok = want <= packed <= want + 1024 and sec == packed and flt >= 1024 * 1024 * 4
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
