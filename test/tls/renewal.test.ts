import { describe, expect, test } from "bun:test";
import type { CertificateInfo } from "../../src/tls/certificate.ts";
import { failureBackoffMs, renewalDecision, type RenewalState } from "../../src/tls/renewal.ts";

const DAY = 86_400_000;
const HOUR = 3_600_000;
const NOW = Date.parse("2026-11-22T00:00:00Z");
const cert = (daysLeft: number, names = ["mx.example.com"]): CertificateInfo => ({ names, issuer: "R11", serial: "01", notBeforeMs: NOW - 60 * DAY, notAfterMs: NOW + daysLeft * DAY });
const state = (info: CertificateInfo | null, failures = 0, lastFailureMs: number | null = null): RenewalState => ({ info, failures, lastFailureMs });

describe("renewalDecision (renew 30 days before, back-off 1h doubling)", () => {
  const cases: [string, RenewalState, ReturnType<typeof renewalDecision>][] = [
    ["no certificate yet", state(null), { order: true, why: "no certificate yet" }],
    ["60 days left: nothing to do", state(cert(60)), { order: false }],
    ["29 days left: renew", state(cert(29)), { order: true, why: "it expires on 2026-12-21T00:00:00.000Z" }],
    ["a configured name is missing", state(cert(60, ["old.example.com"])), { order: true, why: "the certificate lacks mx.example.com" }],
    ["failed 30 minutes ago: wait", state(cert(10), 1, NOW - 30 * 60_000), { order: false, retryAtMs: NOW + 30 * 60_000 }],
    ["failed 61 minutes ago: try again", state(cert(10), 1, NOW - 61 * 60_000), { order: true, why: "it expires on 2026-12-02T00:00:00.000Z" }],
    ["third failure 3 hours ago: 4 hours back-off", state(null, 3, NOW - 3 * HOUR), { order: false, retryAtMs: NOW + HOUR }],
    ["a valid certificate is not renewed because of old failures", state(cert(60), 5, NOW), { order: false }],
  ];
  for (const [why, s, expected] of cases) {
    test(why, () => expect(renewalDecision(s, ["mx.example.com"], NOW, 30 * DAY, HOUR)).toEqual(expected));
  }
  test("the back-off doubles per failure and stops at a day", () => {
    expect([1, 2, 3, 4, 5, 6, 20].map((n) => failureBackoffMs(n, HOUR) / HOUR)).toEqual([1, 2, 4, 8, 16, 24, 24]);
  });
});
