// Reads the binary workerd config Miniflare writes (a framed Cap'n Proto message, `Config` at its root) on
// stdin and writes it to stdout with `v8Flags` (Config's pointer 2) set to the arguments. A bench-only
// diagnostic tool (bench/v8-flags.ts): Miniflare has no option for V8 flags, workerd takes them only from
// its config. It refuses any message it does not understand rather than guess.
//
//   node bench/v8-flags-patch.mjs --trace-gc … < config.bin > patched.bin
const V8_FLAGS_POINTER = 2;

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
process.stdout.write(withV8Flags(Buffer.concat(chunks), process.argv.slice(2)));

function withV8Flags(message, flags) {
  const view = new DataView(message.buffer, message.byteOffset, message.byteLength);
  const segments = view.getUint32(0, true) + 1;
  const sizes = Array.from({ length: segments }, (_, i) => view.getUint32(4 + 4 * i, true));
  const header = Math.ceil((4 + 4 * segments) / 8) * 8;
  const word = (i) => header + 8 * i; // byte offset of word i of segment 0
  const lo = view.getUint32(word(0), true);
  const hi = view.getUint32(word(0) + 4, true);
  if ((lo & 3) !== 0) throw new Error("v8-flags-patch: the root pointer is not a struct pointer in segment 0");
  const structStart = 1 + (lo >> 2);
  const dataWords = hi & 0xffff;
  const pointers = hi >>> 16;
  if (pointers <= V8_FLAGS_POINTER) throw new Error("v8-flags-patch: Config has no v8Flags pointer slot");
  const slot = structStart + dataWords + V8_FLAGS_POINTER;
  if (view.getUint32(word(slot), true) !== 0 || view.getUint32(word(slot) + 4, true) !== 0) throw new Error("v8-flags-patch: the config already sets v8Flags");

  // Appended to segment 0: a list of text pointers, then each text (NUL-terminated, padded to a word).
  const texts = flags.map((f) => Buffer.from(`${f}\0`, "utf8"));
  const added = flags.length + texts.reduce((n, t) => n + Math.ceil(t.length / 8), 0);
  const list = sizes[0];
  const extra = Buffer.alloc(added * 8);
  const put = (i, low, high) => {
    extra.writeUInt32LE(low >>> 0, 8 * (i - list));
    extra.writeUInt32LE(high >>> 0, 8 * (i - list) + 4);
  };
  let at = list + flags.length;
  texts.forEach((text, i) => {
    put(list + i, ((at - (list + i + 1)) << 2) | 1, (text.length << 3) | 2);
    text.copy(extra, 8 * (at - list));
    at += Math.ceil(text.length / 8);
  });

  const out = Buffer.concat([message.subarray(0, word(list)), extra, message.subarray(word(list))]);
  out.writeUInt32LE(sizes[0] + added, 4);
  out.writeUInt32LE((((list - (slot + 1)) << 2) | 1) >>> 0, word(slot));
  out.writeUInt32LE(((flags.length << 3) | 6) >>> 0, word(slot) + 4);
  return out;
}
