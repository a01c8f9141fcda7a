// SMTP clients for tests: nodemailer (what most apps use) and swaks (a real CLI client).
import nodemailer from "nodemailer";
import type Mail from "nodemailer/lib/mailer";

export interface SmtpResult {
  ok: boolean;
  /** The server's final reply line, e.g. "250 2.0.0 Accepted". */
  response: string;
  code: number;
}

/** Sends with nodemailer over one fresh connection; a refusal is a result, not a throw. */
/** `auth`: log in first (submission; the test config allows AUTH without TLS). */
export async function sendWithNodemailer(
  port: number,
  mail: Mail.Options,
  opts: { envelope?: { from: string; to: string[] }; auth?: { user: string; pass: string } } = {},
): Promise<SmtpResult> {
  const transport = nodemailer.createTransport({
    host: "127.0.0.1",
    port,
    secure: false,
    ignoreTLS: true,
    name: "client.example.org",
    connectionTimeout: 60_000,
    greetingTimeout: 10_000,
    socketTimeout: 120_000,
    auth: opts.auth,
  });
  try {
    const info = await transport.sendMail({ ...mail, envelope: opts.envelope ?? mail.envelope });
    return { ok: true, response: info.response, code: Number(info.response.slice(0, 3)) };
  } catch (err) {
    const e = err as { response?: string; responseCode?: number; message: string };
    return { ok: false, response: e.response ?? e.message, code: e.responseCode ?? 0 };
  } finally {
    transport.close();
  }
}

/** Whether swaks is installed; CI installs it, and there a missing swaks is a failure. */
export function swaksAvailable(): boolean {
  const found = Bun.which("swaks") !== null;
  if (!found && process.env.CI === "true") throw new Error("swaks is required in CI (.ci/run installs it)");
  return found;
}

/** Runs swaks (without blocking: the server under test may run in this process). */
export async function runSwaks(args: string[]): Promise<{ code: number; transcript: string }> {
  const proc = Bun.spawn(["swaks", ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code: await proc.exited, transcript: out + err };
}
