// One running Postroom per data_dir, as Postfix allows one master per queue directory
// (master.lock). Two would both empty and refill the same status journal and answer from
// the same keys; a second `postroom serve` started by hand next to the service would do it
// before it even failed to bind its ports. The lock is a file holding the owner's PID and
// the start time of that process (so that a PID reused after a crash is not taken for the
// owner); a lock whose process is gone is stale and taken over.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { StoreError } from "./store.ts";

export const LOCK_FILE = "postroom.pid";

export interface DataDirLock {
  readonly path: string;
  release(): void;
}

/** The start time of a process in clock ticks since boot (/proc), or null where there is none. */
export function processStartTicks(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, as another user's process.
    return (err as { code?: string }).code === "EPERM";
  }
}

/** Whether the lock file's text names a process that still runs (the same one, not a reused PID). */
export function ownerRuns(
  text: string,
  alive: (pid: number) => boolean = isAlive,
  startTicks: (pid: number) => string | null = processStartTicks,
): boolean {
  const [pidText, ticks] = text.trim().split(/\s+/);
  const pid = Number(pidText);
  if (!Number.isSafeInteger(pid) || pid <= 0 || !alive(pid)) return false;
  if (!ticks) return true;
  const now = startTicks(pid);
  return now === null || now === ticks;
}

/** Takes the lock of `dataDir` (made if missing), or throws naming the process that holds it. */
export function lockDataDir(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, LOCK_FILE);
  const mine = `${process.pid} ${processStartTicks(process.pid) ?? ""}`.trim();
  for (let attempt = 0; ; attempt++) {
    let fd: number;
    try {
      fd = openSync(path, "wx", 0o600);
    } catch (err) {
      if ((err as { code?: string }).code !== "EEXIST") throw err;
      let held = "";
      try {
        held = readFileSync(path, "utf8");
      } catch {
        // Removed meanwhile: try again.
      }
      if (held !== "" && ownerRuns(held)) {
        throw new StoreError(
          `${dataDir} is in use by process ${held.trim().split(/\s+/)[0]} (${path}); stop it first, or remove the file if that process is not a postroom`,
        );
      }
      // Another start is taking it over at this very moment.
      if (attempt > 0) throw new StoreError(`${dataDir} is being taken by another process (${path})`);
      rmSync(path, { force: true });
      continue;
    }
    try {
      writeSync(fd, `${mine}\n`);
    } finally {
      closeSync(fd);
    }
    return {
      path,
      release: () => {
        try {
          if (readFileSync(path, "utf8").trim() === mine) rmSync(path, { force: true });
        } catch {
          // Already gone.
        }
      },
    };
  }
}
