import { describe, expect, test } from "bun:test";
import { classifyRecipient, recipientsOfAccount, type AcceptedRecipient } from "../../../src/inbound/addresses/recipients.ts";

const own = { inboundDomain: "in.example.com", bounceHost: "bounces.example.com" };
const ID = "0123456789abcdef0123";
const UUID = "3f2504e0-4f89-41d3-9a0c-0305e82c3301";

describe("classifyRecipient", () => {
  test.each([
    [`${ID}@in.example.com`, { kind: "address", addressId: ID }],
    [`${ID.toUpperCase()}@IN.EXAMPLE.COM`, { kind: "address", addressId: ID }],
    [`${ID}+orders-2026@in.example.com`, { kind: "address", addressId: ID }],
    [`${ID}@in.example.com.`, { kind: "address", addressId: ID }],
    ["postmaster@in.example.com", { kind: "invalid" }],
    [`${ID}0@in.example.com`, { kind: "invalid" }],
    [`bounces+${UUID}-a1b2c3@bounces.example.com`, { kind: "bounce", localPart: `bounces+${UUID}-a1b2c3`, domain: "bounces.example.com" }],
    [`bounces+${UUID}-a1b2c3@mta.customer.org`, { kind: "bounce", localPart: `bounces+${UUID}-a1b2c3`, domain: "mta.customer.org" }],
    [`bounces+${UUID}-a1b2c3@customer.org`, { kind: "domain", localPart: `bounces+${UUID}-a1b2c3`, domain: "customer.org" }],
    ["bounces+junk@bounces.example.com", { kind: "domain", localPart: "bounces+junk", domain: "bounces.example.com" }],
    ["Sales@Customer.ORG", { kind: "domain", localPart: "Sales", domain: "customer.org" }],
    ["no-at-sign", { kind: "invalid" }],
    ["@customer.org", { kind: "invalid" }],
  ])("%p", (rcpt, kind) => expect(classifyRecipient(rcpt, own)).toEqual(kind as never));
});

describe("recipientsOfAccount", () => {
  const accepted: AcceptedRecipient[] = [
    { rcpt: "a2@in.example.com", accountId: "A" },
    { rcpt: "b1@in.example.com", accountId: "B" },
    { rcpt: "a1@in.example.com", accountId: "A" },
    { rcpt: `bounces+${UUID}-x@bounces.example.com`, accountId: null },
    { rcpt: "Sales@shop.example", accountId: "A" },
  ];
  test.each([
    ["A", ["a2@in.example.com", "a1@in.example.com", "Sales@shop.example"]],
    ["B", ["b1@in.example.com"]],
    ["C", []],
  ])("account %p: its recipients in RCPT order, no other account's, no bounce address", (account, expected) =>
    expect(recipientsOfAccount(accepted, account)).toEqual(expected),
  );
});
