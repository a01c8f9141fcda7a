// How bench:outbound feeds each side (bench/outbound.ts says why), as one object the
// benchmark asks for each run's load:
// - smtp (the default): this process's SMTP feed (bench/smtp-feed.ts) for both sides, C
//   sessions each with STARTTLS and AUTH PLAIN once, to Postroom's submission port and to
//   the private Postfix's submission port (bench/postfix-submission.ts), with the same
//   messages to the same recipients;
// - http: Postroom through its API (bench/api-client.ts), Postfix through smtp-source
//   (bench/outbound-run.ts), as before issue 38.
// Either way the messages go to the D domains in turn, and to RECIPIENTS_PER_DOMAIN
// recipients of each in turn (smtp-source: one numbered recipient per domain).
import { sendAll } from "./api-client.ts";
import { MAIL_FROM } from "./message.ts";
import type { Feed } from "./outbound-run.ts";
import { type FeedTarget, feedMessages, feedSmtp } from "./smtp-feed.ts";

export type FeedKind = "smtp" | "http";

/** The n-th recipient domain (1-based). */
export const DEST = (n: number) => `dest${n}.bench.test`;
/** Messages go to this many recipients of each domain, in turn. */
export const RECIPIENTS_PER_DOMAIN = 50;

/** What this process sends in the next run of each side. */
export interface OutboundFeeds {
  /** Postroom's next `count` messages, prepared now (before the clock starts). */
  postroom(count: number): Feed;
  /** Postfix's next `count` messages, prepared now; undefined: smtp-source (--feed http). */
  postfix(count: number): Feed | undefined;
  /** In words, for the benchmark's header. */
  describe: string;
}

export interface FeedSetup {
  kind: FeedKind;
  domains: number;
  clients: number;
  /** --feed http: Postroom's HTTP port and the JSON API content of the message. */
  http?: { port: () => number; content: { subject: string; plain: string; html: string }; fromHeader: string };
  /** --feed smtp: where each side's submission port is, and the credentials it takes. */
  smtp?: { postroom: () => FeedTarget; postfix: FeedTarget };
}

export function outboundFeeds(setup: FeedSetup): OutboundFeeds {
  // One sequence over both sides: every message has its own Message-ID (Postroom's
  // submission answers a Message-ID it has seen with the first message's 250).
  let seq = 0;
  const rcptOf = (n: number) => {
    const domain = n % setup.domains;
    const local = Math.floor(n / setup.domains) % RECIPIENTS_PER_DOMAIN;
    return `r${local}@${DEST(domain + 1)}`;
  };
  const numbers = (count: number) => Array.from({ length: count }, () => seq++);
  if (setup.kind === "http") {
    const http = setup.http!;
    return {
      postroom: (count) => {
        const bodies = numbers(count).map((n) => JSON.stringify({ from: http.fromHeader, to: rcptOf(n), ...http.content }));
        return () => sendAll(http.port(), bodies, setup.clients);
      },
      postfix: () => undefined,
      describe:
        "http: Postroom through its API (this process, C keep-alive clients, JSON bodies it composes into MIME), Postfix through smtp-source (C, C sessions, no TLS, no AUTH); the feeds differ",
    };
  }
  const smtp = setup.smtp!;
  const message = feedMessages();
  const prepared = (count: number) => numbers(count).map((n) => message(n, rcptOf(n)));
  return {
    postroom: (count) => {
      const messages = prepared(count);
      return () => feedSmtp(smtp.postroom(), MAIL_FROM, messages, setup.clients);
    },
    postfix: (count) => {
      const messages = prepared(count);
      return () => feedSmtp(smtp.postfix, MAIL_FROM, messages, setup.clients);
    },
    describe: `smtp: both sides fed alike by this process (bench/smtp-feed.ts): C sessions, each EHLO, STARTTLS, EHLO, AUTH PLAIN once, then pipelined MAIL/RCPT/DATA of the same message with its own To and Message-ID, to each side's submission port (Postroom: submission_listen with [tls] files; Postfix: a second smtpd with smtpd_tls_security_level=encrypt and Cyrus SASL, permit_sasl_authenticated only)`,
  };
}
