// A webhook receiver slower than webhooks.lease_time, on both engines: two dispatchers (two
// nodes) share the outbox; the receiver holds node A's POST for three lease times before it
// answers. A renews its batch's lease meanwhile (its heartbeat), so node B never posts the
// batch too, and A's acknowledgement counts: the receiver gets the batch once. A lease
// shorter than the receiver's timeout is allowed for that reason.
import { SQL } from "bun";
import { afterEach, beforeEach, describe, expect } from "bun:test";
import { AccountRegistry } from "../../src/auth/accounts.ts";
import type { Config } from "../../src/config/config.ts";
import { parseConfigText } from "../../src/config/load.ts";
import { WebhookDispatcher } from "../../src/events/dispatcher.ts";
import type { NewEvent } from "../../src/events/message-event.ts";
import { createPgOutboxRepo } from "../../src/events/outbox.pg.repo.ts";
import type { OutboxRepo } from "../../src/events/outbox.port.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { createResolver } from "../../src/lib/dns.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { STORE_ENGINES } from "../helpers/engines.ts";
import { eventually } from "../helpers/sink.ts";
import { WebhookReceiver } from "../helpers/webhook-receiver.ts";
import { eventEngine } from "./outbox-rows.ts";

const ACCOUNT = "a000000000000001";
const OUTBOUND = "a0000000000000f1";
const SECRET = "whsec_" + Buffer.from("postroom dispatcher heartbeat secret").toString("base64");
const LEASE_MS = 1000;

function configFor(receiver: WebhookReceiver): Config {
  const parsed = parseConfigText(`
[webhooks]
allow_private = true
timeout = "10s"
lease_time = "${LEASE_MS}ms"
[[accounts]]
id = "${ACCOUNT}"
webhook = { url = "${receiver.url}", token = "t", signing_secret = "${SECRET}" }
[[accounts.outbound]]
id = "${OUTBOUND}"
`);
  if (!parsed.ok) throw new Error(parsed.problems.join("; "));
  return parsed.config;
}

const dispatcher = (repo: OutboxRepo, config: Config, warnings: unknown[]) =>
  new WebhookDispatcher({
    repo,
    config: () => config,
    registry: AccountRegistry.fromConfig(config),
    resolver: createResolver({ servers: ["127.0.0.1:9"] }),
    clock: systemClock,
    logger: createLogger({ level: "warn", sink: (line) => warnings.push(JSON.parse(line)) }),
    userAgent: "test",
  });

const ev = (kind: NewEvent["kind"]): NewEvent => ({
  messageId: "m1",
  recipientId: "r-m1",
  kind,
  details: { kind },
  createdAtMs: Date.now(),
});

describe.each(STORE_ENGINES)("a webhook receiver slower than the lease on $name", (engine) => {
  const s = eventEngine(engine, [
    { id: "m1", accountId: ACCOUNT, outboundAccountId: OUTBOUND, recipients: [{ id: "r-m1", email: "m1@x.test" }] },
  ]);
  let receiver: WebhookReceiver;
  let second: { repo: OutboxRepo; close(): Promise<void> };
  beforeEach(() => {
    receiver = WebhookReceiver.start(SECRET);
    const h = s.handle;
    if (h?.kind === "postgres") {
      const sql = new SQL(h.url, { max: 2 });
      second = { repo: createPgOutboxRepo(sql), close: () => sql.close() };
    } else second = { repo: s.outbox, close: async () => {} };
  });
  afterEach(async () => {
    await receiver.stop();
    await second.close();
  });

  engine.test(
    "the POST keeps its lease while the receiver takes three lease times to answer: posted once, acknowledged",
    async () => {
      const config = configFor(receiver);
      await s.events.record([ev("registration"), ev("dispatch")]);
      const warnings: unknown[] = [];
      const a = dispatcher(s.outbox, config, warnings);
      const b = dispatcher(second.repo, config, warnings);
      const heldA = receiver.holdNext();
      const heldB = receiver.holdNext();
      let secondPost = false;
      void heldB.arrived.then(() => (secondPost = true));
      a.start();
      await heldA.arrived;
      b.start();
      // Node B looks at the outbox when the lease would have ended, and every second.
      await Bun.sleep(3 * LEASE_MS);
      heldA.release();
      await eventually(async () => (await s.outbox.countPending()) === 0, 10_000, "the batch acknowledged");
      await Bun.sleep(LEASE_MS);
      heldB.release();
      await Promise.all([a.stop(), b.stop()]);
      expect(secondPost).toBe(false);
      expect(receiver.posts.map((p) => p.status)).toEqual([200]);
      expect(warnings).toEqual([]);
    },
    30_000,
  );
});
