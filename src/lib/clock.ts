// Time is passed in, never read from globals, so tests can drive schedules.

export interface Clock {
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

/** A clock that only moves when told to; for tests of schedules and expiry. */
export class ManualClock implements Clock {
  constructor(private ms: number) {}
  nowMs(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
  set(ms: number): void {
    this.ms = ms;
  }
}

/** API timestamps: ISO 8601 UTC with milliseconds (docs/api.md). */
export const isoTime = (ms: number): string => new Date(ms).toISOString();
