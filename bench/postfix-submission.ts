// The private Postfix's submission port (bench/postfix.ts), for bench:outbound's SMTP feed
// (bench/smtp-feed.ts): a second smtpd service that, like Postroom's submission listener,
// takes mail only over TLS (STARTTLS, a self-signed certificate made with openssl) and
// only from a client that has authenticated (AUTH PLAIN or LOGIN, Cyrus SASL against a
// sasldb the benchmark writes with saslpasswd2, Debian's sasl2-bin). The first smtpd port
// (open to mynetworks, no AUTH) stays as it was for smtp-source (--feed http) and the DKIM
// start-up check.
//
// Debian's Postfix has Cyrus read smtpd.conf from $config_directory/sasl (strace shows
// it: DIR/etc/sasl/smtpd.conf, then /usr/lib/sasl; cyrus_sasl_config_path is set to the
// same for other builds), so nothing under /etc is touched; smtpd runs unchrooted here
// (master.cf's chroot column is n), so the sasldb path is the real one. The database is
// owned by postfix, which smtpd runs as.
import { chownSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeSelfSignedCert } from "../test/helpers/certs.ts";

/** The credentials the feed authenticates with on Postfix's submission port. */
export const POSTFIX_SASL = { user: "bench", realm: "relay.postfix.bench.test", password: "bench-sasl-password" };

export interface PostfixSubmission {
  /** main.cf lines: the certificate, SASL, where Cyrus finds its config. */
  mainCf: string;
  /** The master.cf line of the service on `port`: TLS required, AUTH required to send anything. */
  service: string;
  /** The username the feed gives AUTH PLAIN (user@realm, as sasldb stores it). */
  user: string;
  password: string;
}

/** Writes DIR/etc/sasl (smtpd.conf, sasldb2) and DIR/tls (certificate and key); what main.cf and master.cf need for submission on `port`. */
export function postfixSubmission(dir: string, port: number, postfixUid: number, postfixGid: number): PostfixSubmission {
  const sasl = join(dir, "etc", "sasl");
  const tls = join(dir, "tls");
  mkdirSync(sasl, { mode: 0o755 });
  mkdirSync(tls, { mode: 0o755 });
  const { certFile, keyFile } = makeSelfSignedCert(tls, POSTFIX_SASL.realm);
  const db = join(sasl, "sasldb2");
  writeFileSync(join(sasl, "smtpd.conf"), `pwcheck_method: auxprop\nauxprop_plugin: sasldb\nmech_list: PLAIN LOGIN\nsasldb_path: ${db}\n`);
  const saslpasswd2 = Bun.which("saslpasswd2", { PATH: `${process.env.PATH ?? ""}:/usr/sbin:/sbin` });
  if (!saslpasswd2) throw new Error("saslpasswd2 not found: install Debian's sasl2-bin (apt-get install -y sasl2-bin)");
  const r = Bun.spawnSync([saslpasswd2, "-f", db, "-c", "-p", "-u", POSTFIX_SASL.realm, POSTFIX_SASL.user], {
    stdin: Buffer.from(POSTFIX_SASL.password),
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`saslpasswd2 failed (exit ${r.exitCode}): ${r.stderr.toString()}`);
  chownSync(db, postfixUid, postfixGid);
  const mainCf = `smtpd_tls_cert_file = ${certFile}
smtpd_tls_key_file = ${keyFile}
smtpd_sasl_type = cyrus
smtpd_sasl_path = smtpd
cyrus_sasl_config_path = ${sasl}
smtpd_sasl_local_domain = ${POSTFIX_SASL.realm}
`;
  // As Debian's master.cf submission example: TLS required, AUTH only over TLS, and only an
  // authenticated client may send (to any domain).
  const service = [
    `127.0.0.1:${port} inet n - n - - smtpd`,
    "-o smtpd_tls_security_level=encrypt",
    "-o smtpd_tls_auth_only=yes",
    "-o smtpd_sasl_auth_enable=yes",
    "-o smtpd_client_restrictions=permit_sasl_authenticated,reject",
    "-o smtpd_relay_restrictions=permit_sasl_authenticated,reject",
  ].join("\n  ");
  return { mainCf, service, user: POSTFIX_SASL.user, password: POSTFIX_SASL.password };
}
