// (beyond) Issue 35: on_target_failure = "queue", with the built binary on SQLite. A target
// that answers 5xx gets the sender a 250 once the message is kept; the process is killed
// (-9) while the message waits, started again, and when the target is back the message is
// posted exactly once, its status going from queued to delivered. "defer" stays the
// default (451), a 4xx still refuses during the transaction, and a message whose target
// never comes back expires after inbound.max_queue_time. /metrics shows what waits.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { hashSecret } from "../../src/auth/secrets.ts";
import { builtBinary } from "../helpers/binary.ts";
import { nodeApi } from "../helpers/cluster-node.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";
import { scrapeMetrics } from "../helpers/metrics.ts";
import { freePort } from "../helpers/pebble.ts";
import { ServeProcess } from "../helpers/process.ts";
import { eventually } from "../helpers/sink.ts";
import { sendWithNodemailer } from "../helpers/smtp.ts";
import { TestTarget } from "../helpers/target.ts";
import { tempDir } from "../helpers/tmp.ts";

const A = `/api/v0.1/${ACCOUNT_A.id}`;
const METRICS_TOKEN = "pr_metrics_token_for_tests";

interface Appliance {
  config: string;
  http: number;
  smtp: number;
  proc: ServeProcess;
}

const dir = tempDir();
let target: TestTarget;
const running: ServeProcess[] = [];

beforeAll(() => {
  target = TestTarget.start();
  builtBinary();
}, 180_000);
afterAll(async () => {
  for (const p of running) p.signal("SIGKILL");
  await target.stop();
  dir.remove();
});

async function appliance(name: string, inboundKeys: string): Promise<Appliance> {
  const [http, smtp] = [await freePort(), await freePort()];
  const config = join(dir.path, `${name}.toml`);
  const toml = testConfigToml({
    dataDir: join(dir.path, name),
    inbound: true,
    inboundKeys,
    http: `metrics_token = "${hashSecret(METRICS_TOKEN)}"`,
    accounts: [ACCOUNT_A],
  })
    .replace('listen = "127.0.0.1:0"', `listen = "127.0.0.1:${http}"`)
    .replace('inbound_listen = "127.0.0.1:0"', `inbound_listen = "127.0.0.1:${smtp}"`)
    .replace('level = "warn"', 'level = "info"');
  await Bun.write(config, toml);
  const a = { config, http, smtp, proc: null as unknown as ServeProcess };
  await start(a);
  return a;
}

async function start(a: Appliance): Promise<void> {
  a.proc = ServeProcess.spawn(a.config, dir.path, [builtBinary()]);
  running.push(a.proc);
  await a.proc.waitFor((l) => l.msg === "postroom started", 30_000);
}

async function address(a: Appliance, path: string, extra: Record<string, unknown> = {}): Promise<{ id: string; email: string }> {
  const res = await nodeApi(a.http, `${A}/addresses`, "POST", { target: target.url(path), target_format: "json+n", ...extra });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; email: string };
}

const statuses = async (a: Appliance, addressId: string) =>
  (await (await nodeApi(a.http, `${A}/incoming_statuses?address_id=${addressId}`)).json()) as Record<string, any>[];

const send = (a: Appliance, to: string, subject: string) =>
  sendWithNodemailer(a.smtp, { from: "alice@sender.test", to, subject, text: `${subject}\n` });

describe('on_target_failure = "queue" on SQLite', () => {
  let main: Appliance;
  beforeAll(async () => {
    main = await appliance("main", 'retry_delays = ["1s"]\nmax_queue_time = "1h"');
  }, 60_000);

  test("defer stays the default: a 503 gets the sender 451 and the status says deferred", async () => {
    target.answers.set("/defer", { status: 503, contentType: "text/plain", body: "down for maintenance" });
    const addr = await address(main, "/defer");
    const sent = await send(main, addr.email, "deferred");
    expect(sent.code).toBe(451);
    const [s] = await statuses(main, addr.id);
    expect(s).toMatchObject({ status: "503", state: "deferred", attempts: 1, next_attempt_at: null });
  }, 30_000);

  test("a 4xx still refuses the mail during the transaction, and nothing is kept", async () => {
    target.answers.set("/refuses", { status: 422, contentType: "text/plain", body: "no such ticket" });
    const addr = await address(main, "/refuses", { on_target_failure: "queue" });
    const sent = await send(main, addr.email, "refused");
    expect(sent.code).toBe(550);
    expect(sent.response).toContain("no such ticket");
    const [s] = await statuses(main, addr.id);
    expect(s).toMatchObject({ status: "422", state: "rejected" });
    await Bun.sleep(2500);
    expect(target.at("/refuses")).toHaveLength(1);
  }, 30_000);

  test("target down: 250, kept through kill -9 and a restart, posted exactly once when it is back", async () => {
    target.answers.set("/down", { status: 503, body: "down" });
    const addr = await address(main, "/down", { on_target_failure: "queue" });
    expect((await nodeApi(main.http, `${A}/addresses/${addr.id}`).then((r) => r.json())) as object).toMatchObject({
      on_target_failure: "queue",
      spam_threshold: null,
    });
    const sent = await send(main, addr.email, "waits for its target");
    expect(sent.code).toBe(250);
    const [queued] = await statuses(main, addr.id);
    expect(queued).toMatchObject({ status: "503", state: "queued", attempts: 1 });
    expect(Date.parse(queued!.next_attempt_at)).toBeGreaterThan(Date.now() - 1000);
    // Posted again while down (a second attempt), then the process dies without a word.
    await eventually(() => target.at("/down").length >= 2, 10_000, "a second POST while down");
    const metrics = await scrapeMetrics(main.http, METRICS_TOKEN);
    expect(metrics.value("postroom_inbound_queued_messages", {})).toBe(1);
    expect(metrics.value("postroom_inbound_queue_oldest_age_seconds", {})).toBeGreaterThan(0);
    main.proc.signal("SIGKILL");
    await main.proc.exited();
    target.answers.set("/down", { status: 200, body: "ok" });
    const before = target.at("/down").length;
    await start(main);
    const delivered = await eventually(
      async () => (await statuses(main, addr.id)).find((s) => s.state === "delivered"),
      15_000,
      "the status to say delivered",
    );
    expect(delivered).toMatchObject({ status: "200", status_category: "successful", next_attempt_at: null });
    expect(delivered.attempts).toBeGreaterThanOrEqual(3);
    // Exactly once after its return: the same message key every time, and no more POSTs later.
    await Bun.sleep(3000);
    const after = target.at("/down").slice(before);
    expect(after).toHaveLength(1);
    expect(after[0]!.json.headers.subject).toBe("waits for its target");
    expect(new Set(target.at("/down").map((r) => r.headers["x-postroom-message-id"])).size).toBe(1);
    expect((await scrapeMetrics(main.http, METRICS_TOKEN)).value("postroom_inbound_queued_messages", {})).toBe(0);
  }, 90_000);
});

describe("kill -9 in the middle of a POST", () => {
  test("the restarted node takes its message back at once, not when the dead process's lease runs out", async () => {
    const node = await appliance("midpost", 'retry_delays = ["1s"]\nmax_queue_time = "1h"');
    target.answers.set("/slow", { status: 503, body: "down" });
    const addr = await address(node, "/slow", { on_target_failure: "queue" });
    expect((await send(node, addr.email, "posted while killed")).code).toBe(250);
    // The next POST hangs (the target answers in 20 s); the process dies while it waits.
    target.answers.set("/slow", { status: 200, body: "ok", delayMs: 20_000 });
    await eventually(() => target.at("/slow").length >= 2, 10_000, "a POST under way");
    node.proc.signal("SIGKILL");
    await node.proc.exited();
    target.answers.set("/slow", { status: 200, body: "ok" });
    const restartedMs = Date.now();
    await start(node);
    // Its lease was 2 x inbound.target_timeout + 1 min (2 min here): the restart does not wait for it.
    await eventually(
      async () => (await statuses(node, addr.id)).find((s) => s.state === "delivered"),
      15_000,
      "the status to say delivered",
    );
    expect(Date.now() - restartedMs).toBeLessThan(15_000);
    expect(node.proc.lines.some((l) => l.msg === "kept inbound messages taken back after a restart" && l.count === 1)).toBe(true);
  }, 60_000);
});

describe("inbound.max_queue_time", () => {
  test("a message whose target stays unreachable expires, and is posted no more", async () => {
    const short = await appliance("short", 'retry_delays = ["1s"]\nmax_queue_time = "3s"');
    const nowhere = await freePort();
    const res = await nodeApi(short.http, `${A}/addresses`, "POST", {
      target: `http://127.0.0.1:${nowhere}/gone`,
      target_format: "json+n",
      on_target_failure: "queue",
    });
    const addr = (await res.json()) as { id: string; email: string };
    expect((await send(short, addr.email, "never arrives")).code).toBe(250);
    expect((await statuses(short, addr.id))[0]).toMatchObject({ status: "unreachable", state: "queued" });
    const expired = await eventually(
      async () => (await statuses(short, addr.id)).find((s) => s.state === "expired"),
      15_000,
      "the status to say expired",
    );
    expect(expired).toMatchObject({ status: "unreachable", next_attempt_at: null });
    expect(expired.attempts).toBeGreaterThanOrEqual(3);
    const lines = short.proc.lines.filter((l) => l.msg?.startsWith("kept inbound message expired"));
    expect(lines).toHaveLength(1);
  }, 60_000);
});
