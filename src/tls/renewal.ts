// When to order an ACME certificate: pure decisions, so the table tests read like policy.
import type { CertificateInfo } from "./certificate.ts";

/** The longest wait between two failed orders, however many failed before. */
export const MAX_FAILURE_BACKOFF_MS = 86_400_000;

export interface RenewalState {
  info: CertificateInfo | null;
  /** Orders that failed since the last success. */
  failures: number;
  lastFailureMs: number | null;
}

export type RenewalDecision = { order: true; why: string } | { order: false; retryAtMs?: number };

/**
 * Order when there is no certificate, when it lacks a configured name, or when less
 * than `renewBeforeMs` remains; but after a failure wait `backoffMs`, doubled with each
 * further failure up to a day, so a refusing CA is not hammered every check. The first
 * wait is short (tls.acme.failure_backoff, 5 minutes by default): most failures are a
 * record just published or a port just opened, fixed within minutes, and a listener
 * without a certificate should not stay so for an hour.
 */
export function renewalDecision(
  state: RenewalState,
  names: readonly string[],
  nowMs: number,
  renewBeforeMs: number,
  backoffMs: number,
): RenewalDecision {
  const why =
    state.info === null
      ? "no certificate yet"
      : !coversNames(state.info, names)
        ? `the certificate lacks ${names.filter((n) => !state.info!.names.includes(n.toLowerCase())).join(", ")}`
        : state.info.notAfterMs - nowMs < renewBeforeMs
          ? `it expires on ${new Date(state.info.notAfterMs).toISOString()}`
          : null;
  if (why === null) return { order: false };
  if (state.failures > 0 && state.lastFailureMs !== null) {
    const retryAtMs = state.lastFailureMs + failureBackoffMs(state.failures, backoffMs);
    if (nowMs < retryAtMs) return { order: false, retryAtMs };
  }
  return { order: true, why };
}

export function failureBackoffMs(failures: number, backoffMs: number): number {
  return Math.min(backoffMs * 2 ** Math.max(0, failures - 1), MAX_FAILURE_BACKOFF_MS);
}

function coversNames(info: CertificateInfo, names: readonly string[]): boolean {
  const have = new Set(info.names);
  return names.every((n) => have.has(n.toLowerCase()));
}
