// SPDX-License-Identifier: Apache-2.0
// The oracle of the opset 18-26 cases: runs one ONNX model with
// onnxruntime-node (installed by scripts/setup.sh into tools/ort, see
// tests/onnx/opset_cases/README.md) on inputs given as serialized ONNX
// TensorProtos (the .pb files of ONNX test data) and writes each output as
// OUT_DIR/output_<i>.pb, a TensorProto named after the graph output.
//
//   NODE_PATH=tools/ort/node_modules node ort_run.js MODEL OUT_DIR [INPUT.pb ...]
//
// An input .pb is matched to a graph input by its name, else by position.
// Runs single-threaded with graph optimizations disabled, so the outputs are
// the same on every run. Exit status: 0 ok, 1 the model or an input was
// refused (message on stderr), 2 usage.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// TensorProto.DataType <-> onnxruntime-node tensor type and typed array.
const TYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  4: ['uint16', Uint16Array], 5: ['int16', Int16Array], 6: ['int32', Int32Array],
  7: ['int64', BigInt64Array], 9: ['bool', Uint8Array], 10: ['float16', Uint16Array],
  11: ['float64', Float64Array], 12: ['uint32', Uint32Array], 13: ['uint64', BigUint64Array],
  // 4-bit: onnxruntime-node takes and returns them packed as ONNX stores
  // them (two per byte, the first in the low nibble), ceil(n/2) bytes.
  21: ['uint4', Uint8Array], 22: ['int4', Uint8Array],
};
const PACKED4 = new Set(['uint4', 'int4']);
const BY_NAME = {};
for (const [code, [name]] of Object.entries(TYPES)) BY_NAME[name] = Number(code);

// --- a minimal protobuf reader/writer for TensorProto (fields: 1 dims,
// 2 data_type, 4 float_data, 5 int32_data, 7 int64_data, 8 name,
// 9 raw_data, 10 double_data, 11 uint64_data). ---
function readVarint(buf, pos) {
  let v = 0n, shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const b = buf[pos++];
    v |= BigInt(b & 0x7f) << shift;
    if (!(b & 0x80)) return [v, pos];
    shift += 7n;
    if (shift > 70n) throw new Error('varint too long');
  }
}

function decodeTensor(buf) {
  const t = {dims: [], dataType: 0, name: '', raw: null, floats: [], ints: [], doubles: []};
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Number(key >> 3n), wire = Number(key & 7n);
    const scalars = (fn) => {  // packed (wire 2) or one unpacked value
      if (wire === 2) {
        let len;
        [len, pos] = readVarint(buf, pos);
        const end = pos + Number(len);
        while (pos < end) pos = fn(pos);
      } else {
        pos = fn(pos);
      }
    };
    if (field === 1) {
      scalars((p) => { const [v, q] = readVarint(buf, p); t.dims.push(Number(BigInt.asIntN(64, v))); return q; });
    } else if (field === 2 && wire === 0) {
      let v; [v, pos] = readVarint(buf, pos); t.dataType = Number(v);
    } else if (field === 4) {
      scalars((p) => { t.floats.push(buf.readFloatLE(p)); return p + 4; });
    } else if (field === 5 || field === 7 || field === 11) {
      scalars((p) => { const [v, q] = readVarint(buf, p); t.ints.push(field === 11 ? v : BigInt.asIntN(64, v)); return q; });
    } else if (field === 10) {
      scalars((p) => { t.doubles.push(buf.readDoubleLE(p)); return p + 8; });
    } else if ((field === 8 || field === 9) && wire === 2) {
      let len; [len, pos] = readVarint(buf, pos);
      const bytes = buf.subarray(pos, pos + Number(len));
      pos += Number(len);
      if (field === 8) t.name = bytes.toString('utf8'); else t.raw = Buffer.from(bytes);
    } else {  // skip anything else
      if (wire === 0) { [, pos] = readVarint(buf, pos); }
      else if (wire === 1) pos += 8;
      else if (wire === 5) pos += 4;
      else if (wire === 2) { let len; [len, pos] = readVarint(buf, pos); pos += Number(len); }
      else throw new Error('unsupported wire type ' + wire);
    }
  }
  return t;
}

function toOrtTensor(t) {
  const ty = TYPES[t.dataType];
  if (!ty) throw new Error('tensor data_type ' + t.dataType + ' is not handled by ort_run.js');
  const [name, Arr] = ty;
  const numel = t.dims.reduce((a, b) => a * b, 1);
  const count = PACKED4.has(name) ? Math.ceil(numel / 2) : numel;  // typed-array length
  let data;
  if (t.raw) {
    const copy = new Uint8Array(t.raw);  // aligned copy
    data = new Arr(copy.buffer, 0, count);
  } else if (t.floats.length) {
    data = Float32Array.from(t.floats);
  } else if (t.doubles.length) {
    data = Float64Array.from(t.doubles);
  } else {
    data = new Arr(count);
    for (let i = 0; i < count; i++) {
      const v = t.ints[i];
      data[i] = (Arr === BigInt64Array || Arr === BigUint64Array) ? BigInt(v) : Number(v);
    }
  }
  if (name === 'bool') data = Uint8Array.from(data, (v) => (v ? 1 : 0));
  return new ort.Tensor(name, data, t.dims);
}

function writeVarint(out, v) {
  v = BigInt.asUintN(64, BigInt(v));
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
}

function encodeTensor(name, tensor) {
  const code = BY_NAME[tensor.type];
  if (!code) throw new Error('output type ' + tensor.type + ' is not handled by ort_run.js');
  const out = [];
  if (tensor.dims.length) {
    const packed = [];
    for (const d of tensor.dims) writeVarint(packed, d);
    out.push(0x0a); writeVarint(out, packed.length); out.push(...packed);
  }
  out.push(0x10); writeVarint(out, code);
  const nameBytes = Buffer.from(name, 'utf8');
  out.push(0x42); writeVarint(out, nameBytes.length);
  const d = tensor.data;
  const raw = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
  const head = Buffer.from(out);
  const mid = [];
  mid.push(0x4a); writeVarint(mid, raw.length);
  return Buffer.concat([head, nameBytes, Buffer.from(mid), raw]);
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length < 2) {
    process.stderr.write('usage: ort_run.js MODEL OUT_DIR [INPUT.pb ...]\n');
    process.exit(2);
  }
  const [model, outDir, ...inputs] = args;
  let session;
  try {
    session = await ort.InferenceSession.create(model, {
      graphOptimizationLevel: 'disabled', intraOpNumThreads: 1, interOpNumThreads: 1,
      executionMode: 'sequential'});
  } catch (e) {
    process.stderr.write(model + ': onnxruntime refused the model: ' + e.message + '\n');
    process.exit(1);
  }
  const feeds = {};
  inputs.forEach((file, i) => {
    const t = decodeTensor(fs.readFileSync(file));
    const name = session.inputNames.includes(t.name) ? t.name : session.inputNames[i];
    feeds[name] = toOrtTensor(t);
  });
  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    process.stderr.write(model + ': onnxruntime failed to run the model: ' + e.message + '\n');
    process.exit(1);
  }
  fs.mkdirSync(outDir, {recursive: true});
  session.outputNames.forEach((name, i) => {
    const file = path.join(outDir, 'output_' + i + '.pb');
    fs.writeFileSync(file + '.tmp', encodeTensor(name, results[name]));
    fs.renameSync(file + '.tmp', file);
  });
}

main().catch((e) => { process.stderr.write('ort_run.js: ' + e.stack + '\n'); process.exit(1); });
