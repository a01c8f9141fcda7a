import { describe, expect, test } from "bun:test";
import { bounceAddress, isBounceLocalPart, parseBounceAddress } from "../../src/outbound/bounces/bounce-address.ts";

const UUID = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";
const RCPT = "0123456789abcdef";

describe("bounceAddress", () => {
  test("names the message and recipient at mta.<sending domain>, and reads back as written", () => {
    const address = bounceAddress(UUID, RCPT, "sender.test");
    expect(address).toBe(`bounces+${UUID}-${RCPT}@mta.sender.test`);
    expect(parseBounceAddress(address)).toEqual({ messageId: UUID, recipientId: RCPT });
    expect(isBounceLocalPart(address.split("@")[0]!)).toBe(true);
  });
});

describe("parseBounceAddress", () => {
  test.each([
    [`bounces+${UUID}-${RCPT}@mta.sender.test`, { messageId: UUID, recipientId: RCPT }],
    [`BOUNCES+${UUID.toUpperCase()}-${RCPT.toUpperCase()}@MTA.SENDER.TEST`, { messageId: UUID, recipientId: RCPT }],
    [`bounces+${UUID}-${RCPT}@bounces.example.com`, { messageId: UUID, recipientId: RCPT }],
    [`bounces+${UUID}-${RCPT.slice(1)}@mta.sender.test`, null],
    [`bounces+${UUID}-${RCPT}0@mta.sender.test`, null],
    [`bounces+${UUID}-a1b2c3@mta.sender.test`, null],
    [`bounces+${UUID}-${RCPT}`, null],
    [`bounce+${UUID}-${RCPT}@mta.sender.test`, null],
    [`x-bounces+${UUID}-${RCPT}@mta.sender.test`, null],
    ["bounces+junk@mta.sender.test", null],
  ])("%p", (address, ids) => expect(parseBounceAddress(address)).toEqual(ids));
});

describe("isBounceLocalPart (routed to the bounce handler, which refuses what it did not write)", () => {
  test.each([
    [`bounces+${UUID}-${RCPT}`, true],
    [`bounces+${UUID}-a1b2c3`, true],
    [`bounces+${UUID}-${"z".repeat(64)}`, true],
    [`bounces+${UUID}-${"z".repeat(65)}`, false],
    [`bounces+${UUID}-`, false],
    [`bounces+${UUID.slice(1)}-${RCPT}`, false],
    ["bounces+junk", false],
    [`sales+${UUID}-${RCPT}`, false],
  ])("%p", (localPart, is) => expect(isBounceLocalPart(localPart)).toBe(is));
});
