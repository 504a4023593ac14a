// The records archive's load test Worker (`npm run archive-load`, scripts/archive-load.ts): script-only,
// never deployed. It imports the tree's own flushGenerations (src/db/generations.ts), archiveRecords
// (src/generations/archive-records.ts), the archive's format and index, and the worker tests' record
// builder (test/worker/synthetic-record.ts); scripts/archive-load.ts bundles it with esbuild and runs it in
// Miniflare with a local D1 (`DB`, the tree's migrations applied) and R2 (`ARCHIVE`) persisted to a
// temporary directory.
//
//   POST /seed    {from, count, n, accounts, day0, spanMs, cutoffs}  records from..from+count-1 of n, flushed in one call
//   POST /archive {now, retentionDays, partRecords, partsPerRun}     one archiveRecords call
//   POST /prune-attempts {before}                                   the health fold's prune of endpoint attempts
//   GET  /size                                                      D1's size as D1 reports it, and as SQLite counts it
//   GET  /d1?cutoff=ms                                              what D1 holds: records, cost, those before the cutoff
//   GET  /index                                                     the archive index's totals
//   GET  /list                                                      the bucket as listed: objects and bytes
//   POST /verify  {offset, limit, previous}                         reads archived objects in index order and checks each
//   GET  /sample?n=                                                 n random archived ids (random parts, a random record each)
//   GET  /read?account=&id=                                         a lookup: the index for the id's day, then R2
//   GET  /read-object?key=&id=                                      one R2 get + gunzip + find
//
// Record i of n is created at day0 + (i + ½)·spanMs/n (time order, as records arrive) by account i mod
// `accounts`, built by syntheticRecord (≈ 900 bytes of JSON with one carrier attempt), its id and the
// carrier's completion id fixed by i but random-looking.
import { flushGenerations } from "../src/db/generations";
import { archivedPartsOfDay } from "../src/db/archive-index";
import { archiveRecords } from "../src/generations/archive-records";
import { lineRecord, sha256Bytes, utcDay } from "../src/generations/archive-format";
import { generationIdTime } from "../src/generations/generation-id";
import { syntheticRecord } from "../test/worker/synthetic-record";

const accountId = (a) => `acct_load${String(a).padStart(7, "0")}`;

const json = (value, status = 200) => new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });

async function body(request) {
  return request.json();
}

/** The NDJSON text of an archive object's bytes. */
async function gunzipText(bytes) {
  return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
}

async function pragma(db, name) {
  try {
    const row = await db.prepare(`PRAGMA ${name}`).first();
    return row ? Number(Object.values(row)[0]) : null;
  } catch (err) {
    return `refused: ${err instanceof Error ? err.message : String(err)}`.slice(0, 200);
  }
}

/** `digits` hex digits that look random and depend only on (i, salt): a mulberry32 stream seeded by both. */
function noise(i, salt, digits) {
  let a = (Math.imul(i, 0x9e3779b1) ^ Math.imul(salt, 0x85ebca6b)) >>> 0;
  let out = "";
  while (out.length < digits) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out += ((t ^ (t >>> 14)) >>> 0).toString(16).padStart(8, "0");
  }
  return out.slice(0, digits);
}

async function seed(env, o) {
  const records = [];
  const sums = o.cutoffs.map(() => ({ records: 0, cost_nano: 0 }));
  let cost = 0;
  let jsonBytes = 0;
  for (let i = o.from; i < o.from + o.count; i++) {
    const createdAt = o.day0 + Math.floor(((i + 0.5) * o.spanMs) / o.n);
    // Ids of the time-sortable form whose 80 "random" bits are fixed by i (a repeated call upserts the same
    // records), and a carrier's completion id: as little compressible as real ones.
    const id = `gen-${createdAt.toString(16).padStart(12, "0")}${noise(i, 1, 20)}`;
    const r = syntheticRecord(accountId(i % o.accounts), createdAt, i, { id, upstreamId: `chatcmpl-${noise(i, 2, 24)}`, app: "archive-load" });
    const text = JSON.stringify(r);
    jsonBytes += text.length;
    records.push(text);
    cost += r.costNano;
    o.cutoffs.forEach((cutoff, k) => {
      if (createdAt < cutoff) {
        sums[k].records++;
        sums[k].cost_nano += r.costNano;
      }
    });
  }
  await flushGenerations(env.DB, records);
  return { records: records.length, cost_nano: cost, json_bytes: jsonBytes, before_cutoffs: sums };
}

async function size(env) {
  const probe = await env.DB.prepare("SELECT 1").run();
  const counts = await env.DB.prepare(
    "SELECT (SELECT count(*) FROM generations) AS generations, (SELECT count(*) FROM endpoint_attempts) AS attempts, (SELECT count(*) FROM archive_parts) AS parts, (SELECT count(*) FROM archive_rollups) AS rollups",
  ).first();
  return {
    size_after: typeof probe.meta.size_after === "number" ? probe.meta.size_after : null,
    page_size: await pragma(env.DB, "page_size"),
    page_count: await pragma(env.DB, "page_count"),
    freelist_count: await pragma(env.DB, "freelist_count"),
    ...counts,
  };
}

async function d1Figures(env, cutoff) {
  return env.DB.prepare(
    "SELECT count(*) AS records, coalesce(sum(cost_nano), 0) AS cost_nano, min(created_at) AS oldest, max(created_at) AS newest, (SELECT count(*) FROM generations WHERE created_at < ?1) AS before_cutoff FROM generations",
  )
    .bind(cutoff)
    .first();
}

async function indexFigures(env) {
  return env.DB.prepare(
    "SELECT count(*) AS objects, coalesce(sum(records), 0) AS records, coalesce(sum(bytes), 0) AS bytes, coalesce(sum(cost_nano), 0) AS cost_nano, (SELECT count(*) FROM archive_parts WHERE state = 'writing') AS writing FROM archive_parts WHERE state = 'archived'",
  ).first();
}

/** Every object in the bucket (listing: this test only; the service never lists). */
async function list(env) {
  let objects = 0;
  let bytes = 0;
  let cursor;
  for (let page = 0; page < 100_000; page++) {
    const listed = await env.ARCHIVE.list({ cursor, limit: 1000 });
    for (const o of listed.objects) {
      objects++;
      bytes += o.size;
    }
    if (!listed.truncated) break;
    cursor = listed.cursor;
  }
  return { objects, bytes };
}

const before = (a, b) => a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id);

/**
 * Reads archived objects in index order (account, day, part) and checks each against its index row: the
 * checksum, the count, the cost, every record of the part's account and day, strictly ordered by
 * (created_at, id) within the object and after the previous part of the same day. Together with the
 * total count this says every archived record is there once.
 */
async function verify(env, o) {
  const { results: parts } = await env.DB.prepare(
    "SELECT account_id, day, part, key, records, bytes, sha256, cost_nano, first_at, last_at FROM archive_parts WHERE state = 'archived' ORDER BY account_id, day, part LIMIT ?1 OFFSET ?2",
  )
    .bind(o.limit, o.offset)
    .all();
  const out = { objects: 0, records: 0, bytes: 0, raw_bytes: 0, cost_nano: 0, errors: [], previous: o.previous ?? null };
  const fail = (key, what) => out.errors.length < 20 && out.errors.push(`${key}: ${what}`);
  for (const p of parts) {
    const object = await env.ARCHIVE.get(p.key);
    if (!object) {
      fail(p.key, "missing");
      continue;
    }
    const bytes = new Uint8Array(await object.arrayBuffer());
    if (bytes.length !== p.bytes) fail(p.key, `${bytes.length} bytes, the index says ${p.bytes}`);
    if ((await sha256Bytes(bytes)) !== p.sha256) fail(p.key, "checksum differs from the index");
    const text = await gunzipText(bytes);
    const records = text
      .split("\n")
      .filter((l) => l !== "")
      .map(lineRecord);
    if (records.length !== p.records) fail(p.key, `${records.length} records, the index says ${p.records}`);
    let cost = 0;
    let prev = out.previous && out.previous.account === p.account_id && out.previous.day === p.day ? out.previous : null;
    for (const r of records) {
      cost += r.costNano;
      if (r.accountId !== p.account_id || utcDay(r.createdAt) !== p.day) fail(p.key, `record ${r.id} is not of ${p.account_id} on ${p.day}`);
      if (prev && !before(prev, r)) fail(p.key, `record ${r.id} is not after ${prev.id}`);
      prev = { account: p.account_id, day: p.day, createdAt: r.createdAt, id: r.id };
    }
    if (cost !== p.cost_nano) fail(p.key, `cost ${cost}, the index says ${p.cost_nano}`);
    if (records.length && (records[0].createdAt !== p.first_at || records.at(-1).createdAt !== p.last_at))
      fail(p.key, "first or last time differs from the index");
    out.previous = prev;
    out.objects++;
    out.records += records.length;
    out.bytes += bytes.length;
    out.raw_bytes += new TextEncoder().encode(text).length;
    out.cost_nano += cost;
  }
  return out;
}

async function sample(env, n) {
  const { results: parts } = await env.DB.prepare("SELECT account_id, key FROM archive_parts WHERE state = 'archived' ORDER BY random() LIMIT ?1")
    .bind(n)
    .all();
  const out = [];
  for (let i = 0; i < n && parts.length; i++) {
    const p = parts[i % parts.length];
    const object = await env.ARCHIVE.get(p.key);
    const lines = (await gunzipText(new Uint8Array(await object.arrayBuffer()))).split("\n").filter((l) => l !== "");
    const r = lineRecord(lines[Math.floor(Math.random() * lines.length)]);
    out.push({ id: r.id, account: p.account_id, key: p.key });
  }
  return out;
}

/** One object read for one id: R2 get, gunzip, find the line. */
async function findIn(env, key, id) {
  const object = await env.ARCHIVE.get(key);
  if (!object) return null;
  const text = await gunzipText(new Uint8Array(await object.arrayBuffer()));
  const at = text.indexOf(`"id":"${id}"`);
  if (at < 0) return null;
  const start = text.lastIndexOf("\n", at) + 1;
  const end = text.indexOf("\n", at);
  return lineRecord(text.slice(start, end < 0 ? undefined : end));
}

/** A lookup as a reader would do it: the day from the id's time, that day's parts in the index (newest first), then R2. */
async function read(env, account, id) {
  const time = generationIdTime(id);
  if (time === undefined) return null;
  for (const p of await archivedPartsOfDay(env.DB, account, utcDay(time))) {
    const found = await findIn(env, p.key, id);
    if (found && found.accountId === account) return { record: found, key: p.key };
  }
  return null;
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      switch (`${request.method} ${url.pathname}`) {
        case "POST /seed":
          return json(await seed(env, await body(request)));
        case "POST /archive": {
          const o = await body(request);
          return json(await archiveRecords(env.DB, env.ARCHIVE, o));
        }
        case "POST /prune-attempts": {
          const o = await body(request);
          const result = await env.DB.prepare("DELETE FROM endpoint_attempts WHERE at < ?1").bind(o.before).run(); // src/db/endpoint-attempts.ts
          return json({ deleted: result.meta.changes });
        }
        case "GET /size":
          return json(await size(env));
        case "GET /d1":
          return json(await d1Figures(env, Number(url.searchParams.get("cutoff"))));
        case "GET /index":
          return json(await indexFigures(env));
        case "GET /list":
          return json(await list(env));
        case "POST /verify":
          return json(await verify(env, await body(request)));
        case "GET /sample":
          return json(await sample(env, Number(url.searchParams.get("n"))));
        case "GET /read": {
          const found = await read(env, url.searchParams.get("account"), url.searchParams.get("id"));
          return json(found ? { id: found.record.id, key: found.key } : null, found ? 200 : 404);
        }
        case "GET /read-object": {
          const found = await findIn(env, url.searchParams.get("key"), url.searchParams.get("id"));
          return json(found ? { id: found.id } : null, found ? 200 : 404);
        }
        case "POST /vacuum":
          try {
            await env.DB.prepare("VACUUM").run();
            return json({ vacuumed: true });
          } catch (err) {
            return json({ vacuumed: false, error: (err instanceof Error ? err.message : String(err)).slice(0, 300) });
          }
        default:
          return json({ error: "not found" }, 404);
      }
    } catch (err) {
      return json({ error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) }, 500);
    }
  },
};
