// MTA-STS discovery against a real DNS server and a real HTTPS policy host on loopback,
// with a certificate from a test CA (trusted through outbound.tls_ca_file's setting).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rootCertificates } from "node:tls";
import { createResolver } from "../../src/lib/dns.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import { MtaSts } from "../../src/outbound/delivery/mta-sts.ts";
import type { StsStore } from "../../src/outbound/delivery/mta-sts.port.ts";
import type { StsPolicy } from "../../src/outbound/delivery/tls-policy.ts";
import { makeTestCa } from "../helpers/certs.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { tempDir } from "../helpers/tmp.ts";

const dir = tempDir();
let dns: TestDnsServer;
let host: ReturnType<typeof Bun.serve>;
let caPem: string;
const served = new Map<string, { status?: number; type?: string; body: string }>();
const hits: string[] = [];

function memoryStore(): StsStore & { rows: Map<string, StsPolicy> } {
  const rows = new Map<string, StsPolicy>();
  return { rows, get: async (d) => rows.get(d) ?? null, put: async (d, p) => void rows.set(d, p) };
}

function sts(store: StsStore, clock = new ManualClock(Date.parse("2026-11-22T00:00:00Z")), extraCa: string | null = caPem) {
  return new MtaSts({
    resolver: createResolver({ servers: [dns.address], timeoutMs: 300, cacheTtlMs: 0 }),
    store,
    clock,
    logger: silentLogger,
    settings: () => ({
      fetchTimeoutMs: 2000,
      port: host.port!,
      allowPrivate: true,
      ca: extraCa ? [...rootCertificates, extraCa] : undefined,
    }),
  });
}

function publish(domain: string, id: string, policy: { status?: number; type?: string; body: string }): void {
  dns.set(`_mta-sts.${domain}`, [{ type: "TXT", data: `v=STSv1; id=${id};` }]);
  dns.set(`mta-sts.${domain}`, [{ type: "A", address: "127.0.0.1" }]);
  served.set(`mta-sts.${domain}`, policy);
}

beforeAll(async () => {
  dns = await TestDnsServer.start();
  const ca = makeTestCa(dir.path);
  caPem = await Bun.file(ca.certFile).text();
  const names = ["a", "b", "c", "d", "e"].map((n) => `DNS:mta-sts.${n}.example`).join(",");
  const leaf = ca.issue("policy-host", names);
  host = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: await Bun.file(leaf.certFile).text(), key: await Bun.file(leaf.keyFile).text() },
    fetch(req) {
      const name = req.headers.get("host")!.split(":")[0]!;
      hits.push(`${name}${new URL(req.url).pathname}`);
      const p = served.get(name);
      if (!p) return new Response("no", { status: 404 });
      return new Response(p.body, { status: p.status ?? 200, headers: { "content-type": p.type ?? "text/plain" } });
    },
  });
});
afterAll(async () => {
  host.stop(true);
  await dns.stop();
  dir.remove();
});

describe("MtaSts.policyFor", () => {
  test("an enforce policy is fetched once, kept until max_age, and fetched again when the id changes", async () => {
    publish("a.example", "one", { body: "version: STSv1\nmode: enforce\nmx: mx.a.example\nmx: *.backup.a.example\nmax_age: 86400\n" });
    const store = memoryStore();
    const clock = new ManualClock(Date.parse("2026-11-22T00:00:00Z"));
    const resolver = sts(store, clock);
    const policy = await resolver.policyFor("a.example");
    expect(policy).toEqual({
      id: "one",
      mode: "enforce",
      mx: ["mx.a.example", "*.backup.a.example"],
      maxAgeSeconds: 86400,
      expiresAtMs: clock.nowMs() + 86_400_000,
    });
    hits.length = 0;
    expect((await resolver.policyFor("a.example"))?.id).toBe("one");
    expect(hits).toEqual([]);
    publish("a.example", "two", { body: "version: STSv1\nmode: testing\nmx: mx.a.example\nmax_age: 600\n" });
    expect(await resolver.policyFor("a.example")).toMatchObject({ id: "two", mode: "testing" });
    expect(hits).toEqual(["mta-sts.a.example/.well-known/mta-sts.txt"]);
  });

  test("a policy host that fails keeps the cached policy in force; with none cached there is no policy", async () => {
    const store = memoryStore();
    const clock = new ManualClock(Date.parse("2026-11-22T00:00:00Z"));
    publish("b.example", "one", { body: "version: STSv1\nmode: enforce\nmx: mx.b.example\nmax_age: 86400\n" });
    await sts(store, clock).policyFor("b.example");
    publish("b.example", "two", { status: 500, body: "oops" });
    expect((await sts(store, clock).policyFor("b.example"))?.id).toBe("one");
    expect(await sts(memoryStore(), clock).policyFor("b.example")).toBeNull();
  });

  test("refused: wrong content type, a redirect, a certificate the CA did not sign, a bad policy", async () => {
    publish("c.example", "x", { type: "text/html", body: "version: STSv1\nmode: enforce\nmx: mx.c.example\nmax_age: 86400\n" });
    expect(await sts(memoryStore()).policyFor("c.example")).toBeNull();
    publish("d.example", "x", { status: 301, body: "" });
    expect(await sts(memoryStore()).policyFor("d.example")).toBeNull();
    publish("e.example", "x", { body: "version: STSv1\nmode: enforce\nmx: mx.e.example\nmax_age: 86400\n" });
    expect(await sts(memoryStore(), undefined, null).policyFor("e.example")).toBeNull(); // our test CA is not a public root
    publish("e.example", "y", { body: "version: STSv1\nmode: enforce\nmax_age: 86400\n" }); // enforce without mx
    expect(await sts(memoryStore()).policyFor("e.example")).toBeNull();
  });

  test("no TXT record: no policy, and the policy host is never asked", async () => {
    hits.length = 0;
    expect(await sts(memoryStore()).policyFor("nothing.example")).toBeNull();
    expect(hits).toEqual([]);
  });
});
