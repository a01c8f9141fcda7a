// What a message to a bounce address says. The address already names the message and
// recipient (bounce-handler.ts); this decides whether the message is a delivery failure
// (hard or soft, with the failed address, status and diagnostic as reported), an
// automatic reply, or anything else (a complaint, a human, spam). Pure: no I/O.
//
// Order: a feedback report (RFC 5965) is never a bounce; an RFC 3464 DSN is read field by
// field (from its message/delivery-status part, or from the raw text when the MIME
// structure is broken or the report is wrapped in another message); other reports are
// recognised by sender, subject and wording (bounce-patterns.ts). Only a message that is
// not a bounce can be an auto-reply: mail delivery software sets Auto-Submitted too.
//
// Recipient: Final-Recipient (the mailbox that failed), else Original-Recipient; in other
// reports the address the report names (X-Failed-Recipients first), else the quoted
// original's To. Lowercased.
//
// Class: "soft" for 4.x.x, for Action: delayed and delay warnings, and for a full mailbox
// or exceeded quota even with a 5.x.x code (X.2.2, or the wording; as sisimai treats
// "mailboxfull"): the address exists and may accept mail later, so it is not suppressed.
// Otherwise a 5.x.x status, then a 5xx/4xx reply code, then the wording decides; a
// report that says nothing more is a permanent failure ("hard").
import libmime from "libmime";
import { simpleParser, type Attachment, type ParsedMail } from "mailparser";
import { ADDRESS, AUTO_REPLY_SUBJECT, BOUNCE_BODY, BOUNCE_BODY_STRONG, BOUNCE_SUBJECT, DAEMON_SENDER } from "./bounce-patterns.ts";
import {
  addressIn,
  classOf,
  clip,
  findRecipient,
  parseDsnFields,
  splitOriginal,
  statusOf,
  SUCCESS_ACTION,
  type BounceClass,
  type DsnRecipient,
} from "./bounce-text.ts";

export {
  addressIn,
  classOf,
  findRecipient,
  parseDsnFields,
  replyClassOf,
  splitOriginal,
  statusOf,
  type BounceClass,
  type DsnRecipient,
} from "./bounce-text.ts";

export type BounceReport =
  | {
      kind: "bounce";
      recipient: string | null;
      class: BounceClass;
      status: string | null;
      diagnostic: string | null;
      reportingMta: string | null;
    }
  | { kind: "auto_reply" }
  | { kind: "not_bounce" };

const NOT_BOUNCE: BounceReport = { kind: "not_bounce" };
const MAX_BYTES = 2 * 1024 * 1024; // a report and the start of the original are enough
interface View {
  subject: string;
  from: string;
  headers: Map<string, string[]>;
  text: string;
  body: string;
  rawBody: string;
  dsText: string;
  originals: Attachment[];
  attachmentTypes: string[];
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
/** Text the address patterns can scan in linear time: lines cut at 500 characters, a total cap. */
const squeeze = (text: string, max = 500) => {
  const s = text.replace(/\s+/g, " ").trim();
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
};

/** What the rules look at; `mail` is null when mailparser gave up (the raw text still counts). */
function view(mail: ParsedMail | null, raw: Buffer): View {
  const text = raw.toString("utf8");
  const headEnd = /\r?\n\r?\n/.exec(text);
  const rawHeaderLines = () =>
    (headEnd ? text.slice(0, headEnd.index) : text)
      .split(/\r?\n(?![ \t])/)
      .map((line) => ({ key: line.slice(0, Math.max(0, line.indexOf(":"))).trim(), line }));
  const headers = new Map<string, string[]>();
  for (const { key, line } of mail?.headerLines ?? rawHeaderLines()) {
    const value = line
      .slice(line.indexOf(":") + 1, 4000)
      .replace(/\r?\n[ \t]+/g, " ")
      .trim();
    headers.set(key.toLowerCase(), [...(headers.get(key.toLowerCase()) ?? []), value]);
  }
  const atts = mail?.attachments ?? [];
  const typed = (re: RegExp) => atts.filter((a) => re.test(a.contentType ?? ""));
  const asText = (list: Attachment[]) => list.map((a) => a.content.toString("utf8")).join("\n\n");
  return {
    subject: (mail ? (mail.subject ?? "") : libmime.decodeWords(headers.get("subject")?.[0] ?? "")).slice(0, 1000),
    from: `${mail?.from?.value?.[0]?.name ?? ""} <${mail?.from?.value?.[0]?.address ?? headers.get("from")?.[0] ?? ""}>`,
    headers,
    text: mail?.text ?? "",
    body: clip([mail?.text ?? "", asText(typed(/^text\/plain/i))].join("\n\n"), 256 * 1024),
    rawBody: headEnd ? clip(text.slice(headEnd.index), MAX_BYTES) : "",
    dsText: clip(asText(typed(/^message\/(?:global-)?delivery-status/i)), 256 * 1024),
    originals: typed(/^(?:message\/(?:rfc822|global)|text\/rfc822-headers?)/i),
    attachmentTypes: atts.map((a) => (a.contentType ?? "").toLowerCase()),
  };
}

const header = (v: View, name: string) => v.headers.get(name)?.join("\n") ?? "";
const reportType = (v: View) => /report-type\s*=\s*"?([\w-]+)/i.exec(header(v, "content-type"))?.[1]?.toLowerCase() ?? "";

/** Addresses that cannot be the failed recipient: the report's own and the original sender's. */
function excluded(v: View, original: string): Set<string> {
  const out = new Set<string>();
  for (const name of ["from", "to", "cc", "reply-to", "return-path", "sender", "errors-to"])
    for (const m of header(v, name).matchAll(ADDRESS)) out.add(m[0].toLowerCase());
  for (const m of originalHeaders(v, original).matchAll(/^(?:from|sender|reply-to|return-path)[ \t]*:(.*)$/gim))
    for (const a of (m[1] ?? "").matchAll(ADDRESS)) out.add(a[0].toLowerCase());
  return out;
}

function originalHeaders(v: View, original: string): string {
  const source = v.originals[0]?.content.toString("utf8") ?? original;
  const start = source.search(/^[\w-]+:/m);
  const block = start < 0 ? "" : source.slice(start);
  const end = /\r?\n[ \t]*\r?\n/.exec(block);
  return (end ? block.slice(0, end.index) : block).replace(/\r?\n[ \t]+/g, " ");
}

function originalTo(v: View, original: string): string | null {
  const m = /^(?:to|x-original-to|delivered-to)[ \t]*:(.*)$/im.exec(originalHeaders(v, original));
  return addressIn(m?.[1]);
}

// ---- the three kinds of report ----

function fromDsn(v: View): BounceReport | null {
  const usable = (r: DsnRecipient) => (r["final-recipient"] || r["original-recipient"]) && (r.action || r.status);
  // the delivery-status part; else fields in the decoded text (a DSN pasted into the
  // notification) or in the raw message (broken MIME, or a DSN wrapped in another message)
  let dsn = parseDsnFields(v.dsText);
  for (const text of [v.body, v.rawBody]) if (!dsn.recipients.some(usable)) dsn = parseDsnFields(text);
  const records = dsn.recipients.filter(usable);
  if (records.length === 0) return null;
  const failed = (r: DsnRecipient) => /^(?:failed|expired|bounced?|undeliverable)/i.test(r.action ?? "");
  const pick =
    records.find(failed) ??
    records.find((r) => /^delayed/i.test(r.action ?? "")) ??
    records.find((r) => /^[45]/.test(statusOf(r.status) ?? ""));
  if (!pick && records.every((r) => SUCCESS_ACTION.test(r.action ?? "") || statusOf(r.status)?.startsWith("2"))) return NOT_BOUNCE;
  const record = pick ?? records[0]!;
  const diagnostic = record["diagnostic-code"]?.replace(/^[\w-]+;\s*/, "") || null;
  let status = statusOf(record.status);
  const detailed = statusOf(diagnostic);
  if (detailed && (!status || (status.endsWith(".0.0") && detailed[0] === status[0]))) status = detailed;
  const { report, original } = splitOriginal(v.body);
  const recipient =
    addressIn(record["final-recipient"]) ??
    addressIn(record["original-recipient"]) ??
    addressIn(record["x-actual-recipient"]) ??
    findRecipient(report, excluded(v, original));
  const text = diagnostic ?? detailAround(report, recipient);
  return {
    kind: "bounce",
    recipient,
    class: classOf(status, text, record.action ?? null),
    status,
    diagnostic: squeeze(text) || null,
    reportingMta: dsn.reportingMta,
  };
}

/** Amazon SES notifications relayed by SNS as mail (JSON in the body). */
function fromSesNotification(v: View): BounceReport | null {
  const field = (name: string) => new RegExp(`\\\\?"${name}\\\\?"\\s*:\\s*\\\\?"([^"\\\\]*)`).exec(v.text)?.[1] ?? null;
  const type = v.text.trimStart().startsWith("{") ? field("notificationType") : null;
  if (!type) return null;
  if (type !== "Bounce") return NOT_BOUNCE;
  const diagnostic = field("diagnosticCode")?.replace(/^[\w-]+;\s*/, "") ?? null;
  const status = statusOf(field("status")) ?? statusOf(diagnostic);
  const klass = field("bounceType") === "Transient" ? "soft" : classOf(status, diagnostic);
  return {
    kind: "bounce",
    recipient: addressIn(field("emailAddress")),
    class: klass,
    status,
    diagnostic,
    reportingMta: field("reportingMTA")?.replace(/^[\w-]+;\s*/, "") ?? null,
  };
}

function looksLikeBounce(v: View): boolean {
  if (reportType(v) === "delivery-status" || v.dsText !== "" || header(v, "x-failed-recipients") !== "") return true;
  const start = (v.body.trim() === "" ? v.rawBody : v.body).slice(0, 8000);
  if (BOUNCE_BODY_STRONG.test(start)) return true;
  // a mailing list manager refusing a post (fml: "You are not a member of this mailing list")
  if (v.headers.has("x-mlserver") && /\bnot (?:a )?member\b/i.test(`${v.subject}\n${start}`)) return true;
  const signals = [DAEMON_SENDER.test(v.from), BOUNCE_SUBJECT.test(v.subject), BOUNCE_BODY.test(start)];
  return signals.filter(Boolean).length >= 2;
}

function fromText(v: View): BounceReport {
  let { report, original } = splitOriginal(v.body);
  const exclude = excluded(v, original);
  let recipient = addressIn(header(v, "x-failed-recipients")) ?? findRecipient(report, exclude);
  if (!recipient) {
    const rawParts = splitOriginal(v.rawBody);
    recipient = findRecipient(rawParts.report, exclude);
    if (recipient || report.trim() === "") ({ report, original } = rawParts);
  }
  recipient ??= originalTo(v, original);
  const detail = detailAround(report, recipient);
  const status = statusOf(detail) ?? statusOf(report);
  const delay =
    /delay|warning|could not send (?:mail|message) for past/i.test(v.subject) ||
    /has been delayed|warning message only|will (?:be retried|continue trying)|still being retried/i.test(report);
  const klass = classOf(status, `${detail}\n${v.subject}`, delay ? "delayed" : null);
  const reportingMta =
    /\b(?:program|system|agent(?: v[\d.]+)?) at (?:host )?([a-z0-9-]+(?:\.[a-z0-9-]+)+)/i.exec(report)?.[1]?.toLowerCase() ?? null;
  return { kind: "bounce", recipient, class: klass, status, diagnostic: detail || null, reportingMta };
}

/** The lines of the report that follow the recipient (its reason), squeezed. */
function detailAround(report: string, recipient: string | null): string {
  const lines = report.split(/\r?\n/);
  const at = recipient ? lines.findIndex((l) => l.toLowerCase().includes(recipient)) : -1;
  if (at < 0) return squeeze(report);
  let end = at + 1;
  // up to 12 lines, stopping where the next recipient's line starts
  while (
    end < Math.min(lines.length, at + 12) &&
    !new RegExp(`^[\\s"<*]*(?!${escapeRegExp(recipient!)})${ADDRESS.source}`, "i").test(lines[end]!)
  )
    end++;
  return squeeze(lines.slice(at, end).join("\n"));
}

function isAutoReply(v: View): boolean {
  if (/^auto-replied/i.test(header(v, "auto-submitted"))) return true;
  if (["x-autoreply", "x-autorespond", "x-autoresponder", "x-auto-reply"].some((h) => v.headers.has(h))) return true;
  if (/^auto[_-]?reply/i.test(header(v, "precedence")) || /^auto[_-]?reply/i.test(header(v, "x-precedence"))) return true;
  return AUTO_REPLY_SUBJECT.test(v.subject.trim());
}

/** A List-Unsubscribe request (Apple Mail sends it with Auto-Submitted: auto-replied). */
const isUnsubscribe = (v: View) => v.headers.has("x-apple-unsubscribe") || /^unsubscribe$/i.test(v.subject.trim());

const isComplaint = (v: View) =>
  reportType(v) === "feedback-report" || v.attachmentTypes.some((t) => t.startsWith("message/feedback-report"));

export async function parseBounce(raw: Buffer): Promise<BounceReport> {
  const input = raw.length > MAX_BYTES ? raw.subarray(0, MAX_BYTES) : raw;
  const parse = simpleParser as (input: Buffer, options: object) => Promise<ParsedMail>;
  const mail = await parse(input, { keepDeliveryStatus: true, skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true }).catch(
    () => null,
  );
  const v = view(mail, input);
  // a complaint (RFC 5965) or a read receipt (RFC 8098) is neither a bounce nor an auto-reply
  if (isComplaint(v) || reportType(v) === "disposition-notification") return NOT_BOUNCE;
  const report = fromSesNotification(v) ?? (looksLikeBounce(v) ? (fromDsn(v) ?? fromText(v)) : null);
  if (report) return report;
  if (isUnsubscribe(v)) return NOT_BOUNCE;
  return isAutoReply(v) ? { kind: "auto_reply" } : NOT_BOUNCE;
}
