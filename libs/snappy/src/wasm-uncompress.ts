// The snappy block decoder of snappy.ts as a WebAssembly function, assembled here from
// its instructions: the elements of remote-write bodies are short (a few bytes of literal,
// copies of about 20 bytes), and a wasm loop moving 8 bytes a step with no bounds check
// per byte decodes them in about half the time of the JavaScript loop
// (docs/benchmarks.md, "Snappy"). Input and output live in the module's memory; the caller
// copies the body in and the decoded bytes out.

// Opcodes (WebAssembly core specification, binary format).
const BLOCK = 0x02;
const LOOP = 0x03;
const IF = 0x04;
const ELSE = 0x05;
const END = 0x0b;
const BR = 0x0c;
const BR_IF = 0x0d;
const RETURN = 0x0f;
const LOCAL_GET = 0x20;
const LOCAL_SET = 0x21;
const LOCAL_TEE = 0x22;
const I32_LOAD = 0x28;
const I64_LOAD = 0x29;
const I32_LOAD8_U = 0x2d;
const I32_LOAD16_U = 0x2f;
const I64_STORE = 0x37;
const I32_STORE8 = 0x3a;
const I32_CONST = 0x41;
const I32_EQZ = 0x45;
const I32_LT_U = 0x49;
const I32_GT_U = 0x4b;
const I32_GE_U = 0x4f;
const I32_ADD = 0x6a;
const I32_SUB = 0x6b;
const I32_AND = 0x71;
const I32_OR = 0x72;
const I32_SHL = 0x74;
const I32_SHR_U = 0x76;
const VOID = 0x40;
const I32 = 0x7f;

// Parameters, then locals.
const SRC = 0; // next input byte
const SRC_END = 1;
const DST_START = 2;
const DST_END = 3;
const DST = 4; // next output byte
const TAG = 5;
const LEN = 6;
const OFF = 7;
const FROM = 8;
const I = 9;

/** Error results (negative; a result >= 0 is the number of bytes decoded). */
const WASM_ERRORS: Record<number, string> = {
  [-1]: 'truncated literal length',
  [-2]: 'literal past the end of the input',
  [-3]: 'longer than its declared length',
  [-4]: 'truncated copy',
  [-5]: 'copy offset out of range',
};

const get = (l: number) => [LOCAL_GET, l];
const set = (l: number) => [LOCAL_SET, l];
const i32 = (v: number) => [I32_CONST, ...sleb(v)];
const mem = (align: number) => [align, 0];
/** `return code` when the i32 on the stack is non-zero. */
const failIf = (code: number) => [IF, VOID, ...i32(code), RETURN, END];

/** Copies LEN bytes from FROM to DST, 8 a step (it may write up to 7 bytes past DST + LEN; the caller leaves room). */
const copy8 = [
  ...i32(0),
  ...set(I),
  LOOP,
  VOID,
  ...get(DST),
  ...get(I),
  I32_ADD,
  ...get(FROM),
  ...get(I),
  I32_ADD,
  I64_LOAD,
  ...mem(0),
  I64_STORE,
  ...mem(0),
  ...get(I),
  ...i32(8),
  I32_ADD,
  LOCAL_TEE,
  I,
  ...get(LEN),
  I32_LT_U,
  BR_IF,
  0,
  END,
];

// prettier-ignore
const body = [
  // locals: DST TAG LEN OFF FROM I
  1, 6, I32,
  ...get(DST_START), ...set(DST),
  BLOCK, VOID, // $done
  LOOP, VOID, // $next element
  ...get(SRC), ...get(SRC_END), I32_GE_U, BR_IF, 1,
  ...get(SRC), I32_LOAD8_U, ...mem(0), ...set(TAG),
  ...get(SRC), ...i32(1), I32_ADD, ...set(SRC),
  ...get(TAG), ...i32(3), I32_AND, I32_EQZ,
  IF, VOID, // literal
  ...get(TAG), ...i32(2), I32_SHR_U, ...set(LEN),
  ...get(LEN), ...i32(60), I32_GE_U,
  IF, VOID, // length in the next LEN - 59 bytes, little-endian
  ...get(LEN), ...i32(59), I32_SUB, ...set(OFF),
  ...get(SRC), ...get(OFF), I32_ADD, ...get(SRC_END), I32_GT_U, ...failIf(-1),
  ...i32(0), ...set(LEN), ...i32(0), ...set(I),
  LOOP, VOID,
  ...get(LEN), ...get(SRC), ...get(I), I32_ADD, I32_LOAD8_U, ...mem(0), ...get(I), ...i32(3), I32_SHL, I32_SHL, I32_OR, ...set(LEN),
  ...get(I), ...i32(1), I32_ADD, LOCAL_TEE, I, ...get(OFF), I32_LT_U, BR_IF, 0,
  END,
  ...get(SRC), ...get(OFF), I32_ADD, ...set(SRC),
  END,
  ...get(LEN), ...i32(1), I32_ADD, ...set(LEN),
  // A length of 2^32 - 1 wraps to 0 here, and the checks below refuse anything that does not fit.
  ...get(LEN), I32_EQZ, ...get(LEN), ...get(SRC_END), ...get(SRC), I32_SUB, I32_GT_U, I32_OR, ...failIf(-2),
  ...get(LEN), ...get(DST_END), ...get(DST), I32_SUB, I32_GT_U, ...failIf(-3),
  ...get(SRC), ...set(FROM),
  ...copy8,
  ...get(SRC), ...get(LEN), I32_ADD, ...set(SRC),
  ...get(DST), ...get(LEN), I32_ADD, ...set(DST),
  BR, 1, // $next
  END,
  // A copy: its length and offset.
  ...get(TAG), ...i32(3), I32_AND, ...i32(1), I32_SUB, I32_EQZ,
  IF, VOID, // 1-byte offset
  ...get(SRC), ...i32(1), I32_ADD, ...get(SRC_END), I32_GT_U, ...failIf(-4),
  ...get(TAG), ...i32(2), I32_SHR_U, ...i32(7), I32_AND, ...i32(4), I32_ADD, ...set(LEN),
  ...get(TAG), ...i32(5), I32_SHR_U, ...i32(8), I32_SHL, ...get(SRC), I32_LOAD8_U, ...mem(0), I32_OR, ...set(OFF),
  ...get(SRC), ...i32(1), I32_ADD, ...set(SRC),
  ELSE,
  ...get(TAG), ...i32(2), I32_SHR_U, ...i32(1), I32_ADD, ...set(LEN),
  ...get(TAG), ...i32(3), I32_AND, ...i32(2), I32_SUB, I32_EQZ,
  IF, VOID, // 2-byte offset
  ...get(SRC), ...i32(2), I32_ADD, ...get(SRC_END), I32_GT_U, ...failIf(-4),
  ...get(SRC), I32_LOAD16_U, ...mem(0), ...set(OFF),
  ...get(SRC), ...i32(2), I32_ADD, ...set(SRC),
  ELSE, // 4-byte offset
  ...get(SRC), ...i32(4), I32_ADD, ...get(SRC_END), I32_GT_U, ...failIf(-4),
  ...get(SRC), I32_LOAD, ...mem(0), ...set(OFF),
  ...get(SRC), ...i32(4), I32_ADD, ...set(SRC),
  END,
  END,
  ...get(OFF), I32_EQZ, ...get(OFF), ...get(DST), ...get(DST_START), I32_SUB, I32_GT_U, I32_OR, ...failIf(-5),
  ...get(LEN), ...get(DST_END), ...get(DST), I32_SUB, I32_GT_U, ...failIf(-3),
  ...get(DST), ...get(OFF), I32_SUB, ...set(FROM),
  ...get(OFF), ...i32(8), I32_GE_U,
  IF, VOID,
  ...copy8,
  ELSE, // closer than 8 bytes: a run, a byte at a time
  ...i32(0), ...set(I),
  LOOP, VOID,
  ...get(DST), ...get(I), I32_ADD, ...get(FROM), ...get(I), I32_ADD, I32_LOAD8_U, ...mem(0), I32_STORE8, ...mem(0),
  ...get(I), ...i32(1), I32_ADD, LOCAL_TEE, I, ...get(LEN), I32_LT_U, BR_IF, 0,
  END,
  END,
  ...get(DST), ...get(LEN), I32_ADD, ...set(DST),
  BR, 0, // $next
  END,
  END,
  ...get(DST), ...get(DST_START), I32_SUB,
  END,
];

/** The module: memory 0 exported as "memory", function "uncompress"(src, srcEnd, dst, dstEnd) → bytes decoded or a WASM_ERRORS code. */
function moduleBytes(): Uint8Array {
  const section = (id: number, content: number[]) => [id, ...uleb(content.length), ...content];
  const name = (s: string) => [...uleb(s.length), ...Buffer.from(s, 'latin1')];
  const bytes = [
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...section(1, [1, 0x60, 4, I32, I32, I32, I32, 1, I32]), // type 0: (i32 x4) -> i32
    ...section(3, [1, 0]), // function 0 has type 0
    ...section(5, [1, 0x00, 1]), // memory 0: at least 1 page, no maximum
    ...section(7, [2, ...name('memory'), 0x02, 0, ...name('uncompress'), 0x00, 0]),
    ...section(10, [1, ...uleb(body.length), ...body]),
  ];
  return new Uint8Array(bytes);
}

function uleb(v: number): number[] {
  const out: number[] = [];
  do {
    let b = v & 0x7f;
    v >>>= 7;
    if (v !== 0) b |= 0x80;
    out.push(b);
  } while (v !== 0);
  return out;
}

function sleb(v: number): number[] {
  const out: number[] = [];
  for (;;) {
    const b = v & 0x7f;
    v >>= 7;
    if ((v === 0 && (b & 0x40) === 0) || (v === -1 && (b & 0x40) !== 0)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}

/** The parts of the WebAssembly API used here (the project's type libraries do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: { memory: WasmMemory; uncompress: (src: number, srcEnd: number, dst: number, dstEnd: number) => number } };
}
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** Bytes past each region the 8-byte steps may read or write. */
const SLACK = 16;
const PAGE = 64 * 1024;

/** A wasm decoder with its own memory, grown to the largest body it has met. */
export class WasmUncompress {
  private readonly memory: WasmMemory;
  private readonly run: (src: number, srcEnd: number, dst: number, dstEnd: number) => number;
  private heap: Uint8Array;

  constructor() {
    const { exports } = new wasmApi.Instance(new wasmApi.Module(moduleBytes()));
    this.memory = exports.memory;
    this.run = exports.uncompress;
    this.heap = new Uint8Array(this.memory.buffer);
  }

  /**
   * Decodes the elements of `src` from `pos` into out[0, n), as uncompress does (n: the
   * declared length). Answers what was wrong, or undefined when exactly n bytes came out.
   */
  uncompress(src: Uint8Array, pos: number, out: Uint8Array, n: number): string | undefined {
    const inLen = src.length - pos;
    const dst = inLen + SLACK;
    const need = dst + n + SLACK;
    if (need > this.heap.length) {
      this.memory.grow(Math.ceil((need - this.heap.length) / PAGE));
      this.heap = new Uint8Array(this.memory.buffer);
    }
    const heap = this.heap;
    heap.set(src.subarray(pos), 0);
    const r = this.run(0, inLen, dst, dst + n);
    if (r < 0) return WASM_ERRORS[r];
    if (r !== n) return `${r} bytes decoded, ${n} declared`;
    out.set(heap.subarray(dst, dst + n), 0);
    return undefined;
  }
}
