// DKIM verification by an independent implementation: Debian's python3-dkim (dkimpy,
// the library of the `dkimverify` command), fed the test's DNS records.

const SCRIPT = new URL("./dkim-verify.py", import.meta.url).pathname;
// Debian's Python tools belong to /usr/bin/python3; the python3 first on PATH may lack them.
const PYTHON = "/usr/bin/python3";

export function dkimpyAvailable(): boolean {
  const ok = Bun.spawnSync([PYTHON, "-c", "import dkim"], { stdout: "ignore", stderr: "ignore" }).exitCode === 0;
  if (!ok && process.env.CI === "true") throw new Error("python3-dkim is required in CI (.ci/run installs it)");
  return ok;
}

export interface DkimpyResult {
  index: number;
  domain: string;
  selector: string;
  algorithm: string;
  valid: boolean;
}

export function dkimpyVerify(message: string | Buffer, records: Record<string, string>): DkimpyResult[] {
  const proc = Bun.spawnSync([PYTHON, SCRIPT, JSON.stringify(records)], { stdin: Buffer.from(message), stdout: "pipe", stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`dkimpy failed: ${proc.stderr.toString()}`);
  return JSON.parse(proc.stdout.toString());
}
