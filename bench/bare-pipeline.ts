// The peer of `bun run bench:inbound`: the least an SMTP-to-HTTP bridge has to do, and
// nothing else. smtp-server accepts any recipient, onData buffers the message, mailparser's
// simpleParser parses it, and fetch POSTs {envelope, headers, plain, html, attachments}
// as JSON to the target; 250 after the target's 2xx, 451 otherwise. No database, no
// egress guard, no logging per message.
//
// With --dns ADDRESS it authenticates every message as Postroom does (issue 38: so that
// bench:inbound's ratio compares the same work): mailauth's authenticate() (SPF, DKIM,
// DMARC; no ARC, no BIMI, which Postroom does not check either), strict as Postroom's
// checks are, asking the same DNS server through the same caching resolver
// (src/lib/dns.ts, with Postroom's default cache), its verdicts in the JSON
// (envelope.spf/dkim/dmarc). Without it, no SPF/DKIM/DMARC.
//
// simpleParser gets the same options Postroom uses (src/inbound/parse/parse.ts: no HTML made
// from text or text from HTML, links left alone, only the top-level headers Postroom reads
// decoded, through our patch of mailparser, and its default limits): both then do the same
// parsing work, and the ratio shows what Postroom adds around it rather than a difference
// in parser settings.
//
// Run as a child process by bench/inbound.ts:
//   bun bench/bare-pipeline.ts --target http://127.0.0.1:PORT/path [--dns HOST:PORT]
// It prints one JSON line {"msg":"bare smtp listening","port":N} and serves until SIGTERM.
import { authenticate } from "mailauth";
import { simpleParser, type ParsedMail } from "mailparser";
import { parseArgs } from "node:util";
import { SMTPServer, type SMTPServerSession } from "smtp-server";
import { parserOptions } from "../src/inbound/parse/parse.ts";
import { createResolver } from "../src/lib/dns.ts";

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { target: { type: "string" }, dns: { type: "string" } } });
const target = values.target;
if (!target) {
  process.stderr.write("usage: bun bench/bare-pipeline.ts --target URL\n");
  process.exit(1);
}

// [smtp] max_header_size and max_mime_parts as the benchmark's Postroom has them (the defaults).
const PARSE_OPTIONS = parserOptions({ maxHeaderBytes: 256 * 1024, maxMimeParts: 500, maxMimeDepth: 50 });

const resolver = values.dns ? createResolver({ servers: [values.dns] }) : null;

type Verdicts = { spf: { result: string }; dkim: { result: string }; dmarc: { result: string } };

/** SPF, DKIM and DMARC of the message, as Postroom checks them; null without --dns. */
async function authChecks(raw: Buffer, session: SMTPServerSession): Promise<Verdicts | null> {
  if (!resolver) return null;
  const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
  const helo = session.hostNameAppearsAs;
  const r = await authenticate(raw, {
    ip: session.remoteAddress,
    helo,
    sender: mailFrom || `postmaster@${helo}`,
    mta: "bare.bench.test",
    resolver: resolver.resolve as never,
    disableArc: true,
    disableBimi: true,
    strict: true,
  } as never);
  const resultOf = (v: unknown) => (v ? ((v as { status?: { result?: string } }).status?.result ?? "none") : "none");
  return {
    spf: { result: resultOf(r.spf) },
    dkim: { result: r.dkim.results.some((d) => d.status?.result === "pass") ? "pass" : (r.dkim.results[0]?.status?.result ?? "none") },
    dmarc: { result: resultOf(r.dmarc) },
  };
}

const temporary = (text: string) => Object.assign(new Error(text), { responseCode: 451 });

function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.once("end", () => resolve(Buffer.concat(chunks)));
    stream.once("error", reject);
  });
}

const server = new SMTPServer({
  name: "bare.bench.test",
  banner: "bare pipeline",
  authOptional: true,
  disabledCommands: ["AUTH", "STARTTLS"],
  hideSTARTTLS: true,
  disableReverseLookup: true,
  logger: false,
  size: 25 * 1024 * 1024,
  maxClients: 1000,
  onData(stream, session, callback) {
    readAll(stream)
      .then(async (raw) => {
        const [parsed, auth] = await Promise.all([
          (simpleParser as (input: Buffer, options: object) => Promise<ParsedMail>)(raw, PARSE_OPTIONS),
          authChecks(raw, session),
        ]);
        const body = JSON.stringify({
          envelope: {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
            helo: session.hostNameAppearsAs,
            remote_ip: session.remoteAddress,
            ...auth,
          },
          headers: parsed.headerLines.map((h) => ({ name: h.key, value: h.line.slice(h.line.indexOf(":") + 1).trim() })),
          plain: parsed.text,
          html: typeof parsed.html === "string" ? parsed.html : undefined,
          attachments: parsed.attachments.map((a) => ({
            file_name: a.filename,
            content_type: a.contentType,
            size: a.size,
            content: a.content.toString("base64"),
          })),
        });
        const res = await fetch(target, { method: "POST", headers: { "content-type": "application/json" }, body });
        await res.arrayBuffer();
        if (res.ok) callback(null, "OK: delivered");
        else callback(temporary(`target answered ${res.status}`));
      })
      .catch((err) => callback(temporary(`delivery failed: ${(err as Error).message}`)));
  },
});

server.listen(0, "127.0.0.1", () => {
  const port = (server.server.address() as { port: number }).port;
  process.stdout.write(JSON.stringify({ msg: "bare smtp listening", port }) + "\n");
});

const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
