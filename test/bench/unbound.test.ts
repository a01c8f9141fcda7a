// bench:inbound's DNS server (bench/unbound.ts, bench/sender-dns.ts): the config it writes
// must make a real unbound answer each record exactly as given (a DKIM key longer than one
// 255-byte TXT string included) and NXDOMAIN for everything else without forwarding, the
// query log must count what was asked, and the start-up check must catch a wrong answer.
// Checked through Postroom's own resolver, as Postroom asks during the benchmark.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkServed } from "../../bench/sender-dns.ts";
import { generateSenderKey, senderRecords } from "../../bench/signed-senders.ts";
import { countQueryLines, txtStrings, UnboundServer, unboundConfig } from "../../bench/unbound.ts";
import { createResolver } from "../../src/lib/dns.ts";
import { requireTools, unboundAvailable } from "../helpers/tools.ts";

const it = requireTools("unbound");
const key = generateSenderKey();
const LONG = `x=${"a".repeat(254)}${"b".repeat(255)}${"c".repeat(40)}`;
const records: [string, string][] = [...senderRecords(0, key), ...senderRecords(1, key), ["long.bench.test", LONG]];
const resolver = () => createResolver({ servers: [server!.address], timeoutMs: 2000, cacheMaxEntries: 1 });
let dir: string;
let server: UnboundServer | null = null;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "bench-unbound-"));
  if (unboundAvailable())
    server = await UnboundServer.start(dir, records, (address) =>
      createResolver({ servers: [address], timeoutMs: 500, cacheMaxEntries: 1 }).resolveTxt(records[0]![0]),
    );
});
afterAll(async () => {
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("unbound serving the senders' records", () => {
  it("answers each TXT record as configured; long ones come as strings of at most 255 bytes", async () => {
    for (const [name, text] of records) {
      const [answer, ...more] = await resolver().resolveTxt(name);
      expect(more).toEqual([]);
      expect(answer!.join("")).toBe(text);
      expect(answer!.every((s) => Buffer.byteLength(s) <= 255)).toBe(true);
    }
    expect(key.dkimRecord.length).toBeGreaterThan(255);
    expect((await resolver().resolveTxt(records[1]![0]))[0]!.length).toBe(2);
    expect((await resolver().resolveTxt("long.bench.test"))[0]!.length).toBe(3);
  });

  it("answers NXDOMAIN for names it was not given, in the senders' zone and outside it, and no data for other types", async () => {
    for (const name of ["_dmarc.test", "sender-00002.test", "example.com", "postroom.org"]) {
      expect(
        await resolver()
          .resolveTxt(name)
          .catch((e) => e.code),
      ).toBe("ENOTFOUND");
    }
    expect(
      await resolver()
        .resolve4(records[0]![0])
        .catch((e) => e.code),
    ).toBe("ENODATA");
  });

  it("counts the queries asked since the last count from its query log", async () => {
    server!.queries();
    for (let i = 0; i < 3; i++) await resolver().resolveTxt(records[0]![0]);
    await resolver()
      .resolveTxt("nothing.test")
      .catch(() => {});
    expect(server!.queries()).toEqual(
      new Map([
        [records[0]![0], 3],
        ["nothing.test", 1],
      ]),
    );
    await resolver().resolveTxt(records[2]![0]);
    expect(server!.queries()).toEqual(new Map([[records[2]![0], 1]]));
  });

  it("the start-up check passes for what was configured and stops on a record that differs", async () => {
    await checkServed(server!.address, records);
    await expect(checkServed(server!.address, [[records[1]![0], `${key.dkimRecord}x`]])).rejects.toThrow(
      /answered .* for the TXT record of bench2048\._domainkey\.sender-00000\.test/,
    );
    await expect(checkServed(server!.address, [["sender-00002.test", "v=spf1 -all"]])).rejects.toThrow(/"ENOTFOUND"/);
  });
});

describe("unbound serving MX and A records on an address of its own (bench:outbound's Postfix DNS)", () => {
  it("answers the MX and the MX host's address from the given resource records, on the given host", async () => {
    const mxDir = mkdtempSync(join(tmpdir(), "bench-unbound-mx-"));
    const rrs = ["dest1.bench.test. 60 IN MX 10 mx.sink.bench.test.", "mx.sink.bench.test. 60 IN A 127.0.0.2"];
    const ask = (address: string) => createResolver({ servers: [address], timeoutMs: 2000, cacheMaxEntries: 1 });
    const mx = await UnboundServer.start(mxDir, [], (address) => ask(address).resolveMx("dest1.bench.test"), { host: "127.0.0.3", rrs });
    try {
      expect(mx.address).toStartWith("127.0.0.3:");
      expect(await ask(mx.address).resolveMx("dest1.bench.test")).toEqual([{ exchange: "mx.sink.bench.test", priority: 10 }]);
      expect(await ask(mx.address).resolve4("mx.sink.bench.test")).toEqual(["127.0.0.2"]);
      expect(
        await ask(mx.address)
          .resolveMx("dest2.bench.test")
          .catch((e) => e.code),
      ).toBe("ENOTFOUND");
    } finally {
      await mx.stop();
      rmSync(mxDir, { recursive: true, force: true });
    }
  });
});

describe("the config's pieces", () => {
  test("a resource record with a quote cannot reach unbound's config", () => {
    expect(() => unboundConfig(53, "/tmp", [], { rrs: ["x.test. 60 IN TXT 'a'"] })).toThrow(/must not hold quotes/);
  });

  test("a TXT text becomes quoted strings of at most 255 bytes; quotes and non-ASCII are refused", () => {
    expect(txtStrings("v=spf1 -all")).toBe('"v=spf1 -all"');
    expect(txtStrings("a".repeat(256))).toBe(`"${"a".repeat(255)}" "a"`);
    expect(txtStrings("")).toBe('""');
    for (const bad of ['say "hi"', "back\\slash", "it's", "é"]) expect(() => txtStrings(bad)).toThrow(/printable ASCII/);
  });

  test("query log lines are counted by name, lowercase, without the final dot; other lines are not", () => {
    const log = [
      "[1795559111] unbound[2890:0] info: 127.0.0.1 Sender-00001.TEST. TXT IN",
      "[1795559111] unbound[2890:0] info: 127.0.0.1 sender-00001.test. TXT IN",
      "[1795559111] unbound[2890:0] info: 127.0.0.1 _dmarc.test. A IN",
      "[1795559110] unbound[2890:0] info: start of service (unbound 1.17.1).",
      "",
    ].join("\n");
    expect(countQueryLines(log)).toEqual(
      new Map([
        ["sender-00001.test", 2],
        ["_dmarc.test", 1],
      ]),
    );
  });
});
