// bench:outbound feeds Postfix with one smtp-source per recipient domain; sourceShares
// decides each one's messages and sessions. Every message must be sent exactly once, and
// no process may get zero sessions (smtp-source -s 0 sends nothing).
import { describe, expect, test } from "bun:test";
import { sourceShares } from "../../bench/outbound-run.ts";

describe("sourceShares", () => {
  test.each([
    // count, clients, rcpts, expected
    [2000, 8, 1, [{ messages: 2000, sessions: 8 }]],
    [
      2000,
      8,
      2,
      [
        { messages: 1000, sessions: 4 },
        { messages: 1000, sessions: 4 },
      ],
    ],
    [
      10,
      3,
      4,
      [
        { messages: 3, sessions: 1 },
        { messages: 3, sessions: 1 },
        { messages: 2, sessions: 1 },
        { messages: 2, sessions: 1 },
      ],
    ],
    [
      5,
      8,
      3,
      [
        { messages: 2, sessions: 3 },
        { messages: 2, sessions: 3 },
        { messages: 1, sessions: 2 },
      ],
    ],
    // Fewer messages than domains: a process with nothing to send is not started.
    [
      2,
      8,
      4,
      [
        { messages: 1, sessions: 2 },
        { messages: 1, sessions: 2 },
      ],
    ],
  ])("%d messages, %d sessions, %d domains", (count, clients, rcpts, expected) => {
    expect(sourceShares(count, clients, rcpts)).toEqual(expected);
  });

  test("2000 messages over 20 domains and 8 sessions: 100 each, one session each", () => {
    const shares = sourceShares(2000, 8, 20);
    expect(shares).toHaveLength(20);
    expect(shares.every((s) => s.messages === 100 && s.sessions === 1)).toBe(true);
  });
});
