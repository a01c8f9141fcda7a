// /healthz's store check on PostgreSQL answers from the last background write: the verdict
// from its time and error (a table), at the edges of HEALTH_STALE_AFTER_MS.
import { expect, test } from "bun:test";
import { HEALTH_STALE_AFTER_MS, healthVerdict } from "../../src/store/engine/pg-health.ts";

const NOW = Date.parse("2026-11-25T03:00:00Z");
const STALE = `no durable write succeeded in the last ${HEALTH_STALE_AFTER_MS / 1000} s`;

const cases: [name: string, last: { okAtMs: number | null; error: string | null }, verdict: string | null][] = [
  ["a write just now: ok", { okAtMs: NOW, error: null }, null],
  ["the last write exactly the stale time ago: still ok", { okAtMs: NOW - HEALTH_STALE_AFTER_MS, error: null }, null],
  [
    "the last write a millisecond older than that: stale (the server stopped answering)",
    { okAtMs: NOW - HEALTH_STALE_AFTER_MS - 1, error: null },
    STALE,
  ],
  ["no write succeeded yet", { okAtMs: null, error: null }, STALE],
  [
    "the last write failed: its error, however recent the success before it",
    { okAtMs: NOW, error: "could not extend file: No space left on device" },
    "could not extend file: No space left on device",
  ],
];

for (const [name, last, verdict] of cases) test(name, () => expect(healthVerdict(last, NOW)).toBe(verdict));
