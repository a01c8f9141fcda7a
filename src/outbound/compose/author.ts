// Who a submitted message says it is from, decided once and without ambiguity (RFC 5322
// section 3.6.2): exactly one From field naming one mailbox; or, when From names several,
// exactly one Sender field naming one mailbox, which is then the one responsible (checked
// against the account's domains and DKIM-signed). Anything else is refused with a sentence,
// because a receiver might show another author than the one we checked and signed for.
// Every other mailbox a receiver could take for the sender (the rest of From, Sender,
// Resent-From, Resent-Sender) is "named" and needs a domain of the account too.
//
// The values are read as written (unfolded, encoded words not decoded): an encoded word in
// a display name is text, never syntax, so "=?utf-8?Q?a=2C_b?= <x@y>" is one mailbox. Only
// the display names are decoded afterwards. A value that a lenient parser could read one way
// and a receiver another ("a@x <b@y>", "<a@x> <b@y>", a source route) is refused too: every
// "@", "<" and ">" outside quoted strings and comments must belong to one of its mailboxes.
import addressparser from "nodemailer/lib/addressparser";
import libmime from "libmime";
import { isAddress, type MailAddress } from "./addresses.ts";
import type { MessageHeaders } from "./raw-headers.ts";

export interface AuthorFields {
  /** Every From field's value, top first, unfolded and not MIME-decoded (empty ones too). */
  from: readonly string[];
  /** Every Sender field's value, the same way. */
  sender: readonly string[];
  /** Every Resent-From and Resent-Sender field's value (a message may carry several resent blocks). */
  resentFrom?: readonly string[];
  resentSender?: readonly string[];
}

export type AuthorDecision =
  | {
      ok: true;
      /** The mailbox responsible for the message: the From mailbox, or the Sender when From names several. */
      author: MailAddress;
      /** Every mailbox the From, Sender, Resent-From and Resent-Sender fields name (the author among them), each needing a domain of the account. */
      named: MailAddress[];
    }
  | { ok: false; reason: string };

export const authorFieldsOf = (h: MessageHeaders): AuthorFields => ({
  from: h.rawValues("from"),
  sender: h.rawValues("sender"),
  resentFrom: h.rawValues("resent-from"),
  resentSender: h.rawValues("resent-sender"),
});

type AuthorField = "From" | "Sender" | "Resent-From" | "Resent-Sender";

type Mailboxes = { ok: true; list: MailAddress[] } | { ok: false; reason: string };

/** The value's text outside quoted strings and comments, or null when one of them is left open. */
function bareText(value: string): string | null {
  let out = "";
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (quoted || depth > 0) {
      if (c === "\\") i++;
      else if (quoted && c === '"') quoted = false;
      else if (!quoted && c === "(") depth++;
      else if (!quoted && c === ")") depth--;
      continue;
    }
    if (c === '"') quoted = true;
    else if (c === "(") depth = 1;
    else out += c;
  }
  return quoted || depth > 0 ? null : out;
}

const count = (s: string, c: string): number => s.split(c).length - 1;

function decodedName(name: string): string {
  try {
    return libmime.decodeWords(name).trim();
  } catch {
    return name.trim();
  }
}

/** The mailboxes of one address field, or why it is not a plain list of them. */
function mailboxesOf(field: AuthorField, value: string): Mailboxes {
  const malformed = { ok: false as const, reason: `the ${field} header is malformed (text outside its addresses)` };
  if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) return { ok: false, reason: `the ${field} header holds control characters` };
  const bare = bareText(value);
  if (bare === null) return malformed;
  const list: MailAddress[] = [];
  for (const entry of addressparser(value)) {
    if ("group" in entry && entry.group) return { ok: false, reason: `the ${field} header is a group; it must name the sender's address` };
    const address = (entry.address ?? "").trim();
    if (address === "" && (entry.name ?? "").trim() === "") continue;
    if (!isAddress(address)) return { ok: false, reason: `the ${field} header holds something that is not an email address` };
    list.push({ address, name: decodedName(entry.name ?? "") });
  }
  if (list.length === 0) return { ok: false, reason: `the ${field} header names no address` };
  const angles = count(bare, "<");
  if (count(bare, "@") !== list.length || angles > list.length || angles !== count(bare, ">")) return malformed;
  return { ok: true, list };
}

export function authorOf(fields: AuthorFields): AuthorDecision {
  if (fields.from.length === 0) return { ok: false, reason: "message has no From header; one naming the sender is required (RFC 5322)" };
  if (fields.from.length > 1) return { ok: false, reason: `message has ${fields.from.length} From headers; RFC 5322 allows one` };
  if (fields.sender.length > 1) return { ok: false, reason: `message has ${fields.sender.length} Sender headers; RFC 5322 allows one` };
  const from = mailboxesOf("From", fields.from[0]!);
  if (!from.ok) return from;
  let sender: MailAddress | null = null;
  if (fields.sender.length === 1) {
    const s = mailboxesOf("Sender", fields.sender[0]!);
    if (!s.ok) return s;
    if (s.list.length !== 1) return { ok: false, reason: `the Sender header names ${s.list.length} addresses; it must name one` };
    sender = s.list[0]!;
  }
  if (from.list.length > 1 && !sender) {
    return {
      ok: false,
      reason: `the From header names ${from.list.length} addresses; name one, or add a Sender header naming the one that sends`,
    };
  }
  const author = from.list.length === 1 ? from.list[0]! : sender!;
  const resent = resentMailboxes(fields);
  if (!resent.ok) return resent;
  return { ok: true, author, named: [...from.list, ...(sender ? [sender] : []), ...resent.list] };
}

/**
 * The mailboxes of every Resent-From and Resent-Sender field. They never make the author,
 * but a receiver may show one as who the message comes from (and Sender ID's purported
 * responsible address picks Resent-Sender, then Resent-From, first): each must be as
 * plain as a From, and is named, so it needs a domain of the account like the author.
 */
function resentMailboxes(fields: AuthorFields): Mailboxes {
  const list: MailAddress[] = [];
  for (const [field, values] of [
    ["Resent-From", fields.resentFrom ?? []],
    ["Resent-Sender", fields.resentSender ?? []],
  ] as const) {
    for (const value of values) {
      const m = mailboxesOf(field, value);
      if (!m.ok) return m;
      if (field === "Resent-Sender" && m.list.length !== 1)
        return { ok: false, reason: `the Resent-Sender header names ${m.list.length} addresses; it must name one` };
      list.push(...m.list);
    }
  }
  return { ok: true, list };
}
