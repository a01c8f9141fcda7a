// The client address of an HTTP request (src/http/client-address.ts): the connecting address,
// unless it is a trusted proxy's; then the right-most X-Forwarded-For / Forwarded hop that is
// not itself a trusted proxy. Garbage and untrusted peers keep the connecting address.
import { describe, expect, test } from "bun:test";
import { clientAddress, hopAddress, trustedProxyRanges } from "../../src/http/client-address.ts";
import { forwardedFor } from "../../src/http/forwarded-header.ts";
import { parseIpRange } from "../../src/lib/ip-ranges.ts";

const LOOPBACK = trustedProxyRanges(["127.0.0.1"]);
const PROXIES = trustedProxyRanges(["127.0.0.1", "10.0.0.0/8", "fd00::/8"]);

const derive = (peer: string | null, headers: Record<string, string>, trusted = PROXIES) =>
  clientAddress(peer, new Headers(headers), trusted);

describe("clientAddress", () => {
  test.each<[string, string | null, Record<string, string>, string[], string | null]>([
    // Nobody trusted (the default): the connecting address, whatever the headers say.
    ["no trusted proxies: X-Forwarded-For ignored", "127.0.0.1", { "x-forwarded-for": "198.51.100.7" }, [], "127.0.0.1"],
    ["no trusted proxies: Forwarded ignored", "127.0.0.1", { forwarded: "for=198.51.100.7" }, [], "127.0.0.1"],
    // A peer that is not trusted keeps its address.
    ["untrusted peer with X-Forwarded-For", "203.0.113.9", { "x-forwarded-for": "198.51.100.7" }, ["127.0.0.1"], "203.0.113.9"],
    ["untrusted peer with Forwarded", "203.0.113.9", { forwarded: 'for="[2001:db8::1]:443"' }, ["127.0.0.1"], "203.0.113.9"],
    ["untrusted IPv6 peer, normalised", "2001:DB8:0:0::5", { "x-forwarded-for": "198.51.100.7" }, ["127.0.0.1"], "2001:db8::5"],
    // A trusted peer: the right-most hop that is not a trusted proxy.
    ["one hop", "127.0.0.1", { "x-forwarded-for": "198.51.100.7" }, ["127.0.0.1"], "198.51.100.7"],
    [
      "a client's own entry left of the proxy's is not read",
      "127.0.0.1",
      { "x-forwarded-for": "1.1.1.1, 198.51.100.7" },
      ["127.0.0.1"],
      "198.51.100.7",
    ],
    [
      "garbage left of the proxy's entry is not read",
      "127.0.0.1",
      { "x-forwarded-for": "not-an-ip, , 198.51.100.7" },
      ["127.0.0.1"],
      "198.51.100.7",
    ],
    [
      "a chain of trusted proxies is skipped",
      "127.0.0.1",
      { "x-forwarded-for": "1.1.1.1, 198.51.100.7, 10.1.2.3, 10.0.0.1" },
      ["127.0.0.1", "10.0.0.0/8"],
      "198.51.100.7",
    ],
    ["every hop trusted: the first", "127.0.0.1", { "x-forwarded-for": "10.0.0.9, 10.0.0.1" }, ["127.0.0.1", "10.0.0.0/8"], "10.0.0.9"],
    ["hop with a port", "127.0.0.1", { "x-forwarded-for": "198.51.100.7:51234" }, ["127.0.0.1"], "198.51.100.7"],
    ["bare IPv6 hop", "127.0.0.1", { "x-forwarded-for": "2001:DB8::1" }, ["127.0.0.1"], "2001:db8::1"],
    ["bracketed IPv6 hop with a port", "127.0.0.1", { "x-forwarded-for": "[2001:db8::1]:443" }, ["127.0.0.1"], "2001:db8::1"],
    ["IPv4-mapped hop", "127.0.0.1", { "x-forwarded-for": "::ffff:198.51.100.7" }, ["127.0.0.1"], "198.51.100.7"],
    // The peer as a dual-stack socket reports an IPv4 client.
    [
      "IPv4-mapped IPv6 peer ::ffff:127.0.0.1 is 127.0.0.1 (trusted)",
      "::ffff:127.0.0.1",
      { "x-forwarded-for": "198.51.100.7" },
      ["127.0.0.1"],
      "198.51.100.7",
    ],
    [
      "IPv4-mapped IPv6 peer, untrusted, comes out as IPv4",
      "::ffff:203.0.113.9",
      { "x-forwarded-for": "198.51.100.7" },
      ["127.0.0.1"],
      "203.0.113.9",
    ],
    ["IPv6 proxy range", "fd00::17", { "x-forwarded-for": "198.51.100.7" }, ["fd00::/8"], "198.51.100.7"],
    ["IPv6 loopback peer, only IPv4 loopback trusted", "::1", { "x-forwarded-for": "198.51.100.7" }, ["127.0.0.1"], "::1"],
    // Forwarded (RFC 7239).
    ["Forwarded with quoted, bracketed IPv6 and port", "127.0.0.1", { forwarded: 'for="[2001:db8::1]:443"' }, ["127.0.0.1"], "2001:db8::1"],
    [
      "Forwarded with other parameters",
      "127.0.0.1",
      { forwarded: "for=198.51.100.7;proto=https;by=127.0.0.1;host=mail.example.com" },
      ["127.0.0.1"],
      "198.51.100.7",
    ],
    [
      "Forwarded, two elements, FOR in capitals",
      "127.0.0.1",
      { forwarded: 'for=1.1.1.1, FOR="198.51.100.7:80";proto=http' },
      ["127.0.0.1"],
      "198.51.100.7",
    ],
    [
      "Forwarded chain through trusted proxies",
      "127.0.0.1",
      { forwarded: 'for=198.51.100.7, for="[fd00::2]"' },
      ["127.0.0.1", "fd00::/8"],
      "198.51.100.7",
    ],
    ["Forwarded for=unknown", "127.0.0.1", { forwarded: "for=unknown" }, ["127.0.0.1"], "127.0.0.1"],
    ["Forwarded obfuscated identifier", "127.0.0.1", { forwarded: "for=_hidden" }, ["127.0.0.1"], "127.0.0.1"],
    ["Forwarded element without for=", "127.0.0.1", { forwarded: "proto=https" }, ["127.0.0.1"], "127.0.0.1"],
    ["Forwarded unterminated quote", "127.0.0.1", { forwarded: 'for="[2001:db8::1]:443' }, ["127.0.0.1"], "127.0.0.1"],
    ["Forwarded without =", "127.0.0.1", { forwarded: "198.51.100.7" }, ["127.0.0.1"], "127.0.0.1"],
    [
      "Forwarded with for given twice in one element",
      "127.0.0.1",
      { forwarded: "for=1.1.1.1;for=198.51.100.7" },
      ["127.0.0.1"],
      "127.0.0.1",
    ],
    // Both headers: believed when they agree; else neither (one of them is the client's).
    ["both agree", "127.0.0.1", { "x-forwarded-for": "198.51.100.7", forwarded: "for=198.51.100.7" }, ["127.0.0.1"], "198.51.100.7"],
    ["both disagree", "127.0.0.1", { "x-forwarded-for": "198.51.100.7", forwarded: "for=1.1.1.1" }, ["127.0.0.1"], "127.0.0.1"],
    [
      "X-Forwarded-For good, Forwarded garbage",
      "127.0.0.1",
      { "x-forwarded-for": "198.51.100.7", forwarded: "garbage" },
      ["127.0.0.1"],
      "127.0.0.1",
    ],
    // Garbage where a hop must be read: the connecting address.
    ["empty X-Forwarded-For", "127.0.0.1", { "x-forwarded-for": "" }, ["127.0.0.1"], "127.0.0.1"],
    ["a name", "127.0.0.1", { "x-forwarded-for": "client.example.com" }, ["127.0.0.1"], "127.0.0.1"],
    ["classful IPv4", "127.0.0.1", { "x-forwarded-for": "127.1" }, ["127.0.0.1"], "127.0.0.1"],
    ["octal IPv4", "127.0.0.1", { "x-forwarded-for": "010.0.0.1" }, ["127.0.0.1"], "127.0.0.1"],
    ["out-of-range octet", "127.0.0.1", { "x-forwarded-for": "198.51.100.300" }, ["127.0.0.1"], "127.0.0.1"],
    ["port past 65535", "127.0.0.1", { "x-forwarded-for": "198.51.100.7:70000" }, ["127.0.0.1"], "127.0.0.1"],
    ["IPv6 with a zone", "127.0.0.1", { "x-forwarded-for": "fe80::1%eth0" }, ["127.0.0.1"], "127.0.0.1"],
    ["bracketed IPv4", "127.0.0.1", { "x-forwarded-for": "[198.51.100.7]" }, ["127.0.0.1"], "127.0.0.1"],
    ["trailing comma", "127.0.0.1", { "x-forwarded-for": "198.51.100.7," }, ["127.0.0.1"], "127.0.0.1"],
    [
      "garbage right of a trusted hop",
      "127.0.0.1",
      { "x-forwarded-for": "198.51.100.7, 10.0.0.1, x" },
      ["127.0.0.1", "10.0.0.0/8"],
      "127.0.0.1",
    ],
    ["no header from a trusted proxy", "127.0.0.1", {}, ["127.0.0.1"], "127.0.0.1"],
    // No connecting address (an in-process call): none, whatever the headers.
    ["in-process", null, { "x-forwarded-for": "198.51.100.7" }, ["127.0.0.1"], null],
  ])("%s", (_, peer, headers, trusted, expected) => {
    expect(clientAddress(peer, new Headers(headers), trustedProxyRanges(trusted))).toBe(expected);
  });

  test("X-Forwarded-For on several header lines reads as one list", () => {
    const headers = new Headers();
    headers.append("x-forwarded-for", "1.1.1.1");
    headers.append("x-forwarded-for", "198.51.100.7");
    expect(clientAddress("127.0.0.1", headers, LOOPBACK)).toBe("198.51.100.7");
  });

  test("a long header of trusted hops is read in linear time", () => {
    const hops = Array.from({ length: 2000 }, (_, i) => `10.0.${i >> 8}.${i & 255}`).join(", ");
    const started = performance.now();
    expect(derive("127.0.0.1", { "x-forwarded-for": `198.51.100.7, ${hops}` })).toBe("198.51.100.7");
    expect(performance.now() - started).toBeLessThan(200);
  });
});

describe("hopAddress", () => {
  test.each([
    ["192.0.2.1", "192.0.2.1"],
    ["192.0.2.1:0", "192.0.2.1"],
    ["[2001:db8::17]:4711", "2001:db8::17"],
    ["[::ffff:192.0.2.1]", "192.0.2.1"],
    ["::1.2.3.4", "::102:304"],
    ["unknown", null],
    ["_gazonk", null],
    ["[2001:db8::17", null],
    ["2001:db8::17]:1", null],
    ["192.0.2.1:", null],
    [" 192.0.2.1", null],
  ])("%p → %p", (text, expected) => {
    expect(hopAddress(text)?.toString() ?? null).toBe(expected);
  });
});

describe("forwardedFor (RFC 7239)", () => {
  test.each<[string, (string | null)[] | null]>([
    ['for="_gazonk"', ["_gazonk"]],
    ['For="[2001:db8:cafe::17]:4711"', ["[2001:db8:cafe::17]:4711"]],
    ["for=192.0.2.60;proto=http;by=203.0.113.43", ["192.0.2.60"]],
    ["for=192.0.2.43, for=198.51.100.17", ["192.0.2.43", "198.51.100.17"]],
    ["proto=https, for=198.51.100.17", [null, "198.51.100.17"]],
    ['for="a\\"b"', ['a"b']],
    ["for=192.0.2.43 ,for=198.51.100.17 ; proto=https", ["192.0.2.43", "198.51.100.17"]],
    ["", null],
    ["for=", null],
    ['for=""', null],
    ["for=1.2.3.4,", null],
    ["for=1.2.3.4;", null],
    ["for = 1.2.3.4", null],
    ["for=1.2.3.4 junk", null],
    ['for="1.2.3.4\u0001"', null],
    ['for="1.2.3.4\\', null],
  ])("%p → %p", (header, expected) => {
    expect(forwardedFor(header)).toEqual(expected);
  });
});

describe("http.trusted_proxies entries", () => {
  test.each([
    ["127.0.0.1", "127.0.0.1/32"],
    ["10.0.0.0/8", "10.0.0.0/8"],
    ["10.1.2.3/8", "10.1.2.3/8"],
    ["0.0.0.0/0", "0.0.0.0/0"],
    ["::1", "::1/128"],
    ["fd00::/8", "fd00::/8"],
    ["::ffff:10.0.0.0/104", "10.0.0.0/8"],
    ["::ffff:127.0.0.1", "127.0.0.1/32"],
  ])("%p is the range %p", (entry, expected) => {
    const range = parseIpRange(entry);
    expect(range && `${range[0].toString()}/${range[1]}`).toBe(expected);
  });

  test.each([
    "",
    "localhost",
    "127.1",
    "010.0.0.1",
    "10.0.0.0/33",
    "fd00::/129",
    "10.0.0.0/",
    "10.0.0.0/8/8",
    "10.0.0.0/-1",
    "10.0.0.0/ 8",
    "fe80::1%eth0",
    "::ffff:10.0.0.0/64",
    " 127.0.0.1",
  ])("%p is refused", (entry) => {
    expect(parseIpRange(entry)).toBeNull();
  });
});
