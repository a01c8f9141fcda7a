import { describe, expect, test } from "bun:test";
import { parseConfigText } from "../../src/config/load.ts";
import type { CertificateInfo } from "../../src/tls/certificate.ts";
import { failureBackoffMs, renewalDecision, type RenewalState } from "../../src/tls/renewal.ts";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const MINUTE = 60_000;
const NOW = Date.parse("2026-11-22T00:00:00Z");
const cert = (daysLeft: number, names = ["mx.example.com"]): CertificateInfo => ({
  names,
  issuer: "R11",
  serial: "01",
  notBeforeMs: NOW - 60 * DAY,
  notAfterMs: NOW + daysLeft * DAY,
});
const state = (info: CertificateInfo | null, failures = 0, lastFailureMs: number | null = null): RenewalState => ({
  info,
  failures,
  lastFailureMs,
});

describe("renewalDecision (renew 30 days before, back-off 5 minutes doubling)", () => {
  const cases: [string, RenewalState, ReturnType<typeof renewalDecision>][] = [
    ["no certificate yet", state(null), { order: true, why: "no certificate yet" }],
    ["60 days left: nothing to do", state(cert(60)), { order: false }],
    ["29 days left: renew", state(cert(29)), { order: true, why: "it expires on 2026-12-21T00:00:00.000Z" }],
    ["a configured name is missing", state(cert(60, ["old.example.com"])), { order: true, why: "the certificate lacks mx.example.com" }],
    ["failed 3 minutes ago: wait", state(cert(10), 1, NOW - 3 * MINUTE), { order: false, retryAtMs: NOW + 2 * MINUTE }],
    ["failed 6 minutes ago: try again, not an hour later", state(null, 1, NOW - 6 * MINUTE), { order: true, why: "no certificate yet" }],
    ["second failure 9 minutes ago: 10 minutes back-off", state(null, 2, NOW - 9 * MINUTE), { order: false, retryAtMs: NOW + MINUTE }],
    [
      "third failure 21 minutes ago: 20 minutes back-off is over",
      state(cert(10), 3, NOW - 21 * MINUTE),
      { order: true, why: "it expires on 2026-12-02T00:00:00.000Z" },
    ],
    ["tenth failure 23 hours ago: a day back-off at most", state(null, 10, NOW - 23 * HOUR), { order: false, retryAtMs: NOW + HOUR }],
    ["a valid certificate is not renewed because of old failures", state(cert(60), 5, NOW), { order: false }],
  ];
  for (const [why, s, expected] of cases) {
    test(why, () => expect(renewalDecision(s, ["mx.example.com"], NOW, 30 * DAY, 5 * MINUTE)).toEqual(expected));
  }
  test("the back-off doubles per failure and stops at a day", () => {
    expect([1, 2, 3, 4, 5, 6, 20].map((n) => failureBackoffMs(n, HOUR) / HOUR)).toEqual([1, 2, 4, 8, 16, 24, 24]);
  });
  test("with the default tls.acme.failure_backoff the first retries come within minutes", () => {
    const defaults = parseConfigText('hostname = "mx.example.com"');
    if (!defaults.ok) throw new Error(defaults.problems.join("\n"));
    const waits = [1, 2, 3, 4, 5, 9, 10, 20].map((n) => failureBackoffMs(n, defaults.config.tls.acme.failureBackoffMs) / MINUTE);
    expect(waits).toEqual([5, 10, 20, 40, 80, 1280, 1440, 1440]);
  });
});
