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
rate_limit = "5/min"

  [[accounts.outbound]]
  id = "${outboundId}"
  api_keys = ["${hashSecret(smtpPassword)}"]
`;
  return { text, accountId, apiToken, outboundId, smtpPassword };
}
