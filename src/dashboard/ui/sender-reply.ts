// The SMTP reply the sender of a received message got, derived from its incoming status as
// docs/receiving.md's table says (the status does not store it): 2xx gives 250, 404 gives
// 554 5.1.1, another 4xx 550 5.7.1, a 5xx 451 4.3.0, each with the target's own first line
// when it answered in plain text; a timeout 451 4.4.7, an unreachable target 451 4.4.1. When
// Postroom refused the mail itself ("rejected"), the status's response is the reply it gave.

/** How long the target's line in a reply can be (as inbound/target-reply.ts cuts it). */
const REPLY_TEXT_MAX_CHARS = 200;

/**
 * The target's first line as the reply text. Whether it answered text/plain is not stored:
 * an answer that reads as JSON, HTML or XML was not, and gets the reply's own words.
 */
function targetLine(response: string | null): string | null {
  if (!response || /^\s*[[{<]/.test(response)) return null;
  const line = (response.split(/\r?\n/, 1)[0] ?? "").replace(/[\u0000-\u001f\u007f-\u009f]/g, "").trim();
  return line === "" ? null : line.slice(0, REPLY_TEXT_MAX_CHARS);
}

export function senderReply(status: string, response: string | null): string | null {
  const text = (fallback: string) => targetLine(response) ?? fallback;
  if (/^2\d\d$/.test(status)) return "250 2.0.0 Accepted";
  if (status === "404") return `554 5.1.1 ${text("Recipient rejected by the target")}`;
  if (/^4\d\d$/.test(status)) return `550 5.7.1 ${text("Message rejected by the target")}`;
  if (/^\d{3}$/.test(status)) return `451 4.3.0 ${text("The target failed; try again later")}`;
  if (status === "client_timeout") return "451 4.4.7 The target did not answer in time; try again later";
  if (status === "unreachable") return "451 4.4.1 The target could not be reached; try again later";
  return response && /^[245]\d\d [245]\.\d{1,3}\.\d{1,3} /.test(response) ? response : null;
}
