// "Run this within N ms": one pending timer that only ever moves earlier, so a stream of
// kicks (every enqueue, every event) neither stacks timers nor keeps putting the run off.
// The delivery worker and the webhook dispatcher wake through it.
export class WakeTimer {
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** When the pending timer fires (performance.now()); Infinity when none is pending. */
  private atMs = Infinity;

  constructor(private readonly run: () => void) {}

  /** Runs within `delayMs`; a run already planned for sooner stands. */
  wake(delayMs: number): void {
    const atMs = performance.now() + delayMs;
    if (this.timer) {
      if (this.atMs <= atMs) return;
      clearTimeout(this.timer);
    }
    this.atMs = atMs;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.atMs = Infinity;
      this.run();
    }, delayMs);
    this.timer.unref?.();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.atMs = Infinity;
  }
}
