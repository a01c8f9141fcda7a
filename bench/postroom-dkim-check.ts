// bench:outbound's start-up check that Postroom signs what it gets on its submission port
// (--feed smtp): one feed message, through the same submission port, STARTTLS and AUTH as
// the timed runs, to a Postroom relaying to a capture sink (test/helpers/sink.ts) instead
// of the discarding smtp-sink; Debian's python3-dkim then verifies every DKIM-Signature
// against the records published in the loopback DNS. Unless there are exactly two valid
// signatures, rsa-sha256 and ed25519-sha256, with d= the sender's domain, the benchmark
// stops: a Postroom that does not sign would be measured doing less than it must.
import type { TestDnsServer } from "../test/helpers/dns-server.ts";
import { dkimpyAvailable, dkimpyVerify } from "../test/helpers/dkimpy.ts";
import type { SmtpSink } from "../test/helpers/sink.ts";
import { until } from "./measure.ts";
import { MAIL_FROM, SENDER_DOMAIN } from "./message.ts";
import { type FeedTarget, feedMessages, feedSmtp } from "./smtp-feed.ts";

/** The two signatures Postroom adds (src/domains/dkim.ts). */
const EXPECTED_ALGORITHMS = ["ed25519-sha256", "rsa-sha256"];

/** Submits one message to `target` for the capture sink (Postroom's relay), verifies its signatures; what was checked, in words. */
export async function checkPostroomSigns(target: FeedTarget, capture: SmtpSink, dns: TestDnsServer): Promise<string> {
  if (!dkimpyAvailable())
    throw new Error("python3-dkim not found: the check that Postroom signs needs it (apt-get install -y python3-dkim)");
  // Not the Postfix check's recipient: both checks may use the same capture sink.
  const rcpt = "postroom-signed@dkim-check.bench.test";
  // A Message-ID no timed run uses (they count from 0).
  const sent = await feedSmtp(target, MAIL_FROM, [feedMessages()(999_999, rcpt)], 1);
  if (sent.failed > 0) throw new Error(`Postroom refused the DKIM check message: ${sent.failures.join("; ")}`);
  if (!(await until(() => capture.to(rcpt).length > 0, 15_000)))
    throw new Error("the DKIM check message did not reach the capture sink within 15 s");
  const raw = capture.to(rcpt)[0]!.raw;
  const records: Record<string, string> = {};
  for (const [name, rrs] of dns.zone)
    for (const rr of rrs) if (name.includes("._domainkey.") && rr.type === "TXT") records[name] = (rr as { data: string[] }).data.join("");
  const results = dkimpyVerify(raw, records);
  const valid = results.filter((r) => r.valid && r.domain === SENDER_DOMAIN).map((r) => r.algorithm);
  if (results.length !== 2 || valid.sort().join() !== EXPECTED_ALGORITHMS.join())
    throw new Error(
      `the message Postroom relayed is not signed as configured (expected valid ${EXPECTED_ALGORITHMS.join(" and ")} signatures by ${SENDER_DOMAIN}, found ${JSON.stringify(results)}); its header:\n${raw.slice(0, raw.search(/\r?\n\r?\n/))}`,
    );
  return `${results.length} signatures of a submitted message as relayed (${Buffer.byteLength(raw, "latin1")} bytes) valid (dkimpy): ${results.map((r) => `s=${r.selector} a=${r.algorithm}`).join("; ")}`;
}
