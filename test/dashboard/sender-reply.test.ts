// The SMTP reply the incoming page shows for each status, against docs/receiving.md's table.
import { describe, expect, test } from "bun:test";
import { senderReply } from "../../src/dashboard/ui/sender-reply.ts";

describe("senderReply: the reply a sender got, from the incoming status", () => {
  test.each([
    ["200", null, "250 2.0.0 Accepted"],
    ["204", null, "250 2.0.0 Accepted"],
    ["404", "no such user", "554 5.1.1 no such user"],
    ["404", '{"error":"gone"}', "554 5.1.1 Recipient rejected by the target"],
    ["422", "no such customer here\nsecond line", "550 5.7.1 no such customer here"],
    ["403", "<html><body>Forbidden</body></html>", "550 5.7.1 Message rejected by the target"],
    ["500", "", "451 4.3.0 The target failed; try again later"],
    ["503", "down for\u0007 maintenance", "451 4.3.0 down for maintenance"],
    ["client_timeout", null, "451 4.4.7 The target did not answer in time; try again later"],
    ["unreachable", "ECONNREFUSED", "451 4.4.1 The target could not be reached; try again later"],
    ["rejected", "550 5.7.1 Message refused as spam", "550 5.7.1 Message refused as spam"],
    ["rejected", null, null],
  ] as const)("%s %p → %p", (status, response, reply) => {
    expect(senderReply(status, response)).toBe(reply);
  });

  test("the target's line is cut at 200 characters", () => {
    expect(senderReply("422", "y".repeat(300))).toBe(`550 5.7.1 ${"y".repeat(200)}`);
  });
});
