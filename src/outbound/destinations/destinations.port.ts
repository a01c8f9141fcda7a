// What the destinations feature keeps in the store: paused destinations (shared by every
// node of a cluster) and the destination each recipient resolved to. destinations.repo.ts
// writes it once for both engines.
import type { DestinationPause } from "./rules.ts";

export interface DestinationRepo {
  /** Every pause row, ended throttle pauses included (their length doubles the next one). */
  listPauses(): Promise<DestinationPause[]>;
  getPause(destination: string): Promise<DestinationPause | null>;
  /** Sets the destination's pause, replacing the one it had. */
  putPause(p: DestinationPause): Promise<void>;
  /** Ends the destination's pause; false when it had none. */
  removePause(destination: string): Promise<boolean>;
  /** Deletes throttle pauses that ended more than their own length before `nowMs` (nothing left to double). */
  removeStalePauses(nowMs: number): Promise<number>;
  /** Records the destination these recipients resolved to (API.md section 10's `destination`). */
  recordDestination(recipientIds: readonly string[], destination: string): Promise<void>;
}
