// Everything a received message yields before it is posted (parsed content, reply text,
// facts for the SPF/DKIM/DMARC checks), computed from the raw bytes alone, so it can run
// on a worker thread and keep the SMTP and HTTP event loop free.
import { messageFacts, type MessageFacts } from "./auth-checks.ts";
import { parseMessage, type ParseLimits } from "./parse.ts";
import { messageContent, type MessageContent } from "../payload/payload.ts";

export interface ExtractedMessage {
  content: MessageContent;
  facts: MessageFacts;
  /** Message-ID without angle brackets. */
  messageId: string | null;
  subject: string | null;
}

/** `traceBytes`: our own trace lines at the front of `raw` (see parseMessage). */
export async function extractMessage(raw: Buffer, limits: ParseLimits, traceBytes = 0): Promise<ExtractedMessage> {
  const parsed = await parseMessage(raw, limits, traceBytes);
  return {
    content: messageContent(parsed),
    facts: messageFacts(parsed),
    messageId: parsed.messageId ? parsed.messageId.replace(/^<|>$/g, "") : null,
    subject: parsed.subject ?? null,
  };
}
