// The dashboard's sign-in limiter behind a reverse proxy (http.trusted_proxies). The appliance
// listens on 127.0.0.1; clients connect from other loopback addresses (127.0.0.2, 127.0.0.3,
// with curl --interface) either straight to it or through a Bun.serve proxy on loopback that
// appends the address it saw to X-Forwarded-For, as nginx's $proxy_add_x_forwarded_for does.
import { afterEach, describe, expect, test } from "bun:test";
import { createLogger } from "../../src/lib/logger.ts";
import { startTestApp, type TestApp } from "../helpers/app.ts";
import { ACCOUNT_A, ACCOUNT_B } from "../helpers/fixtures.ts";
import { signInFrom, startForwardingProxy } from "../helpers/forwarding-proxy.ts";

const SIGN_IN_RATE = '[dashboard]\nsign_in_rate = "3/min"';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Started {
  app: TestApp;
  origin: string;
  lines: Record<string, unknown>[];
}

async function start(http = ""): Promise<Started> {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level: "info", sink: (line) => void lines.push(JSON.parse(line)) });
  const app = await startTestApp({ accounts: [ACCOUNT_A, ACCOUNT_B], extra: SIGN_IN_RATE, http, logger });
  cleanups.push(() => app.stop());
  return { app, origin: `http://127.0.0.1:${app.app.httpPort}`, lines };
}

function startProxy(upstream: string): string {
  const proxy = startForwardingProxy(upstream);
  cleanups.push(() => proxy.stop());
  return proxy.url;
}

const requestLines = (s: Started) => s.lines.filter((l) => l.msg === "http request" && l.path === "/dashboard/session");

describe("behind a trusted proxy (http.trusted_proxies)", () => {
  test.each([
    ["an address", '"127.0.0.1"'],
    ["a loopback CIDR", '"127.0.0.0/8"'],
  ])(
    "with %s trusted, one client failing sign-in until it is limited does not stop another (different X-Forwarded-For)",
    async (_, entry) => {
      const s = await start(`trusted_proxies = [${entry}]`);
      const proxy = startProxy(s.origin);
      for (let i = 0; i < 3; i++) expect(await signInFrom("127.0.0.2", proxy, "pr_wrong")).toBe(401);
      expect(await signInFrom("127.0.0.2", proxy, ACCOUNT_A.token)).toBe(429);
      // Another client of the same proxy still signs in.
      expect(await signInFrom("127.0.0.3", proxy, ACCOUNT_A.token)).toBe(201);
      // The log names each client, not the proxy.
      expect(requestLines(s).map((l) => [l.status, l.remote_ip])).toEqual([
        [401, "127.0.0.2"],
        [401, "127.0.0.2"],
        [401, "127.0.0.2"],
        [429, "127.0.0.2"],
        [201, "127.0.0.3"],
      ]);
      expect(s.lines.find((l) => l.msg === "dashboard sign-in refused: too many attempts")?.remote_ip).toBe("127.0.0.2");
    },
  );

  test("a client cannot dodge the limiter with an X-Forwarded-For of its own: the proxy's appended address counts", async () => {
    const s = await start('trusted_proxies = ["127.0.0.1"]');
    const proxy = startProxy(s.origin);
    for (let i = 0; i < 3; i++)
      expect(await signInFrom("127.0.0.2", proxy, "pr_wrong", { "x-forwarded-for": `198.51.100.${i + 1}` })).toBe(401);
    expect(await signInFrom("127.0.0.2", proxy, ACCOUNT_A.token, { "x-forwarded-for": "198.51.100.99" })).toBe(429);
    expect(requestLines(s).every((l) => l.remote_ip === "127.0.0.2")).toBe(true);
  });

  test("a client that is not a trusted proxy keeps its own address, whatever X-Forwarded-For it sends", async () => {
    const s = await start('trusted_proxies = ["127.0.0.1"]');
    for (let i = 0; i < 3; i++)
      expect(await signInFrom("127.0.0.2", s.origin, "pr_wrong", { "x-forwarded-for": `198.51.100.${i + 1}` })).toBe(401);
    expect(
      await signInFrom("127.0.0.2", s.origin, ACCOUNT_A.token, { "x-forwarded-for": "198.51.100.99", forwarded: "for=198.51.100.98" }),
    ).toBe(429);
    expect(await signInFrom("127.0.0.3", s.origin, ACCOUNT_A.token)).toBe(201);
    expect(requestLines(s).map((l) => l.remote_ip)).toEqual(["127.0.0.2", "127.0.0.2", "127.0.0.2", "127.0.0.2", "127.0.0.3"]);
  });
});

describe("IPv6 clients behind a trusted proxy", () => {
  /** A sign-in as the proxy on 127.0.0.1 sends it: Forwarded with the client's quoted, bracketed address and port. */
  const signInAs = (s: Started, client: string, token: string) =>
    fetch(`${s.origin}/dashboard/session`, {
      method: "POST",
      headers: { "x-postroom-dashboard": "1", "content-type": "application/json", forwarded: `for="[${client}]:51234";proto=https` },
      body: JSON.stringify({ token }),
    }).then((r) => r.status);

  test("are counted by their /64, as SMTP counts them: another address of the same /64 is the same client, another /64 is not", async () => {
    const s = await start('trusted_proxies = ["127.0.0.1"]');
    for (let i = 0; i < 3; i++) expect(await signInAs(s, `2001:db8:1:1::${i + 1}`, "pr_wrong")).toBe(401);
    expect(await signInAs(s, "2001:db8:1:1:ffff::9", ACCOUNT_A.token)).toBe(429);
    expect(await signInAs(s, "2001:db8:1:2::1", ACCOUNT_A.token)).toBe(201);
    expect(requestLines(s).map((l) => l.remote_ip)).toEqual([
      "2001:db8:1:1::1",
      "2001:db8:1:1::2",
      "2001:db8:1:1::3",
      "2001:db8:1:1:ffff::9",
      "2001:db8:1:2::1",
    ]);
  });
});

describe("without http.trusted_proxies (the default)", () => {
  test("X-Forwarded-For from a client is ignored: a new one each try does not dodge the limiter", async () => {
    const s = await start();
    for (let i = 0; i < 3; i++)
      expect(await signInFrom("127.0.0.2", s.origin, "pr_wrong", { "x-forwarded-for": `198.51.100.${i + 1}` })).toBe(401);
    expect(await signInFrom("127.0.0.2", s.origin, ACCOUNT_A.token, { "x-forwarded-for": "198.51.100.99" })).toBe(429);
    // Another connecting address is another client.
    expect(await signInFrom("127.0.0.3", s.origin, ACCOUNT_A.token, { "x-forwarded-for": "127.0.0.2" })).toBe(201);
    expect(requestLines(s).map((l) => l.remote_ip)).toEqual(["127.0.0.2", "127.0.0.2", "127.0.0.2", "127.0.0.2", "127.0.0.3"]);
  });

  test("behind a proxy that is not trusted every client is the proxy (the reason for the key)", async () => {
    const s = await start();
    const proxy = startProxy(s.origin);
    for (let i = 0; i < 3; i++) expect(await signInFrom("127.0.0.2", proxy, "pr_wrong")).toBe(401);
    expect(await signInFrom("127.0.0.3", proxy, ACCOUNT_A.token)).toBe(429);
    expect(requestLines(s).every((l) => l.remote_ip === "127.0.0.1")).toBe(true);
  });
});
