/**
 * workerd's internal errors, as `npm start` shows them. A carrier workerd could not reach (locally, with real
 * carriers and no network) gives, per attempt, an internal error with a native stack trace, then `Uncaught Error: internal error` although the
 * Worker caught the rejected fetch (it answers the attempt as "the carrier could not be reached" and fails
 * over). `npm start` shows one line per carrier host and request instead: the host and the reason, nothing
 * of the request (its key, prompt and query string never appear in these lines). A client that left before its
 * answer (workerd's write to it failing: the start-up poll giving up on a slow first answer, a caller gone)
 * is the client's doing, not a failure: not shown.
 */

const ANSI = /\u001b\[[0-9;]*m/g;
/** `… DNS lookup failed.; params.host = api.groq.com; params.service = ; gai_strerror(status) = Name or service not known` */
const DNS_FAILED = /DNS lookup failed\.; params\.host = ([^;\s]+);.*gai_strerror\(status\) = ([^;]+)/;
/** The rejection workerd reports again as uncaught, by its reference (the Worker handled it). */
const INTERNAL_UNCAUGHT = /Uncaught Error: internal error; reference = /;
/** workerd could not write an answer: its client had gone. */
const CLIENT_GONE = /getCaughtExceptionAsKj\(\) = .*disconnected: ::write\(.*\): (Broken pipe|Connection reset by peer)/;
/** The native stack trace that follows workerd's internal error line. */
const STACK = /^\s+stack: /;
/** wrangler's request log line: the request whose failures were reported is over. */
const REQUEST_DONE = /^\[wrangler:info\] [A-Z]+ \//;

/** A filter over wrangler's output lines: the line to show (maybe rewritten), or null to drop it. */
export function workerdErrorLines(): (line: string) => string | null {
  const reported = new Set<string>();
  let inInternalError = false;
  // workerd's "Uncaught … internal error" is dropped only after a failure explained above in the same
  // request: any other one is a real uncaught error and stays visible.
  let explained = false;
  return (line) => {
    const plain = line.replace(ANSI, "");
    if (inInternalError && STACK.test(plain)) return null;
    inInternalError = false;
    if (REQUEST_DONE.test(plain)) {
      reported.clear();
      explained = false;
    }
    const dns = DNS_FAILED.exec(plain);
    if (dns) {
      inInternalError = explained = true;
      const [, host, reason] = dns;
      if (reported.has(host!)) return null;
      reported.add(host!);
      return `carrier unreachable: ${host} (DNS lookup failed: ${reason!.trim()})`;
    }
    if (CLIENT_GONE.test(plain)) {
      inInternalError = explained = true;
      return null;
    }
    if (explained && INTERNAL_UNCAUGHT.test(plain)) return null;
    return line;
  };
}
