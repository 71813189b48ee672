// SPDX-License-Identifier: Apache-2.0
// onnxruntime-node side of bench/run.py: median latency of one model.
// Usage: node ort_bench.js MODEL.onnx INPUT.bin THREADS RUNS [OUTPUT.bin]
// With OUTPUT.bin, writes output 0 of the last run there (float32).
// Needs onnxruntime-node installed in a scratch folder on NODE_PATH.
const ort = require('onnxruntime-node');
const fs = require('fs');

async function main() {
  const [model, inputPath, threads, runs, outPath] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(threads), interOpNumThreads: 1,
    graphOptimizationLevel: 'all', executionMode: 'sequential'});
  const name = session.inputNames[0];
  const meta = JSON.parse(fs.readFileSync(inputPath + '.json', 'utf8'));
  const raw = fs.readFileSync(inputPath);
  const data = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  const feeds = {[name]: new ort.Tensor('float32', data, meta.shape)};
  for (let i = 0; i < 3; ++i) await session.run(feeds);
  const t = [];
  let res = null;
  for (let i = 0; i < Number(runs); ++i) {
    const t0 = process.hrtime.bigint();
    res = await session.run(feeds);
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  if (outPath && res) {
    const y = res[session.outputNames[0]].data;
    fs.writeFileSync(outPath, Buffer.from(y.buffer, y.byteOffset, y.byteLength));
  }
  t.sort((a, b) => a - b);
  console.log(t[Math.floor(t.length / 2)].toFixed(4), t[0].toFixed(4));
}
main().catch((e) => { console.error(e.message); process.exit(1); });
