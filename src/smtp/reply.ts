// The one reply type of the SMTP boundary: decisions return an SmtpReply (the named ones
// are in replies.ts); the listener glue turns it into what smtp-server sends.
//
// smtp-server picks the enhanced status code from the reply code alone (550 is always
// 5.1.1, a DATA 250 always 2.6.0), but our wire contract fixes other pairs
// (docs/receiving.md): "550 5.7.1 relay not permitted", "554 5.1.1", "250 2.0.0 Accepted".
// So the text we hand smtp-server starts with our enhanced code, and the option
// enhancedStatusCodeFromText, which patches/smtp-server@3.21.6.patch adds to smtp-server
// (an option upstream could take), sends it in the enhanced code's place. Both listeners
// set it (SMTP_SERVER_REPLY_OPTIONS); other smtp-servers in the process are untouched.

export interface SmtpReply {
  code: number;
  /** RFC 3463 enhanced status code, e.g. "5.1.1". */
  enhanced: string;
  text: string;
}

export const reply = (code: number, enhanced: string, text: string): SmtpReply => ({ code, enhanced, text });

/** The reply as the client reads it: "550 5.7.1 relay not permitted". */
export const formatReply = (r: SmtpReply): string => `${r.code} ${r.enhanced} ${r.text}`;

/** The smtp-server options our replies need: enhanced codes shown, and taken from the text. */
export const SMTP_SERVER_REPLY_OPTIONS = { hideENHANCEDSTATUSCODES: false, enhancedStatusCodeFromText: true } as const;

/** The text smtp-server gets for a reply (its code goes separately): "5.7.1 relay not permitted". */
export const smtpServerText = (r: SmtpReply): string => `${r.enhanced} ${r.text}`;

/** An Error smtp-server answers with: the code, our enhanced code and the text. */
export function smtpError(r: SmtpReply): Error & { responseCode: number } {
  const err = new Error(smtpServerText(r)) as Error & { responseCode: number };
  err.responseCode = r.code;
  return err;
}
