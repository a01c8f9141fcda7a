// Raw outgoing messages, one file each under data_dir/messages, written durably before
// the rows that point at them are committed. The path stored is relative to data_dir.
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { writeFileDurably } from "../lib/durable-file.ts";

export class MessageBlobs {
  constructor(private readonly dataDir: string) {}

  /** Writes the message and returns its path relative to data_dir. */
  write(messageId: string, raw: Buffer): string {
    const relative = join("messages", messageId.slice(0, 2), `${messageId}.eml`);
    mkdirSync(join(this.dataDir, "messages", messageId.slice(0, 2)), { recursive: true, mode: 0o700 });
    writeFileDurably(join(this.dataDir, relative), raw);
    return relative;
  }

  read(relative: string): Buffer {
    return readFileSync(join(this.dataDir, relative));
  }

  remove(relative: string): void {
    rmSync(join(this.dataDir, relative), { force: true });
  }
}
