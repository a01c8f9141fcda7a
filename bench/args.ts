// Command-line options of the benchmarks. Every option can also be set by a BENCH_*
// variable (`bun run bench:x` needs `--` before flags, a variable does not); the flag
// wins. Unknown flags and positional arguments are refused rather than ignored, so a
// misspelt option never yields a run with the defaults that looks like the one asked for.
import { resolve } from "node:path";
import { parseArgs, type ParseArgsConfig } from "node:util";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** The flags given to this process, as `options` describes them; --help (-h) prints `usage: USAGE` and exits 0. */
export function parseOptions<T extends Options>(usage: string, options: T) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: { ...options, help: { type: "boolean", short: "h" } },
    allowPositionals: false,
    strict: true,
  });
  // (`values` is only known to have `help` once T is; the callers see their own flags.)
  if ((values as { help?: boolean }).help) {
    console.log(`usage: ${usage}`);
    process.exit(0);
  }
  return values;
}

/** A whole number >= `min` from the flag, else from the variable `env`, else `dflt`; the error names the flag (BENCH_X → --x). */
export function intOption(flag: string | undefined, env: string, dflt: number, min: number): number {
  const raw = flag ?? process.env[env];
  const n = raw === undefined || raw === "" ? dflt : Number(raw);
  if (!Number.isInteger(n) || n < min)
    throw new Error(`${env.toLowerCase().replace("bench_", "--")} must be an integer >= ${min}, got ${raw}`);
  return n;
}

/** An absolute directory from the flag, else from the variable `env`; null if neither is set (or empty). */
export function dirOption(flag: string | undefined, env: string): string | null {
  const dir = flag || process.env[env];
  return dir ? resolve(dir) : null;
}
