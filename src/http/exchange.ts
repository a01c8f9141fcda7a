// One request's exchange with the server (serve.ts makes it): what only the connection
// knows (the client's address), the id it is logged under, what its log line gathers on
// the way, and what must be done once it is answered. The router derives these into every
// route's context (router.ts), so middleware and routes read them there like the rest.
import type { LogFields } from "../lib/logger.ts";

/** Run once the answer is made; `status` is null when the request failed with an exception. */
export type AfterAnswer = (status: number | null) => Promise<void> | void;

export class Exchange {
  /** Who the request was authenticated as: the log line's account_id. */
  accountId: string | undefined = undefined;
  /** Fields a route adds to the request's `http request` line (E11: the message_id it queued). */
  readonly logFields: LogFields = {};
  /** What middleware holds until the answer is made (E11: its memory, its Idempotency-Key): serve.ts awaits each. */
  readonly afterAnswer: AfterAnswer[] = [];

  constructor(
    /** The client's address: the connecting one, or the one a trusted proxy reported (client-address.ts); null in-process. */
    readonly remoteIp: string | null,
    /** The request's id: its X-Request-Id, request_id in the log. */
    readonly requestId: string,
  ) {}
}

// The request carries its exchange into the router under a key only this module knows.
// Not a copy of the request: Bun cannot cancel the body stream of a Request made from
// another (a body over its cap would hang the request).
const EXCHANGE = Symbol("exchange");
type Carrier = Request & { [EXCHANGE]?: Exchange };

/** Hands `exchange` to the router with `req` (serve.ts). */
export function attachExchange(req: Request, exchange: Exchange): void {
  (req as Carrier)[EXCHANGE] = exchange;
}

/** What every route's context holds about its request (derived by the router). */
export type RequestContext = {
  remoteIp: string | null;
  requestId: string;
  logFields: LogFields;
};

/** The exchange of a request; a request that did not come through serve.ts gets an empty one. */
export function exchangeOf(request: Request): Exchange {
  return ((request as Carrier)[EXCHANGE] ??= new Exchange(null, ""));
}

export function requestContextOf(request: Request): RequestContext {
  const exchange = exchangeOf(request);
  return { remoteIp: exchange.remoteIp, requestId: exchange.requestId, logFields: exchange.logFields };
}
