// A webhook endpoint made through the account API (docs/webhooks.md, "Endpoints"): one
// more receiver of an outbound account's events, besides the config's `webhook`, with its
// own URL, event filter, token and signing secret, and its own lane in the outbox
// (outbox.port.ts, endpointTarget). Stored by webhook-endpoints.repo.ts.
import { LIFECYCLE_KINDS } from "./kinds.ts";

export interface WebhookEndpoint {
  id: string;
  accountId: string;
  outboundAccountId: string;
  url: string;
  /** The kinds posted there; empty = every kind. */
  events: string[];
  /** Sent as `Authorization: Bearer <token>`; null = no Authorization header. */
  token: string | null;
  /** The Standard Webhooks secret ("whsec_..."), made by Postroom and shown once. */
  signingSecret: string;
  createdAtMs: number;
}

/** The kinds an endpoint's filter may name: those posted to webhooks (kinds.ts). */
export const FILTER_KINDS: readonly string[] = LIFECYCLE_KINDS;

/** The first kind of `events` no webhook is ever posted, or null when all are known. */
export const unknownKind = (events: readonly string[]): string | null => events.find((k) => !FILTER_KINDS.includes(k)) ?? null;

/**
 * The filter as stored: ",delivery,bounce," (so a kind is found as ",kind,"), or "" for
 * every kind. Sorted and without repeats, so one filter has one spelling.
 */
export const encodeFilter = (events: readonly string[]): string => {
  const kinds = [...new Set(events)].sort();
  return kinds.length === 0 ? "" : `,${kinds.join(",")},`;
};

export const decodeFilter = (stored: string): string[] => stored.split(",").filter((k) => k !== "");

/** Whether a stored filter takes `kind`. */
export const filterTakes = (stored: string, kind: string): boolean => stored === "" || stored.includes(`,${kind},`);

/** A new Standard Webhooks secret: 32 random bytes. */
export const newEndpointSecret = (): string => `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64")}`;
