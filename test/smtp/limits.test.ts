// The SMTP session limits as decisions: who a connection counts against, when a client
// has too many, when commands are junk, when DATA is too slow, what a deadline does, and
// when AUTH needs TLS.
import { describe, expect, test } from "bun:test";
import {
  authTimeReply,
  authVerdict,
  clientKey,
  commandVerdict,
  connectionVerdict,
  dataRateVerdict,
  deadlineAction,
  durationText,
  sessionTimeReply,
} from "../../src/smtp/limits.ts";
import { formatReply, type SmtpReply } from "../../src/smtp/reply.ts";
import { fitLine, SMTP_REPLIES } from "../../src/smtp/replies.ts";

const text = (r: SmtpReply | null) => (r ? formatReply(r) : null);

describe("clientKey", () => {
  test.each([
    ["203.0.113.7", "203.0.113.7"],
    ["::ffff:203.0.113.7", "203.0.113.7"],
    ["2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"],
    ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
    ["2001:DB8:0001:0002:0:0:0:9", "2001:db8:1:2::/64"],
    ["2001:db8::1", "2001:db8:0:0::/64"],
    ["2001:db8:0:0:ffff::", "2001:db8:0:0::/64"],
    ["::1", "0:0:0:0::/64"],
    ["64:ff9b::203.0.113.7", "64:ff9b:0:0::/64"],
  ])("%s counts as %s", (address, key) => {
    expect(clientKey(address)).toBe(key);
  });
});

describe("connectionVerdict: the open connections' clients (this one included) and the limit", () => {
  const a = "198.51.100.1";
  const b = "198.51.100.2";
  test.each([
    ["the only connection", [a], a, 1, null],
    ["at the limit", [a, a, a], a, 3, null],
    ["one past the limit", [a, a, a, a], a, 3, "421 4.7.0 Too many connections from your address; try again later"],
    ["others' connections do not count", [b, b, b, b, a], a, 1, null],
    ["far past the limit", Array(1000).fill(a), a, 50, "421 4.7.0 Too many connections from your address; try again later"],
  ] as const)("%s", (_name, open, key, limit, expected) => {
    expect(text(connectionVerdict(open, key, limit))).toBe(expected);
  });
});

describe("commandVerdict: junk commands since the last message", () => {
  const closing = "421 4.7.0 Too many commands without mail; closing connection";
  test.each([
    ["NOOP counts", 0, "NOOP", 100, 1, null],
    ["RSET counts", 5, "rset", 100, 6, null],
    ["VRFY counts", 99, "VRFY", 100, 100, null],
    ["the one past the limit is refused", 100, "NOOP", 100, 101, closing],
    ["EHLO counts", 3, "EHLO", 3, 4, closing],
    ["MAIL does not count", 100, "MAIL", 100, 100, null],
    ["RCPT does not count", 7, "RCPT", 1, 7, null],
    ["DATA does not count", 7, "DATA", 1, 7, null],
    ["AUTH does not count (smtp-server limits unauthenticated commands)", 7, "AUTH", 1, 7, null],
  ] as const)("%s", (_name, before, command, limit, junk, refusal) => {
    const v = commandVerdict(before, command, limit);
    expect({ junk: v.junk, refusal: text(v.refusal) }).toEqual({ junk, refusal });
  });
});

describe("dataRateVerdict: bytes over a window against the minimum rate", () => {
  const slow = (rate: number) => `421 4.4.2 Data arriving too slowly (under ${rate} bytes per second); closing connection`;
  test.each([
    ["a fast client", 1_000_000, 30_000, 500, null],
    ["exactly the minimum", 15_000, 30_000, 500, null],
    ["one byte short", 14_999, 30_000, 500, slow(500)],
    ["a drip of a few bytes a second", 10, 2000, 100, slow(100)],
    ["nothing at all", 0, 2000, 1, slow(1)],
    ["no minimum", 0, 30_000, 0, null],
    ["no time elapsed yet", 0, 0, 500, null],
  ] as const)("%s", (_name, bytes, elapsedMs, minRate, expected) => {
    expect(text(dataRateVerdict(bytes, elapsedMs, minRate))).toBe(expected);
  });
});

describe("deadlines", () => {
  test.each([
    ["the client owes us input: close now", false, "close"],
    ["we owe the client a reply: wait for it", true, "wait"],
  ] as const)("%s", (_name, waitingForServer, action) => {
    expect(deadlineAction(waitingForServer)).toBe(action);
  });

  test.each([
    [600_000, "10m"],
    [60_000, "1m"],
    [90_000, "90s"],
    [7_200_000, "2h"],
    [1500, "1500ms"],
  ])("%d ms reads %s", (ms, expected) => {
    expect(durationText(ms)).toBe(expected);
  });

  test("their replies", () => {
    expect(formatReply(sessionTimeReply(600_000))).toBe("421 4.4.2 Session time limit of 10m reached; closing connection");
    expect(formatReply(authTimeReply(60_000))).toBe("421 4.7.0 Authentication required within 1m; closing connection");
  });
});

describe("authVerdict: AUTH on submission", () => {
  test.each([
    ["over TLS", { secure: true, starttlsOffered: false, allowInsecureAuth: false }, null],
    ["in clear, allowed by allow_insecure_auth", { secure: false, starttlsOffered: false, allowInsecureAuth: true }, null],
    [
      "in clear, STARTTLS offered",
      { secure: false, starttlsOffered: true, allowInsecureAuth: false },
      "538 5.7.11 Must issue a STARTTLS command first: AUTH is offered only over TLS, so that passwords never cross the network in clear",
    ],
    [
      "in clear, no certificate to offer STARTTLS with",
      { secure: false, starttlsOffered: false, allowInsecureAuth: false },
      "538 5.7.11 Encryption required for requested authentication mechanism: this listener has no certificate (the tls section sets one); use port 465 or STARTTLS once it has",
    ],
  ] as const)("%s", (_name, session, expected) => {
    expect(text(authVerdict(session))).toBe(expected);
  });
});

describe("refusals naming long domains fit one reply line (RFC 5321: 512 octets)", () => {
  test.each([
    ["a short reason is kept", "domain a.example is not verified", "domain a.example is not verified"],
    ["a reason of 480 characters is kept", "x".repeat(480), "x".repeat(480)],
    ["a longer reason is cut with an ellipsis", "x".repeat(2000), `${"x".repeat(477)}...`],
  ])("%s", (_name, reason, expected) => {
    expect(fitLine(reason)).toBe(expected);
    const line = formatReply(SMTP_REPLIES.senderRefused(reason));
    expect(line).toBe(`550 5.7.1 ${expected}`);
    expect(line.length + 2).toBeLessThanOrEqual(512);
  });
});
