// An append-only journal in a memory-mapped file, for records that must survive a crash
// of the process as soon as they are written but can be stored for good a little later,
// many at once (incoming statuses, src/inbound/statuses/statuses.repo.ts). Appending copies the
// record into the mapping: no system call, where an SQLite commit costs a dozen (about a
// tenth of the inbound path's main-thread time in bench:inbound). The kernel owns the
// mapped pages and writes them back, so a record outlives kill -9 the moment it is
// copied, as a commit with synchronous=NORMAL does, and like that commit not a power cut.
//
// Layout: records one after another from offset 0, each [u32 length][u32 crc32][length
// bytes of JSON], little-endian; a length of 0 ends the journal. A record's length is
// written last, after the terminator behind it, so at every instant the chain of records
// ends at a 0 or at a record cut short (its checksum fails), never in stale bytes.
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, statSync, writeSync } from "node:fs";

const HEADER_BYTES = 8;
const TERMINATOR_BYTES = 4;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The records of a journal's bytes, in order, up to its end or to a record cut short. */
export function readRecords(bytes: Uint8Array): unknown[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: unknown[] = [];
  for (let at = 0; at + HEADER_BYTES <= bytes.length; ) {
    const length = view.getUint32(at, true);
    const start = at + HEADER_BYTES;
    if (length === 0 || start + length > bytes.length) break;
    const payload = bytes.subarray(start, start + length);
    if (Bun.hash.crc32(payload) !== view.getUint32(at + 4, true)) break;
    try {
      records.push(JSON.parse(decoder.decode(payload)));
    } catch {
      break;
    }
    at = start + length;
  }
  return records;
}

/**
 * Writes `sizeBytes` zeros and syncs them, so that every block of the file exists before
 * it is mapped: a write through the mapping into a hole of a full disk would kill the
 * process (SIGBUS) instead of failing.
 */
function allocate(path: string, sizeBytes: number): void {
  const fd = openSync(path, "w", 0o600);
  try {
    const chunk = Buffer.alloc(Math.min(sizeBytes, 1024 * 1024));
    for (let written = 0; written < sizeBytes; ) written += writeSync(fd, chunk, 0, Math.min(chunk.length, sizeBytes - written));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export class MappedJournal {
  private map: Uint8Array | null;
  private view: DataView | null;
  private endBytes = 0;

  private constructor(map: Uint8Array) {
    this.map = map;
    this.view = new DataView(map.buffer, map.byteOffset, map.byteLength);
    this.clear();
  }

  /**
   * Opens the journal at `path`, empty and `sizeBytes` long. The records a previous run
   * left in it go to `replay` first, which must have stored them for good when it
   * returns (it throws otherwise, and they stay in the file for the next attempt).
   */
  static open(path: string, sizeBytes: number, replay: (records: unknown[]) => void): MappedJournal {
    const exists = existsSync(path);
    if (exists) {
      const records = readRecords(readFileSync(path));
      if (records.length > 0) replay(records);
    }
    if (!exists || statSync(path).size !== sizeBytes) allocate(path, sizeBytes);
    return new MappedJournal(Bun.mmap(path, { shared: true }));
  }

  /** Appends a record; false when the journal has no room left for it. */
  append(record: unknown): boolean {
    const { map, view } = this.mapped();
    const at = this.endBytes;
    const start = at + HEADER_BYTES;
    const room = map.length - start - TERMINATOR_BYTES;
    if (room <= 0) return false;
    const text = JSON.stringify(record);
    const { read, written } = encoder.encodeInto(text, map.subarray(start, start + room));
    // What did fit lies behind the end (still 0 at `at`): nothing reads it.
    if (read < text.length) return false;
    const next = start + written;
    view.setUint32(next, 0, true);
    view.setUint32(at + 4, Bun.hash.crc32(map.subarray(start, next)), true);
    view.setUint32(at, written, true);
    this.endBytes = next;
    return true;
  }

  /** Forgets every record (once they are stored elsewhere). */
  clear(): void {
    this.mapped().view.setUint32(0, 0, true);
    this.endBytes = 0;
  }

  /** Lets the mapping go (it is unmapped once collected); the journal is unusable afterwards. */
  close(): void {
    this.map = null;
    this.view = null;
  }

  private mapped(): { map: Uint8Array; view: DataView } {
    if (!this.map || !this.view) throw new Error("the journal is closed");
    return { map: this.map, view: this.view };
  }
}
