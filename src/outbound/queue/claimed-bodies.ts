// Bodies a PostgreSQL claim read with its recipients (issue 38), kept until the delivery
// worker asks for them: the claim's one round trip brings each message's bytes, where a
// read of the store per delivered message did (rawMessage). Bounded twice, so memory stays small
// whatever is claimed: the claim brings only bodies of at most CLAIMED_BODY_MAX_BYTES (a
// larger one is read when asked, as before), and at most CLAIMED_BODIES_KEPT are kept, the
// oldest dropped first (a recipient claimed and then left for later, e.g. its destination
// paused, never asks; its body is read again from the database if it ever does). A body is
// the same bytes for as long as its message exists, so a kept one is never stale.

/** Bodies up to this size come with the claim; larger ones are read when the worker asks. */
export const CLAIMED_BODY_MAX_BYTES = 64 * 1024;
/** Bodies kept at most (with CLAIMED_BODY_MAX_BYTES: 32 MiB at worst). */
export const CLAIMED_BODIES_KEPT = 512;

export class ClaimedBodies {
  private readonly kept = new Map<string, Buffer>();

  constructor(private readonly maxKept = CLAIMED_BODIES_KEPT) {}

  /** Keeps `raw` for `messageId`, dropping the oldest kept beyond the bound. */
  keep(messageId: string, raw: Buffer): void {
    this.kept.delete(messageId);
    this.kept.set(messageId, raw);
    while (this.kept.size > this.maxKept) this.kept.delete(this.kept.keys().next().value!);
  }

  /** The body kept for `messageId`, given once (a second ask goes to the database), or undefined. */
  take(messageId: string): Buffer | undefined {
    const raw = this.kept.get(messageId);
    if (raw !== undefined) this.kept.delete(messageId);
    return raw;
  }

  /** Drops what is kept for `messageId` (a message stored under an ID seen before: a test's, never a random one's). */
  forget(messageId: string): void {
    this.kept.delete(messageId);
  }

  get size(): number {
    return this.kept.size;
  }
}
