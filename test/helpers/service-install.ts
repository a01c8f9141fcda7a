// The README's "Run it as a service" steps, run as written under a temporary root instead
// of /, and the unit's ExecStart run the way systemd runs it: as an unprivileged uid and
// gid with no other groups, from its WorkingDirectory. What changes from the README is only
// where things go (paths under the root), the group's name (a numeric gid no account has,
// as a fresh system user would be) and what needs the machine's systemd (useradd,
// systemctl, journalctl, the build that the test script has done already).
import { chmodSync, chownSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { builtBinary } from "./binary.ts";
import { tempDir } from "./tmp.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** The lines of the README's first sh block under "## Run it as a service". */
export function readmeServiceSteps(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const section = readme.slice(readme.indexOf("## Run it as a service"));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error("README.md has no sh block under 'Run it as a service'");
  return block[1]!.split("\n").filter((l) => l.trim() !== "");
}

/** One README line as it runs under `root`; null for what the test does not run. */
export function localizeStep(line: string, root: string, gid: number): string | null {
  const text = line.trim();
  if (text.startsWith("#") || /^(sudo )?(npx|useradd|systemctl|journalctl)\b/.test(text.replace(/^sudo /, ""))) return null;
  return text
    .replace(/^sudo /, "")
    .replace(/^((?:[A-Z_]+=\S+ )*)postroom /, `$1${root}/usr/local/bin/postroom `)
    .replace(/ -g postroom\b/g, ` -g ${gid}`)
    .replace(/(^|[\s=])\/(etc|usr|var)\//g, `$1${root}/$2/`);
}

export interface InstalledService {
  root: string;
  configPath: string;
  stateDir: string;
  uid: number;
  gid: number;
  /** What `postroom init` printed (the secrets, shown once). */
  initOutput: string;
  /** Runs a README step or any shell line as root, in the repository. */
  sh(line: string): { code: number; output: string };
  remove(): void;
}

/**
 * Runs the README's steps up to `postroom init`, lets `edit` change the config as the
 * operator would ("edit it: ..."), then the remaining steps.
 */
export async function installAsReadmeSays(
  uid: number,
  gid: number,
  edit: (configPath: string, root: string) => Promise<void>,
): Promise<InstalledService> {
  builtBinary();
  const dir = tempDir("postroom-service-");
  const root = dir.path;
  chmodSync(root, 0o755); // as / is: the service user may walk through it
  for (const d of ["usr/local/bin", "etc/systemd/system", "var/lib"]) mkdirSync(join(root, d), { recursive: true, mode: 0o755 });
  const sh = (line: string) => {
    const r = Bun.spawnSync(["bash", "-euo", "pipefail", "-c", line], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    return { code: r.exitCode, output: r.stdout.toString() + r.stderr.toString() };
  };
  const configPath = join(root, "etc/postroom/postroom.toml");
  let initOutput = "";
  let edited = false;
  for (const line of readmeServiceSteps()) {
    if (!edited && line.trim().startsWith("#   edit it")) {
      await edit(configPath, root);
      edited = true;
      continue;
    }
    const step = localizeStep(line, root, gid);
    if (step === null) continue;
    const r = sh(step);
    if (r.code !== 0) throw new Error(`README step failed (exit ${r.code}): ${line}\nran: ${step}\n${r.output}`);
    if (/ init /.test(step)) initOutput = r.output;
  }
  if (!edited) throw new Error("the README's steps have no '#   edit it' line between init and the start");
  // What StateDirectory=postroom with StateDirectoryMode=0700 makes for User=postroom.
  const stateDir = join(root, "var/lib/postroom");
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  chownSync(stateDir, uid, gid);
  return { root, configPath, stateDir, uid, gid, initOutput, sh, remove: dir.remove };
}

/** The unit's ExecStart, localized to the root, run as systemd would: setpriv to the service's uid and gid, no other groups. */
export function unitCommand(service: InstalledService, keyword: "ExecStart" | "ExecStartPre"): string[] {
  const unit = readFileSync(join(ROOT, "systemd/postroom.service"), "utf8");
  const line = new RegExp(`^${keyword}=(.+)$`, "m").exec(unit)?.[1];
  if (!line) throw new Error(`the unit has no ${keyword}=`);
  return [...asServiceUser(service), ...localizeStep(line, service.root, service.gid)!.split(" ")];
}

export function asServiceUser(service: { uid: number; gid: number }): string[] {
  return ["setpriv", `--reuid=${service.uid}`, `--regid=${service.gid}`, "--clear-groups", "--inh-caps=-all"];
}
