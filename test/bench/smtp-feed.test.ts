// bench:outbound's SMTP feed (bench/smtp-feed.ts) against a real SMTP server (smtp-server,
// test/helpers/sink.ts) that offers STARTTLS and requires AUTH: every message arrives once,
// over TLS, as the authenticated user, with its own recipient, To and Message-ID; a wrong
// password fails the run instead of sending unauthenticated.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { feedMessages, feedSmtp } from "../../bench/smtp-feed.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { SmtpSink } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";

const AUTH = { user: "bench", pass: "secret" };

describe("SMTP feed", () => {
  let sink: SmtpSink;
  const dir = tempDir("smtp-feed-");
  beforeAll(async () => {
    const { certFile, keyFile } = makeSelfSignedCert(dir.path, "sink.test");
    sink = await SmtpSink.start({ auth: AUTH, tls: { key: readFileSync(keyFile, "utf8"), cert: readFileSync(certFile, "utf8") } });
  });
  afterAll(async () => {
    await sink.stop();
    dir.remove();
  });

  test("STARTTLS and AUTH PLAIN once per session, then every message once", async () => {
    const message = feedMessages();
    const messages = Array.from({ length: 12 }, (_, n) => message(n, `r${n % 5}@dest1.bench.test`));
    const target = { host: "127.0.0.1", port: sink.port, setup: { startTls: true, auth: { user: AUTH.user, password: AUTH.pass } } };
    const result = await feedSmtp(target, "news@sender.bench.test", messages, 3);
    expect(result).toEqual({ failed: 0, failures: [] });
    expect(sink.messages).toHaveLength(12);
    expect(sink.messages.every((m) => m.tls && m.user === AUTH.user)).toBe(true);
    expect(sink.connections).toBe(3);
    const ids = sink.messages.map((m) => m.raw.match(/^Message-ID: (.*)$/m)?.[1]);
    expect(new Set(ids).size).toBe(12);
    for (const m of sink.messages) expect(m.raw).toContain(`To: <${m.rcptTo[0]}>`);
  });

  test("a wrong password fails the run", async () => {
    const message = feedMessages();
    const target = { host: "127.0.0.1", port: sink.port, setup: { startTls: true, auth: { user: AUTH.user, password: "wrong" } } };
    await expect(feedSmtp(target, "news@sender.bench.test", [message(0, "r0@dest1.bench.test")], 1)).rejects.toThrow(/AUTH PLAIN: 535/);
  });

  test("without a setup, a plain session as bench:inbound opens it (no STARTTLS, no AUTH)", async () => {
    const plain = await SmtpSink.start();
    try {
      const result = await feedSmtp(
        { host: "127.0.0.1", port: plain.port, setup: {} },
        "news@sender.bench.test",
        [feedMessages()(0, "r0@dest1.bench.test")],
        1,
      );
      expect(result.failed).toBe(0);
      expect(plain.messages.map((m) => [m.tls, m.user])).toEqual([[false, null]]);
    } finally {
      await plain.stop();
    }
  });
});
