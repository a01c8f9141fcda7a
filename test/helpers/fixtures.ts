// Accounts and secrets shared by the tests. Secrets are fixed so a failing test's
// output can be replayed by hand with curl.
import { hashSecret } from "../../src/auth/secrets.ts";

export const ACCOUNT_A = {
  id: "a000000000000001",
  token: "pr_token_account_a",
  outboundId: "a0000000000000f1",
  smtpKey: "pr_key_outbound_a",
};
export const ACCOUNT_B = {
  id: "b000000000000002",
  token: "pr_token_account_b",
  outboundId: "b0000000000000f2",
  smtpKey: "pr_key_outbound_b",
};

export interface AccountToml {
  id: string;
  token: string;
  outboundId: string;
  smtpKey: string;
  /** A limit such as "5/min"; "default" leaves the key out; unset means "off". */
  rateLimit?: string;
  /** The outbound account's send_rate_limit; unset means "off". */
  sendRateLimit?: string;
  extra?: string;
  /** Extra lines inside the account's [[accounts.outbound]] table (e.g. ip_pool). */
  outboundExtra?: string;
}

export function accountToml(a: AccountToml): string {
  return `
[[accounts]]
id = "${a.id}"
name = "test ${a.id}"
api_tokens = ["${hashSecret(a.token)}"]
${a.rateLimit === "default" ? "" : `rate_limit = "${a.rateLimit ?? "off"}"`}
${a.extra ?? ""}
  [[accounts.outbound]]
  id = "${a.outboundId}"
  api_keys = ["${hashSecret(a.smtpKey)}"]
  send_rate_limit = "${a.sendRateLimit ?? "off"}"
${a.outboundExtra ?? ""}
`;
}

export interface TestConfigOptions {
  dataDir: string;
  dnsServer?: string;
  accounts?: AccountToml[];
  /** Top-level keys. */
  extra?: string;
  /** Start the inbound SMTP listener on an ephemeral loopback port (targets on loopback allowed). */
  inbound?: boolean;
  /** Start SMTP submission (STARTTLS port) on an ephemeral port, AUTH allowed without TLS. */
  submission?: boolean;
  /** Overrides smtp.allow_insecure_auth (true whenever `submission` is set). */
  allowInsecureAuth?: boolean;
  /** Overrides inbound.allow_private_targets (true whenever `inbound` is set). */
  allowPrivateTargets?: boolean;
  /** Extra lines inside [http], [smtp], [inbound], [outbound], [tls]. */
  http?: string;
  smtp?: string;
  inboundKeys?: string;
  outbound?: string;
  tls?: string;
}

/** A config for a test appliance: loopback, ephemeral ports, the given data dir. */
export function testConfigToml(opts: TestConfigOptions): string {
  return `
hostname = "mx.postroom.test"
data_dir = "${opts.dataDir}"
${opts.extra ?? ""}
[log]
level = "warn"
[http]
listen = "127.0.0.1:0"
public_url = "http://127.0.0.1:8080"
${opts.http ?? ""}
[smtp]
inbound_listen = "${opts.inbound ? "127.0.0.1:0" : ""}"
submission_listen = "${opts.submission ? "127.0.0.1:0" : ""}"
allow_insecure_auth = ${opts.allowInsecureAuth ?? opts.submission ?? false}
${opts.smtp ?? ""}
[inbound]
domain = "in.postroom.test"
allow_private_targets = ${opts.allowPrivateTargets ?? opts.inbound ?? false}
${opts.inboundKeys ?? ""}
[outbound]
bounce_host = "bounces.postroom.test"
${opts.outbound ?? ""}
[dns]
servers = [${opts.dnsServer ? `"${opts.dnsServer}"` : ""}]
[tls]
${opts.tls ?? ""}
${(opts.accounts ?? [ACCOUNT_A, ACCOUNT_B]).map(accountToml).join("\n")}
`;
}
