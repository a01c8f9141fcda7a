// Text written during one turn of the event loop, held and handed on in one write at its
// end (setImmediate): one system call for many small writes. Used for log lines and for
// SMTP replies to pipelined commands.

export class TurnBuffer {
  private held = "";
  private scheduled = false;

  /** `write` gets the held text; past `maxChars` held, it gets it at once. */
  constructor(
    private readonly write: (text: string) => void,
    private readonly maxChars = Number.POSITIVE_INFINITY,
  ) {}

  add(text: string): void {
    this.held += text;
    if (this.held.length >= this.maxChars) return this.flush();
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
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
    const text = this.held;
    this.held = "";
    return text;
  }
}
