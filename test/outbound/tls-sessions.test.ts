// TLS session resumption on outbound connections: the second connection to a server
// resumes the first one's session (checked on a real STARTTLS server, smtp-server in the
// test sink), only under the same TLS checks, and not at all with the cache off. And the
// envelope goes out pipelined when the server offers PIPELINING.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { sessionChecks } from "../../src/outbound/delivery/connect.ts";
import { type ClientOptions, SmtpClient, type SmtpEndpoint } from "../../src/outbound/delivery/smtp-client.ts";
import { TlsSessionCache } from "../../src/outbound/delivery/tls-sessions.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { SmtpSink } from "../helpers/sink.ts";
import { tempDir } from "../helpers/tmp.ts";

let sink: SmtpSink;
const dir = tempDir("tls-sessions-");
beforeAll(async () => {
  const files = makeSelfSignedCert(dir.path, "mx.resume.test");
  sink = await SmtpSink.start({ tls: { key: readFileSync(files.keyFile, "utf8"), cert: readFileSync(files.certFile, "utf8") } });
});
afterAll(async () => {
  await sink.stop();
  dir.remove();
});

const endpoint = (): SmtpEndpoint => ({ host: "mx.resume.test", ip: "127.0.0.1", port: sink.port, secure: false, auth: null });
const base: ClientOptions = { heloName: "out.postroom.test", connectTimeoutMs: 5000, commandTimeoutMs: 5000 };

/** Opens a connection, delivers one message (the session ticket arrives meanwhile), closes it; whether its handshake was resumed. */
async function deliverOnce(opts: ClientOptions): Promise<{ resumed: boolean; tls: boolean }> {
  const client = await SmtpClient.open(endpoint(), opts);
  const result = await client.send("from@out.postroom.test", "rcpt@resume.test", Buffer.from("Subject: hi\r\n\r\nhello\r\n"));
  expect(result.code).toBe(250);
  client.close();
  return { resumed: client.tlsResumed, tls: client.tls };
}

describe("TLS session resumption", () => {
  test("the second connection to a server resumes the first one's session", async () => {
    const cache = new TlsSessionCache(10);
    const opts = { ...base, sessions: { cache, checks: "opportunistic" } };
    expect(await deliverOnce(opts)).toEqual({ resumed: false, tls: true });
    expect(await deliverOnce(opts)).toEqual({ resumed: true, tls: true });
    expect(await deliverOnce(opts)).toEqual({ resumed: true, tls: true });
  });

  test("a session made under other checks is not offered: an opportunistic one never stands in for a verified handshake", async () => {
    const cache = new TlsSessionCache(10);
    await deliverOnce({ ...base, sessions: { cache, checks: "opportunistic" } });
    expect(await deliverOnce({ ...base, sessions: { cache, checks: "encrypt" } })).toEqual({ resumed: false, tls: true });
  });

  test("with tls_session_cache = 0 every connection makes a full handshake", async () => {
    const cache = new TlsSessionCache(0);
    const opts = { ...base, sessions: { cache, checks: "opportunistic" } };
    await deliverOnce(opts);
    expect(await deliverOnce(opts)).toEqual({ resumed: false, tls: true });
  });

  test("the checks a session is kept under", () => {
    const policy = { mode: "enforce", mx: ["mx.resume.test"], maxAgeS: 86400 };
    const cases: [Parameters<typeof sessionChecks>, string | RegExp][] = [
      [[{ level: "opportunistic" }], "opportunistic"],
      [[{ level: "encrypt", why: "outbound.require_tls" }], "encrypt"],
      [[{ level: "verify", why: "MTA-STS", policy } as never], "verify"],
      [[{ level: "verify", why: "MTA-STS", policy } as never, ["-----BEGIN CERTIFICATE-----a"]], /^verify ca=[0-9a-f]{16}$/],
    ];
    for (const [args, expected] of cases) expect(sessionChecks(...args)).toMatch(expected);
    // Two private roots are two scopes.
    const v = { level: "verify", why: "MTA-STS", policy } as never;
    expect(sessionChecks(v, ["a"])).not.toBe(sessionChecks(v, ["b"]));
  });
});

describe("PIPELINING (RFC 2920)", () => {
  let server: Server;
  /** What the server had read when it answered MAIL FROM, per transaction. */
  const beforeMailReply: string[] = [];
  beforeAll(async () => {
    // A server that offers PIPELINING and holds its reply to MAIL FROM for 50 ms: a client
    // that waits for each reply has sent only MAIL FROM by then.
    server = createServer((socket) => {
      let buf = "";
      let inData = false;
      // Replies go out in order, each after the one before it.
      let replies = Promise.resolve();
      const reply = (text: string, delayMs = 0, before?: () => void) => {
        replies = replies.then(async () => {
          if (delayMs) await Bun.sleep(delayMs);
          before?.();
          socket.write(text);
        });
      };
      socket.write("220 pipe.test ESMTP\r\n");
      socket.on("data", (chunk) => {
        buf += chunk.toString("latin1");
        for (let nl = buf.indexOf("\r\n"); nl >= 0; nl = buf.indexOf("\r\n")) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 2);
          if (inData) {
            if (line === ".") {
              inData = false;
              reply("250 2.0.0 queued\r\n");
            }
            continue;
          }
          const verb = line.slice(0, 4).toUpperCase();
          if (verb === "EHLO") reply("250-pipe.test\r\n250 PIPELINING\r\n");
          else if (verb === "MAIL") {
            const seen = `${line}\r\n${buf}`;
            reply("250 2.1.0 ok\r\n", 50, () => beforeMailReply.push(seen));
          } else if (verb === "RCPT") reply("250 2.1.5 ok\r\n");
          else if (verb === "DATA") {
            inData = true;
            reply("354 go on\r\n");
          } else if (verb === "QUIT") replies = replies.then(() => void socket.end("221 bye\r\n"));
          else reply("250 ok\r\n");
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterAll(() => server.close());

  test("the envelope and DATA are sent together, before the reply to MAIL FROM", async () => {
    const port = (server.address() as { port: number }).port;
    const client = await SmtpClient.open({ host: "pipe.test", ip: "127.0.0.1", port, secure: false, auth: null }, base);
    for (let i = 0; i < 2; i++) {
      const result = await client.send("from@out.postroom.test", `rcpt${i}@pipe.test`, Buffer.from("Subject: hi\r\n\r\nhello\r\n"));
      expect(result).toEqual({ code: 250, response: "250 2.0.0 queued" });
    }
    client.close();
    expect(beforeMailReply).toHaveLength(2);
    for (const [i, seen] of beforeMailReply.entries()) {
      expect(seen).toContain("MAIL FROM:<from@out.postroom.test>");
      expect(seen).toContain(`RCPT TO:<rcpt${i}@pipe.test>`);
      expect(seen).toContain("DATA\r\n");
    }
  });
});
