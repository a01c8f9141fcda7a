// The built-in destinations: the large mailbox providers, each with the MX hosts its domains
// publish and the throttle replies it documents. No provider publishes how many connections
// or messages a minute it takes from one address: the connection figures are our
// conservative choice (Postfix's default_destination_concurrency_limit is 20; these are
// lower), and no rate is set, so a provider is paced by its window until it throttles.
// docs/sending.md "Built-in destinations" lists them with their sources; a rule in the file
// with the same name replaces one (rules.ts, effectiveRules).
import type { DestinationRule } from "./rules.ts";

const MINUTE_MS = 60_000;

/** A built-in rule and where its figures come from (docs/sending.md's table is checked against this). */
export interface BuiltInRule extends DestinationRule {
  source: string;
}

export const BUILT_IN_DESTINATIONS: readonly BuiltInRule[] = [
  {
    name: "google",
    mx: [".google.com", ".googlemail.com"],
    maxConnections: 10,
    rate: null,
    throttleReplies: ["4.7.28", "unusual rate of unsolicited mail"],
    pauseMs: 5 * MINUTE_MS,
    source: "Gmail SMTP errors and codes (support.google.com/a/answer/3726730): 421 4.7.28 rate limited for unsolicited mail",
  },
  {
    name: "microsoft",
    mx: [".outlook.com", ".hotmail.com"],
    maxConnections: 10,
    rate: null,
    throttleReplies: ["4.7.650", "4.7.651", "RP-001", "RP-002", "RP-003"],
    pauseMs: 5 * MINUTE_MS,
    source:
      "Exchange Online NDR reference (learn.microsoft.com, 4.7.650/4.7.651 rate limited due to IP reputation); Outlook.com postmaster troubleshooting (sendersupport.olc.protection.outlook.com: 421 RP-001/002/003 rate and connection limits)",
  },
  {
    name: "yahoo",
    mx: [".yahoodns.net"],
    maxConnections: 5,
    rate: null,
    throttleReplies: ["TSS04", "TSS05", "[TS01]", "[TS02]"],
    pauseMs: 10 * MINUTE_MS,
    source:
      "Yahoo Sender Hub SMTP error codes (senders.yahooinc.com/smtp-error-codes): 421 4.7.0 [TSS04] temporarily deferred due to unexpected volume or user complaints; also AOL (its MX hosts are under yahoodns.net)",
  },
  {
    name: "apple",
    mx: [".mail.icloud.com"],
    maxConnections: 5,
    rate: null,
    throttleReplies: ["4.7.1 service unavailable - try again later", "rate limit"],
    pauseMs: 5 * MINUTE_MS,
    source: "iCloud Mail postmaster information (support.apple.com/102322): 451 4.7.1 Service unavailable - try again later",
  },
  {
    name: "gmx-webde",
    mx: [".gmx.net", ".web.de"],
    maxConnections: 3,
    rate: null,
    throttleReplies: ["too many messages have been received in a short period", "reduce the sending rate"],
    pauseMs: 15 * MINUTE_MS,
    source:
      "GMX and WEB.DE postmaster pages (postmaster.gmx.net, postmaster.web.de): 421 ... Too many messages have been received in a short period of time ... reduce the sending rate",
  },
  {
    name: "mailru",
    mx: [".mail.ru"],
    maxConnections: 5,
    rate: null,
    throttleReplies: ["ratelimit", "rate limit", "frequency limit"],
    pauseMs: 10 * MINUTE_MS,
    source: "Mail.ru postmaster help (help.mail.ru/postmaster): 421 4.7.0 rate limit / frequency limit replies",
  },
  {
    name: "yandex",
    mx: [".yandex.ru", ".yandex.net"],
    maxConnections: 5,
    rate: null,
    throttleReplies: ["ratelimit", "rate limit", "too many connections"],
    pauseMs: 10 * MINUTE_MS,
    source: "Yandex Mail for senders (yandex.com/support/mail): 451 4.7.1 ... too many connections / rate limit replies",
  },
];
