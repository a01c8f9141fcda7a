// SMTP credentials: what a program needs to send through submission. The username is the
// outbound account ID; the password is one of its API keys, which the dashboard cannot
// show (only their hashes are in the config).
import type { Session } from "../api.ts";
import { CopyButton, Host } from "../parts.tsx";
import { tlsText } from "../smtp-text.ts";

export function Smtp({ session }: { session: Session }) {
  const { host, submission_port, submission_tls_port, starttls, allow_insecure_auth } = session.smtp;
  const user = session.outbound_account_ids[0] ?? "<outbound account ID>";
  const port = submission_tls_port ?? submission_port ?? 587;
  const secure = submission_tls_port !== null;
  const nodemailer = `const transport = nodemailer.createTransport({
  host: "${host}",
  port: ${port},
  secure: ${secure}, // ${secure ? "TLS from the first byte" : starttls ? "STARTTLS after EHLO" : "no TLS: this server has no certificate yet"}
  auth: { user: "${user}", pass: process.env.POSTROOM_API_KEY },
});`;
  const swaks = `swaks --server ${host}:${port} ${secure ? "--tlsc" : starttls ? "--tls" : ""} \\
  --auth PLAIN --auth-user ${user} --auth-password "$POSTROOM_API_KEY" \\
  --from you@your-verified-domain --to someone@example.org`;
  return (
    <section aria-labelledby="h-smtp">
      <h1 id="h-smtp">SMTP credentials</h1>
      <dl class="facts">
        <dt>Host</dt>
        <dd>
          <Host name={host} />
        </dd>
        <dt>Submission port (STARTTLS)</dt>
        <dd>{submission_port ?? "off"}</dd>
        <dt>Submission port (TLS)</dt>
        <dd>{submission_tls_port ?? "off"}</dd>
        <dt>TLS</dt>
        <dd>{tlsText(starttls, allow_insecure_auth)}</dd>
        <dt>Username</dt>
        <dd>
          {session.outbound_account_ids.length === 0
            ? "this account has no outbound account"
            : session.outbound_account_ids.map((id) => <code key={id}>{id} </code>)}
        </dd>
        <dt>Password</dt>
        <dd>
          one of the outbound account's API keys (api_keys in the config). Keys are stored as hashes: the dashboard cannot show them; mint a
          new one with <code>postroom secret</code>.
        </dd>
      </dl>
      <h2>nodemailer</h2>
      <pre>{nodemailer}</pre>
      <CopyButton text={nodemailer} label="Copy the nodemailer snippet" />
      <h2>swaks</h2>
      <pre>{swaks}</pre>
      <CopyButton text={swaks} label="Copy the swaks command" />
    </section>
  );
}
