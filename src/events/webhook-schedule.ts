// When a failed webhook batch is posted again (docs/webhooks.md): about 10 s, 1 min,
// 5 min, 30 min, 2 h, then every 6 h, with jitter, never sooner than the receiver's
// Retry-After. Pure, table-tested.

/** Retry-After as seconds or an HTTP date → milliseconds from now; null when absent or bad. */
export function retryAfterMs(header: string | null, nowMs: number): number | null {
  if (!header) return null;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

export function webhookRetryAt(
  failedAttempts: number,
  nowMs: number,
  delaysMs: readonly number[],
  retryAfter: number | null,
  random: () => number = Math.random,
  jitter = 0.1,
): number {
  const base = delaysMs[Math.min(Math.max(failedAttempts - 1, 0), delaysMs.length - 1)]!;
  const spread = Math.round(base * (1 + jitter * (2 * random() - 1)));
  return nowMs + Math.max(spread, retryAfter ?? 0);
}
