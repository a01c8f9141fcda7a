// The text-level readers of bounce-parse.ts: status codes, reply codes, the class they
// imply, addresses, RFC 3464 fields, where the quoted original starts and which address a
// free-form report names. Pure, each with unit tests.
import { ADDRESS, HARD_TEXT, MAILBOX_FULL, ORIGINAL_MARKERS, RECIPIENT_LINES, SOFT_TEXT } from "./bounce-patterns.ts";

export type BounceClass = "hard" | "soft";

/** At most `max` characters, no line longer than 500: what a regular expression may be run over. */
export const clip = (text: string, max: number) => text.slice(0, max).replace(/[^\n]{500,}/g, (line) => line.slice(0, 500));

/** One per-recipient block of a delivery-status report (lowercased field names). */
export type DsnRecipient = Partial<
  Record<"final-recipient" | "original-recipient" | "x-actual-recipient" | "action" | "status" | "diagnostic-code" | "remote-mta", string>
>;

const DSN_FIELDS = new Set([
  "final-recipient",
  "original-recipient",
  "x-actual-recipient",
  "action",
  "status",
  "diagnostic-code",
  "remote-mta",
]);
const STATUS = /(?<![\w.])([245])\.(\d{1,3})\.(\d{1,3})(?!\.?\d)/;
// a reply code where reports put one: at a line start, after "said", ":", ";", "(", "[", "]" or "<<<"
const REPLY_CODE = /(?:^|(?<=[:;([\]<>]\s{0,3})|(?<=said\s))([45])[0-5]\d(?=[ -]+(?:[a-z<#([]|[245]\.\d))/im;
export const SUCCESS_ACTION = /^(?:delivered|relayed|expanded|deliverable)/i;

/** "smtp; 550 5.1.1 <a@b>... User unknown" → "5.1.1"; the first RFC 3463 code in the text. */
export function statusOf(text: string | null | undefined): string | null {
  const m = STATUS.exec(text ?? "");
  return m ? `${m[1]}.${Number(m[2])}.${Number(m[3])}` : null;
}

/** "550 5.1.1 user unknown" → 5 (the class digit of the first SMTP reply code), else null. */
export function replyClassOf(text: string | null | undefined): 4 | 5 | null {
  const m = REPLY_CODE.exec(text ?? "");
  return m ? (Number(m[1]) as 4 | 5) : null;
}

/** Hard or soft, from the status, the DSN action and the report's wording (rules at the top). */
export function classOf(status: string | null, text: string | null, action: string | null = null): BounceClass {
  const words = clip(text ?? "", 2000).replace(ADDRESS, " "); // "expired@..." says nothing
  if (/^delayed/i.test(action ?? "")) return "soft";
  if (/^\d\.2\.2$/.test(status ?? "") || MAILBOX_FULL.test(words)) return "soft";
  if (status?.startsWith("5")) return "hard";
  if (status?.startsWith("4")) return "soft";
  const reply = replyClassOf(words);
  if (reply) return reply === 5 ? "hard" : "soft";
  if (HARD_TEXT.test(words)) return "hard";
  return SOFT_TEXT.test(words) ? "soft" : "hard";
}

/** The first address in a value ("rfc822; <A@B.example>" → "a@b.example"), lowercased. */
export function addressIn(value: string | null | undefined): string | null {
  const m = clip(value ?? "", 2000).match(ADDRESS);
  return m?.[0] ? m[0].toLowerCase() : null;
}

/** Reporting-MTA and the per-recipient blocks of delivery-status fields found in a text. */
export function parseDsnFields(text: string): { reportingMta: string | null; recipients: DsnRecipient[] } {
  let reportingMta: string | null = null;
  const recipients: DsnRecipient[] = [];
  let current: DsnRecipient | null = null;
  let last: { rec: DsnRecipient; key: keyof DsnRecipient } | null = null;
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "") {
      current = null;
      last = null;
      continue;
    }
    if (/^[ \t]/.test(line) && last) {
      last.rec[last.key] = `${last.rec[last.key] ?? ""} ${line.trim()}`.trim();
      continue;
    }
    last = null;
    const m = /^([A-Za-z][\w-]*)[ \t]*:[ \t]*(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    const value = m[2]!.trim();
    if (key === "reporting-mta") reportingMta ??= value.replace(/^[\w-]+;\s*/, "").replace(/\s*\(.*$/, "") || null;
    if (!DSN_FIELDS.has(key)) continue;
    const field = key as keyof DsnRecipient;
    if (!current || current[field] !== undefined) recipients.push((current = {}));
    current[field] = value;
    last = { rec: current, key: field };
  }
  return { reportingMta, recipients };
}

/** The report part of a non-standard bounce: the text before the quoted original message. */
export function splitOriginal(text: string): { report: string; original: string } {
  let at = text.length;
  for (const marker of ORIGINAL_MARKERS) {
    const m = marker.exec(text);
    if (m && m.index > 0 && m.index < at) at = m.index;
  }
  return { report: text.slice(0, at), original: text.slice(at) };
}

/** The failed recipient named in a report's text, skipping the addresses in `exclude`. */
export function findRecipient(text: string, exclude: ReadonlySet<string> = new Set()): string | null {
  const report = clip(text, 32 * 1024);
  let named: string | null = null; // a labelled address that is also the sender's: the last resort
  for (const pattern of RECIPIENT_LINES) {
    for (const m of report.matchAll(new RegExp(pattern.source, `${pattern.flags}g`))) {
      const address = addressIn(m[1]);
      if (address && !exclude.has(address)) return address;
      named ??= address;
    }
  }
  for (const line of report.split(/\r?\n/)) {
    if (
      /^\s*(?:message-id|references|in-reply-to|received|from|to|cc|reply-to|return-path|sender)\s*:|^\s*(?:by|id|with|for)\s/i.test(
        line,
      ) ||
      /https?:\/\//i.test(line)
    )
      continue;
    for (const m of line.matchAll(ADDRESS)) {
      const address = m[0].toLowerCase();
      if (!exclude.has(address)) return address;
    }
  }
  return named;
}

// ---- the message as the rules see it ----
