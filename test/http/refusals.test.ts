// Every refusal text (src/http/refusals.ts): the words API.md section 3 fixes first, then
// the key, record or operation that fixes it.
import { describe, expect, test } from "bun:test";
import {
  forbidden,
  noOutboundAccount,
  noRecord,
  payloadTooLarge,
  privateAddress,
  rateText,
  tooManyRequests,
  tooManySignIns,
  unauthorized,
  unknownSendingDomain,
  unverifiedDomain,
} from "../../src/http/refusals.ts";

const MIN = 60_000;

describe("refusal texts", () => {
  test.each([
    [
      "a management call without a token",
      unauthorized("bearerAPIToken"),
      "Unauthorized: send an API token of the account in the path (accounts.api_tokens, as Authorization: Bearer <token>); `postroom secret` mints one and prints the line for the config",
    ],
    [
      "a send without a key",
      unauthorized("smtpAuth"),
      "Unauthorized: send the outbound account's key (accounts.outbound.api_keys, as Authorization: Bearer <key>, the smtpAuth scheme); `postroom secret` mints one and prints the line for the config",
    ],
    [
      "an operator path without a token",
      unauthorized("operator"),
      "Unauthorized: operator paths take an operator token (dashboard.admin_tokens, as Authorization: Bearer <token>); `postroom secret` mints one",
    ],
    [
      "E11 with the account's API token",
      forbidden("account_token_on_send"),
      "Forbidden: sends take the outbound account's key (accounts.outbound.api_keys, as Authorization: Bearer <key>, the smtpAuth scheme), not an account API token; the path names the outbound account's id (accounts.outbound.id)",
    ],
    [
      "a token on another account's path",
      forbidden("other_account"),
      "Forbidden: this token is another account's; use an API token of the account in the path (accounts.api_tokens)",
    ],
    [
      "a key on another outbound account's path",
      forbidden("other_outbound_account"),
      "Forbidden: this key is another outbound account's; the path must name the outbound account the key belongs to (accounts.outbound.id)",
    ],
    [
      "an account's token on an operator path",
      forbidden("not_operator"),
      "Forbidden: operator paths take an operator token (dashboard.admin_tokens), not an account's token or key",
    ],
    [
      "an unknown record",
      noRecord("address", "0123", "GET /api/v0.1/21c3/addresses"),
      'Not Found: no address "0123" in this account; GET /api/v0.1/21c3/addresses lists them',
    ],
    [
      "an unknown record with a long id (bounded)",
      noRecord("address", "x".repeat(500), "GET /l"),
      `Not Found: no address "${"x".repeat(64)}..." in this account; GET /l lists them`,
    ],
    [
      "an unknown outbound account",
      noOutboundAccount("f1"),
      'Not Found: no outbound account "f1" in this account; its outbound accounts are its accounts.outbound in the config',
    ],
    [
      "a body over a configured limit",
      payloadTooLarge(1_048_576, "http.max_body_size"),
      "Payload Too Large: the body is over 1048576 bytes, the limit http.max_body_size sets; send less or raise http.max_body_size",
    ],
    ["a body over a fixed limit", payloadTooLarge(4096, null), "Payload Too Large: the body is over 4096 bytes"],
    [
      "the account's management rate limit (API.md section 10's example)",
      tooManyRequests({ kind: "account", id: "21c3a8f0b2c4d6e8" }, { limit: 5, windowMs: MIN }, 55),
      "Too Many Requests: account 21c3a8f0b2c4d6e8 allows 5 calls per minute (accounts.rate_limit); retry after 55 s",
    ],
    [
      "an outbound account's send rate limit",
      tooManyRequests({ kind: "outbound", id: "a0000000000000f1" }, { limit: 600, windowMs: MIN }, 1),
      "Too Many Requests: outbound account a0000000000000f1 allows 600 calls per minute (accounts.outbound.send_rate_limit); retry after 1 s",
    ],
    [
      "a dashboard session's rate limit",
      tooManyRequests({ kind: "session" }, { limit: 10, windowMs: 1000 }, 1),
      "Too Many Requests: this dashboard session allows 10 calls per second (dashboard.rate_limit); retry after 1 s",
    ],
    [
      "too many sign-ins",
      tooManySignIns({ limit: 10, windowMs: MIN }, 30),
      "Too Many Requests: your address may try 10 sign-ins per minute (dashboard.sign_in_rate); retry after 30 s",
    ],
    [
      "one sign-in a minute",
      tooManySignIns({ limit: 1, windowMs: MIN }, 30),
      "Too Many Requests: your address may try 1 sign-in per minute (dashboard.sign_in_rate); retry after 30 s",
    ],
    [
      "a target on loopback",
      privateAddress("a private, loopback or link-local address", "127.0.0.1", "inbound.allow_private_targets"),
      "points at a private, loopback or link-local address (127.0.0.1); set inbound.allow_private_targets = true to allow it (for tests and loopback setups only, never in production)",
    ],
    [
      "a target on the metadata address (no key allows it)",
      privateAddress("a cloud metadata address", "169.254.169.254", null),
      "points at a cloud metadata address (169.254.169.254)",
    ],
    [
      "a From domain not yet verified",
      unverifiedDomain("sender.test", "21c3", "d1"),
      "domain sender.test is not verified: publish the records in dns_records of GET /api/v0.1/21c3/sending_domains/d1, then POST /api/v0.1/21c3/sending_domains/d1/verify; test_mode: true sends without verification",
    ],
    [
      "a From domain the account does not have",
      unknownSendingDomain("other.test", "21c3"),
      "domain other.test is not a sending domain of this account: add it with POST /api/v0.1/21c3/sending_domains, then verify it",
    ],
  ])("%s", (_name, text, expected) => {
    expect(text).toBe(expected);
  });

  test.each([
    [{ limit: 5, windowMs: MIN }, "5 calls per minute"],
    [{ limit: 1, windowMs: 1000 }, "1 call per second"],
    [{ limit: 100, windowMs: 3_600_000 }, "100 calls per hour"],
    [{ limit: 7, windowMs: 2 * 3_600_000 }, "7 calls per 2 hours"],
    [{ limit: 3, windowMs: 90_000 }, "3 calls per 90 seconds"],
    [{ limit: 3, windowMs: 1500 }, "3 calls per 1500 ms"],
  ])("rate %o reads %s", (rate, text) => {
    expect(rateText(rate)).toBe(text);
  });
});
