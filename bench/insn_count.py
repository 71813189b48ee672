#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Executed-instruction counts of one layer on aarch64 / riscv64 under
qemu-user (issue 16: no Arm or RISC-V hardware here, so counts, NOT timings).

Each LAYER is built as a one-node model, float32 (Conv) and int8
(QLinearConv: uint8 x at zero point 120, int8 per-channel weights, int32
bias, uint8 y), compiled by mlcc for the target, linked into a harness that
runs it N times, and run under qemu with bench/qemu_insn_count.c (a TCG
plugin, built here with the host gcc). The count of 2 runs minus that of 1
run is one run of the layer. Prints one line per form: millions of
instructions and int8 / float32.
Usage: bench/insn_count.py --mlcc build/mlcc --target aarch64 [--mattr +neon,+dotprod]
       [--qemu-cpu rv64,v=true,vlen=128,vext_spec=v1.0] [--layer r18c1 mbv2c1]
       bench/insn_count.py --mlcc build/mlcc --target riscv --model A.onnx B.onnx ...
With --model, each whole model (one input, one output: e.g. the llama23 and
llama17 blocks of bench/make_llama_block.py) is counted as it is, and each
line after the first gives its count relative to the first model's.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
# name: (out channels, in channels, kernel, stride, pad, input size)
LAYERS = {"r18c1": (64, 3, 7, 2, 3, 224), "mbv2c1": (32, 3, 3, 2, 1, 224)}
TOOLS = {"aarch64": ("aarch64-linux-gnu-gcc", ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]),
         "riscv": ("riscv64-linux-gnu-gcc", ["qemu-riscv64", "-L", "/usr/riscv64-linux-gnu"])}
HARNESS = r"""
#include <stdlib.h>
#include <string.h>
#include "m.h"
int main(int argc, char** argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 1;
  void* x = calloc(1, %(xbytes)d);
  void* y = calloc(1, %(ybytes)d);
  void* ws = aligned_alloc(64, M_WORKSPACE_SIZE + 64);
  memset(x, 7, %(xbytes)d);
  for (int i = 0; i < reps; ++i) m_run(x, y, ws);
  return ((unsigned char*)y)[5] == 255 && reps < 0;
}
"""


def save(path, node, x, y, inits):
    g = helper.make_graph([node], "m", [x], [y],
                          [numpy_helper.from_array(v, k) for k, v in inits])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def layer_models(d, name, rng):
    m, c, k, s, p, h = LAYERS[name]
    oh = (h + 2 * p - k) // s + 1
    attrs = dict(kernel_shape=[k, k], strides=[s, s], pads=[p] * 4)
    w = rng.normal(0, 0.1, (m, c, k, k)).astype(np.float32)
    b = rng.normal(0, 0.1, m).astype(np.float32)
    f32 = os.path.join(d, name + "_f32.onnx")
    save(f32, helper.make_node("Conv", ["x", "w", "b"], ["y"], **attrs),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, h]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, m, oh, oh]),
         [("w", w), ("b", b)])
    i8 = os.path.join(d, name + "_i8.onnx")
    inits = [("xs", np.array(0.02, np.float32)), ("xz", np.array(120, np.uint8)),
             ("w", rng.integers(-127, 128, (m, c, k, k)).astype(np.int8)),
             ("ws", rng.uniform(0.001, 0.01, m).astype(np.float32)),
             ("wz", np.zeros(m, np.int8)), ("ys", np.array(0.05, np.float32)),
             ("yz", np.array(0, np.uint8)), ("b", rng.integers(-1000, 1000, m).astype(np.int32))]
    save(i8, helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                              ["y"], **attrs),
         helper.make_tensor_value_info("x", TensorProto.UINT8, [1, c, h, h]),
         helper.make_tensor_value_info("y", TensorProto.UINT8, [1, m, oh, oh]), inits)
    return f32, i8, 4 * c * h * h, 4 * m * oh * oh


def count(args, d, model, xbytes, ybytes, plugin):
    cc, qemu = TOOLS[args.target]
    b = tempfile.mkdtemp(dir=d)
    cmd = [args.mlcc, "--no-cache", "--name=m", "-o", os.path.join(b, "libm.a"), model,
           "--target=" + args.target]
    if args.mattr:
        cmd.append("-mattr=" + args.mattr)
    subprocess.run(cmd, check=True, capture_output=True)
    with open(os.path.join(b, "h.c"), "w") as f:
        f.write(HARNESS % dict(xbytes=xbytes, ybytes=ybytes))
    exe = os.path.join(b, "h")
    subprocess.run([cc, "-O2", "-I" + b, "-o", exe, os.path.join(b, "h.c"),
                    os.path.join(b, "libm.a"), "-lm"], check=True)
    if args.qemu_cpu:
        qemu = qemu[:1] + ["-cpu", args.qemu_cpu] + qemu[1:]
    n = []
    for reps in (1, 2):
        r = subprocess.run(qemu + ["-plugin", plugin, "-d", "plugin", exe, str(reps)],
                           capture_output=True, text=True, check=True)
        line = [l for l in (r.stdout + r.stderr).splitlines() if l.startswith("insns ")]
        if not line:
            sys.exit("insn_count: the plugin printed no count (qemu without -plugin?)")
        n.append(int(line[-1].split()[1]))
    return n[1] - n[0]


def model_bytes(path):
    """(input bytes, output bytes) of a model with one graph input and one output."""
    g = onnx.load(path).graph
    inits = {t.name for t in g.initializer}
    ins = [v for v in g.input if v.name not in inits]
    if len(ins) != 1 or len(g.output) != 1:
        sys.exit("insn_count: %s: --model takes models with one input and one output" % path)

    def nbytes(v):
        t = v.type.tensor_type
        n = int(np.prod([d.dim_value for d in t.shape.dim]))
        return n * onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.elem_type].itemsize
    return nbytes(ins[0]), nbytes(g.output[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlcc", required=True)
    ap.add_argument("--target", choices=sorted(TOOLS), required=True)
    ap.add_argument("--mattr", default=None)
    ap.add_argument("--qemu-cpu", default=None)
    ap.add_argument("--layer", nargs="+", choices=sorted(LAYERS), default=sorted(LAYERS))
    ap.add_argument("--model", nargs="+", default=None,
                    help="whole models to count instead of the layers")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="insn_count.") as d:
        plugin = os.path.join(d, "libinsn.so")
        subprocess.run(["gcc", "-shared", "-fPIC", "-O2", "-o", plugin,
                        os.path.join(HERE, "qemu_insn_count.c")], check=True)
        if args.model:
            first = None
            for path in args.model:
                xb, yb = model_bytes(path)
                n = count(args, d, path, xb, yb, plugin)
                first = first or n
                print("%s %s %s: %.2fM instructions per run, %.3f of the first model"
                      % (path, args.target, args.mattr or "", n / 1e6, n / first))
            return
        rng = np.random.default_rng(0)
        for name in args.layer:
            f32, i8, xb, yb = layer_models(d, name, rng)
            nf = count(args, d, f32, xb, yb, plugin)
            ni = count(args, d, i8, xb, yb, plugin)
            print("%s %s %s: float32 %.2fM, int8 %.2fM instructions per run, int8/f32 %.2f"
                  % (name, args.target, args.mattr or "", nf / 1e6, ni / 1e6, ni / nf))


if __name__ == "__main__":
    main()
