// A minimal Chrome DevTools Protocol client for workerd's V8 inspector (Miniflare's `inspectorPort`):
// just enough WebSocket (RFC 6455, client side, over node:http's upgrade) to send commands and read replies.
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { Socket } from "node:net";

type Reply = { id?: number; result?: unknown; error?: { message: string }; method?: string; params?: unknown };

export class InspectorSession {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private buffer: Buffer = Buffer.alloc(0);
  private fragments: Buffer[] = [];
  /** Sees every event (a message without an id), e.g. HeapProfiler.addHeapSnapshotChunk. */
  onEvent?: (method: string, params: unknown) => void;

  private constructor(private readonly socket: Socket) {
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("close", () => {
      for (const p of this.pending.values()) p.reject(new Error("inspector connection closed"));
      this.pending.clear();
    });
  }

  /** Connects to a `ws://host:port/path` debugger URL. */
  static connect(wsUrl: string, timeoutMs = 10_000): Promise<InspectorSession> {
    const url = new URL(wsUrl);
    return new Promise((resolve, reject) => {
      const req = http.request({
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Key": randomBytes(16).toString("base64"), "Sec-WebSocket-Version": "13" },
        timeout: timeoutMs,
      });
      req.on("upgrade", (_res, socket: Socket, head: Buffer) => {
        socket.setNoDelay(true);
        const session = new InspectorSession(socket);
        if (head.length > 0) session.onData(head);
        resolve(session);
      });
      req.on("response", (res) => reject(new Error(`inspector: no upgrade (HTTP ${res.statusCode})`)));
      req.on("timeout", () => req.destroy(new Error("inspector: connect timeout")));
      req.on("error", reject);
      req.end();
    });
  }

  /** Sends one command and waits (bounded) for its reply. */
  send<T>(method: string, params: Record<string, unknown> = {}, timeoutMs = 30_000): Promise<T> {
    const id = this.nextId++;
    const payload = Buffer.from(JSON.stringify({ id, method, params }));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`inspector: ${method} timed out`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.writeFrame(0x1, payload);
    });
  }

  close(): void {
    this.writeFrame(0x8, Buffer.alloc(0));
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 500).unref();
  }

  /** A masked client frame (FIN set). */
  private writeFrame(opcode: number, payload: Buffer): void {
    const mask = randomBytes(4);
    const len = payload.length;
    const header = len < 126 ? Buffer.alloc(2) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
    header[0] = 0x80 | opcode;
    if (len < 126) header[1] = 0x80 | len;
    else if (len < 65536) {
      header[1] = 0x80 | 126;
      header.writeUInt16BE(len, 2);
    } else {
      header[1] = 0x80 | 127;
      header.writeBigUInt64BE(BigInt(len), 2);
    }
    const masked = Buffer.alloc(len);
    for (let i = 0; i < len; i++) masked[i] = payload[i]! ^ mask[i & 3]!;
    this.socket.write(Buffer.concat([header, mask, masked]));
  }

  private onData(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      if (this.buffer.length < 2) return;
      const b0 = this.buffer[0]!;
      const b1 = this.buffer[1]!;
      let len = b1 & 0x7f;
      let offset = 2;
      if (len === 126) {
        if (this.buffer.length < 4) return;
        len = this.buffer.readUInt16BE(2);
        offset = 4;
      } else if (len === 127) {
        if (this.buffer.length < 10) return;
        len = Number(this.buffer.readBigUInt64BE(2));
        offset = 10;
      }
      const masked = (b1 & 0x80) !== 0;
      const maskKey = masked ? this.buffer.subarray(offset, offset + 4) : undefined;
      if (masked) offset += 4;
      if (this.buffer.length < offset + len) return;
      let payload = this.buffer.subarray(offset, offset + len);
      if (maskKey) payload = Buffer.from(payload.map((byte, i) => byte ^ maskKey[i & 3]!));
      this.buffer = this.buffer.subarray(offset + len);
      const opcode = b0 & 0x0f;
      const fin = (b0 & 0x80) !== 0;
      if (opcode === 0x9) this.writeFrame(0xa, Buffer.from(payload));
      else if (opcode === 0x8) this.socket.end();
      else if (opcode === 0x1 || opcode === 0x2 || opcode === 0x0) {
        this.fragments.push(Buffer.from(payload));
        if (fin) {
          const message = Buffer.concat(this.fragments).toString("utf8");
          this.fragments = [];
          this.onMessage(message);
        }
      }
    }
  }

  private onMessage(text: string): void {
    const reply = JSON.parse(text) as Reply;
    if (reply.id === undefined) {
      if (reply.method) this.onEvent?.(reply.method, reply.params);
      return;
    }
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    if (reply.error) p.reject(new Error(`inspector: ${reply.error.message}`));
    else p.resolve(reply.result);
  }
}

/** Connects to the router's isolate among the Worker isolates a Miniflare inspector port lists. */
export async function routerInspector(inspectorPort: number): Promise<InspectorSession> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`, { signal: AbortSignal.timeout(10_000) })).json()) as Array<{
    title?: string;
    webSocketDebuggerUrl?: string;
  }>;
  const target =
    targets.find((t) => t.title?.includes("switchyard") && t.webSocketDebuggerUrl) ?? targets.find((t) => t.webSocketDebuggerUrl && !t.title?.includes(":"));
  if (!target?.webSocketDebuggerUrl) throw new Error(`no inspector target for the router among ${targets.map((t) => t.title).join(", ")}`);
  return InspectorSession.connect(target.webSocketDebuggerUrl);
}
