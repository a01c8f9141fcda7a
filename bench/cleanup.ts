// What a benchmark has to undo before it exits (children to stop, a private Postfix and
// /etc/postfix/main.cf to restore, a temp dir to remove), whether it ends normally, fails
// or is interrupted.
//
// One run for everyone: a signal and main's own `finally` (which a signal provokes: the
// children it stops make main fail) share the same run, so the process never exits while
// the other one is still undoing; and a step added while it runs (a child started
// meanwhile) is still taken.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export class Cleanup {
  private readonly steps: (() => Promise<unknown> | unknown)[] = [];
  private running: Promise<void> | null = null;
  /** Set once SIGINT or SIGTERM arrived (after `onSignals`). */
  interrupted = false;

  /** Adds a step, to run before every step added earlier (the temp dir, added first, goes last). */
  add(step: () => Promise<unknown> | unknown): void {
    this.steps.unshift(step);
  }

  /** A new directory in the system's temp dir (PREFIX and random characters), removed by the step added now. */
  tempDir(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.add(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  /** Runs every step, newest first; a step that fails is reported and the others still run. */
  run(): Promise<void> {
    return (this.running ??= (async () => {
      for (let step = this.steps.shift(); step; step = this.steps.shift()) {
        try {
          await step();
        } catch (err) {
          console.error(`cleanup: ${(err as Error).message}`);
        }
      }
    })());
  }

  /** On the first SIGINT or SIGTERM: says it is stopping `what`, runs the steps and exits 130. */
  onSignals(what: string): void {
    for (const sig of ["SIGINT", "SIGTERM"] as const) {
      process.on(sig, () => {
        if (this.interrupted) return;
        this.interrupted = true;
        console.error(`\n${sig}: stopping ${what}`);
        void this.run().then(() => process.exit(130));
      });
    }
  }
}
