// The private Postfix's configuration (bench/postfix.ts, whose header says what the
// instance is and why): its main.cf and master.cf, its resolv.conf for MX lookups, and the
// line in the system's /etc/postfix/main.cf that lets `postfix -c DIR/etc` run (put back
// exactly as it was when the instance stops). Also the two helpers both files run Debian's
// postfix tools with.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const SYSTEM_MAIN_CF = "/etc/postfix/main.cf";
export const SBIN_PATH = `${process.env.PATH ?? ""}:/usr/sbin:/usr/bin:/sbin`;

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

export function tool(name: string): string {
  const bin = Bun.which(name, { PATH: SBIN_PATH });
  if (!bin)
    throw new Error(
      `${name} not found: install Debian's postfix package (DEBIAN_FRONTEND=noninteractive apt-get install -y postfix, "No configuration")`,
    );
  return bin;
}

export function run(cmd: string[], what: string): string {
  const r = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe", env: { ...process.env, PATH: SBIN_PATH } });
  const out = r.stdout.toString() + r.stderr.toString();
  if (r.exitCode !== 0) throw new Error(`${what} failed (${cmd.join(" ")}, exit ${r.exitCode}):\n${out}`);
  return out;
}

/** The instance's directories (under DIR, made by PrivatePostfix.start) and what its config names. */
export interface InstanceLayout {
  etc: string;
  spool: string;
  lib: string;
  log: string;
  sinkPort: number;
  /** Its open smtpd port on 127.0.0.1. */
  port: number;
  /** The submission service's main.cf lines and master.cf line, if it has one. */
  submission: { mainCf: string; service: string } | null;
  /** Its opendkim milters' addresses, in the order smtpd calls them. */
  milters: string[];
}

/**
 * Writes DIR/etc/main.cf and DIR/etc/master.cf (and, with `mx`, the chrooted smtp
 * client's SPOOL/etc/resolv.conf).
 */
export function writeInstanceConfig(layout: InstanceLayout, opts: PostfixOptions): void {
  const { etc, spool, lib, log, sinkPort, port, submission, milters } = layout;
  const route = opts.checkRoute
    ? `transport_maps = inline:{ { ${opts.checkRoute.domain} = smtp:[127.0.0.1]:${opts.checkRoute.port} } }\n`
    : "";
  const nextHop = opts.mx ? `relayhost =\nsmtp_tcp_port = ${opts.mx.port}\n` : `relayhost = [127.0.0.1]:${sinkPort}\n`;
  if (opts.mx) {
    mkdirSync(join(spool, "etc"), { mode: 0o755 });
    writeFileSync(join(spool, "etc", "resolv.conf"), `nameserver ${opts.mx.nameserver}\noptions timeout:2 attempts:2\n`);
  }
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
  milters.length > 0
    ? `smtpd_milters = ${milters.join(", ")}
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
}

/**
 * Lists `configDir` in alternate_config_directories of the default main.cf, and returns
 * the function that puts the file back exactly as it was (or removes it if it was absent).
 */
export function allowConfigDirectory(configDir: string): () => void {
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
