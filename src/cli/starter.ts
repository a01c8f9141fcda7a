// The starter config `postroom init` writes: one account with fresh IDs and secrets.
// Only the hashes go into the file; the caller shows the secrets once.
import { hashSecret, mintSecret } from "../auth/secrets.ts";
import { newId16 } from "../lib/ids.ts";

export interface StarterConfig {
  text: string;
  accountId: string;
  apiToken: string;
  outboundId: string;
  smtpPassword: string;
}

export function starterConfig(hostname: string): StarterConfig {
  const accountId = newId16();
  const apiToken = mintSecret();
  const outboundId = newId16();
  const smtpPassword = mintSecret();
  const text = `# Postroom config written by \`postroom init\`. Every key, its default and its meaning:
# see config.example.toml. Check this file with \`postroom check-config --config <file>\`.

hostname = "${hostname}"
data_dir = "./data"

[http]
listen = "127.0.0.1:8080"
public_url = "http://localhost:8080"

[smtp]
inbound_listen = "0.0.0.0:2525"
# Submission clients must AUTH, and AUTH needs TLS: until [tls] gives a certificate
# (see config.example.toml), AUTH here is refused with 538.
submission_listen = "0.0.0.0:5870"

[inbound]
domain = "in.${hostname}"

[outbound]
bounce_host = "bounces.${hostname}"
# This host's public addresses, e.g. ["203.0.113.7", "2001:db8::7"]. Until they are set,
# no SPF record is offered and no sending domain can be verified.
sending_ips = []

[[accounts]]
id = "${accountId}"
name = "First account"
api_tokens = ["${hashSecret(apiToken)}"]
# Management API calls allowed per window. The hosted service's default is "5/min" (what
# Postroom uses when this key is left out); set what this account's integrations need.
rate_limit = "60/min"

  [[accounts.outbound]]
  id = "${outboundId}"
  api_keys = ["${hashSecret(smtpPassword)}"]
`;
  return { text, accountId, apiToken, outboundId, smtpPassword };
}

/**
 * What `postroom init` prints after writing `path`: each key the operator must change
 * before the server takes real mail, and why. The file is production-safe as written (SMTP
 * on every interface, no private targets) but cannot know the host's name, addresses and
 * certificate; an empty sending_ips in particular only shows when a domain never verifies.
 */
export function starterNextSteps(path: string, hostname: string): string {
  const rows: [string, string][] = [
    ["hostname", `this server's name in DNS (now "${hostname}"): SMTP banner, EHLO, the MX target`],
    ["inbound.domain", `the domain of your addresses (now "in.${hostname}"); its MX must point at hostname`],
    ["outbound.bounce_host", `where bounces come back (now "bounces.${hostname}"); its MX and SPF record point here`],
    ["outbound.sending_ips", "is empty: no SPF record is offered, so no sending domain can ever verify; set this host's public addresses"],
    ["smtp.inbound_listen", 'now port 2525; other mail servers deliver to 25 ("0.0.0.0:25"), and submission_listen to 587'],
    ["tls.mode", '"off": no STARTTLS, and submission refuses AUTH; "acme" or "files" with a certificate for hostname'],
    ["data_dir", '"./data", relative to where serve runs; "/var/lib/postroom" under the systemd unit'],
    ["http.public_url", "the URL the world reaches the API at (links in payloads and mail use it)"],
  ];
  return [
    `wrote ${path} (mode 0640). Before this server takes real mail, change:`,
    ...rows.map(([key, why]) => `  ${key.padEnd(22)}${why}`),
    'Publish the DNS records and get a certificate: docs/operations.md, "DNS for a production host" and "TLS".',
    `Then: postroom check-config --config ${path}   and   postroom serve --config ${path}`,
    "",
  ].join("\n");
}
