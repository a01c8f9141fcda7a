// bench:outbound's start-up check that the Postfix peer really DKIM-signs: one copy of
// the benchmark's message goes through the private Postfix (smtp-source, as in the timed
// runs, through the same smtpd and the same opendkim milters) to a recipient domain that
// Postfix routes to a capture sink (test/helpers/sink.ts) instead of the discarding
// smtp-sink; Debian's python3-dkim (dkimpy, the library of `dkimverify`) then verifies
// every DKIM-Signature of the message as relayed against the keys' records. Unless there
// is exactly one valid signature per opendkim instance, with its selector and algorithm
// and d= the sender's domain, the benchmark stops: a comparison in which the peer does
// not sign would flatter it.
import type { SmtpSink } from "../test/helpers/sink.ts";
import { dkimpyAvailable, dkimpyVerify } from "../test/helpers/dkimpy.ts";
import { until } from "./measure.ts";
import type { PrivatePostfix } from "./postfix.ts";

/** The recipient domain Postfix routes to the capture sink (PostfixOptions.checkRoute). */
export const DKIM_CHECK_DOMAIN = "dkim-check.bench.test";

/** The h= tag of each DKIM-Signature header of a raw message, by selector (s=). */
function signedHeaders(raw: string): Map<string, string> {
  const head = raw.slice(0, raw.search(/\r?\n\r?\n/));
  const fields = head.split(/\r?\n(?![ \t])/).filter((f) => /^dkim-signature:/i.test(f));
  const tags = (f: string) =>
    new Map(
      f
        .slice(f.indexOf(":") + 1)
        .replace(/\s+/g, "")
        .split(";")
        .map((t) => [t.slice(0, t.indexOf("=")), t.slice(t.indexOf("=") + 1)] as const),
    );
  return new Map(fields.map((f) => [tags(f).get("s") ?? "?", tags(f).get("h") ?? "?"]));
}

/**
 * Sends `messageFile` from `mailFrom` through `postfix` to the capture sink and verifies
 * its signatures; throws unless every signer signed it validly. Returns what was checked, in words.
 */
export async function checkPostfixSigns(
  postfix: PrivatePostfix,
  capture: SmtpSink,
  messageFile: string,
  mailFrom: string,
): Promise<string> {
  if (!dkimpyAvailable())
    throw new Error("python3-dkim not found: the check that Postfix signs needs it (apt-get install -y python3-dkim)");
  const rcpt = `signed@${DKIM_CHECK_DOMAIN}`;
  const source = Bun.spawnSync(
    [
      "smtp-source",
      "-4",
      "-s",
      "1",
      "-m",
      "1",
      "-F",
      messageFile,
      "-M",
      "client.sender.bench.test",
      "-f",
      mailFrom,
      "-t",
      rcpt,
      `127.0.0.1:${postfix.port}`,
    ],
    {
      stdout: "pipe",
      stderr: "pipe",
      env: { ...process.env, PATH: `${process.env.PATH ?? ""}:/usr/sbin` },
    },
  );
  const out = source.stdout.toString() + source.stderr.toString();
  // A milter that fails makes smtpd answer 4xx at the end of DATA (milter_default_action = tempfail).
  if (source.exitCode !== 0 || out.trim() !== "")
    throw new Error(
      `the DKIM check message was refused by Postfix (a failing opendkim milter answers 4xx): smtp-source exited ${source.exitCode}:\n${out}(log: ${postfix.logFile})`,
    );
  if (!(await until(() => capture.to(rcpt).length > 0, 15_000)))
    throw new Error(`the DKIM check message did not reach the capture sink within 15 s (log: ${postfix.logFile})`);
  const raw = capture.to(rcpt)[0]!.raw;

  const records = Object.fromEntries(postfix.signers.map((s) => [`${s.selector}._domainkey.${s.domain}`, s.record]));
  const results = dkimpyVerify(raw, records);
  const problems: string[] = [];
  for (const signer of postfix.signers) {
    const found = results.filter((r) => r.selector === signer.selector);
    const ok = found.length === 1 && found[0]!.valid && found[0]!.algorithm === signer.algorithm && found[0]!.domain === signer.domain;
    if (!ok)
      problems.push(
        `expected one valid ${signer.algorithm} signature with s=${signer.selector} d=${signer.domain}, found ${JSON.stringify(found)}`,
      );
  }
  if (results.length !== postfix.signers.length)
    problems.push(`expected ${postfix.signers.length} DKIM-Signature headers, found ${results.length}`);
  if (problems.length > 0)
    throw new Error(
      `the message Postfix relayed is not signed as configured (${problems.join("; ")}); its header:\n${raw.slice(0, raw.search(/\r?\n\r?\n/))}`,
    );
  const h = signedHeaders(raw);
  return `${results.length} signatures of the relayed message (${Buffer.byteLength(raw, "latin1")} bytes as the sink got it) valid (dkimpy): ${postfix.signers.map((s) => `s=${s.selector} a=${s.algorithm} h=${h.get(s.selector)}`).join("; ")}`;
}
