// What `postroom secret` prints: the secret once, and its hash as the config line for each
// key a secret can go under, so the operator pastes a line rather than composing one.

/** The keys that hold secret hashes, and the table each belongs to. */
const USES: { use: string; table: string; line: (hash: string) => string }[] = [
  { use: "an account's API token", table: "[[accounts]]", line: (h) => `api_tokens = ["${h}"]` },
  { use: "an SMTP password / E11 key of an outbound account", table: "[[accounts.outbound]]", line: (h) => `api_keys = ["${h}"]` },
  { use: "an operator token of the dashboard's admin view", table: "[dashboard]", line: (h) => `admin_tokens = ["${h}"]` },
  { use: "the token that reads /metrics", table: "[http]", line: (h) => `metrics_token = "${h}"` },
];

export function secretText(secret: string, hash: string): string {
  return [
    `secret (shown once; give it to the client): ${secret}`,
    "",
    "Postroom keeps only its hash. Paste the line for its use into the config, under its table:",
    ...USES.flatMap((u) => [`  ${u.use}, under ${u.table}:`, `    ${u.line(hash)}`]),
    `To a key that already lists hashes, add "${hash}" to the list`,
    "(keep the old one until every client has the new secret), then reload Postroom (SIGHUP: systemctl reload postroom).",
    "",
  ].join("\n");
}
