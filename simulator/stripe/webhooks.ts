// Events out: every event is kept signed in an outbox, and (with a URL) POSTed as Stripe does,
// in creation order, retried with backoff on a non-2xx or network error. Tests can hold events
// back, release them in reverse, or have each one delivered twice.
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import type Stripe from "stripe";
import { stripeSignature } from "./signature";

export type OutboxEvent = { id: string; type: string; created: number; payload: string; signature: string };
/** One POST of one event: `status` is the HTTP status, 0 for a network error or timeout. */
export type DeliveryAttempt = { event: string; type: string; attempt: number; status: number };
export type Released = { event: string; type: string; status: number; attempts: number };

export type DeliveryOptions = { secret: string; url?: string; attempts: number; backoffMs: number; timeoutMs: number };

const USER_AGENT = "Stripe/1.0 (+https://stripe.com/docs/webhooks)";

const ok = (status: number) => status >= 200 && status < 300;

export class Webhooks {
  readonly outbox: OutboxEvent[] = [];
  readonly attempts: DeliveryAttempt[] = [];
  private held: OutboxEvent[] = [];
  private url: string | undefined;
  mode: "deliver" | "hold" = "deliver";
  duplicate = false;
  /** First attempts go out one after another, in the order events were made. */
  private chain: Promise<unknown> = Promise.resolve();
  private readonly timers = new Set<{ timer: NodeJS.Timeout; cancel: () => void }>();
  private readonly inFlight = new Set<() => void>();
  /** Waiters for delivery attempts (`waitForAttempts`): checked on each attempt, finished on stop. */
  private readonly waiters = new Set<{ check: () => void; finish: () => void }>();
  /** Bumped by reset/close: work started before it records nothing afterwards. */
  private epoch = 0;

  constructor(private readonly opts: DeliveryOptions) {
    this.url = opts.url;
  }

  setUrl(url: string | undefined): void {
    this.url = url;
  }

  get heldCount(): number {
    return this.held.length;
  }

  /** Signs and keeps an event, then delivers it, holds it, or (no URL) only keeps it. */
  publish(event: Stripe.Event): void {
    // Pretty-printed, as Stripe's own payloads are; receivers must verify these exact bytes.
    const payload = JSON.stringify(event, null, 2);
    const kept = {
      id: event.id,
      type: event.type,
      created: event.created,
      payload,
      signature: stripeSignature(payload, this.opts.secret, Math.floor(Date.now() / 1000)),
    };
    this.outbox.push(kept);
    if (this.mode === "hold") this.held.push(kept);
    else if (this.url !== undefined) void this.send(kept);
  }

  /** Delivers the held events (reverse = newest first) and resolves with each one's final status. */
  async release(order: "fifo" | "reverse"): Promise<Released[]> {
    const events = order === "reverse" ? [...this.held].reverse() : [...this.held];
    this.held = [];
    return (await Promise.all(events.map((e) => this.send(e)))).flat();
  }

  hasUrl(): boolean {
    return this.url !== undefined;
  }

  /** One delivery of the event, or two in duplicate mode; resolves once each has succeeded or used up its attempts. */
  private send(e: OutboxEvent): Promise<Released[]> {
    const copies = this.duplicate ? 2 : 1;
    return Promise.all(Array.from({ length: copies }, () => this.deliver(e)));
  }

  private deliver(e: OutboxEvent): Promise<Released> {
    const epoch = this.epoch;
    return new Promise((resolve) => {
      const attempt = async (n: number): Promise<void> => {
        if (epoch !== this.epoch) return resolve({ event: e.id, type: e.type, status: 0, attempts: n - 1 });
        const status = await this.post(e);
        if (epoch !== this.epoch) return resolve({ event: e.id, type: e.type, status, attempts: n });
        this.attempts.push({ event: e.id, type: e.type, attempt: n, status });
        for (const w of [...this.waiters]) w.check();
        if (ok(status) || n >= this.opts.attempts) return resolve({ event: e.id, type: e.type, status, attempts: n });
        this.later(
          this.opts.backoffMs * 2 ** (n - 1),
          () => void attempt(n + 1),
          () => resolve({ event: e.id, type: e.type, status, attempts: n }),
        );
      };
      this.chain = this.chain.then(() => attempt(1));
    });
  }

  /** Resolves once `count` attempts are recorded, or after `ms` (whichever comes first). */
  waitForAttempts(count: number, ms: number): Promise<void> {
    if (this.attempts.length >= count || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = {
        finish: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve();
        },
        check: () => {
          if (this.attempts.length >= count) waiter.finish();
        },
      };
      const timer = setTimeout(waiter.finish, ms);
      this.waiters.add(waiter);
    });
  }

  private later(ms: number, run: () => void, cancel: () => void): void {
    const entry = {
      timer: setTimeout(() => {
        this.timers.delete(entry);
        run();
      }, ms),
      cancel,
    };
    this.timers.add(entry);
  }

  /** One POST, signed at send time as Stripe signs each attempt; 0 on a network error or timeout. */
  private post(e: OutboxEvent): Promise<number> {
    const url = this.url;
    if (url === undefined) return Promise.resolve(0);
    const signature = stripeSignature(e.payload, this.opts.secret, Math.floor(Date.now() / 1000));
    const body = Buffer.from(e.payload, "utf8");
    return new Promise((resolve) => {
      let settled = false;
      const done = (status: number) => {
        if (settled) return;
        settled = true;
        this.inFlight.delete(abort);
        resolve(status);
      };
      const send = url.startsWith("https:") ? httpsRequest : httpRequest;
      const req = send(url, {
        method: "POST",
        agent: false, // no pooled sockets: nothing outlives close()
        timeout: this.opts.timeoutMs,
        headers: {
          "Content-Type": "application/json; charset=utf-8",
          "Content-Length": body.length,
          "User-Agent": USER_AGENT,
          Accept: "*/*; q=0.5, application/xml",
          "Cache-Control": "no-cache",
          "Stripe-Signature": signature,
        },
      });
      const abort = () => {
        req.destroy();
        done(0);
      };
      this.inFlight.add(abort);
      req.on("response", (res) => {
        res.resume(); // the body is not read, as Stripe ignores it
        res.on("end", () => done(res.statusCode ?? 0));
        res.on("error", () => done(res.statusCode ?? 0));
      });
      req.on("timeout", () => req.destroy());
      req.on("error", () => done(0));
      req.end(body);
    });
  }

  /** Forgets every event, attempt and hold; retries waiting are dropped. */
  reset(): void {
    this.stop();
    this.outbox.length = 0;
    this.attempts.length = 0;
    this.held = [];
    this.mode = "deliver";
    this.duplicate = false;
  }

  /** Cancels pending retries and in-flight posts (their deliveries resolve with their last status). */
  stop(): void {
    this.epoch++;
    for (const entry of this.timers) {
      clearTimeout(entry.timer);
      entry.cancel();
    }
    this.timers.clear();
    for (const abort of [...this.inFlight]) abort();
    for (const w of [...this.waiters]) w.finish();
  }
}
