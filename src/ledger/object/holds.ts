import { windowStart } from "../../keys/usage-windows";
import type { AdmitRequest, AdmitResult, AdmitRoute, LeaseRequest, LeaseResult, RenewRequest, RenewResult } from "../contract";
import { available, heldNano, keyHeldNano, keyUsageNano } from "./balance";
import { countFree } from "./free-slots";
import type { LedgerDb } from "./ledger-db";
import { settleBatch } from "./settles";

// What the ledger holds for requests in flight: a request's own hold (admit), an isolate's slice of the
// balance (lease), and their renewals while the requests run. docs/money.md, Admission.

/**
 * Admits a request when its key's remaining limit and the balance can pay at least its least hold
 * (`minHoldNano`): it holds what it may cost as it stands, or as much as can be paid (docs/money.md,
 * Admission). Refused otherwise, saying which of the two is short and by how much could be paid.
 */
export function admit(db: LedgerDb, req: AdmitRequest): AdmitResult {
  const { sql } = db;
  if (req.settle) settleBatch(db, req.settle.items, req.settle.slices);
  let keyRoom = Infinity;
  let keyShort = false; // the key's limit cannot cover the carrier's whole bill (keyHoldNano)
  const keyHold = req.limitNano !== null && req.paid ? req.keyHoldNano : undefined;
  if (req.limitNano !== null) {
    // Holds and unseen costs count against the current window: they will settle into it (or a later one).
    const from = windowStart(req.limitReset ?? null, db.now());
    const used = keyUsageNano(sql, req.keyHash, from, req.includeByok === true) + keyHeldNano(sql, req.keyHash) + (req.unseenNano ?? 0);
    if (used >= req.limitNano) return { ok: false, reason: "key_limit", availableNano: 0 };
    keyRoom = req.limitNano - used;
    // The carrier's whole bill must fit in what is left of the limit; then the balance alone decides (it holds the fee).
    if (keyHold !== undefined) {
      if (keyRoom < keyHold) keyShort = true;
      else keyRoom = Infinity;
    }
  }
  const now = db.now();
  const room = Math.min(keyRoom, available(sql));
  const least = Math.min(req.minHoldNano ?? req.holdNano, req.holdNano);
  const canPay = req.paid && !keyShort && room > 0 && room >= least;
  const granted = canPay ? Math.min(req.holdNano, room) : 0;
  let route: AdmitRoute | undefined;
  if (req.free) {
    // A plan with a free endpoint takes a free slot; without one left, only its priced endpoints may serve.
    const hit = countFree(sql, req.free, now, req.genId);
    if (hit && !canPay) return { ok: false, reason: "rate_limit", ...hit };
    if (hit) route = "paid_only";
    else if (req.paid && !canPay) route = "free_only";
  } else if (req.paid && !canPay)
    return keyShort || keyRoom < least
      ? { ok: false, reason: "key_limit", availableNano: keyShort ? keyRoom : room }
      : { ok: false, reason: "balance", availableNano: room, heldNano: heldNano(sql) };
  const holdNano = route === "free_only" ? 0 : granted;
  // Every admitted request has a row, free ones too: should it die, its record says so.
  sql.exec(
    "INSERT OR IGNORE INTO holds (gen_id, key_hash, amount_nano, key_amount_nano, created_at, renewed_at, record) VALUES (?, ?, ?, ?, ?, ?, ?)",
    req.genId,
    req.keyHash,
    holdNano,
    keyHold === undefined ? null : route === "free_only" ? 0 : keyHold,
    now,
    now,
    JSON.stringify(req.abandoned),
  );
  db.scheduleAlarm(db.timings.holdTtlMs);
  return route ? { ok: true, route, holdNano } : { ok: true, holdNano };
}

/**
 * Grants an isolate a slice of the balance to admit requests locally (no round trip per request).
 * Refused when what is available cannot pay the asking request's whole hold (that request then asks
 * `admit`, which may grant it less); otherwise at least that hold and at most half of what is
 * available. A free model's request (hold 0) always gets a slice, of nothing when nothing is
 * available: its admissions are still counted.
 */
export function lease(db: LedgerDb, req: LeaseRequest): LeaseResult {
  if (req.settle) settleBatch(db, req.settle.items, req.settle.slices);
  const left = available(db.sql);
  if (req.holdNano > 0 && (left <= 0 || left < req.holdNano)) return { ok: false, reason: "balance", availableNano: left };
  // At most half of what is available, so other isolates of the account still find money.
  const share = left > 0 ? Math.min(req.wantNano, Math.ceil(left / 2)) : 0;
  const grantNano = Math.max(req.holdNano, share);
  const now = db.now();
  db.sql.exec("INSERT INTO slices (lease_id, amount_nano, created_at, renewed_at) VALUES (?, ?, ?, ?)", req.leaseId, grantNano, now, now);
  db.scheduleAlarm(db.timings.leaseTtlMs);
  return { ok: true, grantNano };
}

/** Keeps the slices and holds of running requests alive (and records how many requests each slice admitted). */
export function renew(db: LedgerDb, req: RenewRequest): RenewResult {
  const now = db.now();
  const gone: string[] = [];
  db.transaction(() => {
    for (const s of req.slices) {
      const found = db.sql
        .exec(
          "UPDATE slices SET renewed_at = ?, admitted = MAX(admitted, ?) WHERE lease_id = ? AND released_at IS NULL RETURNING lease_id",
          now,
          s.admitted,
          s.leaseId,
        )
        .toArray();
      if (found.length === 0) gone.push(s.leaseId);
    }
    for (const id of req.holds) {
      const found = db.sql.exec("UPDATE holds SET renewed_at = ? WHERE gen_id = ? RETURNING gen_id", now, id).toArray();
      if (found.length === 0) gone.push(id);
    }
  });
  return { gone };
}
