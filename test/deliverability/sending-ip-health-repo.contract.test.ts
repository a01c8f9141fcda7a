// The SendingIpHealthRepo contract on both engines: a check's rows read back field for
// field (flags as booleans or null, times as numbers), and the next check replaces them all.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import type { SendingIpHealth } from "../../src/deliverability/sending-ip.ts";
import type { SendingIpHealthRepo } from "../../src/deliverability/sending-ip-health.port.ts";
import { createSendingIpHealthRepo } from "../../src/deliverability/sending-ip-health.repo.ts";
import { type EngineHandle, STORE_ENGINES } from "../helpers/engines.ts";

const NOW_MS = 1_795_000_000_000;

const row = (ip: string, over: Partial<SendingIpHealth> = {}): SendingIpHealth => ({
  ip,
  helo: "mta.example.com",
  ptr: "mta.example.com",
  fcrdns: true,
  helo_matches: true,
  listed: [],
  unknown: [],
  checkedAtMs: NOW_MS,
  ...over,
});

describe.each(STORE_ENGINES)("SendingIpHealthRepo on $name", (engine) => {
  const it = engine.test;
  let handle: EngineHandle | undefined;
  let repo: SendingIpHealthRepo;

  beforeAll(async () => {
    if (!engine.available()) return;
    handle = await engine.open();
    repo = createSendingIpHealthRepo(handle.db);
  }, 60_000);
  beforeEach(async () => {
    await handle?.clear(["sending_ip_health"]);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("a check's rows read back field for field, by address", async () => {
    const listed = row("2001:db8::7", {
      ptr: null,
      fcrdns: null,
      helo_matches: null,
      listed: [{ zone: "bl.example.net", text: "listed: see https://bl.example.net/q?ip=2001:db8::7" }],
      unknown: [{ check: "ptr", reason: "the PTR lookup failed (ESERVFAIL)" }],
    });
    const mismatch = row("192.0.2.1", { ptr: "host.isp.example", fcrdns: false, helo_matches: false });
    await repo.replaceAll([listed, mismatch]);
    expect(await repo.list()).toStrictEqual([mismatch, listed]);
  });

  it("the next check replaces every row: an address no longer sending is gone", async () => {
    await repo.replaceAll([row("192.0.2.1"), row("192.0.2.2")]);
    await repo.replaceAll([row("192.0.2.2", { checkedAtMs: NOW_MS + 3_600_000, fcrdns: false })]);
    expect(await repo.list()).toStrictEqual([row("192.0.2.2", { checkedAtMs: NOW_MS + 3_600_000, fcrdns: false })]);
    await repo.replaceAll([]);
    expect(await repo.list()).toEqual([]);
  });

  it("two nodes replacing the rows at once (each checks when it starts) both succeed; one check's rows remain", async () => {
    const first = [row("192.0.2.1"), row("192.0.2.2"), row("192.0.2.3")];
    const second = first.map((h) => ({ ...h, checkedAtMs: NOW_MS + 1 })).reverse();
    await repo.replaceAll([row("192.0.2.9")]);
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => repo.replaceAll(i % 2 ? second : first)));
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    const rows = await repo.list();
    expect(rows.map((h) => h.ip)).toEqual(["192.0.2.1", "192.0.2.2", "192.0.2.3"]);
    expect(new Set(rows.map((h) => h.checkedAtMs)).size).toBe(1);
  });
});
