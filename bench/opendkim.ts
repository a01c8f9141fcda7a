// The DKIM signers of bench:outbound's Postfix peer: private opendkim milters (Debian's
// `opendkim` package) in the Postfix instance's temp dir, run in the foreground by the
// benchmark and reached by Postfix on UNIX sockets. Postroom DKIM-signs every message
// it sends, so the peer does too, the way a Debian Postfix signs.
//
// It signs like Postroom (src/domains/dkim.ts): two signatures per message, rsa-sha256
// with a 2048-bit key and ed25519-sha256 (RFC 8463), each under its own selector, both
// relaxed/relaxed over the same header list (SIGNED_HEADERS, From oversigned). opendkim
// signs with one algorithm per instance (SignatureAlgorithm is global; a KeyTable entry
// cannot choose its own), so there are two instances, one per key, and Postfix calls
// both in turn: the usual way to dual-sign with opendkim. The keys are made for this run
// only (opendkim-genkey, openssl); the start-up check (bench/postfix-dkim-check.ts)
// verifies a relayed message against each instance's `record`.
//
// Each instance's DIR/opendkim.conf is all written here (/etc/opendkim.conf is not
// read): Socket local:DIR/opendkim.sock, as Debian's own opendkim.conf has it (a UNIX
// socket, not inet:PORT@127.0.0.1: over loopback TCP the milter exchanges wait on each
// other, and one instance alone let Postfix relay 84 msg/s against 318 over a UNIX socket,
// 300 messages each, bench/RESULTS.md), DIR owned by opendkim with group postfix and mode
// 750 so that only Postfix's daemons reach the socket (UMask 000 lets them write to it),
// Mode s (sign only; mail from 127.0.0.1, the default InternalHosts, is signed),
// Domain/Selector/KeyFile for the sender's domain, UserID opendkim with its key file
// owned by that user and mode 600, no syslog (the container may have none; start-up
// errors go to stderr, which is kept). RequireSafeKeys is off only because the temp dir
// lies below /tmp: opendkim refuses a key under any directory others can write to,
// sticky bit or not. The key is read once, at start, so this costs nothing per message.
import { createPublicKey } from "node:crypto";
import { chmodSync, chownSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { OVERSIGNED_HEADERS, SIGNED_HEADERS } from "../src/domains/dkim.ts";
import { processCpuMs, terminate } from "./child.ts";

const SBIN_PATH = `${process.env.PATH ?? ""}:/usr/sbin:/usr/bin:/sbin`;

export type DkimAlgorithm = "rsa-sha256" | "ed25519-sha256";

function tool(name: string): string {
  const bin = Bun.which(name, { PATH: SBIN_PATH });
  if (!bin)
    throw new Error(
      `${name} not found: install Debian's opendkim, opendkim-tools and openssl packages (apt-get install -y opendkim opendkim-tools openssl)`,
    );
  return bin;
}

function run(cmd: string[]): void {
  const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe", env: { ...process.env, PATH: SBIN_PATH } });
  if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed (exit ${r.exitCode}): ${r.stdout.toString()}${r.stderr.toString()}`);
}

/**
 * A new private key at `file` (PEM), made the way an administrator would: the RSA key by
 * opendkim-genkey (2048 bits), the Ed25519 key by openssl (opendkim-genkey makes RSA
 * keys only). Returns the TXT record that publishes it.
 */
function newKey(dir: string, file: string, domain: string, selector: string, algorithm: DkimAlgorithm): string {
  if (algorithm === "rsa-sha256") {
    run([tool("opendkim-genkey"), "--bits=2048", `--directory=${dir}`, `--domain=${domain}`, `--selector=${selector}`]);
    renameSync(join(dir, `${selector}.private`), file);
    const spki = createPublicKey(readFileSync(file, "utf8")).export({ type: "spki", format: "der" });
    return `v=DKIM1; k=rsa; p=${spki.toString("base64")}`;
  }
  run([tool("openssl"), "genpkey", "-algorithm", "ed25519", "-out", file]);
  // RFC 8463: p= is the bare 32-byte key, the last 32 bytes of the SPKI encoding.
  const spki = createPublicKey(readFileSync(file, "utf8")).export({ type: "spki", format: "der" });
  return `v=DKIM1; k=ed25519; p=${spki.subarray(spki.length - 32).toString("base64")}`;
}

/** The uid and primary gid of a system user that Debian's `pkg` package creates. */
function systemUser(name: string, pkg: string): { uid: number; gid: number } {
  const id = (flag: string) => Number(Bun.spawnSync(["id", flag, name]).stdout.toString().trim() || NaN);
  const user = { uid: id("-u"), gid: id("-g") };
  if (!Number.isInteger(user.uid) || !Number.isInteger(user.gid))
    throw new Error(`there is no ${name} user: install Debian's ${pkg} package`);
  return user;
}

/** Resolves once something accepts a connection on the UNIX socket `path`; fails at once if `exited` says the server is gone. */
async function waitForListener(path: string, timeoutMs: number, exited: () => string | null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const s = connect({ path });
      s.on("connect", () => (s.destroy(), resolve(true)));
      s.on("error", () => resolve(false));
    });
    if (open) return;
    const gone = exited();
    if (gone !== null) throw new Error(`opendkim exited before listening on ${path}: ${gone}`);
    if (Date.now() > deadline) throw new Error(`opendkim did not listen on ${path} within ${timeoutMs} ms`);
    await Bun.sleep(50);
  }
}

export class PrivateOpendkim {
  private stderr = "";

  private constructor(
    private readonly proc: Subprocess<"ignore", "ignore", "pipe">,
    /** Its UNIX socket. */
    readonly socket: string,
    readonly domain: string,
    readonly selector: string,
    readonly algorithm: DkimAlgorithm,
    /** The TXT record of its key, at selector._domainkey.domain. */
    readonly record: string,
  ) {
    void (async () => {
      this.stderr = await new Response(proc.stderr).text();
    })();
  }

  /** Its address in Postfix's smtpd_milters. */
  get milter(): string {
    return `unix:${this.socket}`;
  }

  static version(): string {
    const r = Bun.spawnSync([tool("opendkim"), "-V"], { stdout: "pipe", stderr: "pipe" });
    return /OpenDKIM Filter v(\S+)/.exec(r.stdout.toString() + r.stderr.toString())?.[1] ?? "?";
  }

  /** Writes a new key and the configuration under `dir` (created), starts `opendkim -f`, and waits until it listens. */
  static async start(dir: string, domain: string, selector: string, algorithm: DkimAlgorithm): Promise<PrivateOpendkim> {
    const bin = tool("opendkim");
    const { uid, gid } = systemUser("opendkim", "opendkim");
    mkdirSync(dir, { mode: 0o750 });
    chmodSync(dir, 0o750);
    chownSync(dir, uid, systemUser("postfix", "postfix").gid);
    const owned = (file: string, text: string, mode: number) => {
      writeFileSync(file, text, { mode });
      chmodSync(file, mode);
      chownSync(file, uid, gid);
    };
    const keyFile = join(dir, `${selector}.pem`);
    const record = newKey(dir, keyFile, domain, selector, algorithm);
    chmodSync(keyFile, 0o600);
    chownSync(keyFile, uid, gid);
    const socket = join(dir, "opendkim.sock");
    const conf = join(dir, "opendkim.conf");
    owned(
      conf,
      `# Private opendkim for bench:outbound (bench/opendkim.ts); removed after the run.
Syslog no
Mode s
Socket local:${socket}
UMask 000
PidFile ${join(dir, "opendkim.pid")}
UserID opendkim:opendkim
Domain ${domain}
Selector ${selector}
KeyFile ${keyFile}
RequireSafeKeys false
SignatureAlgorithm ${algorithm}
Canonicalization relaxed/relaxed
SignHeaders ${SIGNED_HEADERS.join(",")}
OversignHeaders ${OVERSIGNED_HEADERS.join(",")}
SoftwareHeader no
`,
      0o644,
    );
    const proc = Bun.spawn([bin, "-f", "-x", conf], {
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
      env: { ...process.env, PATH: SBIN_PATH },
    });
    const instance = new PrivateOpendkim(proc, socket, domain, selector, algorithm, record);
    try {
      await waitForListener(socket, 10_000, () =>
        proc.exitCode !== null || proc.signalCode !== null ? `exit ${proc.exitCode ?? proc.signalCode}: ${instance.stderr.trim()}` : null,
      );
    } catch (err) {
      await instance.stop();
      throw err;
    }
    return instance;
  }

  /** CPU time (ms) of the milter, all its threads. */
  get pid(): number {
    return this.proc.pid;
  }

  cpuMs(): number {
    return processCpuMs(this.proc.pid);
  }

  stop(): Promise<void> {
    return terminate(this.proc);
  }
}

/** What signers sign, in words for the benchmark's output: "rsa-sha256 (2048-bit) + ed25519-sha256, relaxed/relaxed, h= ...". */
export function describeSigning(algorithms: DkimAlgorithm[]): string {
  const algs = algorithms.map((a) => (a === "rsa-sha256" ? `${a} (2048-bit)` : a)).join(" + ");
  return `${algs}, relaxed/relaxed, h= ${SIGNED_HEADERS.join(":")} where present, ${OVERSIGNED_HEADERS.join(":")} oversigned`;
}
