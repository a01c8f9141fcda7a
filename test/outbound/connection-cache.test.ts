import { describe, expect, jest, test } from "bun:test";
import { ConnectionCache, destinationKey, laneConnectionKey, mayReuse } from "../../src/outbound/delivery/connection-cache.ts";

describe("mayReuse", () => {
  test.each([
    // usable, sawError, age ms, reusable
    [true, false, 0, true],
    [true, false, 299_999, true],
    [true, false, 300_000, false],
    [false, false, 0, false],
    [true, true, 0, false],
  ])("usable %p, refused before %p, %p ms old → %p", (usable, sawError, ageMs, expected) => {
    expect(mayReuse({ usable, sawError, openedAtMs: 1_000 }, 1_000 + ageMs)).toBe(expected);
  });
});

describe("laneConnectionKey: which kept connection a chunk may take", () => {
  test.each([
    [
      "opportunistic by MX: one per lane, any of its domains",
      ["google", "gmail.com", null, "opportunistic", null],
      "google| tls=opportunistic",
    ],
    [
      "a pool's: only mail leaving from the same addresses",
      ["google", "gmail.com", null, "opportunistic", ["127.0.0.2", "::1"]],
      "google| tls=opportunistic from=127.0.0.2,::1",
    ],
    ["a domain's own policy: that domain only", ["google", "gmail.com", null, "verify", null], "google| mx gmail.com tls=verify"],
    [
      "a smarthost: the relay, even when opportunistic",
      ["a.test", "a.test", "smtp://relay:587", "opportunistic", null],
      "a.test| relay smtp://relay:587 tls=opportunistic",
    ],
  ] as const)("%s", (_name, [lane, domain, smarthost, level, ips], key) => {
    expect(laneConnectionKey(lane, domain, smarthost, level, ips)).toBe(key);
  });
});

describe("destinationKey", () => {
  test.each([
    ["Example.ORG", null, "opportunistic", "mx example.org tls=opportunistic"],
    ["example.org", "smtp://relay:587", "opportunistic", "relay smtp://relay:587 tls=opportunistic"],
    ["other.net", "smtp://relay:587", "opportunistic", "relay smtp://relay:587 tls=opportunistic"],
    // A connection opened without certificate checks never carries mail that needs them.
    ["example.org", null, "verify", "mx example.org tls=verify"],
  ])("%p via %p (%p) → %p", (domain, smarthost, level, key) => expect(destinationKey(domain, smarthost, level)).toBe(key));
});

class FakeConnection {
  usable = true;
  sawError = false;
  closed = 0;
  constructor(
    readonly name: string,
    readonly openedAtMs = 0,
  ) {}
  close(): void {
    this.closed++;
    this.usable = false;
  }
}

describe("ConnectionCache", () => {
  const cache = (opts: { maxIdle?: number; idleMs?: number; now?: () => number } = {}) =>
    new ConnectionCache<FakeConnection>({ maxIdle: () => opts.maxIdle ?? 5, idleMs: opts.idleMs ?? 10_000, nowMs: opts.now ?? (() => 0) });

  test("gives a parked connection back for its destination only, the most recent first", () => {
    const c = cache();
    const a = new FakeConnection("a");
    const b = new FakeConnection("b");
    c.put("mx x", a);
    c.put("mx x", b);
    expect(c.take("mx y")).toBeNull();
    expect(c.take("mx x")).toBe(b);
    expect(c.take("mx x")).toBe(a);
    expect(c.take("mx x")).toBeNull();
    expect(a.closed + b.closed).toBe(0);
  });

  test("a connection that saw a refusal, broke, or is too old is closed, not kept", () => {
    let now = 0;
    const c = cache({ now: () => now });
    const refused = Object.assign(new FakeConnection("refused"), { sawError: true });
    c.put("k", refused);
    expect(refused.closed).toBe(1);
    const old = new FakeConnection("old", 0);
    c.put("k", old);
    now = 300_000;
    expect(c.take("k")).toBeNull();
    expect(old.closed).toBe(1);
    const dropped = new FakeConnection("dropped", now);
    c.put("k", dropped);
    dropped.usable = false; // the server ended it while it waited
    expect(c.take("k")).toBeNull();
  });

  test("beyond the bound, the longest idle is closed", () => {
    const c = cache({ maxIdle: 2 });
    const conns = ["a", "b", "c"].map((n) => new FakeConnection(n));
    for (const conn of conns) c.put("k", conn);
    expect(conns.map((x) => x.closed)).toEqual([1, 0, 0]);
    expect(c.size).toBe(2);
  });

  test("an idle connection is closed when its idle time runs out, and all are closed at shutdown", () => {
    // Bun's fake timers: the idle time runs out when the test says.
    jest.useFakeTimers();
    const c = cache({ idleMs: 20 });
    const a = new FakeConnection("a");
    try {
      c.put("k", a);
      jest.advanceTimersByTime(19);
      expect(a.closed).toBe(0);
      jest.advanceTimersByTime(1);
      expect(a.closed).toBe(1);
    } finally {
      jest.useRealTimers();
    }
    expect(c.take("k")).toBeNull();
    const b = new FakeConnection("b");
    c.put("k", b);
    c.closeAll();
    expect(b.closed).toBe(1);
    const late = new FakeConnection("late");
    c.put("k", late);
    expect(late.closed).toBe(1);
  });
});

describe("ConnectionCache.closeOne", () => {
  test("closes the longest idle connection whose key matches, and only one", () => {
    const closed: string[] = [];
    const conn = (name: string) => ({ usable: true, sawError: false, openedAtMs: 0, close: () => void closed.push(name) });
    const cache = new ConnectionCache({ maxIdle: () => 10, nowMs: () => 0 });
    cache.put("gmail from default| mx a.test tls=verify", conn("a"));
    cache.put("other from default| tls=opportunistic", conn("o"));
    cache.put("gmail from default| mx b.test tls=verify", conn("b"));
    expect(cache.closeOne((k) => k.startsWith("gmail from default|"))).toBe(true);
    expect(closed).toEqual(["a"]);
    expect(cache.size).toBe(2);
    expect(cache.closeOne((k) => k.startsWith("none|"))).toBe(false);
    cache.closeAll();
  });
});
