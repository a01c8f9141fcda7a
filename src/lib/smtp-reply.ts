// The one reply type of the SMTP boundary: decisions return an
// SmtpReply; the listener glue turns it into what smtp-server sends.
import { SMTPConnection } from "smtp-server/lib/smtp-connection.js";

export interface SmtpReply {
  code: number;
  /** RFC 3463 enhanced status code, e.g. "5.1.1". */
  enhanced: string;
  text: string;
}

export const reply = (code: number, enhanced: string, text: string): SmtpReply => ({ code, enhanced, text });

export const formatReply = (r: SmtpReply): string => `${r.code} ${r.enhanced} ${r.text}`;

/** An Error smtp-server answers with: the code, our enhanced code and the text. */
export function smtpError(r: SmtpReply): Error & { responseCode: number } {
  const err = new Error(`${r.enhanced} ${r.text}`) as Error & { responseCode: number };
  err.responseCode = r.code;
  return err;
}

/** The message smtp-server sends with a 250 at the end of DATA. */
export const smtpSuccessText = (r: SmtpReply): string => `${r.enhanced} ${r.text}`;

// smtp-server picks the enhanced status code from the reply code alone (550 is always
// 5.1.1, a DATA 250 always 2.6.0), but our wire contract fixes other pairs (docs/receiving.md): "550 5.7.1 relay not
// permitted", "554 5.1.1", "250 2.0.0 Accepted". Our replies carry their enhanced code at
// the start of the text; this wrapper moves it into place. Other replies are untouched.
const ENHANCED_PREFIX = /^([245]\.\d{1,3}\.\d{1,3}) ([\s\S]*)$/;
const proto = SMTPConnection.prototype as unknown as {
  send(code: number, data: unknown, context?: unknown): unknown;
  _getEnhancedStatusCode(code: number, context?: unknown): string;
  __postroomEnhanced?: boolean;
};
if (!proto.__postroomEnhanced) {
  const send = proto.send;
  const pick = proto._getEnhancedStatusCode;
  proto.send = function (this: typeof proto & { _forcedEnhanced?: string }, code, data, context) {
    const m = typeof data === "string" ? ENHANCED_PREFIX.exec(data) : null;
    if (!m) return send.call(this, code, data, context);
    // Where no enhanced code belongs (greetings, EHLO, or ENHANCEDSTATUSCODES hidden), drop ours.
    if (this._getEnhancedStatusCode(code, context) === "") return send.call(this, code, m[2], context);
    this._forcedEnhanced = m[1];
    try {
      return send.call(this, code, m[2], context);
    } finally {
      this._forcedEnhanced = undefined;
    }
  };
  proto._getEnhancedStatusCode = function (this: typeof proto & { _forcedEnhanced?: string }, code, context) {
    return this._forcedEnhanced ?? pick.call(this, code, context);
  };
  proto.__postroomEnhanced = true;
}
