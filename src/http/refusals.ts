// What the API's refusals say. Each text starts with the words API.md section 3 fixes
// (`Unauthorized`, `Forbidden`, `Not Found`, `Payload Too Large`, `Too Many Requests`: the
// hosted service's clients match on them) and goes on to name the key, record or operation
// that fixes it, so a newcomer reading one answer knows what to do next (docs/api.md, Errors).
// Pure functions: test/http/refusals.test.ts holds every text.
import type { AuthScheme, ForbiddenReason } from "../auth/authenticate.ts";
import { rateText } from "../config/units.ts";

export { rateText };
import type { RateLimit } from "../config/units.ts";

const API_TOKEN = "an API token of the account in the path (accounts.api_tokens, as Authorization: Bearer <token>)";
const SEND_KEY = "the outbound account's key (accounts.outbound.api_keys, as Authorization: Bearer <key>, the smtpAuth scheme)";

export function unauthorized(scheme: AuthScheme | "operator"): string {
  switch (scheme) {
    case "bearerAPIToken":
      return `Unauthorized: send ${API_TOKEN}; \`postroom secret\` mints one and prints the line for the config`;
    case "smtpAuth":
      return `Unauthorized: send ${SEND_KEY}; \`postroom secret\` mints one and prints the line for the config`;
    case "operator":
      return "Unauthorized: operator paths take an operator token (dashboard.admin_tokens, as Authorization: Bearer <token>); `postroom secret` mints one";
  }
}

export function forbidden(reason: ForbiddenReason): string {
  switch (reason) {
    case "other_account":
      return "Forbidden: this token is another account's; use an API token of the account in the path (accounts.api_tokens)";
    case "account_token_on_send":
      return `Forbidden: sends take ${SEND_KEY}, not an account API token; the path names the outbound account's id (accounts.outbound.id)`;
    case "send_key_on_management":
      return `Forbidden: an outbound account's key only sends (POST /api/v0.1/{outboundAccountID}/messages); this path takes ${API_TOKEN}`;
    case "other_outbound_account":
      return "Forbidden: this key is another outbound account's; the path must name the outbound account the key belongs to (accounts.outbound.id)";
    case "not_operator":
      return "Forbidden: operator paths take an operator token (dashboard.admin_tokens), not an account's token or key";
    case "suspended":
      return 'Forbidden: this account is suspended; an operator lifts it with PATCH /api/v0.1/operator/accounts/{id} {"suspended": false}';
    case "read_only":
      return 'Forbidden: this token has the scope "read" only; writes take a token with scopes ["read", "write"] (POST /api/v0.1/operator/accounts/{id}/api_tokens)';
  }
}

/** A write carried by the dashboard's cookie from elsewhere than the dashboard's page (CSRF). */
export const FOREIGN_PAGE =
  "Forbidden: this request must come from the dashboard's own page (X-Postroom-Dashboard: 1, same origin); other callers send an API token";

export const NOT_SIGNED_IN = "Unauthorized: not signed in; sign in with an API token of the account (accounts.api_tokens)";

export const UNKNOWN_SIGN_IN_TOKEN =
  "Unauthorized: that API token does not belong to any account; sign in with a token whose hash is in accounts.api_tokens (an outbound account's key only sends)";

export function tooManySignIns(rate: RateLimit, retryAfterS: number): string {
  const tries = rateText(rate).replace(/^(\d+) calls?/, (_m, n: string) => `${n} ${n === "1" ? "sign-in" : "sign-ins"}`);
  return `Too Many Requests: your address may try ${tries} (dashboard.sign_in_rate); retry after ${retryAfterS} s`;
}

/**
 * 404 for a record: unknown and another account's read the same (tenants are isolated), so
 * the text names only what the caller sent.
 */
export function noRecord(what: string, id: string, listedBy: string): string {
  return `Not Found: no ${what} ${quoted(id)} in this account; ${listedBy} lists them`;
}

export const noMessage = (accountId: string, id: string): string =>
  noRecord("outbound message", id, `GET /api/v0.1/${accountId}/outbound_messages?outbound_account_id=...`);

/** An {outboundAccountID} the account does not have: they are declared in the config only. */
export function noOutboundAccount(id: string): string {
  return `Not Found: no outbound account ${quoted(id)} in this account; its outbound accounts are its accounts.outbound in the config`;
}

/** A signed public link (attachment, tracking, unsubscribe) that is not, or no longer, valid. */
export const NO_SUCH_LINK = "Not Found: this link is not valid or has expired";

/** An ID as the caller sent it, bounded so that a long path cannot make a long answer. */
function quoted(id: string): string {
  return JSON.stringify(id.length > 64 ? `${id.slice(0, 64)}...` : id);
}

/** 404 for a path the API does not have. */
export const NO_SUCH_PATH = "Not Found: no such path or method; the operations are listed in GET /api/v0.1/openapi.json (docs/api.md)";

/** `key`: the config key that sets the limit; null for a fixed one (the dashboard's sign-in). */
export function payloadTooLarge(limitBytes: number, key: string | null): string {
  if (key === null) return `Payload Too Large: the body is over ${limitBytes} bytes`;
  return `Payload Too Large: the body is over ${limitBytes} bytes, the limit ${key} sets; send less or raise ${key}`;
}

/** Whose calls a budget counts: an account's integrations, an outbound account's sends, a dashboard session. */
export type RateOwner = { kind: "account" | "outbound"; id: string } | { kind: "session" };

const RATE_OWNERS = {
  account: { who: (id: string) => `account ${id}`, key: "accounts.rate_limit" },
  outbound: { who: (id: string) => `outbound account ${id}`, key: "accounts.outbound.send_rate_limit" },
  session: { who: () => "this dashboard session", key: "dashboard.rate_limit" },
};

/** A call over its budget: who may call how often, the key that sets it, and when to come back. */
export function tooManyRequests(owner: RateOwner, rate: RateLimit, retryAfterS: number): string {
  const { who, key } = RATE_OWNERS[owner.kind];
  const name = who("id" in owner ? owner.id : "");
  return `Too Many Requests: ${name} allows ${rateText(rate)} (${key}); retry after ${retryAfterS} s`;
}

/** 422 of a target (or webhook) on a private address, with the key that allows it where one does. */
export function privateAddress(problem: string, host: string, allowKey: string | null): string {
  const fix = allowKey ? `; set ${allowKey} = true to allow it (for tests and loopback setups only, never in production)` : "";
  return `points at ${problem} (${host})${fix}`;
}

/** Why mail may not go out from `domain` yet, and what fixes it (E15-E18). */
export function unverifiedDomain(domain: string, accountId: string, domainId: string): string {
  const at = `/api/v0.1/${accountId}/sending_domains/${domainId}`;
  return (
    `domain ${domain} is not verified: publish the records in dns_records of GET ${at}, ` +
    `then POST ${at}/verify; test_mode: true sends without verification`
  );
}

export function unknownSendingDomain(domain: string, accountId: string): string {
  return `domain ${domain} is not a sending domain of this account: add it with POST /api/v0.1/${accountId}/sending_domains, then verify it`;
}
