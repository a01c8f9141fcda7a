import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createResolver } from "../../src/lib/dns.ts";
import { guardedFetch } from "../../src/lib/egress-fetch.ts";
import { checkedAddress, classifyIp, EgressRefused } from "../../src/lib/egress.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";

describe("classifyIp", () => {
  test.each([
    ["93.184.216.34", "public"],
    ["2606:2800:220:1:248:1893:25c8:1946", "public"],
    ["127.0.0.1", "private"],
    ["127.8.9.10", "private"],
    ["10.1.2.3", "private"],
    ["172.16.0.1", "private"],
    ["192.168.1.1", "private"],
    ["169.254.10.10", "private"],
    ["100.64.0.1", "private"],
    ["0.0.0.0", "private"],
    ["::1", "private"],
    ["::", "private"],
    ["fe80::1", "private"],
    ["fc00::1", "private"],
    ["::ffff:127.0.0.1", "private"],
    ["::ffff:10.0.0.1", "private"],
    ["169.254.169.254", "metadata"],
    ["::ffff:169.254.169.254", "metadata"],
    ["fd00:ec2::254", "metadata"],
    ["100.100.100.200", "metadata"],
    ["224.0.0.1", "invalid"],
    ["255.255.255.255", "invalid"],
    ["not-an-ip", "invalid"],
    ["1.2.3", "invalid"],
  ])("%p is %p", (ip, cls) => expect(classifyIp(ip)).toBe(cls as never));
});

describe("classifyIp: an IPv6 address that carries an IPv4 address is judged as that IPv4 address", () => {
  test.each([
    // IPv4-compatible (::a.b.c.d), as written and as a URL normalizes it ([::7f00:1])
    ["::127.0.0.1", "private"],
    ["::7f00:1", "private"],
    ["::a00:1", "private"],
    ["::a9fe:a9fe", "metadata"],
    ["::0.0.0.2", "private"],
    ["::5db8:d822", "public"],
    // IPv4-mapped (::ffff:a.b.c.d)
    ["::ffff:7f00:1", "private"],
    ["0:0:0:0:0:ffff:a9fe:a9fe", "metadata"],
    ["::ffff:93.184.216.34", "public"],
    // IPv4-translated (::ffff:0:a.b.c.d, RFC 6145)
    ["::ffff:0:7f00:1", "private"],
    ["::ffff:0:5db8:d822", "public"],
    // NAT64 well-known prefix (64:ff9b::/96, RFC 6052)
    ["64:ff9b::7f00:1", "private"],
    ["64:ff9b::127.0.0.1", "private"],
    ["64:ff9b::a9fe:a9fe", "metadata"],
    ["64:ff9b::c0a8:101", "private"],
    ["64:ff9b::5db8:d822", "public"],
    // 6to4 (2002:aabb:ccdd::/48, RFC 3056)
    ["2002:7f00:1::", "private"],
    ["2002:7f00:1::1", "private"],
    ["2002:a9fe:a9fe::1", "metadata"],
    ["2002:a00:1::", "private"],
    ["2002:5db8:d822::1", "public"],
    // themselves, not 0.0.0.0 and 0.0.0.1
    ["::", "private"],
    ["::1", "private"],
    // local-use NAT64 (64:ff9b:1::/48) and Teredo: where the IPv4 address sits is not fixed; refused
    ["64:ff9b:1::7f00:1", "private"],
    ["2001::5db8:d822", "private"],
  ])("%p is %p", (ip, cls) => expect(classifyIp(ip)).toBe(cls as never));

  test("a target URL written with one is refused like the IPv4 address", async () => {
    const { targetAddressProblem } = await import("../../src/inbound/addresses/target-url.ts");
    expect(targetAddressProblem("http://[::127.0.0.1]:8080/hook", false)).toBe(
      "points at a private, loopback or link-local address (::7f00:1); set inbound.allow_private_targets = true to allow it (for tests and loopback setups only, never in production)",
    );
    expect(targetAddressProblem("http://[64:ff9b::169.254.169.254]/", true)).toBe(
      "points at a cloud metadata address (64:ff9b::a9fe:a9fe)",
    );
    expect(targetAddressProblem("http://[2002:7f00:1::]/", false)).toBe(
      "points at a private, loopback or link-local address (2002:7f00:1::); set inbound.allow_private_targets = true to allow it (for tests and loopback setups only, never in production)",
    );
  });
});

describe("checkedAddress and guardedFetch", () => {
  let dns: TestDnsServer;
  let server: ReturnType<typeof Bun.serve>;
  const seen: { path: string; host: string | null; authorization: string | null }[] = [];
  const resolver = () => createResolver({ servers: [dns.address], timeoutMs: 300, cacheTtlMs: 0 });

  beforeAll(async () => {
    dns = await TestDnsServer.start();
    dns.set("public.test", [{ type: "A", address: "93.184.216.34" }]);
    dns.set("mixed.test", [
      { type: "A", address: "93.184.216.34" },
      { type: "A", address: "10.0.0.5" },
    ]);
    dns.set("metadata.test", [{ type: "A", address: "169.254.169.254" }]);
    dns.set("target.test", [{ type: "A", address: "127.0.0.1" }]);
    dns.set("other.test", [{ type: "A", address: "127.0.0.1" }]);
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const url = new URL(req.url);
        seen.push({ path: url.pathname, host: req.headers.get("host"), authorization: req.headers.get("authorization") });
        const hop = /^\/hop(\d+)$/.exec(url.pathname);
        if (hop) return new Response(null, { status: 307, headers: { location: `/hop${Number(hop[1]) + 1}` } });
        if (url.pathname === "/to-other")
          return new Response(null, { status: 302, headers: { location: `http://other.test:${server.port}/landing` } });
        if (url.pathname === "/to-metadata")
          return new Response(null, { status: 301, headers: { location: "http://169.254.169.254/latest/meta-data" } });
        if (url.pathname === "/to-file") return new Response("see there", { status: 302, headers: { location: "file:///etc/passwd" } });
        return new Response("landed");
      },
    });
  });
  afterAll(async () => {
    server.stop(true);
    await dns.stop();
  });

  test("a name is judged by all its addresses", async () => {
    expect(await checkedAddress("public.test", resolver(), { allowPrivate: false })).toBe("93.184.216.34");
    expect(checkedAddress("mixed.test", resolver(), { allowPrivate: false })).rejects.toThrow(EgressRefused);
    expect(await checkedAddress("mixed.test", resolver(), { allowPrivate: true })).toBe("93.184.216.34");
  });

  test("metadata addresses are refused even when private ones are allowed", async () => {
    expect(checkedAddress("metadata.test", resolver(), { allowPrivate: true })).rejects.toThrow("cloud metadata");
    expect(checkedAddress("169.254.169.254", resolver(), { allowPrivate: true })).rejects.toThrow("cloud metadata");
    expect(checkedAddress("[fd00:ec2::254]", resolver(), { allowPrivate: true })).rejects.toThrow("cloud metadata");
  });

  test("loopback is refused unless allowed; an unknown name fails like DNS does", async () => {
    expect(checkedAddress("target.test", resolver(), { allowPrivate: false })).rejects.toThrow(EgressRefused);
    expect(checkedAddress("nxdomain.test", resolver(), { allowPrivate: true })).rejects.toMatchObject({ code: "ENOTFOUND" });
  });

  const request = (path: string, maxRedirects = 3, headers: Record<string, string> = {}) => ({
    url: `http://target.test:${server.port}${path}`,
    method: "POST",
    headers,
    body: "payload",
    maxRedirects,
    signal: AbortSignal.timeout(5000),
  });

  test("connects to the checked address and sends the original Host", async () => {
    seen.length = 0;
    const { response } = await guardedFetch(request("/plain"), { resolver: resolver(), policy: { allowPrivate: true } });
    expect(await response.text()).toBe("landed");
    expect(seen[0]).toEqual({ path: "/plain", host: `target.test:${server.port}`, authorization: null });
  });

  test("follows at most the allowed number of redirects", async () => {
    const three = await guardedFetch(request("/hop1", 3), { resolver: resolver(), policy: { allowPrivate: true } });
    expect(three.response.status).toBe(307);
    expect(new URL(three.url).pathname).toBe("/hop4");
    const none = await guardedFetch(request("/hop1", 0), { resolver: resolver(), policy: { allowPrivate: true } });
    expect(none.response.status).toBe(307);
  });

  test("credentials do not follow a redirect to another origin", async () => {
    seen.length = 0;
    await guardedFetch(request("/to-other", 3, { authorization: "Basic dTpw" }), { resolver: resolver(), policy: { allowPrivate: true } });
    expect(seen.map((s) => [s.path, s.host, s.authorization])).toEqual([
      ["/to-other", `target.test:${server.port}`, "Basic dTpw"],
      ["/landing", `other.test:${server.port}`, null],
    ]);
  });

  test("a redirect off the web (file:) is not followed: the response comes back, marked refused, its body unread", async () => {
    const got = await guardedFetch(request("/to-file"), { resolver: resolver(), policy: { allowPrivate: true } });
    expect(got.response.status).toBe(302);
    expect(got.refusedRedirect).toBe("redirect to a non-http(s) URL refused (file:)");
    expect(await got.response.text()).toBe("see there");
  });

  test("a redirect to a refused address is refused", async () => {
    expect(guardedFetch(request("/to-metadata"), { resolver: resolver(), policy: { allowPrivate: true } })).rejects.toThrow(EgressRefused);
  });
});
