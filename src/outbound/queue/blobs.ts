// Raw outgoing messages accepted before migration 0008, one file each under
// data_dir/messages (since then they are stored in the database with the message). The
// path stored is relative to data_dir; the files are only read now.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export class MessageBlobs {
  constructor(private readonly dataDir: string) {}

  read(relative: string): Buffer {
    return readFileSync(join(this.dataDir, relative));
  }
}
