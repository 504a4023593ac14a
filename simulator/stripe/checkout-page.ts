// The hosted payment page a session's `url` opens: a plain checkout form a browser test can fill
// in, taking Stripe's test cards; paying redirects to `success_url` as Stripe Checkout does.
import type { IncomingMessage, ServerResponse } from "node:http";
import type Stripe from "stripe";
import { checkCard } from "./cards";
import { paySession, type Payer } from "./checkout";
import { ApiError } from "./errors";
import { formatMoney } from "./money";
import type { SessionRecord, Store } from "./store";

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

type Fields = { email: string; cardNumber: string; cardExpiry: string; cardCvc: string; billingName: string };
type Problem = { field: keyof Fields | null; message: string };

/** Text and double-quoted attribute values (the only quoting used here). */
function esc(s: string): string {
  return s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f8fa;color:#1a1f36}
main{max-width:920px;margin:0 auto;padding:32px 16px;display:flex;flex-wrap:wrap;gap:32px}
section{flex:1 1 360px}.badge{background:#ffde92;color:#663c00;border-radius:4px;padding:2px 6px;font-size:12px;font-weight:600}
ul{list-style:none;padding:0}li{display:flex;justify-content:space-between;gap:16px;padding:8px 0;border-bottom:1px solid #e3e8ee}
.total{font-weight:600}label{display:block;margin-top:12px;font-size:14px;color:#3c4257}
input{box-sizing:border-box;width:100%;padding:10px;border:1px solid #c9ced6;border-radius:6px;font:inherit}
input[aria-invalid=true]{border-color:#df1b41}.row{display:flex;gap:12px}.row>div{flex:1}
#error{color:#df1b41}button{margin-top:20px;width:100%;padding:12px;border:0;border-radius:6px;background:#0570de;color:#fff;font:inherit;font-weight:600}
a{color:#0570de}`;

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${esc(title)}</title><style>${STYLE}</style></head><body>${body}</body></html>`;
}

function plain(title: string, text: string, link?: { href: string; label: string }): string {
  const a = link ? `<p><a href="${esc(link.href)}">${esc(link.label)}</a></p>` : "";
  return layout(title, `<main><section><h1>${esc(title)}</h1><p>${esc(text)}</p>${a}</section></main>`);
}

function summary(s: Stripe.Checkout.Session, items: Stripe.LineItem[]): string {
  const currency = s.currency ?? "usd";
  const rows = items
    .map((i) => {
      const unit = i.price?.unit_amount ?? 0;
      const each = (i.quantity ?? 1) > 1 ? `<br><small>Qty ${i.quantity} · ${esc(formatMoney(unit, currency))} each</small>` : "";
      return `<li><span>${esc(i.description ?? "")}${each}</span><span>${esc(formatMoney(i.amount_total, currency))}</span></li>`;
    })
    .join("");
  const total = `<li class="total"><span>Total due</span><span id="total">${esc(formatMoney(s.amount_total ?? 0, currency))}</span></li>`;
  const back = s.cancel_url ? `<p><a id="back" href="${esc(s.cancel_url)}">← Back</a></p>` : "";
  return `<section>${back}<p><span class="badge">TEST MODE</span></p><h1>Pay ${esc(formatMoney(s.amount_total ?? 0, currency))}</h1><ul>${rows}${total}</ul></section>`;
}

function input(id: keyof Fields, label: string, value: string, problem: Problem | undefined, attrs: string): string {
  const bad = problem?.field === id ? ' aria-invalid="true" aria-describedby="error"' : "";
  return `<div><label for="${id}">${label}</label><input id="${id}" name="${id}" value="${esc(value)}" required ${attrs}${bad}></div>`;
}

function form(record: SessionRecord, values: Partial<Fields>, problem?: Problem): string {
  const s = record.session;
  const error = problem ? `<p id="error" role="alert">${esc(problem.message)}</p>` : "";
  const fields = [
    input("email", "Email", values.email ?? s.customer_email ?? "", problem, 'type="email" autocomplete="email"'),
    input("cardNumber", "Card number", values.cardNumber ?? "", problem, 'inputmode="numeric" autocomplete="cc-number" placeholder="1234 1234 1234 1234"'),
    `<div class="row">${input("cardExpiry", "Expiration (MM / YY)", values.cardExpiry ?? "", problem, 'autocomplete="cc-exp" placeholder="MM / YY"')}${input("cardCvc", "CVC", "", problem, 'inputmode="numeric" autocomplete="cc-csc" placeholder="CVC"')}</div>`,
    input("billingName", "Name on card", values.billingName ?? "", problem, 'autocomplete="cc-name"'),
  ].join("");
  const pay = `Pay ${formatMoney(s.amount_total ?? 0, s.currency ?? "usd")}`;
  const body = `<form method="post" action="/c/pay/${esc(s.id)}" novalidate>${fields}${error}<button type="submit" id="submit">${esc(pay)}</button></form>`;
  return layout("Checkout", `<main>${summary(s, record.items)}<section><h2>Pay with card</h2>${body}</section></main>`);
}

/** The page for a session that can no longer be paid, with its status code. */
function closed(record: SessionRecord, status: number): { status: number; html: string } {
  const s = record.session;
  if (s.status === "complete") {
    const link = s.success_url ? { href: successUrl(s), label: "Return to the merchant" } : undefined;
    return { status, html: plain("Payment complete", "This Checkout Session has already been paid. Thank you!", link) };
  }
  return { status, html: plain("Checkout Session expired", "This Checkout Session has expired and can no longer be paid.") };
}

function successUrl(s: Stripe.Checkout.Session): string {
  return s.success_url!.split("{CHECKOUT_SESSION_ID}").join(s.id);
}

/** What the card form refuses before any payment is tried, or the card to try. */
function check(f: Fields, now: Date): { problem: Problem } | { payer: Payer } {
  if (f.email.trim() === "") return { problem: { field: "email", message: "Your email address is incomplete." } };
  if (!EMAIL.test(f.email.trim())) return { problem: { field: "email", message: "Your email address is invalid." } };
  const card = checkCard({ number: f.cardNumber, expiry: f.cardExpiry, cvc: f.cardCvc }, now);
  if ("error" in card) return { problem: { field: card.field, message: card.error.message } };
  if (f.billingName.trim() === "") return { problem: { field: "billingName", message: "Your name on card is incomplete." } };
  return { payer: { card: card.card, expMonth: card.expMonth, expYear: card.expYear, email: f.email.trim(), name: f.billingName.trim() } };
}

function html(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "Content-Type": "text/html; charset=utf-8", "Content-Length": Buffer.byteLength(text), "Cache-Control": "no-store" });
  res.end(text);
}

/** `GET|POST /c/pay/:id`: the form, or a payment attempt from it (303 to success_url when paid). */
export function servePage(req: IncomingMessage, res: ServerResponse, store: Store, id: string, body: string): void {
  const record = store.sessions.get(id);
  if (!record) return html(res, 404, plain("Page not found", "This Checkout Session does not exist."));
  if (req.method !== "POST") {
    if (record.session.status !== "open") {
      const page = closed(record, 200);
      return html(res, page.status, page.html);
    }
    return html(res, 200, form(record, {}));
  }
  if (record.session.status !== "open") {
    const page = closed(record, 409);
    return html(res, page.status, page.html);
  }
  const posted = new URLSearchParams(body);
  const f: Fields = {
    email: posted.get("email") ?? "",
    cardNumber: posted.get("cardNumber") ?? "",
    cardExpiry: posted.get("cardExpiry") ?? "",
    cardCvc: posted.get("cardCvc") ?? "",
    billingName: posted.get("billingName") ?? "",
  };
  const checked = check(f, new Date());
  if ("problem" in checked) return html(res, 400, form(record, f, checked.problem));
  try {
    paySession(store, id, checked.payer);
  } catch (err) {
    if (err instanceof ApiError && err.status === 402) return html(res, 402, form(record, f, { field: "cardNumber", message: err.body.message }));
    throw err;
  }
  const s = record.session;
  res.writeHead(303, { Location: s.success_url ? successUrl(s) : `/c/pay/${id}`, "Content-Length": 0 });
  res.end();
}
