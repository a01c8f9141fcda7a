// The bounce parser against sisimai's set-of-emails (test/corpus/bounces, stored
// unchanged): every file is parsed without a throw or a hang; each file's
// expected kind comes from its name (arf-* complaints, rfc3834-* auto-replies, the rest
// bounces) except for the exceptions listed below with their reasons; where a message
// carries a standard Status: field the expected class is what that field says by the
// RFCs, not by the parser's own rules (RFC 3463: 4.x.x transient, soft; 5.x.x permanent,
// hard, but X.2.2 "mailbox full" a persistent transient failure, soft; RFC 3464:
// Action: delayed, not failed yet, soft), except for the files listed with the class a
// reader gives them and why. The counts may not get worse than BASELINE.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { parseBounce, type BounceClass, type BounceReport } from "../../src/outbound/bounces/bounce-parse.ts";
import { corpusPath } from "../helpers/corpus.ts";

/** What the parser reached on the corpus; a change may improve these, never worsen them. */
const BASELINE = { found: 600, misclassified: 0, notBounce: 29, noRecipient: 0, wrongKind: 0 };

const CORPUS = corpusPath("bounces/");
const PER_FILE_LIMIT_MS = 2_000;

type Kind = BounceReport["kind"];

/** Files whose expected kind is not the one their name suggests, each with the reason. */
const EXCEPTIONS: Record<string, { kind: Kind; reason: string }> = {
  "lhost-amazonses-11.eml": {
    kind: "not_bounce",
    reason: "an Amazon SNS complaint notification (notificationType Complaint), not a delivery failure",
  },
  "lhost-amazonses-12.eml": {
    kind: "not_bounce",
    reason: "an Amazon SNS delivery notification (notificationType Delivery): the message was delivered",
  },
  "lhost-amazonses-13.eml": {
    kind: "not_bounce",
    reason: "an Amazon SNS delivery notification (notificationType Delivery): the message was delivered",
  },
  "lhost-fml-03.eml": {
    kind: "not_bounce",
    reason: "an fml mailing list 'Loop Alert: Duplicated Message-ID' sent by the list to its own admin, not a report on a recipient",
  },
  "lhost-postfix-75.eml": {
    kind: "not_bounce",
    reason:
      "a Postfix notice to the local postmaster (notify_classes) with an SMTP session transcript; the client got the 451 in the session, no report goes to the sender",
  },
  "rfc3464-28.eml": {
    kind: "not_bounce",
    reason: "a delivery report that Postfix was asked for (sendmail -bv): Action: deliverable, Status: 2.1.5, nothing failed",
  },
};

/** Files whose Status field alone would mislead the expected class, each with the reason (read by hand). */
const CLASS_OVERRIDES: Record<string, { class: BounceClass; reason: string }> = {
  "lhost-exim-60.eml": {
    class: "soft",
    reason: "Status: 5.0.0 without a Diagnostic-Code; the report's text says 'mailbox is full: retry timeout exceeded'",
  },
  "lhost-amazonses-03.eml": {
    class: "soft",
    reason: "Status: 5.0.0, but the Diagnostic-Code quotes the remote reply '5.2.2 <kijitora@example.jp>... Mailbox Full'",
  },
  "lhost-messagingserver-02.eml": {
    class: "soft",
    reason: "Status: 5.2.0; the Diagnostic-Code says '522 5.2.0 Delivery failed: Over quota': a full mailbox",
  },
  "lhost-x3-06.eml": {
    class: "soft",
    reason: "Status: 5.1.1, but the Diagnostic-Code says '552 5.2.2 Over quota': a full mailbox, not an unknown user",
  },
};

function expectedKind(name: string): Kind {
  const exception = EXCEPTIONS[name];
  if (exception) return exception.kind;
  if (name.startsWith("arf-")) return "not_bounce";
  if (name.startsWith("rfc3834-")) return "auto_reply";
  return "bounce";
}

/**
 * The class the message's own delivery-status fields say, or null when it has none: the
 * first field block with a 4.x.x/5.x.x Status decides, read by RFC 3463 and RFC 3464 (see
 * the top), unless the file is in CLASS_OVERRIDES.
 */
function expectedClass(name: string, raw: string): BounceClass | null {
  const override = CLASS_OVERRIDES[name];
  if (override) return override.class;
  const block = raw.split(/\r?\n[ \t]*\r?\n/).find((b) => /^Status:[ \t]*[45]\.\d{1,3}\.\d{1,3}/im.test(b));
  const status = block && /^Status:[ \t]*([45])\.(\d{1,3})\.(\d{1,3})/im.exec(block);
  if (!block || !status) return null;
  if (/^Action:[ \t]*delayed/im.test(block)) return "soft";
  if (status[2] === "2" && status[3] === "2") return "soft";
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
      .filter((f) => f !== "LICENSE" && f !== "README.md" && !f.startsWith("."))
      .sort();
    expect(files.length).toBeGreaterThanOrEqual(600);
    for (const name of Object.keys(EXCEPTIONS)) expect(files).toContain(name);

    const counts = { found: 0, misclassified: 0, notBounce: 0, noRecipient: 0, wrongKind: 0 };
    const problems: string[] = [];
    let slowest = { name: "", ms: 0 };
    let classChecked = 0;
    for (const name of files) {
      const raw = readFileSync(CORPUS + name);
      const { report, elapsed } = await parseWithin(raw, PER_FILE_LIMIT_MS);
      expect(elapsed).toBeLessThan(PER_FILE_LIMIT_MS);
      if (elapsed > slowest.ms) slowest = { name, ms: elapsed };
      const want = expectedKind(name);
      if (want !== "bounce") {
        if (report.kind === want) counts.notBounce++;
        else if (report.kind === "bounce") counts.misclassified++, problems.push(`${name}: expected ${want}, got a ${report.class} bounce`);
        else counts.wrongKind++, problems.push(`${name}: expected ${want}, got ${report.kind}`);
        continue;
      }
      if (report.kind !== "bounce") {
        counts.misclassified++;
        problems.push(`${name}: expected a bounce, got ${report.kind}`);
        continue;
      }
      const klass = expectedClass(name, raw.toString("latin1"));
      if (klass) classChecked++;
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
        `  (class checked against the message's own Status field in ${classChecked} bounces)`,
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

describe("parseBounce: hand-checked examples, one per major format", () => {
  test("standard DSN (Postfix): Final-Recipient, Status, Reporting-MTA; Auto-Submitted does not make it an auto-reply", async () => {
    expect(await parseFile("lhost-postfix-01.eml")).toEqual({
      kind: "bounce",
      recipient: "r@p351355.pool.example.ne.jp",
      class: "hard",
      status: "5.1.1",
      diagnostic: 'procmail: Couldn\'t create "/var/spool/mail/neko" id: r.example.org: No such user',
      reportingMta: "p351355.pool.example.ne.jp",
    });
  });

  test("DSN with several recipients: the first that failed, not the delayed one", async () => {
    expect(await parseFile("rfc3464-35.eml")).toMatchObject({
      kind: "bounce",
      recipient: "kijitora@nyaan.example.com",
      class: "hard",
      status: "5.0.0",
      reportingMta: "cs.utk.edu",
    });
  });

  test("DSN delay warning (Action: delayed) is soft", async () => {
    expect(await parseFile("lhost-sendmail-29.eml")).toMatchObject({
      kind: "bounce",
      recipient: "this-local-part-does-not-exist-on-the-system@y-mobile.ne.jp",
      class: "soft",
      status: "4.5.0",
    });
  });

  test("mailbox full with 5.2.2 is soft", async () => {
    expect(await parseFile("lhost-amazonworkmail-04.eml")).toMatchObject({
      kind: "bounce",
      recipient: "chatoraneko@example.jp",
      class: "soft",
      status: "5.2.2",
    });
  });

  test("qmail: '<address>:' then the remote host's reply", async () => {
    const report = await parseFile("lhost-qmail-02.eml");
    expect(report).toMatchObject({
      kind: "bounce",
      recipient: "userunknown@example.jp",
      class: "hard",
      status: "5.1.1",
      reportingMta: "vagrant-centos65.vagrantup.com",
    });
    expect(report.kind === "bounce" && report.diagnostic).toContain("Remote host said: 550 5.1.1 <userunknown@example.jp>... User Unknown");
  });

  test("Exim: X-Failed-Recipients and the indented reason", async () => {
    const report = await parseFile("lhost-exim-02.eml");
    expect(report).toMatchObject({ kind: "bounce", recipient: "kijitora@example.jp", class: "hard", status: "5.1.1" });
    expect(report.kind === "bounce" && report.diagnostic).toContain("550 5.1.1 <kijitora@example.jp>... User Unknown");
    expect(report.kind === "bounce" && report.diagnostic).not.toContain("sabatora"); // the next recipient's block
  });

  test("Gmail delay notice without a DSN part is soft", async () => {
    expect(await parseFile("lhost-gmail-06.eml")).toMatchObject({
      kind: "bounce",
      recipient: "kijitora@example.jp",
      class: "soft",
      status: "4.2.2",
    });
  });

  test("Amazon SES bounce notification (JSON through SNS)", async () => {
    expect(await parseFile("lhost-amazonses-09.eml")).toEqual({
      kind: "bounce",
      recipient: "bounce@simulator.amazonses.com",
      class: "hard",
      status: "5.1.1",
      diagnostic: "550 5.1.1 user unknown",
      reportingMta: "a27-23.smtp-out.us-west-2.amazonses.com",
    });
  });

  test("auto-replies: 'Automatic reply:' subject, Auto-Submitted: auto-replied", async () => {
    expect(await parseFile("rfc3834-02.eml")).toEqual({ kind: "auto_reply" });
    expect(await parseFile("rfc3834-01.eml")).toEqual({ kind: "auto_reply" });
  });

  test("ARF feedback report, a delivered-status report and an unsubscribe request are not bounces", async () => {
    expect(await parseFile("arf-01.eml")).toEqual({ kind: "not_bounce" });
    expect(await parseFile("rfc3464-28.eml")).toEqual({ kind: "not_bounce" });
    expect(await parseFile("arf-26.eml")).toEqual({ kind: "not_bounce" });
  });
});
