// SPDX-License-Identifier: Apache-2.0
// onnxruntime-node side of scripts/quantize.py (calibration) and
// tests/quant/run_quant_model.py (the distance report): runs one model once.
//
//   NODE_PATH=tools/ort/node_modules node ort_quant_run.js MODEL OUT_DIR THREADS OPT PRECISION IN.bin...
//
// Each IN.bin holds raw little-endian elements; IN.bin.json gives
// {"name", "shape", "dtype"} (dtype float32 or uint8). OPT is an
// onnxruntime graphOptimizationLevel ('disabled' keeps every node as written,
// 'all' lets onnxruntime fuse Q/DQ into its int8 kernels). PRECISION "1" sets
// the session config entry session.x64quantprecision = "1" (exact int32 sums
// on x86 CPUs without VNNI); "-" leaves onnxruntime's default.
// Writes OUT_DIR/out_<i>.bin per output and OUT_DIR/outputs.json
// [{"name", "dims", "dtype"}]. Exit status: 0 ok, 1 onnxruntime refused the
// model or an input, 2 usage.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const ARRAYS = {float32: Float32Array, uint8: Uint8Array, int8: Int8Array, int32: Int32Array,
                int64: BigInt64Array};

async function main() {
  const argv = process.argv.slice(2);
  if (argv.length < 5) {
    console.error('usage: ort_quant_run.js MODEL OUT_DIR THREADS OPT PRECISION IN.bin...');
    process.exit(2);
  }
  const [model, outDir, threads, opt, precision, ...inputs] = argv;
  const options = {intraOpNumThreads: Number(threads), interOpNumThreads: 1,
                   graphOptimizationLevel: opt, executionMode: 'sequential'};
  if (precision === '1') options.extra = {session: {x64quantprecision: '1'}};
  const session = await ort.InferenceSession.create(model, options);
  const feeds = {};
  for (const p of inputs) {
    const meta = JSON.parse(fs.readFileSync(p + '.json', 'utf8'));
    const raw = fs.readFileSync(p);
    const T = ARRAYS[meta.dtype];
    if (!T) throw new Error(p + ': unsupported dtype ' + meta.dtype);
    const data = new T(raw.buffer, raw.byteOffset, raw.byteLength / T.BYTES_PER_ELEMENT);
    feeds[meta.name] = new ort.Tensor(meta.dtype, data, meta.shape);
  }
  const res = await session.run(feeds);
  const meta = [];
  session.outputNames.forEach((name, i) => {
    const t = res[name];
    const d = t.data;
    fs.writeFileSync(path.join(outDir, 'out_' + i + '.bin'),
                     Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    meta.push({name, dims: t.dims, dtype: t.type});
  });
  fs.writeFileSync(path.join(outDir, 'outputs.json'), JSON.stringify(meta));
}
main().catch((e) => { console.error(e.message); process.exit(1); });
