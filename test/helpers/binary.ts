// The compiled binary, as users run it: dist/postroom, built by `bun run build` (the test
// script builds it first). A test file run on its own builds it when it is missing or
// older than the sources, so it never tests a stale binary.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

const ROOT = new URL("../..", import.meta.url).pathname;
export const BINARY = join(ROOT, "dist", "postroom");

function newestSourceMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSourceMs(path) : statSync(path).mtimeMs);
  }
  return newest;
}

export function builtBinary(): string {
  const fresh = existsSync(BINARY) && statSync(BINARY).mtimeMs >= newestSourceMs(join(ROOT, "src"));
  if (!fresh) {
    const build = Bun.spawnSync([process.execPath, "run", "build"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    if (build.exitCode !== 0) throw new Error(`bun run build failed:\n${build.stdout}\n${build.stderr}`);
  }
  return BINARY;
}
