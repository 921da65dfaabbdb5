// Builds the bytes of a tiny ONNX model for scaled dot-product attention, with a hand-written
// protobuf encoder (no packages):
//   kT = Transpose(k)            [d, n]
//   s  = MatMul(q, kT)           [n, n]
//   t  = Mul(s, scale)           scale: a float scalar initializer
//   p  = Softmax(t, axis = -1)
//   y  = MatMul(p, v)            [n, dv]
// Inputs q [n, d], k [n, d], v [n, dv] with symbolic dims "n" (and fixed d, dv), opset 13.
// Only the fields of onnx.proto3 the graph needs are encoded; field numbers are from onnx.proto.

// ---- protobuf wire format ------------------------------------------------------------------
const enc = new TextEncoder();

function varint(value) {
  // Non-negative integers up to 2^53; negatives (int64) as 10-byte two's complement.
  const out = [];
  let v = BigInt(value);
  if (v < 0n) v += 1n << 64n;
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return out;
}

const key = (field, wire) => varint((field << 3) | wire);

class Msg {
  constructor() { this.parts = []; }
  int(field, value) { this.parts.push(...key(field, 0), ...varint(value)); return this; }
  bytes(field, data) {
    const b = data instanceof Uint8Array ? data : new Uint8Array(data);
    this.parts.push(...key(field, 2), ...varint(b.length));
    for (const x of b) this.parts.push(x);
    return this;
  }
  str(field, s) { return this.bytes(field, enc.encode(s)); }
  msg(field, m) { return this.bytes(field, m.finish()); }
  float(field, f) {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, f, true);
    this.parts.push(...key(field, 5), ...b);
    return this;
  }
  finish() { return Uint8Array.from(this.parts); }
}

// ---- ONNX messages ---------------------------------------------------------------------------
const FLOAT = 1; // TensorProto.DataType.FLOAT
const ATTR_FLOAT = 1, ATTR_INT = 2, ATTR_INTS = 7; // AttributeProto.AttributeType

// AttributeProto: name=1, f=2, i=3, ints=8, type=20
function attrInt(name, i) { return new Msg().str(1, name).int(3, i).int(20, ATTR_INT); }
function attrInts(name, ints) {
  const m = new Msg().str(1, name);
  for (const i of ints) m.int(8, i);
  return m.int(20, ATTR_INTS);
}
void ATTR_FLOAT;

// NodeProto: input=1, output=2, name=3, op_type=4, attribute=5
function node(op, inputs, outputs, name, attrs = []) {
  const m = new Msg();
  for (const i of inputs) m.str(1, i);
  for (const o of outputs) m.str(2, o);
  m.str(3, name).str(4, op);
  for (const a of attrs) m.msg(5, a);
  return m;
}

// TensorShapeProto.Dimension: dim_value=1, dim_param=2
function dim(x) { return typeof x === 'string' ? new Msg().str(2, x) : new Msg().int(1, x); }

// ValueInfoProto: name=1, type=2; TypeProto: tensor_type=1; TypeProto.Tensor: elem_type=1, shape=2;
// TensorShapeProto: dim=1
function valueInfo(name, dims) {
  const shape = new Msg();
  for (const x of dims) shape.msg(1, dim(x));
  const tensor = new Msg().int(1, FLOAT).msg(2, shape);
  return new Msg().str(1, name).msg(2, new Msg().msg(1, tensor));
}

// TensorProto: dims=1, data_type=2, float_data=4 (packed), name=8
function scalarTensor(name, value) {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setFloat32(0, value, true);
  return new Msg().int(2, FLOAT).bytes(4, b).str(8, name);
}

/**
 * @param {{d: number, dv: number, scale?: number, n?: number|string}} o
 * @returns {Uint8Array} a serialized ModelProto
 */
export function attentionModel({ d, dv, scale = 1 / Math.sqrt(d), n = 'n' }) {
  // GraphProto: node=1, name=2, initializer=5, input=11, output=12
  const graph = new Msg();
  graph.msg(1, node('Transpose', ['k'], ['kT'], 'transpose_k', [attrInts('perm', [1, 0])]));
  graph.msg(1, node('MatMul', ['q', 'kT'], ['s'], 'qkT'));
  graph.msg(1, node('Mul', ['s', 'scale'], ['t'], 'scale_logits'));
  graph.msg(1, node('Softmax', ['t'], ['p'], 'softmax', [attrInt('axis', -1)]));
  graph.msg(1, node('MatMul', ['p', 'v'], ['y'], 'pv'));
  graph.str(2, 'attention');
  graph.msg(5, scalarTensor('scale', scale));
  graph.msg(11, valueInfo('q', [n, d]));
  graph.msg(11, valueInfo('k', [n, d]));
  graph.msg(11, valueInfo('v', [n, dv]));
  graph.msg(12, valueInfo('y', [n, dv]));

  // ModelProto: ir_version=1, producer_name=2, producer_version=3, graph=7, opset_import=8
  // OperatorSetIdProto: domain=1, version=2
  return new Msg()
    .int(1, 7)
    .str(2, 'attnlab-bench')
    .str(3, '0.1.0')
    .msg(7, graph)
    .msg(8, new Msg().str(1, '').int(2, 13))
    .finish();
}
