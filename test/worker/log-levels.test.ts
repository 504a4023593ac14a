import { describe, it, expect, vi, afterEach } from "vitest";
import { signUp } from "./console-helpers";
import { checkout, deliverEvent, eventsAbout, paySession } from "./stripe-helpers";

// What went as it should is logged as information: wrangler shows console.error as a red `✘ [ERROR]`, and
// a granted payment must not read as a failure to whoever watches the logs.

afterEach(() => vi.restoreAllMocks());

describe("log levels", () => {
  it("a granted payment's Stripe event is logged at info level, not as an error", async () => {
    const person = await signUp();
    const { sessionId } = await checkout(person.client, "12");
    await paySession(sessionId);
    const [completed] = await eventsAbout(sessionId);
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const infos = vi.spyOn(console, "log").mockImplementation(() => {});
    const res = await deliverEvent(completed!);
    expect(await res.json()).toEqual({ received: true, outcome: "granted" });
    expect(errors.mock.calls).toEqual([]);
    expect(infos.mock.calls).toContainEqual(["stripe event", expect.objectContaining({ type: "checkout.session.completed", outcome: "granted" })]);
  });
});
