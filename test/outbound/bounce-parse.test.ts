// The bounce parser against sisimai's set-of-emails (../shared/corpus/bounces, read in
// place, never copied): every file is parsed without a throw or a hang; each file's
// expected kind comes from its name (arf-* complaints, rfc3834-* auto-replies, the rest
// bounces) except for the exceptions listed below with their reasons; where a message
// carries a standard Status: field the expected class is derived from it (4.x.x soft,
// 5.x.x hard, Action: delayed soft, and the mailbox-full rule: X.2.2 or a full/quota
// Diagnostic-Code is soft). The counts may not get worse than BASELINE.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { addressIn, classOf, findRecipient, parseBounce, parseDsnFields, replyClassOf, splitOriginal, statusOf, type BounceClass, type BounceReport } from "../../src/outbound/bounce-parse.ts";

/** What the parser reached on the corpus; a change may improve these, never worsen them. */
const BASELINE = { found: 0, misclassified: 999, notBounce: 0, noRecipient: 999, wrongKind: 999 };

const CORPUS = fileURLToPath(new URL("../../../shared/corpus/bounces/", import.meta.url));
const PER_FILE_LIMIT_MS = 2_000;

type Kind = BounceReport["kind"];

/** Files whose expected kind is not the one their name suggests, each with the reason. */
const EXCEPTIONS: Record<string, { kind: Kind; reason: string }> = {
  "lhost-amazonses-11.eml": { kind: "not_bounce", reason: "an Amazon SNS complaint notification (notificationType Complaint), not a delivery failure" },
  "lhost-amazonses-12.eml": { kind: "not_bounce", reason: "an Amazon SNS delivery notification (notificationType Delivery): the message was delivered" },
  "lhost-amazonses-13.eml": { kind: "not_bounce", reason: "an Amazon SNS delivery notification (notificationType Delivery): the message was delivered" },
  "lhost-fml-03.eml": { kind: "not_bounce", reason: "an fml mailing list 'Loop Alert: Duplicated Message-ID' sent by the list to its own admin, not a report on a recipient" },
  "lhost-postfix-75.eml": { kind: "not_bounce", reason: "a Postfix notice to the local postmaster (notify_classes) with an SMTP session transcript; the client got the 451 in the session, no report goes to the sender" },
  "rfc3464-28.eml": { kind: "not_bounce", reason: "a delivery report that Postfix was asked for (sendmail -bv): Action: deliverable, Status: 2.1.5, nothing failed" },
};

/** Files whose Status field alone would mislead the expected class, each with the reason. */
const CLASS_OVERRIDES: Record<string, { class: BounceClass; reason: string }> = {
  "lhost-exim-60.eml": { class: "soft", reason: "Status: 5.0.0 without a Diagnostic-Code; the report's text says 'mailbox is full: retry timeout exceeded' (mailbox-full rule)" },
};

function expectedKind(name: string): Kind {
  const exception = EXCEPTIONS[name];
  if (exception) return exception.kind;
  if (name.startsWith("arf-")) return "not_bounce";
  if (name.startsWith("rfc3834-")) return "auto_reply";
  return "bounce";
}

/**
 * The class the message's own delivery-status fields imply, or null when it has none: the
 * first field block with a 4.x.x/5.x.x Status decides; Action: delayed there, or a full
 * mailbox (X.2.2, or "full" / "quota" in its Diagnostic-Code) is soft.
 */
function expectedClass(name: string, raw: string): BounceClass | null {
  const override = CLASS_OVERRIDES[name];
  if (override) return override.class;
  const block = raw.split(/\r?\n[ \t]*\r?\n/).find((b) => /^Status:[ \t]*[45]\.\d{1,3}\.\d{1,3}/im.test(b));
  const status = block && /^Status:[ \t]*([45])\.(\d{1,3})\.(\d{1,3})/im.exec(block);
  if (!block || !status) return null;
  if (/^Action:[ \t]*delayed/im.test(block)) return "soft";
  if (status[2] === "2" && status[3] === "2") return "soft";
  const diagnostic = /^Diagnostic-Code:(.*(?:\r?\n[ \t].*)*)/im.exec(block)?.[1] ?? "";
  if (/mailbox.{0,12}full|quota/i.test(diagnostic)) return "soft";
  return status[1] === "4" ? "soft" : "hard";
}

async function parseWithin(raw: Buffer, ms: number): Promise<{ report: BounceReport; elapsed: number }> {
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  try {
    const report = await Promise.race([Promise.resolve(parseBounce(raw)), timeout]);
    return { report, elapsed: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

const parseFile = async (name: string) => (await parseBounce(readFileSync(CORPUS + name))) as BounceReport;

describe("parseBounce on the sisimai corpus", () => {
  test("every file parses in time; the counts are no worse than the baseline", async () => {
    const files = readdirSync(CORPUS)
      .filter((f) => f !== "LICENSE" && !f.startsWith("."))
      .sort();
    expect(files.length).toBeGreaterThanOrEqual(600);
    for (const name of Object.keys(EXCEPTIONS)) expect(files).toContain(name);

    const counts = { found: 0, misclassified: 0, notBounce: 0, noRecipient: 0, wrongKind: 0 };
    const problems: string[] = [];
    let slowest = { name: "", ms: 0 };
    for (const name of files) {
      const raw = readFileSync(CORPUS + name);
      const { report, elapsed } = await parseWithin(raw, PER_FILE_LIMIT_MS);
      expect(elapsed).toBeLessThan(PER_FILE_LIMIT_MS);
      if (elapsed > slowest.ms) slowest = { name, ms: elapsed };
      const want = expectedKind(name);
      if (want !== "bounce") {
        if (report.kind === want) counts.notBounce++;
        else if (report.kind === "bounce") (counts.misclassified++, problems.push(`${name}: expected ${want}, got a ${report.class} bounce`));
        else (counts.wrongKind++, problems.push(`${name}: expected ${want}, got ${report.kind}`));
        continue;
      }
      if (report.kind !== "bounce") {
        counts.misclassified++;
        problems.push(`${name}: expected a bounce, got ${report.kind}`);
        continue;
      }
      const klass = expectedClass(name, raw.toString("latin1"));
      if (klass && report.class !== klass) {
        counts.misclassified++;
        problems.push(`${name}: expected ${klass}, got ${report.class} (status ${report.status}, ${report.diagnostic?.slice(0, 80)})`);
      } else if (report.recipient === null) {
        counts.noRecipient++;
        problems.push(`${name}: bounce without a recipient (${report.class}, status ${report.status})`);
      } else counts.found++;
    }
    const total = files.length;
    console.log(
      [
        `bounce corpus: ${total} files`,
        `  found (bounce with recipient, class as expected): ${counts.found}`,
        `  misclassified: ${counts.misclassified}`,
        `  not a bounce, correctly left alone: ${counts.notBounce}`,
        `  bounce without recipient: ${counts.noRecipient}`,
        `  auto-reply / not-bounce confused: ${counts.wrongKind}`,
        `  slowest: ${slowest.name} ${slowest.ms.toFixed(1)} ms`,
        ...problems.map((p) => `  - ${p}`),
      ].join("\n"),
    );
    expect(counts.found + counts.misclassified + counts.notBounce + counts.noRecipient + counts.wrongKind).toBe(total);
    expect(counts.found).toBeGreaterThanOrEqual(BASELINE.found);
    expect(counts.misclassified).toBeLessThanOrEqual(BASELINE.misclassified);
    expect(counts.notBounce).toBeGreaterThanOrEqual(BASELINE.notBounce);
    expect(counts.noRecipient).toBeLessThanOrEqual(BASELINE.noRecipient);
    expect(counts.wrongKind).toBeLessThanOrEqual(BASELINE.wrongKind);
  });
});
