/**
 * The few protobuf wire forms OTLP's trace messages need (varint, fixed64, double, length-delimited), written
 * by hand: a full protobuf library would weigh more in the Worker than every message it would encode here.
 */
const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;

const utf8 = new TextEncoder();

export class ProtoWriter {
  private bytes: number[] = [];

  private varint(v: bigint): void {
    let n = BigInt.asUintN(64, v); // negative int64 is its two's complement, ten bytes
    while (n > 0x7fn) {
      this.bytes.push(Number(n & 0x7fn) | 0x80);
      n >>= 7n;
    }
    this.bytes.push(Number(n));
  }

  private tag(field: number, wire: number): void {
    this.varint(BigInt((field << 3) | wire));
  }

  /** A varint field (int64, uint32, enum, bool); proto3 leaves a zero out. */
  uint(field: number, v: bigint | number): this {
    if (BigInt(v) === 0n) return this;
    this.tag(field, WIRE_VARINT);
    this.varint(BigInt(v));
    return this;
  }

  /** An int64 or bool inside a oneof (AnyValue): written even when zero, or the value's kind would be lost. */
  uintAlways(field: number, v: bigint | number): this {
    this.tag(field, WIRE_VARINT);
    this.varint(BigInt(v));
    return this;
  }

  fixed64(field: number, v: bigint): this {
    this.tag(field, WIRE_FIXED64);
    let n = BigInt.asUintN(64, v);
    for (let i = 0; i < 8; i++, n >>= 8n) this.bytes.push(Number(n & 0xffn));
    return this;
  }

  double(field: number, v: number): this {
    this.tag(field, WIRE_FIXED64);
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, v, true);
    this.bytes.push(...b);
    return this;
  }

  bytesField(field: number, b: Uint8Array): this {
    this.tag(field, WIRE_LEN);
    this.varint(BigInt(b.length));
    for (const x of b) this.bytes.push(x);
    return this;
  }

  string(field: number, s: string): this {
    return this.bytesField(field, utf8.encode(s));
  }

  /** An embedded message, written by `build` into a writer of its own. */
  message(field: number, build: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytesField(field, inner.finish());
  }

  finish(): Uint8Array<ArrayBuffer> {
    return Uint8Array.from(this.bytes);
  }
}

export function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
