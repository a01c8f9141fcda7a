// The SMTP page's TLS line, pure (no DOM) so that it is table-tested under Bun: it says what
// is true for the running config, in words a user reads (no markdown).

/** What is true of TLS and AUTH for the running config (tls.mode, smtp.allow_insecure_auth). */
export function tlsText(starttls: boolean, allowInsecureAuth: boolean): string {
  if (starttls) return "offered: STARTTLS on the submission port (and TLS from the first byte on the TLS port, when it is on)";
  if (allowInsecureAuth)
    return "none yet: the server has no certificate. AUTH is taken without TLS because smtp.allow_insecure_auth is on, so passwords cross the network unencrypted: keep it for a private network or a first try";
  return "none yet: the server has no certificate, so AUTH is refused; set tls.mode for a certificate, or (on a private network only) smtp.allow_insecure_auth = true";
}
