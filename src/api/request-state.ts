// What the front handler learned about a request (who is calling, how large a body may
// be) handed to the Elysia routes. Keyed by the Request object, so it lives exactly as
// long as the request does.
import type { Principal } from "../auth/accounts.ts";
import type { LogFields } from "../lib/logger.ts";
import type { IdempotentRequest } from "./idempotent-request.ts";

export interface RequestState {
  principal: Principal | null;
  /** The JSON body, read and parsed by the front handler (null when empty). */
  body: unknown;
  /** The client's address: the connecting one, or the one a trusted proxy reported (client-address.ts); null in-process. */
  remoteIp: string | null;
  /** The request's id: its X-Request-Id, request_id in the log. */
  requestId: string;
  /** Fields a route adds to the request's `http request` line (E11: the message_id it queued). */
  logFields: LogFields;
  /** E11 with an Idempotency-Key it claimed. */
  idempotent?: IdempotentRequest | null;
}

const states = new WeakMap<Request, RequestState>();

export const setRequestState = (req: Request, state: RequestState): void => void states.set(req, state);
export const requestState = (req: Request): RequestState | undefined => states.get(req);
