// Reads OTLP/HTTP protobuf trace exports (ExportTraceServiceRequest) into the OTLP/JSON shape, so the receiver
// keeps one form whichever encoding arrived. A reader of the wire format written from the .proto files'
// field numbers, independent of the Worker's writer (src/observability/), so a test comparing them means something.

type Field = { no: number; wire: number; varint?: bigint; bytes?: Uint8Array; fixed64?: Uint8Array };

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let n = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error("protobuf: truncated varint");
      const b = buf[i++]!;
      n |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return n;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const tag = Number(varint());
    const no = tag >> 3;
    const wire = tag & 7;
    if (wire === 0) out.push({ no, wire, varint: varint() });
    else if (wire === 1) {
      out.push({ no, wire, fixed64: buf.subarray(i, i + 8) });
      i += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      if (i + len > buf.length) throw new Error("protobuf: truncated field");
      out.push({ no, wire, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 5) i += 4;
    else throw new Error(`protobuf: wire type ${wire}`);
  }
  return out;
}

const text = (b: Uint8Array) => new TextDecoder().decode(b);
const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
const u64 = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
const all = (fs: Field[], no: number) => fs.filter((f) => f.no === no);
const one = (fs: Field[], no: number) => fs.find((f) => f.no === no);

function anyValue(b: Uint8Array): Record<string, unknown> {
  const f = fields(b)[0];
  if (!f) return {};
  switch (f.no) {
    case 1:
      return { stringValue: text(f.bytes!) };
    case 2:
      return { boolValue: f.varint !== 0n };
    case 3:
      return { intValue: BigInt.asIntN(64, f.varint!).toString() };
    case 4:
      return { doubleValue: new DataView(f.fixed64!.buffer, f.fixed64!.byteOffset, 8).getFloat64(0, true) };
    case 5:
      return { arrayValue: { values: all(fields(f.bytes!), 1).map((v) => anyValue(v.bytes!)) } };
    default:
      return {};
  }
}

function keyValues(fs: Field[], no: number): Array<{ key: string; value: Record<string, unknown> }> {
  return all(fs, no).map((kv) => {
    const inner = fields(kv.bytes!);
    return { key: text(one(inner, 1)!.bytes!), value: anyValue(one(inner, 2)?.bytes ?? new Uint8Array()) };
  });
}

function span(b: Uint8Array): Record<string, unknown> {
  const fs = fields(b);
  const st = fields(one(fs, 15)?.bytes ?? new Uint8Array());
  const code = Number(one(st, 3)?.varint ?? 0n);
  const message = one(st, 2);
  return {
    traceId: hex(one(fs, 1)!.bytes!),
    spanId: hex(one(fs, 2)!.bytes!),
    name: text(one(fs, 5)?.bytes ?? new Uint8Array()),
    kind: Number(one(fs, 6)?.varint ?? 0n),
    startTimeUnixNano: u64(one(fs, 7)!.fixed64!).toString(),
    endTimeUnixNano: u64(one(fs, 8)!.fixed64!).toString(),
    attributes: keyValues(fs, 9),
    status: { ...(code !== 0 ? { code } : {}), ...(message ? { message: text(message.bytes!) } : {}) },
  };
}

/** An ExportTraceServiceRequest's bytes as its OTLP/JSON object. */
export function decodeTraceExport(buf: Uint8Array): { resourceSpans: unknown[] } {
  return {
    resourceSpans: all(fields(buf), 1).map((rs) => {
      const rf = fields(rs.bytes!);
      const resource = fields(one(rf, 1)?.bytes ?? new Uint8Array());
      return {
        resource: { attributes: keyValues(resource, 1) },
        scopeSpans: all(rf, 2).map((ss) => {
          const sf = fields(ss.bytes!);
          const scope = fields(one(sf, 1)?.bytes ?? new Uint8Array());
          return {
            scope: { name: text(one(scope, 1)?.bytes ?? new Uint8Array()), version: text(one(scope, 2)?.bytes ?? new Uint8Array()) },
            spans: all(sf, 2).map((s) => span(s.bytes!)),
          };
        }),
      };
    }),
  };
}
