// Text written during one turn of the event loop, held and handed on in one write at its
// end (setImmediate): one system call for many small writes. Used for log lines. Text
// that may wait longer (routine log lines) can be held for up to `holdMs`, so that a busy
// server writes a few times a second instead of once per turn; urgent text, or a full
// buffer, still goes out at the end of the turn.

export class TurnBuffer {
  private held = "";
  private endOfTurn = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  /** `write` gets the held text; past `maxChars` held, it gets it at once. */
  constructor(
    private readonly write: (text: string) => void,
    private readonly maxChars = Number.POSITIVE_INFINITY,
    /** How long text that is not urgent may be held; 0: until the end of the turn. */
    public holdMs = 0,
  ) {}

  /** Holds `text` until the end of this turn, or up to `holdMs` unless `urgent`. */
  add(text: string, urgent = false): void {
    this.held += text;
    if (this.held.length >= this.maxChars) return this.flush();
    if (urgent || this.holdMs <= 0) this.flushAtEndOfTurn();
    else if (this.timer === null && !this.endOfTurn) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flush();
      }, this.holdMs);
      // Held text never keeps the process alive; exit handlers write what is left.
      this.timer.unref?.();
    }
  }

  private flushAtEndOfTurn(): void {
    if (this.endOfTurn) return;
    this.endOfTurn = true;
    setImmediate(() => {
      this.endOfTurn = false;
      this.flush();
    });
  }

  /** Hands on what is held now. */
  flush(): void {
    const text = this.take();
    if (text !== "") this.write(text);
  }

  /** What is held, no longer held (for a write of its own, e.g. at exit). */
  take(): string {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const text = this.held;
    this.held = "";
    return text;
  }
}
