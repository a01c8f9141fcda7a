// How incoming statuses are written: each one is copied into a memory-mapped journal
// (src/store/mapped-journal.ts) before the SMTP reply, so it survives a crash of the
// process from then on, and the statuses gathered meanwhile are stored in SQLite together
// every STATUS_MOVE_INTERVAL_MS, or at once when someone reads them. A commit per turn of
// the event loop (~2 statuses each under load) cost 37 µs of the main thread per message
// in bench:inbound's profile; the journal and the grouped commits cost 12.
//
// Exactly once: each journaled status carries a sequence number, and the commit that
// stores a batch also records the last number it holds, so statuses that were stored just
// before a crash, and were still in the journal, are not stored again.
import { MappedJournal } from "../../store/mapped-journal.ts";
import type { IncomingStatus } from "./incoming-status.ts";

/**
 * Room for ~3,000 statuses (~350 bytes each): over a second of the fastest inbound traffic
 * measured here, where the move empties it every STATUS_MOVE_INTERVAL_MS; when it fills up
 * anyway it is emptied at once. Written whole at every start of a fresh data_dir.
 */
export const STATUS_JOURNAL_BYTES = 1024 * 1024;
/** How long a status waits in the journal at most before it is stored in SQLite. */
export const STATUS_MOVE_INTERVAL_MS = 100;
export const STATUS_JOURNAL_FILE = "incoming-statuses.journal";

export type Journaled = IncomingStatus & { seq: number };

/** Where journaled statuses are stored for good (statuses.repo.ts). */
export interface JournaledStore {
  /** The sequence number of the last status stored, 0 before the first. */
  lastStoredSeq(): number;
  /** Stores the rows and their last sequence number in one transaction; throws on failure, storing none. */
  store(rows: readonly Journaled[]): void;
}

export class StatusJournal {
  private readonly journal: MappedJournal;
  private pending: Journaled[] = [];
  private seq: number;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly target: JournaledStore,
    path: string,
    private readonly onMoveFailed: (err: unknown) => void,
    sizeBytes = STATUS_JOURNAL_BYTES,
  ) {
    this.seq = target.lastStoredSeq();
    this.journal = MappedJournal.open(path, sizeBytes, (records) => {
      // Left by a run that stopped before it stored them (or before it emptied the journal).
      const left = (records as Journaled[]).filter((r) => r.seq > this.seq);
      if (left.length === 0) return;
      target.store(left);
      this.seq = left.at(-1)!.seq;
    });
  }

  /** Journals the rows (in SQLite soon after); throws when they can be kept neither way. */
  record(rows: readonly IncomingStatus[]): void {
    for (const row of rows) {
      const entry: Journaled = { ...row, seq: this.seq + 1 };
      if (!this.journal.append(entry)) {
        // Full: empty it into SQLite (throws if SQLite fails too: nothing is lost, the
        // caller answers 451), then try again; a status larger than the whole journal
        // goes to SQLite directly.
        this.move();
        if (!this.journal.append(entry)) {
          this.target.store([entry]);
          this.seq = entry.seq;
          continue;
        }
      }
      this.seq = entry.seq;
      this.pending.push(entry);
    }
    if (this.pending.length > 0 && this.timer === null) this.schedule();
  }

  /** Stores every journaled status in SQLite now, then empties the journal. */
  move(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.pending.length === 0) return;
    this.target.store(this.pending);
    this.pending = [];
    this.journal.clear();
  }

  /** Stores what is left and lets the journal go. */
  close(): void {
    this.move();
    this.journal.close();
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      try {
        this.move();
      } catch (err) {
        // They stay journaled (and readable from nowhere else) until SQLite takes them.
        this.onMoveFailed(err);
        this.schedule();
      }
    }, STATUS_MOVE_INTERVAL_MS);
    // Journaled statuses never keep the process alive: the next start stores them.
    this.timer.unref?.();
  }
}
