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
// connection caching are the defaults.
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { procStat, processCpuMs } from "./child.ts";
import { processTree } from "./cgroup.ts";
import { type DkimAlgorithm, PrivateOpendkim } from "./opendkim.ts";
import { type PostfixSubmission, postfixSubmission } from "./postfix-submission.ts";
import { freePort, waitForGreeting } from "./smtp-sink.ts";

const SYSTEM_MAIN_CF = "/etc/postfix/main.cf";
const SBIN_PATH = `${process.env.PATH ?? ""}:/usr/sbin:/usr/bin:/sbin`;
/** The opendkim instances, by selector: the same two signatures Postroom adds (src/domains/dkim.ts). */
const SIGNERS: [selector: string, algorithm: DkimAlgorithm][] = [
  ["pfrsa", "rsa-sha256"],
  ["pfed", "ed25519-sha256"],
];

export interface PostfixOptions {
  /** The From domain its opendkim milters sign for; null: no milters, Postfix relays unsigned. */
  signingDomain: string | null;
  /** Mail for this domain goes to 127.0.0.1:port instead of the relayhost. */
  checkRoute?: { domain: string; port: number };
  /**
   * Deliver by MX lookup instead of through the relayhost: Postfix's smtp client asks the
   * DNS server at `nameserver` (port 53: the resolver library reads only an address from
   * resolv.conf) for each domain's MX and connects to the MX hosts on `port`
   * (smtp_tcp_port, as Postroom's mx_port). The smtp service then runs chrooted into the
   * queue directory, as Debian ships it, so that its resolv.conf is the instance's own
   * (SPOOL/etc/resolv.conf) and not the machine's.
   */
  mx?: { nameserver: string; port: number };
  /** A second smtpd port that requires STARTTLS and AUTH (bench/postfix-submission.ts), for the SMTP feed. */
  submission?: boolean;
}

function tool(name: string): string {
  const bin = Bun.which(name, { PATH: SBIN_PATH });
  if (!bin)
    throw new Error(
      `${name} not found: install Debian's postfix package (DEBIAN_FRONTEND=noninteractive apt-get install -y postfix, "No configuration")`,
    );
  return bin;
}

function run(cmd: string[], what: string): string {
  const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe", env: { ...process.env, PATH: SBIN_PATH } });
  const out = r.stdout.toString() + r.stderr.toString();
  if (r.exitCode !== 0) throw new Error(`${what} failed (${cmd.join(" ")}, exit ${r.exitCode}):\n${out}`);
  return out;
}

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
    const route = opts.checkRoute
      ? `transport_maps = inline:{ { ${opts.checkRoute.domain} = smtp:[127.0.0.1]:${opts.checkRoute.port} } }\n`
      : "";
    const nextHop = opts.mx ? `relayhost =\nsmtp_tcp_port = ${opts.mx.port}\n` : `relayhost = [127.0.0.1]:${sinkPort}\n`;
    if (opts.mx) {
      mkdirSync(join(spool, "etc"), { mode: 0o755 });
      writeFileSync(join(spool, "etc", "resolv.conf"), `nameserver ${opts.mx.nameserver}\noptions timeout:2 attempts:2\n`);
    }

    const port = await freePort();
    const submissionPort = opts.submission ? await freePort() : 0;
    const submission = opts.submission
      ? { ...postfixSubmission(dir, submissionPort, Number(pf), Number(pfGroup)), port: submissionPort }
      : null;
    writeFileSync(
      join(etc, "main.cf"),
      `# Private Postfix for bench:outbound (bench/postfix.ts); removed after the run.
compatibility_level = 3.6
config_directory = ${etc}
queue_directory = ${spool}
data_directory = ${lib}
mail_owner = postfix
setgid_group = postdrop
myhostname = relay.postfix.bench.test
mydomain = postfix.bench.test
myorigin = $myhostname
mydestination =
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtpd_relay_restrictions = permit_mynetworks, reject
${nextHop}local_transport = error:local delivery is off
alias_maps =
alias_database =
smtpd_tls_security_level = none
smtp_tls_security_level = none
maillog_file_prefixes = ${log}
maillog_file = ${join(log, "maillog")}
${submission?.mainCf ?? ""}${
  signers.length > 0
    ? `smtpd_milters = ${signers.map((s) => s.milter).join(", ")}
non_smtpd_milters = $smtpd_milters
milter_default_action = tempfail
`
    : ""
}${route}`,
    );
    // Debian's master.cf.proto services with chroot off (but smtp's when it looks up MX), smtpd on our own loopback port,
    // and the postlog service that writes maillog_file.
    const services = [
      `127.0.0.1:${port} inet n - n - - smtpd`,
      ...(submission ? [submission.service] : []),
      "pickup    unix  n - n 60    1 pickup",
      "cleanup   unix  n - n -     0 cleanup",
      "qmgr      unix  n - n 300   1 qmgr",
      "tlsmgr    unix  - - n 1000? 1 tlsmgr",
      "rewrite   unix  - - n -     - trivial-rewrite",
      "bounce    unix  - - n -     0 bounce",
      "defer     unix  - - n -     0 bounce",
      "trace     unix  - - n -     0 bounce",
      "verify    unix  - - n -     1 verify",
      "flush     unix  n - n 1000? 0 flush",
      "proxymap  unix  - - n -     - proxymap",
      "proxywrite unix - - n -     1 proxymap",
      `smtp      unix  - - ${opts.mx ? "y" : "n"} -     - smtp`,
      "relay     unix  - - n -     - smtp",
      "showq     unix  n - n -     - showq",
      "error     unix  - - n -     - error",
      "retry     unix  - - n -     - error",
      "discard   unix  - - n -     - discard",
      "local     unix  - n n -     - local",
      "virtual   unix  - n n -     - virtual",
      "lmtp      unix  - - n -     - lmtp",
      "anvil     unix  - - n -     1 anvil",
      "scache    unix  - - n -     1 scache",
      "postlog   unix-dgram n - n - 1 postlogd",
    ];
    writeFileSync(join(etc, "master.cf"), services.join("\n") + "\n");

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

/**
 * Lists `configDir` in alternate_config_directories of the default main.cf, and returns
 * the function that puts the file back exactly as it was (or removes it if it was absent).
 */
function allowConfigDirectory(configDir: string): () => void {
  const existed = existsSync(SYSTEM_MAIN_CF);
  const original = existed ? readFileSync(SYSTEM_MAIN_CF) : null;
  let current = "";
  if (existed) {
    const r = Bun.spawnSync([tool("postconf"), "-h", "alternate_config_directories"], {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, PATH: SBIN_PATH },
    });
    if (r.exitCode === 0) current = r.stdout.toString().trim();
  }
  const value = current ? `${current}, ${configDir}` : configDir;
  const prefix = original && original.length > 0 && !original.toString("latin1").endsWith("\n") ? "\n" : "";
  const addition = `${prefix}# Added by Postroom's bench:outbound for its private Postfix; removed when the benchmark ends.\nalternate_config_directories = ${value}\n`;
  mkdirSync("/etc/postfix", { recursive: true });
  writeFileSync(SYSTEM_MAIN_CF, original ? Buffer.concat([original, Buffer.from(addition)]) : addition);
  let restored = false;
  return () => {
    if (restored) return;
    restored = true;
    if (original) writeFileSync(SYSTEM_MAIN_CF, original);
    else rmSync(SYSTEM_MAIN_CF, { force: true });
  };
}
