// bench:outbound's SMTP feed (--feed smtp, the default): the one load generator both
// sides get, so that their delivered throughput compares like with like. C sessions, each
// opened once per run as a submission client opens it (EHLO, STARTTLS, EHLO, AUTH PLAIN),
// then one transaction after another (MAIL FROM, RCPT TO, DATA pipelined, then the
// message) until every prepared message has had its 250. The messages are the benchmark
// message (bench/message.ts) with its To and Message-ID set per message, built before the
// clock starts, so a transaction costs this process no more than writing bytes and
// reading replies.
import { dotStuff, messageIdOf, messageParts, SENDER_DOMAIN, wireOf, wireTail } from "./message.ts";
import { type SessionSetup, SmtpConnection } from "./smtp-client.ts";

export interface FeedTarget {
  host: string;
  port: number;
  setup: SessionSetup;
}

export interface FeedMessage {
  rcpt: string;
  /** The wire bytes after DATA (bench/message.ts BenchMessage.data). */
  data: Uint8Array;
}

/** The EHLO name of the feed's sessions (smtp-source's -M of the old Postfix feed). */
const EHLO_NAME = "client.sender.bench.test";

/**
 * Message `n` of the run's sequence, to `rcpt`: the benchmark message with `To: <rcpt>`
 * and its own Message-ID (Postroom's submission takes a Message-ID it has seen as the same
 * message sent again: every message must have a new one). The body is the same for all.
 */
export function feedMessages(): (n: number, rcpt: string) => FeedMessage {
  const heads = new Map<string, ReturnType<typeof messageParts>["head"]>();
  const tail = wireTail(messageParts("").body);
  return (n, rcpt) => {
    let head = heads.get(rcpt);
    if (!head) heads.set(rcpt, (head = messageParts(rcpt).head));
    return { rcpt, data: wireOf(dotStuff(head(messageIdOf(n), SENDER_DOMAIN)), tail) };
  };
}

/**
 * Sends every message over `sessions` sessions to `target`. A message succeeded if its
 * transaction ended in 250; the others are counted and the first five replies kept. A
 * session that cannot be opened, or breaks, fails the run.
 */
export async function feedSmtp(
  target: FeedTarget,
  mailFrom: string,
  messages: FeedMessage[],
  sessions: number,
): Promise<{ failed: number; failures: string[] }> {
  const failures: string[] = [];
  let failed = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(sessions, messages.length) }, async () => {
      const conn = await SmtpConnection.open(target.host, target.port, EHLO_NAME, target.setup);
      for (let i = next++; i < messages.length; i = next++) {
        const m = messages[i]!;
        const reply = await conn.send(mailFrom, m.rcpt, m.data);
        if (reply.code !== 250) {
          failed++;
          if (failures.length < 5) failures.push(`${reply.code} ${reply.text}`);
        }
      }
      await conn.quit();
    }),
  );
  return { failed, failures };
}
