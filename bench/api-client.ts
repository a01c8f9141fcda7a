// The sending benchmarks' API client (bench:outbound, bench:webhooks): the benchmark
// message (bench/message.ts) as the JSON a customer would send for it, and C workers
// POSTing prepared bodies to Postroom's send endpoint, each sending its next one as soon
// as the previous one got its answer (keep-alive). Bodies are built by the caller before
// its clock starts.
import { simpleParser } from "mailparser";
import { type buildMessage, MAIL_FROM } from "./message.ts";
import { ACCOUNT } from "./postroom.ts";

/** The From of every API send: the benchmark message's sender, with a display name. */
export const FROM_HEADER = `"Postroom News" <${MAIL_FROM}>`;

/** The text, HTML and subject of `message` ({subject, plain, html}), which Postroom composes into its own MIME message (about the same size). */
export async function apiContent(message: ReturnType<typeof buildMessage>): Promise<{ subject: string; plain: string; html: string }> {
  const parsed = await simpleParser(Buffer.from(message.data(0)));
  const content = { subject: parsed.subject ?? "", plain: parsed.text ?? "", html: typeof parsed.html === "string" ? parsed.html : "" };
  if (!content.plain || !content.html) throw new Error("the benchmark message has no text or HTML part");
  return content;
}

const HEADERS = { authorization: `Bearer ${ACCOUNT.smtpKey}`, "content-type": "application/json" };

/**
 * Sends every body over `clients` workers. A send succeeded if it got 202 with a message
 * id; `onAccepted` hears of each as it arrives. The rest are counted, and the first five
 * answers (or errors) kept for the report.
 */
export async function sendAll(
  httpPort: number,
  bodies: string[],
  clients: number,
  onAccepted?: (id: string) => void,
): Promise<{ failed: number; failures: string[] }> {
  const url = `http://127.0.0.1:${httpPort}/api/v0.1/${ACCOUNT.outboundId}/messages`;
  const failures: string[] = [];
  let failed = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < bodies.length; i = next++) {
        try {
          const res = await fetch(url, { method: "POST", headers: HEADERS, body: bodies[i] });
          const text = await res.text();
          const id = res.status === 202 ? (JSON.parse(text) as { id?: string }).id : undefined;
          if (!id) {
            failed++;
            if (failures.length < 5) failures.push(`${res.status} ${text.slice(0, 300)}`);
            continue;
          }
          onAccepted?.(id);
        } catch (err) {
          failed++;
          if (failures.length < 5) failures.push((err as Error).message);
        }
      }
    }),
  );
  return { failed, failures };
}
