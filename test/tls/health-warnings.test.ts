// /healthz's certificate warnings.
import { describe, expect, test } from "bun:test";
import { tlsHealthWarnings } from "../../src/tls/health-warnings.ts";

const DAY_MS = 86_400_000;
const NOW = Date.parse("2026-11-24T12:00:00Z");
const cert = (daysLeft: number) => ({
  names: ["mx.example.com", "mail.example.com"],
  issuer: "R11",
  serial: "01",
  notBeforeMs: NOW - 60 * DAY_MS,
  notAfterMs: NOW + daysLeft * DAY_MS,
});

describe("tlsHealthWarnings (warning 14 days ahead)", () => {
  const cases: [string, Parameters<typeof tlsHealthWarnings>[0], string[]][] = [
    ["60 days left: nothing", { mode: "acme", certificate: cert(60), problem: null }, []],
    [
      "10 days left: the names, days and date",
      { mode: "files", certificate: cert(10), problem: null },
      ["tls certificate for mx.example.com, mail.example.com expires in 10 days (2026-12-04T12:00:00.000Z)"],
    ],
    [
      "a failed renewal beside a certificate still in use",
      { mode: "acme", certificate: cert(20), problem: "order failed: CAA forbids" },
      ["tls: order failed: CAA forbids"],
    ],
    ["no certificate and why", { mode: "files", certificate: null, problem: "no such file" }, ["tls: no such file"]],
    ["TLS off: a problem is not a warning", { mode: "off", certificate: null, problem: "not configured" }, []],
  ];
  for (const [name, status, expected] of cases) test(name, () => expect(tlsHealthWarnings(status, 14 * DAY_MS, NOW)).toEqual(expected));
});
