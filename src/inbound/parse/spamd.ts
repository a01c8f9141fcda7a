// (beyond) A SpamAssassin score for received mail: the message is sent to the operator's
// spamd (inbound.spamd.address) over its own protocol (SPAMC/1.5, command SYMBOLS) and the
// answer goes into the payload as envelope.spamd, as the hosted service fills it. spamd is
// advisory: when it is slow, down or refuses, the mail goes on at once with success false,
// never waiting past inbound.spamd.timeout.
import { connect } from "node:net";

export interface SpamdResult {
  /** The score as a decimal string ("2.5"), as the hosted service sends it; "0.0" without an answer. */
  score: string;
  symbols: string[];
  success: boolean;
  description: string;
}

export interface SpamdOptions {
  host: string;
  port: number;
  timeoutMs: number;
  /** Larger messages are not scanned (spamd's own limit is 500 KB by default). */
  maxBytes: number;
}

export const SPAMD_DESCRIPTION = "SpamAssassin score";

const failed = (why: string): SpamdResult => ({ score: "0.0", symbols: [], success: false, description: `SpamAssassin: ${why}` });

/** The request for `message`: spamd reads exactly Content-length bytes after the blank line. */
export function spamdRequest(message: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`SYMBOLS SPAMC/1.5\r\nContent-length: ${message.byteLength}\r\n\r\n`), message]);
}

/**
 * spamd's answer to SYMBOLS: a status line (`SPAMD/1.1 0 EX_OK`), headers among which
 * `Spam: True ; 1000.0 / 5.0`, a blank line and the names of the rules that hit, separated
 * by commas.
 */
export function parseSpamdReply(text: string): SpamdResult {
  const end = text.indexOf("\r\n\r\n");
  const head = end < 0 ? text : text.slice(0, end);
  const body = end < 0 ? "" : text.slice(end + 4);
  const [status, ...headers] = head.split("\r\n");
  const code = /^SPAMD\/\d+\.\d+\s+(\d+)\s+(.*)$/.exec(status ?? "");
  if (!code) return failed("no answer spamd would give");
  if (code[1] !== "0") return failed(`spamd answered ${code[1]} ${code[2]!.trim()}`);
  const spam = headers
    .map((h) => /^Spam:\s*(True|False|Yes|No)\s*;\s*(-?\d+(?:\.\d+)?)\s*\/\s*(-?\d+(?:\.\d+)?)\s*$/i.exec(h))
    .find((m) => m !== null);
  if (!spam) return failed("spamd's answer has no score");
  const symbols = body
    .split(",")
    .map((s) => s.trim())
    .filter((s) => /^[A-Za-z0-9_]+$/.test(s));
  return { score: spam[2]!, symbols, success: true, description: SPAMD_DESCRIPTION };
}

/** Asks spamd to score `message`; resolves within opts.timeoutMs whatever spamd does. */
export function checkSpam(message: Uint8Array, opts: SpamdOptions): Promise<SpamdResult> {
  if (message.byteLength > opts.maxBytes) return Promise.resolve(failed(`not scanned, larger than ${opts.maxBytes} bytes`));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const settle = (r: SpamdResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(r);
    };
    const socket = connect({ host: opts.host, port: opts.port });
    const timer = setTimeout(() => settle(failed(`no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    socket.on("connect", () => socket.end(spamdRequest(message)));
    socket.on("data", (chunk: Buffer) => {
      received += chunk.byteLength;
      // An answer is a few hundred bytes: more is not spamd.
      if (received > 64 * 1024) return settle(failed("answer too long"));
      chunks.push(chunk);
    });
    socket.on("end", () => settle(parseSpamdReply(Buffer.concat(chunks).toString("latin1"))));
    socket.on("error", (err) => settle(failed((err as NodeJS.ErrnoException).code ?? err.message)));
  });
}

/** The scorer for inbound.spamd as configured, or null when it is off. */
export function spamdFor(
  config: { at: { host: string; port: number }; timeoutMs: number; maxBytes: number } | null,
): ((raw: Uint8Array) => Promise<SpamdResult>) | null {
  if (!config) return null;
  const opts: SpamdOptions = { host: config.at.host, port: config.at.port, timeoutMs: config.timeoutMs, maxBytes: config.maxBytes };
  return (raw) => checkSpam(raw, opts);
}
