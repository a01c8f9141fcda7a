// Turning a checked draft into the message that is queued: nodemailer's composer for
// structured messages (its tree written out by mime-writer.ts, not by its streams), careful
// header edits for raw ones. Both get a Message-ID on our host name and a Date when they
// lack one.
import { convert as htmlToText } from "html-to-text";
import { marked } from "marked";
import MailComposer from "nodemailer/lib/mail-composer";
import { formatAddress, headerAddresses, type MailAddress } from "./addresses.ts";
import { authorFieldsOf, authorOf } from "./author.ts";
import { InputProblem, type MessageDraft } from "./message-input.ts";
import { writeMime } from "./mime-writer.ts";
import { joinMessage, splitMessage, type MessageHeaders } from "./raw-headers.ts";

export interface ComposedMessage {
  raw: Buffer;
  /** With angle brackets, as in the header. */
  messageId: string;
  subject: string | null;
  /** Raw messages: every mailbox their From and Sender fields name (each needs a domain of the account). */
  named?: MailAddress[];
}

/**
 * Every line ending CRLF, as SMTP and DKIM want it. A message that has them already (what
 * MailComposer and most clients write) is returned as it is: no copies of a large message.
 */
export function toCrlf(raw: Buffer): Buffer {
  let bare = 0;
  for (let at = raw.indexOf(0x0a); at >= 0; at = raw.indexOf(0x0a, at + 1)) if (at === 0 || raw[at - 1] !== 0x0d) bare++;
  if (bare === 0) return raw;
  const out = Buffer.allocUnsafe(raw.length + bare);
  let from = 0;
  let to = 0;
  for (let at = raw.indexOf(0x0a); at >= 0; at = raw.indexOf(0x0a, at + 1)) {
    if (at > 0 && raw[at - 1] === 0x0d) continue;
    to += raw.copy(out, to, from, at);
    out[to++] = 0x0d;
    from = at;
  }
  raw.copy(out, to, from);
  return out;
}

/** A Message-ID a raw message brings is kept when it has the form <left@right>; else it gets ours. */
export function ownMessageIdOf(h: MessageHeaders): string | null {
  const existing = h.first("message-id")?.trim();
  return existing && /^<[^<>\s]+@[^<>\s]+>$/.test(existing) ? existing : null;
}

/** A message without a Date gets one (RFC 5322 requires it), written as MailComposer writes it. */
export function addDateIfMissing(h: MessageHeaders, date: Date): void {
  if (!h.has("date")) h.prepend("Date", date.toUTCString().replace("GMT", "+0000"));
}

/** Markdown → HTML (and plain text when the draft gave none): html wins, markdown fills in (docs/sending.md, E11 body rules). */
export function bodiesOf(draft: MessageDraft): { html: string | null; plain: string | null } {
  // html wins over markdown; markdown only fills in what is missing.
  const html = draft.html ?? (draft.markdown !== null ? (marked.parse(draft.markdown, { async: false }) as string) : null);
  const plain = draft.plain ?? (draft.markdown !== null && html !== null ? htmlToText(html, { wordwrap: 78 }) : null);
  return { html, plain };
}

/** What MailComposer is given for a structured draft (exported for bench:compose, which builds it with nodemailer's streams as its peer). */
export function mailOptionsOf(draft: MessageDraft, messageId: string, date: Date): ConstructorParameters<typeof MailComposer>[0] {
  const { html, plain } = bodiesOf(draft);
  return {
    from: formatAddress(draft.from),
    to: draft.to.map(formatAddress),
    cc: draft.cc.length > 0 ? draft.cc.map(formatAddress) : undefined,
    subject: draft.subject ?? undefined,
    messageId,
    date,
    text: plain ?? undefined,
    html: html ?? undefined,
    headers: draft.headers.map(([key, value]) => ({ key, value })),
    attachments: draft.attachments.map((a) => ({
      filename: a.fileName,
      content: a.content,
      contentType: a.contentType,
      ...(a.contentId ? { cid: a.contentId, contentDisposition: "inline" as const } : {}),
    })),
  };
}

export async function composeMessage(draft: MessageDraft, messageId: string, date: Date): Promise<ComposedMessage> {
  if (draft.raw !== null) return composeRaw(draft, messageId, date);
  const raw = writeMime(new MailComposer(mailOptionsOf(draft, messageId, date)).compile());
  return { raw: toCrlf(raw), messageId, subject: draft.subject };
}

const sameAddresses = (a: readonly MailAddress[], b: readonly MailAddress[]) => {
  const norm = (l: readonly MailAddress[]) => [...new Set(l.map((x) => x.address.toLowerCase()))].sort().join(",");
  return norm(a) === norm(b);
};

/** The raw variant: its From/To/Cc must match the request; subject replaces Subject. */
function composeRaw(draft: MessageDraft, messageId: string, date: Date): ComposedMessage {
  const message = splitMessage(toCrlf(Buffer.from(draft.raw!, "utf8")));
  const h = message.headers;
  const author = authorOf(authorFieldsOf(h));
  if (!author.ok) throw new InputProblem({ path: "raw", message: author.reason });
  const mismatch = (field: string) =>
    new InputProblem({ path: field, message: `must match the ${field === "cc" ? "Cc" : field === "to" ? "To" : "From"} header of raw` });
  if (author.author.address.toLowerCase() !== draft.from.address.toLowerCase()) throw mismatch("from");
  if (!sameAddresses(headerAddresses(h.all("to")), draft.to)) throw mismatch("to");
  if (!sameAddresses(headerAddresses(h.all("cc")), draft.cc)) throw mismatch("cc");
  h.remove("bcc");
  if (draft.subject !== null) h.set("Subject", draft.subject);
  addDateIfMissing(h, date);
  const id = ownMessageIdOf(h) ?? messageId;
  if (id === messageId) h.set("Message-ID", messageId);
  return { raw: joinMessage(message), messageId: id, subject: draft.subject ?? h.first("subject"), named: author.named };
}
