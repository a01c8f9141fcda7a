// The peer of bench:outbound: a private Postfix (Debian's `postfix` package) in a temp
// dir, relaying everything to the benchmark's sink, started and stopped by the benchmark.
// It never touches a system-wide instance: its own config_directory, queue_directory and
// data_directory, its own ports on 127.0.0.1, its own log file.
//
// Steps (as the design doc describes them):
// - DIR (mode 755) holds etc/ (main.cf, master.cf), spool/ (queue_directory), lib/
//   (data_directory, owned by postfix) and log/ (maillog_file; listed in
//   maillog_file_prefixes, written by the `postlog` service of master.cf).
// - DIR/etc is listed in alternate_config_directories of /etc/postfix/main.cf (postfix
//   refuses `-c` with a directory that is not). /etc/postfix/main.cf is restored exactly
//   as it was (or removed, if it did not exist) when the instance stops.
// - `postfix -c DIR/etc post-install create-missing`, then `postfix -c DIR/etc start`;
//   `postfix -c DIR/etc stop` at the end.
// - Deliveries are counted from its log: one `status=sent` line per recipient delivered.
// - It DKIM-signs like Postroom: two private opendkim milters (bench/opendkim.ts), one
//   RSA, one Ed25519, in DIR/opendkim-SELECTOR, started before Postfix and stopped after
//   it, called by smtpd in turn (smtpd_milters; non_smtpd_milters the same). With
//   milter_default_action = tempfail a milter that fails or is gone makes smtpd answer
//   4xx at the end of DATA, so smtp-source stops loudly instead of Postfix relaying the
//   message unsigned (Postfix's default is to accept it).
// - One recipient domain can be routed to another port (`checkRoute`, a one-entry
//   inline transport map): the start-up check's capture sink (bench/postfix-dkim-check.ts).
//
// The instance is Postfix as shipped apart from what a relay-only, loopback-only setup
// needs: relayhost = the sink (or, with `mx`, MX lookups through its own resolv.conf and
// the sink's port), no local delivery, no TLS (the sink offers none), no chroot but the
// smtp client's when it looks up MX (the Debian default chroots daemons into the queue
// directory, which needs copies of /etc files there: only resolv.conf matters here),
// IPv4 only. Concurrency, process limits, in_flow_delay and
// connection caching are the defaults. The config files are written by bench/postfix-config.ts;
// this file starts, restarts and stops the instance and reads its log and CPU time.
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { procStat, processCpuMs } from "./child.ts";
import { processTree } from "./cgroup.ts";
import { type DkimAlgorithm, PrivateOpendkim } from "./opendkim.ts";
import { allowConfigDirectory, type PostfixOptions, run, SBIN_PATH, tool, writeInstanceConfig } from "./postfix-config.ts";
import { type PostfixSubmission, postfixSubmission } from "./postfix-submission.ts";
import { freePort, waitForGreeting } from "./smtp-sink.ts";

export type { PostfixOptions } from "./postfix-config.ts";

/** The opendkim instances, by selector: the same two signatures Postroom adds (src/domains/dkim.ts). */
const SIGNERS: [selector: string, algorithm: DkimAlgorithm][] = [
  ["pfrsa", "rsa-sha256"],
  ["pfed", "ed25519-sha256"],
];

export interface PostfixLogCounts {
  sent: number;
  deferred: number;
  bounced: number;
  rejected: number;
}

export class PrivatePostfix {
  private stopped = false;

  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly restoreMainCf: () => void,
    /** Its DKIM signers (opendkim milters), in the order smtpd calls them. */
    readonly signers: PrivateOpendkim[],
    /** Its submission port and the credentials it takes there, if asked for (PostfixOptions.submission). */
    readonly submission: (PostfixSubmission & { port: number }) | null,
  ) {}

  get configDir(): string {
    return join(this.dir, "etc");
  }

  get logFile(): string {
    return join(this.dir, "log", "maillog");
  }

  static version(): string {
    // The default instance may have no main.cf ("No configuration"); -d shows built-in defaults.
    return run([tool("postconf"), "-d", "-h", "mail_version"], "postconf mail_version").trim();
  }

  static async start(sinkPort: number, opts: PostfixOptions): Promise<PrivatePostfix> {
    if (process.getuid?.() !== 0) throw new Error("the Postfix peer must be started as root (postfix start needs it)");
    const postfix = tool("postfix");
    tool("postconf");
    const dir = mkdtempSync(join(tmpdir(), "postroom-bench-postfix-"));
    chmodSync(dir, 0o755);
    const etc = join(dir, "etc");
    const spool = join(dir, "spool");
    const lib = join(dir, "lib");
    const log = join(dir, "log");
    for (const d of [etc, spool, lib, log]) mkdirSync(d, { mode: 0o755 });
    for (const d of [etc, spool, lib, log]) chmodSync(d, 0o755);
    const pf = Bun.spawnSync(["id", "-u", "postfix"]).stdout.toString().trim();
    const pfGroup = Bun.spawnSync(["id", "-g", "postfix"]).stdout.toString().trim();
    if (!/^\d+$/.test(pf)) throw new Error("there is no postfix user: install Debian's postfix package");
    chownSync(lib, Number(pf), Number(pfGroup));
    chownSync(log, Number(pf), Number(pfGroup));

    const signers: PrivateOpendkim[] = [];
    try {
      if (opts.signingDomain !== null)
        for (const [selector, algorithm] of SIGNERS)
          signers.push(await PrivateOpendkim.start(join(dir, `opendkim-${selector}`), opts.signingDomain, selector, algorithm));
    } catch (err) {
      for (const s of signers) await s.stop();
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }

    const port = await freePort();
    const submissionPort = opts.submission ? await freePort() : 0;
    const submission = opts.submission
      ? { ...postfixSubmission(dir, submissionPort, Number(pf), Number(pfGroup)), port: submissionPort }
      : null;
    writeInstanceConfig({ etc, spool, lib, log, sinkPort, port, submission, milters: signers.map((s) => s.milter) }, opts);

    const restoreMainCf = allowConfigDirectory(etc);
    const instance = new PrivatePostfix(dir, port, restoreMainCf, signers, submission);
    try {
      run([postfix, "-c", etc, "post-install", "create-missing"], "postfix post-install create-missing");
      run([postfix, "-c", etc, "check"], "postfix check");
      run([postfix, "-c", etc, "start"], "postfix start");
      await waitForGreeting(port, 15_000, "the private Postfix");
      if (submission) await waitForGreeting(submission.port, 15_000, "the private Postfix's submission port");
    } catch (err) {
      await instance.stop();
      throw err;
    }
    return instance;
  }

  /** The size Postfix gave the last message it queued (qmgr's size=, in bytes), or null. */
  lastQueuedSize(): number | null {
    const text = existsSync(this.logFile) ? readFileSync(this.logFile, "latin1") : "";
    const all = [...text.matchAll(/ size=(\d+), nrcpt=/g)];
    return all.length ? Number(all[all.length - 1]![1]) : null;
  }

  /** Lines of its log so far, by outcome. */
  logCounts(): PostfixLogCounts {
    const text = existsSync(this.logFile) ? readFileSync(this.logFile, "latin1") : "";
    const count = (re: RegExp) => text.match(re)?.length ?? 0;
    return {
      sent: count(/ status=sent /g),
      deferred: count(/ status=deferred /g),
      bounced: count(/ status=bounced /g),
      rejected: count(/ NOQUEUE: reject: /g),
    };
  }

  private masterPid(): number | null {
    const f = join(this.dir, "spool", "pid", "master.pid");
    if (!existsSync(f)) return null;
    const pid = Number(readFileSync(f, "utf8").trim());
    return pid > 0 ? pid : null;
  }

  /** Every process of this side: the master, each daemon it runs now, and the opendkim milters (for a cgroup: bench/cgroup.ts). */
  processIds(): number[] {
    const master = this.masterPid();
    return [...(master === null ? [] : processTree(master)), ...this.signers.map((s) => s.pid)];
  }

  /** CPU time (ms) of the master and every daemon it runs, including daemons that have exited, and of its opendkim milters. */
  cpuMs(): number {
    const master = this.masterPid();
    if (master === null) return 0;
    let ms = processCpuMs(master, true);
    for (const s of this.signers) ms += s.cpuMs();
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const f = procStat(Number(entry));
      if (f && Number(f[1]) === master) ms += processCpuMs(Number(entry), true);
    }
    return ms;
  }

  /**
   * Stops the master and its daemons and starts them again: a cold Postfix (no cached
   * connections, every destination back at its initial concurrency), on the same queue.
   */
  async restart(): Promise<void> {
    await this.stopMaster();
    run([tool("postfix"), "-c", this.configDir, "start"], "postfix start");
    await waitForGreeting(this.port, 15_000, "the private Postfix");
    if (this.submission) await waitForGreeting(this.submission.port, 15_000, "the private Postfix's submission port");
  }

  private async stopMaster(): Promise<void> {
    const master = this.masterPid();
    if (master === null || !procStat(master)) return;
    Bun.spawnSync([tool("postfix"), "-c", this.configDir, "stop"], {
      stdout: "ignore",
      stderr: "ignore",
      env: { ...process.env, PATH: SBIN_PATH },
    });
    // `postfix stop` returns before the master is gone; wait for it (a zombie counts as gone).
    for (let i = 0; i < 100; i++) {
      const f = procStat(master);
      if (!f || f[0] === "Z") break;
      await Bun.sleep(100);
    }
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    try {
      await this.stopMaster();
    } finally {
      this.restoreMainCf();
      for (const s of this.signers) await s.stop();
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
