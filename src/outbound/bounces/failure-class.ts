// Why a delivery failed, in the words an operator acts on: the `bounce_class` of every
// `bounce` and `soft_bounce` event (API.md section 10). Pure: the reply code, the enhanced
// status code (RFC 3463, plus the providers' own extensions) and the reply's text decide.
// The text is read first, most specific wording first, because providers put a generic
// code on a specific reason (Gmail's "550 5.2.1 ... receiving mail at a rate" is a rate
// limit, not a disabled mailbox; "550 5.7.1 ... DMARC policy" is authentication, not a
// block); the status code decides only when the text says nothing we know. Table-tested
// against real replies (test/outbound/failure-class.test.ts).
import { clip, statusOf } from "./bounce-text.ts";

export const FAILURE_CLASSES = ["hard", "mailbox_full", "block", "dmarc", "throttled", "message", "transient", "other"] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];

export const isFailureClass = (value: string): value is FailureClass => (FAILURE_CLASSES as readonly string[]).includes(value);

export interface FailureInput {
  /** The SMTP reply code (550, 421...), or null when there was none (no connection, a DSN without one). */
  code: number | null;
  /** The reply's or the DSN's text; its first enhanced status code is read when `status` is not given. */
  text: string | null;
  /** A DSN's Status: field, when there is one. */
  status?: string | null;
  /** A failure without a reply that is final all the same: the domain does not exist or takes no mail (null MX). */
  noSuchDomain?: boolean;
}

// Rate limits and deferrals for volume: Gmail 4.7.28 and "receiving mail too quickly",
// Microsoft 4.7.650 and the 4.7.5xx range, Yahoo's TSS04 / TS01-02 and 4.16.5x.
const THROTTLED_TEXT =
  /rate limit|rate-limit|temporarily (?:rate )?limited|receiving mail (?:too quickly|at a rate)|unusual rate|too many (?:connections|messages|concurrent|sessions)|throttl|\bTSS0[1-4]\b|\bTS0[12]\b|unexpected volume|4\.16\.5\d|relay quota|sending limit|exceeded the (?:daily|hourly)|slow down/i;
const THROTTLED_STATUS = /^4\.7\.(?:28|5\d\d|6\d\d)$/;

// Authentication: SPF, DKIM, DMARC and the RFC 7372 codes for them (5.7.20-5.7.24, 5.7.26),
// Microsoft's 5.7.509 and 5.7.515.
const DMARC_TEXT =
  /dmarc|\bspf\b|dkim|sender policy framework|unauthenticated|not (?:pass|authenticated)|authentication (?:checks|information|level|failed|failure)|fails? to pass authentication|does not have authentication/i;
const DMARC_STATUS = /^[45]\.7\.(?:2[0-4]|26|509|515)$/;

// The recipient's mailbox (not the receiving system) is out of space.
const MAILBOX_FULL_TEXT =
  /mailbox (?:is )?full|mail ?box (?:has )?exceeded|over ?quota|quota (?:exceeded|full)|exceeded (?:the |their |its )?(?:storage |mailbox |disk )?quota|storage quota|out of storage|insufficient (?:disk |storage )?space|mail ?folder is full|mailbox size limit|mailbox (?:would )?exceed|user(?:'s)? (?:mailbox|disk) (?:is )?full|mailbox.{0,20}exceeded|\bmailboxfull\b|out of storage space|recipient'?s? inbox is out/i;

// The message itself: its size, its lines, its headers, its recipients' number, its content.
const MESSAGE_TEXT =
  /too (?:large|big)|size limit|size exceeds|exceeds? (?:the )?(?:maximum |fixed maximum )?(?:allowed )?(?:message )?size|message length|line (?:limit|too long|length)|too many recipients|virus|malware|infected|attachment|\bheaders?\b.{0,40}(?:invalid|missing|too|exceed|not)|(?:missing|invalid|multiple).{0,30}\bheaders?\b|rfc ?5322|not (?:rfc|standards) compliant|message (?:is )?malformed|bare line ?feed|\b8-?bit\b/i;
const MESSAGE_STATUS = /^5\.(?:2\.3|3\.4|6\.\d+|5\.3)$/;

// The address or its domain does not exist (Microsoft's 5.4.1 "Recipient address rejected:
// Access denied" is directory-based edge blocking: no such recipient).
const HARD_TEXT =
  /user unknown|unknown (?:user|recipient|alias)|unknown or illegal|no such (?:user|mailbox|recipient|address|domain|person)|does(?: not|n't) exist|not exist|recipient (?:name is )?not (?:found|recognized|recognised)|recipientnotfound|recipnotfound|not found by smtp address lookup|wasn'?t found at|invalid (?:recipient|address|user|mailbox)|mailbox (?:is )?(?:unavailable|not found|disabled|inactive)|doesn'?t have an? .{0,80}account|account (?:is |has been )?(?:disabled|deactivated|inactive|suspended)|(?:host|domain) (?:unknown|not found)|unrouteable|unroutable address|no mailbox here|user not found|address not found|recipient address rejected: access denied|no longer (?:valid|available|in use)|not a valid mailbox/i;
const HARD_STATUS = /^5\.(?:1\.(?:[0-6]|10)|2\.1|4\.4)$/;

// Policy, reputation, blocklists, spam: the receiver refuses mail from us, not the address.
const BLOCK_TEXT =
  /block|blacklist|blocklist|denylist|spamhaus|barracuda|spamcop|sorbs|uribl|surbl|dnsbl|\brbl\b|reputation|\bspam\b|unsolicited|polic(?:y|ies)|denied|banned|reverse dns|\brdns\b|\bptr\b|not (?:in )?(?:the )?(?:whitelist|allowlist)|not allowed|\blisted\b|abuse|\bS3150\b|proofpoint|mimecast|\bTS03\b|permanently deferred|rejected (?:for|due to|by)|poor|suspicious|prohibited|sender address rejected|not accepted/i;

// Trouble of the moment on the receiving side, or no answer at all.
const TRANSIENT_TEXT =
  /temporar|try (?:again )?later|busy|timed? ?out|connection|greylist|graylist|resources|unavailable|expired|not responding|no route|unreachable|lookup fail|interrupted|lost/i;

/** The failure's class: text first (most specific wording first), then the status code, then the reply code. */
export function classifyFailure(input: FailureInput): FailureClass {
  if (input.noSuchDomain) return "hard";
  const text = clip(input.text ?? "", 4000);
  const status = input.status ?? statusOf(text);
  const temporary = input.code !== null ? input.code < 500 : status ? status.startsWith("4") : false;
  if (THROTTLED_TEXT.test(text) || THROTTLED_STATUS.test(status ?? "")) return "throttled";
  if (DMARC_STATUS.test(status ?? "") || DMARC_TEXT.test(text)) return "dmarc";
  if (/^\d\.2\.2$/.test(status ?? "") || MAILBOX_FULL_TEXT.test(text)) return "mailbox_full";
  if (MESSAGE_STATUS.test(status ?? "") || MESSAGE_TEXT.test(text)) return "message";
  // X.1.7 and X.1.8: our sender's address or domain is refused, not the recipient's.
  if (/^5\.1\.[78]$/.test(status ?? "")) return "block";
  // A temporary failure never says the address does not exist for good.
  if (!temporary && HARD_TEXT.test(text)) return "hard";
  if (BLOCK_TEXT.test(text)) return "block";
  if (temporary) return "transient";
  if (HARD_STATUS.test(status ?? "")) return "hard";
  if (/^5\.7\./.test(status ?? "")) return "block";
  if (/^5\.4\.7$/.test(status ?? "") || TRANSIENT_TEXT.test(text)) return "transient";
  if (input.code === null && !status) return "transient";
  return "other";
}
