// reply_plain (docs/receiving.md, json+n): the new text of a reply, with the quoted history and
// the signature removed by our reply parser (./reply/), which gives the answers of
// email-reply-parser 2.3.9 on every corpus message (test/inbound/reply-corpus.test.ts).
import { visibleText } from "./reply/fragments.ts";

// Reply extraction scans the text line by line with many patterns; past this size a
// message is no reply worth extracting, and the scan would only cost time.
export const REPLY_PARSE_MAX_CHARS = 256 * 1024;

/** The reply part of a message's plain text; undefined when there is none to extract. */
export function replyText(plain: string | undefined): string | undefined {
  if (plain === undefined || plain.length > REPLY_PARSE_MAX_CHARS) return undefined;
  return visibleText(plain).trim();
}
