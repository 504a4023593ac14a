import { ApiError } from "../../../request/errors";
import type { Sealer } from "../caller-protocol";
import { isObj, refuse, type Obj } from "../request-checks";

/**
 * Our `encrypted_content`: a version tag, then the canonical `reasoning_details` of an answer (signed
 * thinking, redacted thinking, Gemini thought signatures) as JSON sealed for the caller's account
 * (AES-256-GCM: src/serve/reasoning-sealer.ts), so the next turn gives them back to the carrier byte
 * for byte while the caller can neither read nor alter them.
 */
const TAG = "swy2.";
/** The first version: the details as plain base64 JSON, which a caller could read and forge. Refused. */
const LEGACY_TAG = "swy1.";

/** The envelopes of a request, opened before its pure read: each of ours by its text. */
export type OpenedEnvelopes = ReadonlyMap<string, Obj[]>;

const NONE: OpenedEnvelopes = new Map();

/** The 503 of a deployment without REASONING_SEAL_KEY, for a request that needs it: never sealed in the clear instead. */
export function noSealKey(): ApiError {
  return new ApiError(
    503,
    'This deployment cannot seal reasoning (its REASONING_SEAL_KEY secret is not set: docs/deploy.md), so it neither produces nor opens encrypted_content. Leave "reasoning.encrypted_content" out of `include` and the reasoning items out of `input`.',
  );
}

/** The sealer of an answer that asked for sealing: there is one, since the read refused the request otherwise. */
export function requireSealer(sealer: Sealer | null): Sealer {
  if (!sealer) throw noSealKey();
  return sealer;
}

/**
 * The async step before the pure read (`chatFromResponses`): opens every envelope of ours among the
 * input's reasoning items. One altered, sealed for another account or under a key no longer kept is
 * refused (400) naming where it is; without a sealer any of ours is a 503. Others' envelopes are left to
 * the read (OpenAI's own pass on as they came).
 */
export async function openEnvelopes(json: Obj, sealer: Sealer | null): Promise<OpenedEnvelopes> {
  if (!Array.isArray(json.input)) return NONE;
  const ours = new Map<string, number>();
  (json.input as unknown[]).forEach((item, i) => {
    if (isObj(item) && item.type === "reasoning" && typeof item.encrypted_content === "string" && item.encrypted_content.startsWith(TAG))
      if (!ours.has(item.encrypted_content)) ours.set(item.encrypted_content, i);
  });
  if (ours.size === 0) return NONE;
  if (!sealer) throw noSealKey();
  const opened = new Map<string, Obj[]>();
  await Promise.all(
    [...ours].map(async ([content, i]) => {
      const details = parseDetails(await sealer.open(content.slice(TAG.length)));
      if (!details)
        refuse(
          `input.${i}.encrypted_content: this reasoning envelope does not open: it was altered, or sealed for another account (or under a key this deployment no longer keeps). Send reasoning items back exactly as this router returned them to your account, or leave them out.`,
        );
      opened.set(content, details);
    }),
  );
  return opened;
}

function parseDetails(plain: string | null): Obj[] | null {
  if (plain === null) return null;
  try {
    const details: unknown = JSON.parse(plain);
    return Array.isArray(details) && details.every(isObj) ? details : null;
  } catch {
    return null;
  }
}

/**
 * The reasoning details an `encrypted_content` carries (pure): ours as opened beforehand; anyone else's
 * (OpenAI's own, from an earlier turn elsewhere) as one opaque encrypted detail, passed on as it came.
 * Our first version (`swy1.`, readable and forgeable) is refused.
 */
export function reasoningDetails(content: string, opened: OpenedEnvelopes, at: string): Obj[] {
  if (content.startsWith(TAG)) return opened.get(content) ?? refuse(`${at}.encrypted_content: this reasoning envelope was not opened.`);
  if (content.startsWith(LEGACY_TAG))
    refuse(
      `${at}.encrypted_content: reasoning envelopes of the first version (swy1.) are no longer accepted: they were not sealed, so anyone could forge one. Leave out reasoning items from before this router sealed them (or start a new conversation).`,
    );
  return [{ type: "reasoning.encrypted", data: content, format: "openai-responses-v1" }];
}

/** Where an envelope goes before it is sealed: the prefix of a placeholder (never sent: each is replaced before the answer leaves). */
const PENDING = "swy2-pending-";

/**
 * Reasoning details waiting to be sealed, for one answer or stream. The pure renderers put a placeholder
 * where an envelope goes (random per answer, so nothing else in the answer can match it; the details
 * themselves stay here); the async step after them (`fill`) puts in each envelope, sealed once however
 * often it shows (a stream shows an item when it is done and again in the final response).
 */
export class PendingSeals {
  private readonly details: Obj[][] = [];
  private readonly envelopes: Array<Promise<string>> = [];
  private readonly placeholders: RegExp;
  private readonly prefix: string;

  constructor() {
    const id = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
    this.prefix = `${PENDING}${id}-`;
    this.placeholders = new RegExp(`${this.prefix}(\\d+)`, "g");
  }

  /** The placeholder of one item's details. */
  placeholder(details: Obj[]): string {
    this.details.push(details);
    return `${this.prefix}${this.details.length - 1}`;
  }

  /** `text` with every placeholder replaced by its envelope. */
  async fill(text: string, sealer: Sealer): Promise<string> {
    const found = [...new Set(Array.from(text.matchAll(this.placeholders), (m) => Number(m[1])))];
    if (found.length === 0) return text;
    const sealed = new Map(await Promise.all(found.map(async (n) => [n, await this.envelope(n, sealer)] as const)));
    return text.replace(this.placeholders, (_, n: string) => sealed.get(Number(n))!);
  }

  private envelope(n: number, sealer: Sealer): Promise<string> {
    return (this.envelopes[n] ??= sealer.seal(JSON.stringify(this.details[n])).then((token) => TAG + token));
  }
}

/**
 * The async step after a stream's pure render: its text is held to whole events (a placeholder may be
 * split between writes) and each event goes out with its placeholders sealed.
 */
export function sealingStep(seals: PendingSeals, sealer: Sealer): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let held = "";
  return new TransformStream({
    async transform(chunk, controller) {
      held += decoder.decode(chunk, { stream: true });
      const end = held.lastIndexOf("\n\n");
      if (end < 0) return;
      const whole = held.slice(0, end + 2);
      held = held.slice(end + 2);
      controller.enqueue(encoder.encode(await seals.fill(whole, sealer)));
    },
    async flush(controller) {
      held += decoder.decode();
      if (held !== "") controller.enqueue(encoder.encode(await seals.fill(held, sealer)));
    },
  });
}
