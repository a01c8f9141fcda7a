// (beyond) The operator API's account records (API.md section 10): an account with its API
// tokens and outbound accounts, whether it came from the config file or the API. Never a
// secret: tokens and keys are listed by ID; the secret is in the answer that made it only.
import { type Static, t } from "elysia";
import type { StoredAccount, StoredOutbound, StoredToken } from "../auth/tenants.port.ts";
import type { AccountConfig } from "../config/config.ts";
import type { RateLimit } from "../config/units.ts";
import { RATE_PATTERN } from "../config/units.ts";
import { isoTime } from "../lib/clock.ts";

/** Longest name of an account, a token or an outbound account. */
export const NAME_MAX_CHARS = 100;
/** Longest IP pool name (the pools' feature checks that it names one). */
export const IP_POOL_MAX_CHARS = 64;

export const RATE_RULE = 'must be "N/s", "N/min", "N/h" with N at least 1, or "off"';
export const rateField = (description: string) => t.String({ pattern: RATE_PATTERN, maxLength: 40, errorMessage: RATE_RULE, description });

const time = t.String({ format: "date-time" });
const Scopes = t.Array(t.Union([t.Literal("read"), t.Literal("write")]), {
  description: '["read"] or ["read", "write"]',
});

export const TokenRecordSchema = t.Object(
  { id: t.String(), name: t.String(), scopes: Scopes, created_at: t.Union([time, t.Null()]), last_used_at: t.Union([time, t.Null()]) },
  { additionalProperties: false, title: "OperatorApiToken" },
);

export const KeyRecordSchema = t.Object(
  { id: t.String(), created_at: t.Union([time, t.Null()]) },
  { additionalProperties: false, title: "OutboundKey" },
);

export const OutboundRecordSchema = t.Object(
  {
    id: t.String({ description: "the SMTP username and the {outboundAccountID} of E11" }),
    name: t.String(),
    send_rate_limit: t.String(),
    ip_pool: t.Union([t.String(), t.Null()]),
    test_mode: t.Boolean(),
    created_at: t.Union([time, t.Null()]),
    keys: t.Array(KeyRecordSchema),
  },
  { additionalProperties: false, title: "OperatorOutboundAccount" },
);

export const AccountRecordSchema = t.Object(
  {
    id: t.String({ description: "16 lowercase hex" }),
    name: t.String(),
    source: t.Union([t.Literal("config"), t.Literal("api")], { description: "config accounts cannot be changed through the API" }),
    rate_limit: t.String(),
    test_mode: t.Boolean(),
    markdown: t.Boolean(),
    domain_targets: t.Boolean(),
    suspended: t.Boolean(),
    created_at: t.Union([time, t.Null()]),
    api_tokens: t.Array(TokenRecordSchema),
    outbound_accounts: t.Array(OutboundRecordSchema),
  },
  { additionalProperties: false, title: "OperatorAccount" },
);

type AccountRecord = Static<typeof AccountRecordSchema>;

const isoOrNull = (ms: number | null): string | null => (ms === null ? null : isoTime(ms));
const WINDOWS: [number, string][] = [
  [3_600_000, "h"],
  [60_000, "min"],
  [1000, "s"],
];

/** A rate as the config writes it: "5/min", "off". */
export function rateConfigText(rate: RateLimit | null): string {
  if (!rate) return "off";
  // The config's windows are whole seconds, minutes or hours (units.ts); anything else is said in seconds.
  const unit = WINDOWS.find(([ms]) => rate.windowMs === ms)?.[1];
  return unit ? `${rate.limit}/${unit}` : `${Math.round((rate.limit * 1000) / rate.windowMs)}/s`;
}

/** A config secret's listed ID: the first 16 hex digits of its hash (the hash is in the file, not secret). */
const hashId = (hash: string): string => hash.replace(/^sha256:/, "").slice(0, 16);

export const scopesOf = (readOnly: boolean): ("read" | "write")[] => (readOnly ? ["read"] : ["read", "write"]);

export const tokenRecord = (t: StoredToken): Static<typeof TokenRecordSchema> => ({
  id: t.id,
  name: t.name,
  scopes: scopesOf(t.readOnly),
  created_at: isoTime(t.createdAtMs),
  last_used_at: isoOrNull(t.lastUsedAtMs),
});

export const outboundRecord = (o: StoredOutbound): Static<typeof OutboundRecordSchema> => ({
  id: o.id,
  name: o.name,
  send_rate_limit: o.sendRateLimit,
  ip_pool: o.ipPool,
  test_mode: o.testMode,
  created_at: isoTime(o.createdAtMs),
  keys: o.keys.map((k) => ({ id: k.id, created_at: isoTime(k.createdAtMs) })),
});

export const storedRecord = (a: StoredAccount): AccountRecord => ({
  id: a.id,
  name: a.name,
  source: "api",
  rate_limit: a.rateLimit,
  test_mode: a.testMode,
  markdown: a.markdown,
  domain_targets: a.domainTargets,
  suspended: a.suspended,
  created_at: isoTime(a.createdAtMs),
  api_tokens: a.tokens.map(tokenRecord),
  outbound_accounts: a.outbound.map(outboundRecord),
});

export const configRecord = (a: AccountConfig): AccountRecord => ({
  id: a.id,
  name: a.name,
  source: "config",
  rate_limit: rateConfigText(a.rateLimit),
  test_mode: a.testMode,
  markdown: a.markdown,
  domain_targets: a.domainTargets,
  suspended: false,
  created_at: null,
  api_tokens: a.apiTokenHashes.map((h) => ({ id: hashId(h), name: "", scopes: scopesOf(false), created_at: null, last_used_at: null })),
  outbound_accounts: a.outbound.map((o) => ({
    id: o.id,
    name: "",
    send_rate_limit: rateConfigText(o.sendRateLimit),
    ip_pool: null,
    test_mode: o.testMode,
    created_at: null,
    keys: o.apiKeyHashes.map((h) => ({ id: hashId(h), created_at: null })),
  })),
});
