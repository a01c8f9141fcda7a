// A stored account (tenants.port.ts) as the rest of Postroom knows accounts: the shape the
// config gives (AccountConfig), so authentication, rate limits, SMTP submission and sending
// need not know where an account was declared. What the config has and the API does not
// (a webhook in the file, tracking, List-Unsubscribe) takes the config's defaults.
import type { AccountConfig } from "../config/config.ts";
import { parseRate, type RateLimit } from "../config/units.ts";
import type { StoredAccount } from "./tenants.port.ts";

/** The config's defaults (schema-accounts.ts): a stored text is checked when written, so a bad one is not expected. */
export const DEFAULT_RATE_LIMIT = "5/min";
export const DEFAULT_SEND_RATE_LIMIT = "600/min";

const rateOr = (text: string, fallback: string): RateLimit | null => {
  const parsed = parseRate(text);
  return parsed === undefined ? (parseRate(fallback) ?? null) : parsed;
};

export function storedAsConfig(s: StoredAccount): AccountConfig {
  return {
    id: s.id,
    name: s.name,
    apiTokenHashes: s.tokens.map((t) => t.tokenHash),
    rateLimit: rateOr(s.rateLimit, DEFAULT_RATE_LIMIT),
    testMode: s.testMode,
    markdown: s.markdown,
    domainTargets: s.domainTargets,
    webhook: null,
    tracking: { opens: false, clicks: false },
    unsubscribe: { url: null, mailto: null },
    outbound: s.outbound.map((o) => ({
      id: o.id,
      apiKeyHashes: o.keys.map((k) => k.keyHash),
      sendRateLimit: rateOr(o.sendRateLimit, DEFAULT_SEND_RATE_LIMIT),
      testMode: o.testMode || s.testMode,
      webhook: null,
      ipPool: o.ipPool,
    })),
  };
}
