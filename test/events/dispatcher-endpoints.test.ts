// Webhook endpoints on a cluster: two dispatchers on one PostgreSQL (two SQL clients, as
// two nodes) post the events of many messages to the config's webhook and to two
// endpoints with different filters, real receivers (Bun.serve) checking each POST against
// its own secret. Each receiver gets each of its events exactly once, each message's in
// order, and an endpoint only the kinds of its filter. On SQLite one process posts: the
// same run checks the filters and the signatures with one dispatcher. An endpoint deleted
// while its batch is being posted gets nothing more, and that is no lost lease.
import { SQL } from "bun";
import { afterEach, beforeEach, describe, expect } from "bun:test";
import { AccountRegistry } from "../../src/auth/accounts.ts";
import type { Config } from "../../src/config/config.ts";
import { parseConfigText } from "../../src/config/load.ts";
import { WebhookDispatcher } from "../../src/events/dispatcher.ts";
import type { MessageEvent, NewEvent } from "../../src/events/message-event.ts";
import { createPgOutboxRepo } from "../../src/events/outbox.pg.repo.ts";
import type { OutboxRepo } from "../../src/events/outbox.port.ts";
import { newEndpointSecret } from "../../src/events/webhook-endpoint.ts";
import { createWebhookEndpointRepo } from "../../src/events/webhook-endpoints.repo.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { createResolver } from "../../src/lib/dns.ts";
import { createLogger, silentLogger } from "../../src/lib/logger.ts";
import { secretBox } from "../../src/lib/secret-key.ts";
import { STORE_ENGINES } from "../helpers/engines.ts";
import { eventually } from "../helpers/sink.ts";
import { WebhookReceiver } from "../helpers/webhook-receiver.ts";
import { addMessage, eventEngine, type SentMessage } from "./outbox-rows.ts";

const ACCOUNT = "a000000000000001";
const OUTBOUND = "a0000000000000f1";
const SECRET = "whsec_" + Buffer.from("postroom dispatcher lease secret").toString("base64");
const KINDS: NewEvent["kind"][] = ["registration", "dispatch", "delivery", "open", "click"];
const MESSAGES: SentMessage[] = Array.from({ length: 16 }, (_, i) => ({
  id: `n${i}`,
  accountId: ACCOUNT,
  outboundAccountId: OUTBOUND,
  recipients: [{ id: `r-n${i}`, email: `n${i}@x.test` }],
}));
const box = secretBox(() => Buffer.alloc(32, 3));

function configFor(receiver: WebhookReceiver): Config {
  const parsed = parseConfigText(`
[webhooks]
allow_private = true
timeout = "2s"
lease_time = "5s"
batch_size = 5
[[accounts]]
id = "${ACCOUNT}"
webhook = { url = "${receiver.url}", token = "t", signing_secret = "${SECRET}" }
[[accounts.outbound]]
id = "${OUTBOUND}"
`);
  if (!parsed.ok) throw new Error(parsed.problems.join("; "));
  return parsed.config;
}

describe.each(STORE_ENGINES)("webhook endpoints on a cluster on $name", (engine) => {
  const s = eventEngine(engine, []);
  let receivers: WebhookReceiver[];
  let second: { repo: OutboxRepo; close(): Promise<void> } | null;
  beforeEach(async () => {
    receivers = [0, 1, 2].map(() => WebhookReceiver.start(SECRET));
    await s.handle?.clear(["webhook_endpoints"]);
    const h = s.handle;
    if (h?.kind === "postgres") {
      const sql = new SQL(h.url, { max: 2 });
      second = { repo: createPgOutboxRepo(sql), close: () => sql.close() };
    } else second = null;
  });
  afterEach(async () => {
    for (const r of receivers) await r.stop();
    await second?.close();
  });

  engine.test(
    "every receiver gets each of its events once, in order per message; each endpoint only its kinds, signed with its own secret",
    async () => {
      const [config, opens, lifecycle] = receivers as [WebhookReceiver, WebhookReceiver, WebhookReceiver];
      const endpoints = createWebhookEndpointRepo(s.handle.db, box);
      const made = async (id: string, r: WebhookReceiver, events: string[]) => {
        r.secret = newEndpointSecret();
        const e = { id, accountId: ACCOUNT, outboundAccountId: OUTBOUND, url: r.url, events, token: null, signingSecret: r.secret };
        expect(await endpoints.create({ ...e, createdAtMs: Date.now() }, 10)).toBe(true);
      };
      await made("opens", opens, ["open", "click"]);
      await made("lifecycle", lifecycle, ["registration", "dispatch", "delivery"]);
      for (const m of MESSAGES) await addMessage(s.handle, m);
      const cfg = configFor(config);
      const node = (repo: OutboxRepo, userAgent: string) =>
        new WebhookDispatcher({
          repo,
          config: () => cfg,
          registry: AccountRegistry.fromConfig(cfg),
          endpoints,
          resolver: createResolver({ servers: ["127.0.0.1:9"] }),
          clock: systemClock,
          logger: silentLogger,
          userAgent,
        });
      const nodeA = node(s.outbox, "node-a");
      const nodeB = second ? node(second.repo, "node-b") : null;
      const recorded: MessageEvent[] = [];
      const recordings = KINDS.flatMap((kind) => [MESSAGES.slice(0, 8), MESSAGES.slice(8)].map((part) => ({ kind, part })));
      const record = async ({ kind, part }: (typeof recordings)[number]) => {
        const events = part.map((m) => ({ messageId: m.id, recipientId: `r-${m.id}`, kind, details: {}, createdAtMs: Date.now() }));
        recorded.push(...(await s.events.record(events)));
      };
      const postedBy = (agent: string) => receivers.some((r) => r.posts.some((p) => p.headers["user-agent"] === agent));
      if (!nodeB) {
        nodeA.start();
        for (const r of recordings) {
          await record(r);
          nodeA.kick();
        }
      } else {
        // Each node surely posts, whichever wins the races between: node B alone first, both
        // while most events are recorded, node A alone for the last ones.
        nodeB.start();
        await record(recordings[0]!);
        nodeB.kick();
        await eventually(() => postedBy("node-b"), 10_000, "node B's first POST");
        nodeA.start();
        for (const r of recordings.slice(1, -1)) {
          await record(r);
          nodeA.kick();
          nodeB.kick();
        }
        await nodeB.stop();
        await record(recordings.at(-1)!);
        nodeA.kick();
      }
      await eventually(async () => (await s.outbox.countPending()) === 0, 30_000, "every event acknowledged");
      await nodeA.stop();

      const expectGot = (r: WebhookReceiver, kinds: string[]) => {
        expect(r.posts.every((p) => p.verified && p.status === 200)).toBe(true);
        const posted = r.posts.flatMap((p) => p.body.events as { id: string; message_id: string; kind: string }[]);
        const wanted = recorded.filter((e) => kinds.includes(e.kind));
        // Each once: as many as wanted, and every one of them.
        expect(posted.map((e) => e.id).sort()).toEqual(wanted.map((e) => e.id).sort());
        for (const m of MESSAGES) expect(posted.filter((e) => e.message_id === m.id).map((e) => e.kind)).toEqual(kinds);
      };
      expectGot(config, KINDS);
      expectGot(opens, ["open", "click"]);
      expectGot(lifecycle, ["registration", "dispatch", "delivery"]);
      // Both nodes posted (on PostgreSQL), and each receiver's POSTs verify with its own secret only.
      if (nodeB) expect([postedBy("node-a"), postedBy("node-b")]).toEqual([true, true]);
      expect(opens.secret).not.toBe(lifecycle.secret);
    },
    60_000,
  );

  engine.test("an endpoint deleted during its POST gets nothing more; no lost lease is reported", async () => {
    const [config, doomed] = receivers as [WebhookReceiver, WebhookReceiver];
    const endpoints = createWebhookEndpointRepo(s.handle.db, box);
    doomed.secret = newEndpointSecret();
    const e = { id: "doomed", accountId: ACCOUNT, outboundAccountId: OUTBOUND, url: doomed.url, events: [], token: null };
    expect(await endpoints.create({ ...e, signingSecret: doomed.secret, createdAtMs: Date.now() }, 10)).toBe(true);
    const m = MESSAGES[0]!;
    await addMessage(s.handle, m);
    const cfg = configFor(config);
    const lines: { level: string; msg: string }[] = [];
    const d = new WebhookDispatcher({
      repo: s.outbox,
      config: () => cfg,
      registry: AccountRegistry.fromConfig(cfg),
      endpoints,
      resolver: createResolver({ servers: ["127.0.0.1:9"] }),
      clock: systemClock,
      logger: createLogger({ level: "info", sink: (line) => lines.push(JSON.parse(line)) }),
      userAgent: "node-a",
    });
    const event = (kind: NewEvent["kind"]) => ({ messageId: m.id, recipientId: `r-${m.id}`, kind, details: {}, createdAtMs: Date.now() });
    await s.events.record([event("registration")]);
    const held = doomed.holdNext();
    d.start();
    await held.arrived;
    expect(await endpoints.remove(ACCOUNT, "doomed")).toBe(true);
    held.release();
    await eventually(async () => (await s.outbox.countPending()) === 0, 10_000, "nothing pending");
    await s.events.record([event("dispatch")]);
    d.kick();
    await eventually(() => config.acknowledged().length === 2, 10_000, "the config webhook's two events");
    await d.idle();
    await d.stop();
    expect(doomed.posts).toHaveLength(1);
    expect(lines.filter((l) => l.level === "warn")).toEqual([]);
    expect(lines.map((l) => l.msg)).toContain("webhook endpoint deleted while its batch was posted; its events are dropped");
  });
});
