// The rules of a message to send (docs/sending.md, E11), as pure
// checks: a request body becomes a MessageDraft, or a Problem naming the field and rule.
import type { Problem } from "../../lib/validation.ts";
import { parseAddressList, type MailAddress } from "./addresses.ts";
import { detectMimeType } from "nodemailer/lib/mime-funcs/mime-types";
import { blockedExtensionOf } from "./attachment-names.ts";
import type { Priority } from "../queue/message.ts";
import { DEFAULT_MAX_SEND_AHEAD_MS, isProblem, metadataOf, sendAtOf } from "./send-options.ts";

export interface MessageBody {
  from: string;
  to: string | string[];
  cc?: string | string[];
  /** Delivered, never in any copy's headers (issue 34). */
  bcc?: string | string[];
  test_mode?: boolean;
  subject?: string;
  tags?: string | string[];
  plain?: string;
  html?: string;
  markdown?: string;
  headers?: Record<string, string | string[]>;
  priority?: Priority;
  attachments?: { file_name: string; content: string; content_type?: string; content_id?: string | null }[];
  raw?: string;
  /** ISO 8601: the recipients are not attempted before it (send-options.ts). */
  send_at?: string;
  metadata?: Record<string, string>;
}

export interface DraftAttachment {
  fileName: string;
  content: Buffer;
  contentType: string;
  /** Without angle brackets; set for inline parts. */
  contentId: string | null;
}

export interface MessageDraft {
  from: MailAddress;
  to: MailAddress[];
  cc: MailAddress[];
  bcc: MailAddress[];
  /** The first attempt's time (send_at), null: at once. */
  sendAtMs: number | null;
  metadata: Record<string, string>;
  subject: string | null;
  tags: string[];
  priority: Priority;
  testMode: boolean;
  headers: [string, string][];
  plain: string | null;
  html: string | null;
  markdown: string | null;
  attachments: DraftAttachment[];
  raw: string | null;
}

export interface InputRules {
  maxRecipients: number;
  blockedExtensions: readonly string[];
  markdownAllowed: boolean;
  /** The account or outbound account forces test mode. */
  forcedTestMode: boolean;
  /** Now, and how far ahead of it send_at may be (outbound.max_send_ahead); the defaults: the clock, 30 days. */
  nowMs?: number;
  maxSendAheadMs?: number;
}

export class InputProblem extends Error {
  constructor(readonly problem: Problem) {
    super(`${problem.path}: ${problem.message}`);
  }
}

const fail = (path: string, message: string): never => {
  throw new InputProblem({ path, message });
};

// Headers the message structure owns; set them through the fields that exist for them.
const STRUCTURAL_HEADERS = new Set([
  "from",
  "to",
  "cc",
  "bcc",
  "subject",
  "date",
  "sender",
  "return-path",
  "mime-version",
  "content-type",
  "content-transfer-encoding",
  "dkim-signature",
]);
const RESENT_AUTHOR_HEADERS = new Set(["resent-from", "resent-sender"]);
const HEADER_NAME = /^[\x21-\x39\x3b-\x7e]{1,76}$/;
// Base64 in groups of four, padding only at the end. Written as a length check and one
// character class: a regexp of repeated groups fails (returns false) on strings of some
// 7 MB and more in JavaScriptCore, which refused attachments E11 allows (issue 15).
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;
export const isBase64 = (text: string): boolean => text.length % 4 === 0 && BASE64_CHARS.test(text);
const TOKEN = "[a-z0-9!#$&^_.+-]+";
// A type, and parameters such as `; charset=utf-8` (Go's http.DetectContentType, which the
// official Go client's AttachmentFromFile uses, gives `text/plain; charset=utf-8`).
const CONTENT_TYPE = new RegExp(`^${TOKEN}/${TOKEN}(\\s*;\\s*${TOKEN}=(${TOKEN}|"[\\x20-\\x21\\x23-\\x7e]*"))*$`, "i");
export const MAX_TAGS = 20;
export const MAX_TAG_CHARS = 100;

function addresses(path: string, value: string | string[] | undefined): MailAddress[] {
  if (value === undefined) return [];
  try {
    return parseAddressList(value);
  } catch (err) {
    return fail(path, (err as Error).message);
  }
}

function tagsOf(value: string | string[] | undefined): string[] {
  const list = value === undefined ? [] : typeof value === "string" ? value.split(",") : value;
  const tags = [...new Set(list.map((t) => t.trim()).filter((t) => t !== ""))];
  if (tags.length > MAX_TAGS) fail("tags", `at most ${MAX_TAGS} tags`);
  for (const t of tags) {
    if (t.length > MAX_TAG_CHARS) fail("tags", `each tag at most ${MAX_TAG_CHARS} characters`);
    if (/[\u0000-\u001f\u007f]/.test(t)) fail("tags", "must not contain control characters");
  }
  return tags;
}

function headersOf(value: Record<string, string | string[]> | undefined): [string, string][] {
  const out: [string, string][] = [];
  for (const [name, v] of Object.entries(value ?? {})) {
    if (!HEADER_NAME.test(name)) fail(`headers.${name}`, "is not a valid header name (printable ASCII, no colon or space)");
    if (STRUCTURAL_HEADERS.has(name.toLowerCase())) fail(`headers.${name}`, "is set by the message itself; use the field for it");
    // A receiver may take them for who sends (compose/author.ts): only a raw message, whose
    // every named address is checked, may carry them.
    if (RESENT_AUTHOR_HEADERS.has(name.toLowerCase()))
      fail(
        `headers.${name}`,
        "names who sends the message; resend a message as raw, where every address it names needs a sending domain of this account",
      );
    for (const line of Array.isArray(v) ? v : [v]) {
      if (/[\r\n\u0000]/.test(line)) fail(`headers.${name}`, "must not contain line breaks");
      out.push([name, line]);
    }
  }
  return out;
}

/**
 * The attachment's type: as given, or, when it is empty (some clients send none), the one
 * its file name's extension says, application/octet-stream when that says nothing.
 */
export function contentTypeOf(given: string | undefined, fileName: string): string {
  const type = (given ?? "").trim();
  return type === "" ? detectMimeType(fileName) : type;
}

function attachmentsOf(value: MessageBody["attachments"], blocked: readonly string[]): DraftAttachment[] {
  return (value ?? []).map((a, i) => {
    const path = `attachments[${i}]`;
    const name = a.file_name.trim();
    if (name === "" || /[\u0000-\u001f\u007f/\\]/.test(name))
      fail(`${path}.file_name`, "must be a file name without slashes or control characters");
    const ext = blockedExtensionOf(name, blocked);
    if (ext) fail(`${path}.file_name`, `files ending in .${ext} are not allowed`);
    if (!isBase64(a.content)) fail(`${path}.content`, "must be Base64 without newlines");
    const contentType = contentTypeOf(a.content_type, name);
    if (!CONTENT_TYPE.test(contentType)) fail(`${path}.content_type`, "must be a MIME type such as image/png");
    const cid = a.content_id ? a.content_id.trim().replace(/^<|>$/g, "") : null;
    if (cid !== null && !/^[\x21-\x7e]{1,250}$/.test(cid)) fail(`${path}.content_id`, "must be printable ASCII without spaces");
    return { fileName: name, content: Buffer.from(a.content, "base64"), contentType, contentId: cid || null };
  });
}

export function draftFromBody(body: MessageBody, rules: InputRules): MessageDraft {
  const fromList = addresses("from", body.from);
  if (fromList.length !== 1) fail("from", "must be one email address");
  const to = addresses("to", body.to);
  const cc = addresses("cc", body.cc);
  const bcc = addresses("bcc", body.bcc);
  if (to.length === 0) fail("to", "needs at least one recipient");
  if (to.length + cc.length + bcc.length > rules.maxRecipients)
    fail("to", `at most ${rules.maxRecipients} recipients (to, cc and bcc together)`);
  const sendAt = sendAtOf(body.send_at, rules.nowMs ?? Date.now(), rules.maxSendAheadMs ?? DEFAULT_MAX_SEND_AHEAD_MS);
  if (isProblem(sendAt)) throw new InputProblem(sendAt);
  const metadata = metadataOf(body.metadata);
  if (isProblem(metadata)) throw new InputProblem(metadata);
  if (body.subject !== undefined && /[\r\n\u0000]/.test(body.subject)) fail("subject", "must not contain line breaks");

  const common = {
    from: fromList[0]!,
    to,
    cc,
    bcc,
    sendAtMs: sendAt.ms,
    metadata: metadata.metadata,
    subject: body.subject ?? null,
    tags: tagsOf(body.tags),
    priority: body.priority ?? "standard",
    testMode: rules.forcedTestMode || body.test_mode === true,
  };
  if (body.raw !== undefined) {
    for (const field of ["plain", "html", "markdown", "headers", "attachments"] as const) {
      if (body[field] !== undefined) fail(field, "cannot be combined with raw (put it in the raw message)");
    }
    if (body.raw.trim() === "") fail("raw", "must be a complete RFC 5322 message");
    return { ...common, headers: [], plain: null, html: null, markdown: null, attachments: [], raw: body.raw };
  }
  if (body.plain === undefined && body.html === undefined && body.markdown === undefined) {
    fail("", "body not found: give plain, html or markdown (or raw)");
  }
  if (body.markdown !== undefined && !rules.markdownAllowed) fail("markdown", "is not enabled for this account");
  return {
    ...common,
    headers: headersOf(body.headers),
    plain: body.plain ?? null,
    html: body.html ?? null,
    markdown: body.markdown ?? null,
    attachments: attachmentsOf(body.attachments, rules.blockedExtensions),
    raw: null,
  };
}
