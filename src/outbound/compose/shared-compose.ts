// Composing the messages of one batch (POST /messages/batch, issue 34): a batch is mostly one
// content sent to many people, and composing it (MailComposer's headers, QP of the text and
// HTML) was half of what a batched message cost. Messages whose content is the same (From,
// Subject, extra headers, text, HTML, Markdown; no attachments, not raw) share one
// composition: the first is composed as E11 composes it, and each next one is that message
// with its own To, Cc and Message-ID fields, written by nodemailer's own header code, so the
// bytes are those a composition of its own would give (boundaries aside, which are random
// in any case); test/outbound/shared-compose.test.ts compares them.
import { foldLines } from "nodemailer/lib/mime-funcs";
import MimeNode from "nodemailer/lib/mime-node";
import { formatAddress } from "./addresses.ts";
import { type ComposedMessage, composeMessage } from "./compose.ts";
import type { MessageDraft } from "./message-input.ts";

/** The fields that differ between messages sharing a composition. */
const OWN_FIELDS = new Set(["to", "cc", "message-id"]);

const HEADER_END = Buffer.from("\r\n\r\n");

/** A header section's fields, each with its folded lines, in order. */
function fieldsOf(head: string): string[] {
  const fields: string[] = [];
  for (const line of head.split("\r\n")) {
    if ((line.startsWith(" ") || line.startsWith("\t")) && fields.length > 0) fields[fields.length - 1] += `\r\n${line}`;
    else fields.push(line);
  }
  return fields;
}

const nameOf = (field: string): string => field.slice(0, field.indexOf(":")).trim().toLowerCase();

/** The To, Cc and Message-ID fields of a message to `draft`'s recipients, as MailComposer writes them (MimeNode.buildHeaders). */
function ownFields(node: MimeNode, draft: MessageDraft, messageId: string): Map<string, string> {
  const field = (key: string, value: string | string[]) => foldLines(`${key}: ${node.encodeHeaderValue(key, value)}`, 76);
  const fields = new Map([
    ["to", field("To", draft.to.map(formatAddress))],
    ["message-id", field("Message-ID", messageId)],
  ]);
  if (draft.cc.length > 0) fields.set("cc", field("Cc", draft.cc.map(formatAddress)));
  return fields;
}

interface Shared {
  raw: Buffer;
  /** Where the header section ends (its blank line). */
  bodyAt: number;
  fields: string[];
}

function sharedOf(raw: Buffer): Shared | null {
  const end = raw.indexOf(HEADER_END);
  return end > 0 ? { raw, bodyAt: end, fields: fieldsOf(raw.subarray(0, end).toString("latin1")) } : null;
}

export class SharedComposer {
  /** Each content's first composition, kept as it is started: the batch's messages are composed at once. */
  private readonly first = new Map<string, Promise<Shared | null>>();
  /** Only its header encoding is used: the same code MailComposer's nodes write headers with. */
  private readonly node = new MimeNode("text/plain");

  async compose(draft: MessageDraft, messageId: string, date: Date): Promise<ComposedMessage> {
    if (draft.raw !== null || draft.attachments.length > 0) return composeMessage(draft, messageId, date);
    const key = JSON.stringify([draft.from, draft.subject, draft.headers, draft.plain, draft.html, draft.markdown, draft.cc.length > 0]);
    const started = this.first.get(key);
    if (!started) {
      const composing = composeMessage(draft, messageId, date);
      this.first.set(
        key,
        composing.then(
          (c) => sharedOf(c.raw),
          () => null,
        ),
      );
      return composing;
    }
    const shared = await started;
    if (!shared) return composeMessage(draft, messageId, date);
    const own = ownFields(this.node, draft, messageId);
    const head = shared.fields.map((f) => (OWN_FIELDS.has(nameOf(f)) ? (own.get(nameOf(f)) ?? f) : f)).join("\r\n");
    return { raw: Buffer.concat([Buffer.from(head, "latin1"), shared.raw.subarray(shared.bodyAt)]), messageId, subject: draft.subject };
  }
}
