import { afterEach } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A fresh directory under the system temp dir; remove() deletes it and everything in it. */
export function tempDir(prefix = "postroom-test-"): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** For a test file: makes fresh directories, each removed after the test that made it. */
export function tempDirsPerTest(): () => string {
  const made: { remove(): void }[] = [];
  afterEach(() => {
    for (const d of made.splice(0)) d.remove();
  });
  return () => {
    const d = tempDir();
    made.push(d);
    return d.path;
  };
}
