// Smoke test of the compiled binary (run by .ci/run after `bun run build`): the parts a
// `bun test` run cannot see, because only the binary embeds them: the parse worker
// (inbound.parse_workers = 1) and the DKIM signing worker. One message in through SMTP to
// an HTTP target, one out through the API to an MX, DKIM-signed. Exit 0 when both worked
// and the log has no error line.
//   bun test/smoke/binary.ts dist/postroom
import nodemailer from "nodemailer";
import { join, resolve } from "node:path";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { ServeProcess } from "../helpers/process.ts";
import { publishRecords, SENDING_KEYS } from "../helpers/sending-domain.ts";
import { eventually, SmtpSink, routeToSink } from "../helpers/sink.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";

const binary = resolve(process.argv[2] ?? "dist/postroom");
const dir = tempDir("postroom-smoke-");
const dns = await TestDnsServer.start();
const sink = await SmtpSink.start();
const target = TestTarget.start();
routeToSink(dns, "example.org");
// The parse worker checks SPF with a resolver of its own (issue 38): the verdict proves it asks DNS from the binary.
dns.set("sender.test", [{ type: "TXT", data: "v=spf1 ip4:127.0.0.1 -all" }]);
const configPath = join(dir.path, "postroom.toml");
await Bun.write(
  configPath,
  testConfigToml({
    dataDir: join(dir.path, "data"),
    dnsServer: dns.address,
    inbound: true,
    inboundKeys: "parse_workers = 1",
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
  }).replace('level = "warn"', 'level = "info"'),
);
const server = ServeProcess.spawn(configPath, dir.path, [binary]);
let ok = false;
try {
  const http = `http://127.0.0.1:${await server.httpPort()}`;
  const inboundPort = (await server.waitFor((l) => l.msg === "inbound smtp listening")).port as number;
  const api = async (path: string, token: string, body?: unknown) => {
    const res = await fetch(`${http}${path}`, {
      method: body === undefined ? "POST" : "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  const address = await api(`/api/v0.1/${ACCOUNT_A.id}/addresses`, ACCOUNT_A.token, {
    target: target.url("/smoke"),
    target_format: "json+n",
  });
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port: inboundPort, secure: false, ignoreTLS: true });
  await transport.sendMail({ from: "alice@sender.test", to: address.body.email, subject: "smoke in", text: "through the parse worker" });
  transport.close();
  await eventually(() => target.at("/smoke").length === 1, 10_000, "the inbound message at the target");
  const received = target.at("/smoke")[0]!.json;
  if (received.headers.subject !== "smoke in") throw new Error("the target got another message");
  if (received.envelope.spf?.result !== "pass")
    throw new Error(`SPF checked on the worker: ${JSON.stringify(received.envelope.spf)}, not pass`);

  const created = await api(`/api/v0.1/${ACCOUNT_A.id}/sending_domains`, ACCOUNT_A.token, { domain: "brand.example" });
  publishRecords(dns, created.body);
  const verified = await api(`/api/v0.1/${ACCOUNT_A.id}/sending_domains/${created.body.id}/verify`, ACCOUNT_A.token);
  if (verified.status !== 200) throw new Error(`verify answered ${verified.status}`);
  const sent = await api(`/api/v0.1/${ACCOUNT_A.outboundId}/messages`, ACCOUNT_A.smtpKey, {
    from: "news@brand.example",
    to: "reader@example.org",
    subject: "smoke out",
    plain: "signed by the worker",
  });
  if (sent.status !== 202) throw new Error(`send answered ${sent.status}`);
  await eventually(() => sink.to("reader@example.org").length === 1, 10_000, "the outbound message at the MX");
  const signatures = sink.to("reader@example.org")[0]!.raw.match(/^DKIM-Signature:/gim) ?? [];
  if (signatures.length !== 2) throw new Error(`expected 2 DKIM signatures (RSA and Ed25519), got ${signatures.length}`);

  // A worker that cannot start falls back to the main thread with a warning: that is a failure here.
  const errors = server.lines.filter((l) => l.level === "error" || (l.level === "warn" && /worker/.test(String(l.msg))));
  if (errors.length > 0) throw new Error(`error lines in the log:\n${errors.map((l) => JSON.stringify(l)).join("\n")}`);
  ok = true;
  console.log("binary smoke: inbound through the parse worker (SPF pass) and a DKIM-signed send through the signing worker: ok");
} catch (err) {
  console.log(`binary smoke failed: ${(err as Error).message}\n${server.lines.map((l) => JSON.stringify(l)).join("\n")}\n${server.stderr}`);
} finally {
  server.signal("SIGTERM");
  await server.exited();
  await Promise.all([sink.stop(), dns.stop(), target.stop()]);
  dir.remove();
}
process.exit(ok ? 0 : 1);
