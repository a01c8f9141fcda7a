import { describe, expect, test } from "bun:test";
import { replyTextFrom, verdictFor, worstReply, type TargetOutcome } from "../../../src/inbound/targets/target-reply.ts";
import { formatReply, reply } from "../../../src/smtp/reply.ts";

const answered = (status: number, body = "", contentType: string | null = null): TargetOutcome => ({
  kind: "answered",
  status,
  body,
  contentType,
});

describe("the target's answer decides the SMTP reply (docs/receiving.md)", () => {
  test.each([
    [answered(200), "250 2.0.0 Accepted", "200", "successful"],
    [answered(201), "250 2.0.0 Accepted", "201", "successful"],
    [answered(204), "250 2.0.0 Accepted", "204", "successful"],
    [answered(404), "554 5.1.1 Recipient rejected by the target", "404", "rejected"],
    [answered(404, "No such mailbox\nmore", "text/plain"), "554 5.1.1 No such mailbox", "404", "rejected"],
    [answered(422), "550 5.7.1 Message rejected by the target", "422", "rejected"],
    [answered(403, "Spam\tdetected\u0007!", "text/plain; charset=utf-8"), "550 5.7.1 Spamdetected!", "403", "rejected"],
    [answered(400, "<h1>nope</h1>", "text/html"), "550 5.7.1 Message rejected by the target", "400", "rejected"],
    [answered(500), "451 4.3.0 The target failed; try again later", "500", "delayed"],
    [answered(503, "Busy, retry", "text/plain"), "451 4.3.0 Busy, retry", "503", "delayed"],
    [answered(302), "451 4.3.0 The target failed; try again later", "302", "delayed"],
    [{ kind: "timeout" } as TargetOutcome, "451 4.4.7 The target did not answer in time; try again later", "client_timeout", "delayed"],
    [
      { kind: "unreachable", reason: "ECONNREFUSED" } as TargetOutcome,
      "451 4.4.1 The target could not be reached; try again later",
      "unreachable",
      "delayed",
    ],
    [
      { kind: "local_failure", diskFull: true } as TargetOutcome,
      "451 4.3.0 Local storage on this server is full; try again later",
      "rejected",
      "delayed",
    ],
    [
      { kind: "local_failure", diskFull: false } as TargetOutcome,
      "451 4.3.0 Local storage on this server failed; try again later",
      "rejected",
      "delayed",
    ],
  ])("%j → %s", (outcome, smtp, status, category) => {
    const v = verdictFor(outcome);
    expect(formatReply(v.reply)).toBe(smtp);
    expect(v.status).toBe(status);
    expect(v.category).toBe(category as never);
  });

  test("the answer is kept for every non-2xx, not for a 2xx", () => {
    expect(verdictFor(answered(200, "thanks")).response).toBeNull();
    expect(verdictFor(answered(500, "stack trace")).response).toBe("stack trace");
    expect(verdictFor({ kind: "unreachable", reason: "ECONNREFUSED" }).response).toBe("ECONNREFUSED");
  });
});

describe("replyTextFrom", () => {
  test("the first line, control characters removed, at most 200 characters", () => {
    expect(replyTextFrom("text/plain", "x".repeat(300))).toHaveLength(200);
    expect(replyTextFrom("text/plain", "\r\nsecond")).toBeNull();
    expect(replyTextFrom("TEXT/PLAIN", "Mailbox full")).toBe("Mailbox full");
    expect(replyTextFrom("application/json", '{"error":"x"}')).toBeNull();
    expect(replyTextFrom(null, "x")).toBeNull();
    expect(replyTextFrom("text/plain", "a\u0085b\u009bc")).toBe("abc");
  });
});

describe("worstReply", () => {
  const ok = reply(250, "2.0.0", "Accepted");
  const temp = reply(451, "4.3.0", "later");
  const perm = reply(550, "5.7.1", "no");
  test.each([
    [[ok], ok],
    [[ok, temp], temp],
    [[temp, ok], temp],
    [[ok, perm, temp], perm],
    [[temp, perm], perm],
  ])("%j → %j", (replies, worst) => expect(worstReply(replies)).toEqual(worst));
});
