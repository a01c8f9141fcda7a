// `postroom queue ...` as users run it: the built binary against another process of it
// serving the queue, through the operator API, the token from $POSTROOM_OPERATOR_TOKEN, the
// node from --url or from the config's http.listen; mistakes named, with exit codes 1
// (bad input, refused) and 2 (the node unreachable).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dirname, join } from "node:path";
import { hashSecret } from "../../src/auth/secrets.ts";
import { parseQueueCommand } from "../../src/cli/queue-command.ts";
import type { TestApp } from "../helpers/app.ts";
import { builtBinary } from "../helpers/binary.ts";
import { type BinaryAppliance, startBinaryAppliance } from "../helpers/binary-appliance.ts";
import { TestDnsServer } from "../helpers/dns-server.ts";
import { ACCOUNT_A } from "../helpers/fixtures.ts";
import { freePort } from "../helpers/pebble.ts";
import { SENDING_KEYS, verifiedSendingDomain } from "../helpers/sending-domain.ts";
import { eventually, routeToSink, SmtpSink } from "../helpers/sink.ts";

const OPERATOR = "pr_operator_cli_token";

let node: BinaryAppliance;
let dns: TestDnsServer;
let sink: SmtpSink;

/** The appliance's API as the sending-domain helper calls it. */
const api = (): TestApp =>
  ({
    async json(method: string, path: string, o: { body?: unknown; auth?: string | null } = {}) {
      const res = await fetch(`${node.http}${path}`, {
        method,
        headers: { ...(o.auth ? { authorization: o.auth } : {}), ...(o.body ? { "content-type": "application/json" } : {}) },
        body: o.body ? JSON.stringify(o.body) : undefined,
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
    },
  }) as unknown as TestApp;

/** Runs the binary's `queue` with `args`; the operator token in the environment unless told otherwise. */
async function queue(args: string[], token: string | null = OPERATOR) {
  const env: Record<string, string> = { PATH: process.env.PATH ?? "" };
  if (token !== null) env.POSTROOM_OPERATOR_TOKEN = token;
  const proc = Bun.spawn([builtBinary(), "queue", ...args], { env, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, exitCode };
}

beforeAll(async () => {
  builtBinary();
  sink = await SmtpSink.start();
  dns = await TestDnsServer.start();
  routeToSink(dns, "held.example");
  sink.script = (_rcpt, n) => (n === 1 ? { code: 451, text: "4.3.0 Temporary System Problem. Try again later" } : "accept");
  node = await startBinaryAppliance({
    accounts: [ACCOUNT_A],
    dnsServer: dns.address,
    outbound: `${SENDING_KEYS}\nmx_port = ${sink.port}\nallow_private_mx = true`,
    extra: `[dashboard]\nadmin_tokens = ["${hashSecret(OPERATOR)}"]`,
  });
  await verifiedSendingDomain(api(), dns, ACCOUNT_A, "sender.test");
}, 180_000);
afterAll(async () => {
  await node?.stop();
  await sink?.stop();
  await dns?.stop();
});

describe("postroom queue against a running node", () => {
  test("summary, hold, list, retry (held stay held), release (delivered at once), cancel and redeliver matching nothing", async () => {
    const sent = await api().json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
      auth: `Bearer ${ACCOUNT_A.smtpKey}`,
      body: { from: "ann@sender.test", to: "held@held.example", subject: "cli", plain: "x" },
    });
    expect(sent.status).toBe(202);
    await eventually(() => (sink.attempts.get("held@held.example") ?? 0) === 1, 10_000, "the deferred first attempt");
    const url = ["--url", node.http];
    await eventually(async () => (await queue(["summary", ...url])).stdout.includes("451 4.3.0"), 10_000, "the summary's last reply");
    const summary = await queue(["summary", ...url]);
    expect(summary.exitCode).toBe(0);
    expect(summary.stdout).toMatch(/^destination\s+queued\s+held\s+paused\s+oldest_at\s+last_response\nheld\.example\s+1\s+0\s+false\s/);
    expect(await queue(["hold", "--destination", "held.example", ...url])).toEqual({
      stdout: "hold: 1 recipient\n",
      stderr: "",
      exitCode: 0,
    });
    const list = await queue(["list", "--state", "held", ...url]);
    expect(list.stdout).toContain("held@held.example");
    expect(list.stdout).toContain(sent.body.id);
    const json = JSON.parse((await queue(["list", "--destination", "held.example", "--json", ...url])).stdout);
    expect(json).toMatchObject([{ recipient: "held@held.example", state: "held", attempts: 1 }]);
    expect((await queue(["retry", "--destination", "held.example", ...url])).stdout).toBe("retry: 0 recipients\n");
    // The default --url: the config's http.listen.
    const config = join(dirname(node.dataDir), "postroom.toml");
    expect(await queue(["release", "--destination", "held.example", "--config", config])).toEqual({
      stdout: "release: 1 recipient\n",
      stderr: "",
      exitCode: 0,
    });
    await eventually(() => sink.to("held@held.example").length === 1, 5_000, "delivery right after the release");
    expect((await queue(["cancel", "--message-id", sent.body.id, ...url])).stdout).toBe("cancel: 0 recipients\n");
    expect((await queue(["redeliver", "--bounce-class", "block", "--since", "2026-01-01T00:00:00Z", ...url])).stdout).toBe(
      "redeliver: 0 recipients\n",
    );
  }, 60_000);

  test("pause and resume reach the node: a paused destination's mail waits unattempted, resumed it goes out", async () => {
    const url = ["--url", node.http];
    // Before the destinations landed, these answered 404 (no such route).
    expect(await queue(["pause", "held.example", ...url])).toEqual({ stdout: "held.example: paused\n", stderr: "", exitCode: 0 });
    // Every node's worker reads the pauses once a second (docs/operations.md): the pause holds from then on.
    await Bun.sleep(1_200);
    const sent = await api().json("POST", `/api/v0.1/${ACCOUNT_A.outboundId}/messages`, {
      auth: `Bearer ${ACCOUNT_A.smtpKey}`,
      body: { from: "ann@sender.test", to: "paused@held.example", subject: "cli", plain: "x" },
    });
    expect(sent.status).toBe(202);
    await eventually(
      async () => /held\.example\s+1\s+0\s+true\s/.test((await queue(["summary", ...url])).stdout),
      10_000,
      "the summary showing held.example paused with one recipient",
    );
    await Bun.sleep(1_500);
    expect(sink.attempts.get("paused@held.example") ?? 0).toBe(0);
    expect(await queue(["resume", "held.example", ...url])).toEqual({ stdout: "held.example: not paused\n", stderr: "", exitCode: 0 });
    await eventually(() => (sink.attempts.get("paused@held.example") ?? 0) >= 1, 10_000, "an attempt once resumed");
  }, 60_000);

  test("mistakes: no filter, no token, an account's token, a bad class, a node not there", async () => {
    const url = ["--url", node.http];
    const noFilter = await queue(["hold", ...url]);
    expect(noFilter.exitCode).toBe(1);
    expect(noFilter.stderr).toStartWith("queue: hold needs a filter: --destination, --outbound-account-id or --message-id");
    const noToken = await queue(["summary", ...url], null);
    expect(noToken).toMatchObject({ exitCode: 1, stdout: "" });
    expect(noToken.stderr).toContain("POSTROOM_OPERATOR_TOKEN");
    const account = await queue(["summary", ...url], ACCOUNT_A.token);
    expect(account.exitCode).toBe(1);
    expect(account.stderr).toStartWith("queue summary: 403 Forbidden: operator paths take an operator token");
    const badClass = await queue(["redeliver", "--bounce-class", "nope", "--since", "2026-01-01", ...url]);
    expect(badClass.exitCode).toBe(1);
    expect(badClass.stderr).toStartWith("queue redeliver: 422 bounce_class: must be one of hard, mailbox_full");
    const closed = await queue(["summary", "--url", `http://127.0.0.1:${await freePort()}`]);
    expect(closed.exitCode).toBe(2);
    expect(closed.stderr).toStartWith("queue: cannot reach http://127.0.0.1:");
    const unknown = await queue(["purge", ...url]);
    expect(unknown.exitCode).toBe(1);
    expect(unknown.stderr).toStartWith('queue: unknown action "purge"');
  }, 60_000);
});

describe("parseQueueCommand", () => {
  test.each([
    [["pause", "example.com"], { method: "POST", path: "/destinations/example.com/pause" }],
    [["resume", "gmail"], { method: "POST", path: "/destinations/gmail/resume" }],
    [["list", "--destination", "a.example", "--state", "held"], { method: "GET", path: "/queue?destination=a.example&state=held" }],
    [
      ["cancel", "--outbound-account-id", "o1", "--older-than", "2h"],
      { method: "POST", path: "/queue/cancel", body: { outbound_account_id: "o1", older_than: "2h" } },
    ],
    [
      ["redeliver", "--bounce-class", "block", "--since", "2026-11-27", "--destination", "a.example"],
      { method: "POST", path: "/queue/redeliver", body: { bounce_class: "block", since: "2026-11-27", destination: "a.example" } },
    ],
  ])("%p → %p", (argv, call) => {
    expect(parseQueueCommand(argv)).toMatchObject({ kind: "call", call });
  });
  test.each([
    [["pause"], "pause needs one destination"],
    [["hold", "--since", "2026-01-01", "--destination", "x"], "hold takes no --since"],
    [["redeliver", "--bounce-class", "block"], "redeliver needs --bounce-class"],
    [[], "which action?"],
  ])("%p is refused: %p", (argv, message) => {
    const parsed = parseQueueCommand(argv);
    expect(parsed.kind).toBe("error");
    expect((parsed as { message: string }).message).toStartWith(message);
  });
});
