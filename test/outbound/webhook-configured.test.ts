import { describe, expect, test } from "bun:test";
import type { AccountConfig } from "../../src/config/config.ts";
import { webhookConfigured } from "../../src/outbound/queue/webhook-configured.ts";

const hook = { url: "https://h.example/events", token: "t", signingSecret: null };
const accounts = [
  {
    id: "a1",
    webhook: hook,
    outbound: [
      { id: "o1", webhook: null },
      { id: "o2", webhook: hook },
    ],
  },
  {
    id: "a2",
    webhook: null,
    outbound: [
      { id: "o3", webhook: null },
      { id: "o4", webhook: hook },
    ],
  },
] as unknown as AccountConfig[];

describe("webhookConfigured: the outbound account's own webhook, else its account's", () => {
  test.each([
    ["o1", true],
    ["o2", true],
    ["o3", false],
    ["o4", true],
    ["gone", false],
  ])("%p → %p", (id, expected) => expect(webhookConfigured(accounts, id)).toBe(expected));
});
