// The order of message events (their `seq`), shared by both engines' repositories: the
// outbox posts in seq order and E12/E13 list in it.

let lastSeq = 0;
/** Strictly increasing within this process, and close to time order across restarts. */
export function nextSeq(nowMs: number): number {
  lastSeq = Math.max(lastSeq + 1, nowMs * 1000);
  return lastSeq;
}
