// The WebhookEndpointRepo contract (webhook-endpoints.port.ts) and the outbox rows it
// makes, run on both engines: an endpoint reads back field for field with its token and
// secret sealed at rest; an account sees and deletes only its own; the limit per outbound
// account holds; each event reaches exactly the endpoints whose filter takes its kind,
// each endpoint a target of its own (its own batches and retries); deleting an endpoint
// drops what it had not been posted yet.
import { describe, expect } from "bun:test";
import { secretBox } from "../../src/lib/secret-key.ts";
import { createWebhookEndpointRepo } from "../../src/events/webhook-endpoints.repo.ts";
import type { WebhookEndpoint } from "../../src/events/webhook-endpoint.ts";
import { endpointTarget } from "../../src/events/outbox.port.ts";
import type { NewEvent } from "../../src/events/message-event.ts";
import { sql } from "../../src/store/db/sql.ts";
import { STORE_ENGINES } from "../helpers/engines.ts";
import { eventEngine } from "./outbox-rows.ts";

// Past 2^32 ms, so a 32-bit column or binding would show.
const NOW_MS = 1_795_000_000_000;
const LEASE_MS = 60_000;
const box = secretBox(() => Buffer.alloc(32, 7));

const endpoint = (over: Partial<WebhookEndpoint>): WebhookEndpoint => ({
  id: "e1",
  accountId: "acct-a",
  outboundAccountId: "oa",
  url: "https://hooks.example/a?k=1",
  events: [],
  token: "tok-a",
  signingSecret: "whsec_c2VjcmV0LWE=",
  createdAtMs: NOW_MS,
  ...over,
});

const event = (kind: NewEvent["kind"], createdAtMs = NOW_MS): NewEvent => ({
  messageId: "m-a",
  recipientId: "r-a1",
  kind,
  details: {},
  createdAtMs,
});

describe.each(STORE_ENGINES)("webhook endpoints on $name", (engine) => {
  const s = eventEngine(engine, [
    { id: "m-a", accountId: "acct-a", outboundAccountId: "oa", recipients: [{ id: "r-a1", email: "one@a.test" }] },
  ]);
  const repo = () => createWebhookEndpointRepo(s.handle.db, box);
  const clean = () => s.handle.clear(["webhook_endpoints"]);

  engine.test("an endpoint reads back as made, its token and secret never in clear in the table; another account sees none", async () => {
    await clean();
    const r = repo();
    const made = endpoint({ events: ["delivery", "bounce"] });
    expect(await r.create(made, 10)).toBe(true);
    expect(await r.create(endpoint({ id: "e2", token: null, createdAtMs: NOW_MS + 1 }), 10)).toBe(true);
    // Sorted: one spelling per filter.
    expect(await r.get("e1")).toEqual({ ...made, events: ["bounce", "delivery"] });
    expect((await r.list("acct-a", null)).map((e) => [e.id, e.token])).toEqual([
      ["e1", "tok-a"],
      ["e2", null],
    ]);
    expect(await r.list("acct-a", "oa")).toHaveLength(2);
    expect(await r.list("acct-a", "ob")).toEqual([]);
    expect(await r.list("acct-b", null)).toEqual([]);
    const raw = await s.handle.db.all<Record<string, unknown>>(sql`SELECT * FROM webhook_endpoints`);
    expect(JSON.stringify(raw)).not.toContain("tok-a");
    expect(JSON.stringify(raw)).not.toContain("c2VjcmV0LWE");
    expect(await r.remove("acct-b", "e1")).toBe(false);
    expect(await r.get("e1")).not.toBeNull();
    expect(await r.remove("acct-a", "e1")).toBe(true);
    expect(await r.remove("acct-a", "e1")).toBe(false);
    expect(await r.get("e1")).toBeNull();
  });

  engine.test("the limit per outbound account: the one past it is refused and not stored, also when made at once", async () => {
    await clean();
    const r = repo();
    const results = await Promise.all([1, 2, 3, 4].map((n) => r.create(endpoint({ id: `e${n}` }), 3)));
    expect(results.filter(Boolean)).toHaveLength(3);
    expect(await r.list("acct-a", "oa")).toHaveLength(3);
    // Another outbound account counts on its own.
    expect(await r.create(endpoint({ id: "other", outboundAccountId: "ob" }), 3)).toBe(true);
  });

  engine.test(
    "each event reaches the config webhook and every endpoint whose filter takes it, each a target with its own batches",
    async () => {
      await clean();
      const r = repo();
      await r.create(endpoint({ id: "deliveries", events: ["delivery"] }), 10);
      await r.create(endpoint({ id: "bounces", events: ["soft_bounce", "bounce"] }), 10);
      await r.create(endpoint({ id: "all", events: [] }), 10);
      await r.create(endpoint({ id: "elsewhere", outboundAccountId: "ob" }), 10);
      await s.events.record([event("registration", NOW_MS - 3), event("dispatch", NOW_MS - 2), event("delivery", NOW_MS - 1)]);
      // An internal kind reaches no one.
      await s.events.record([event("process")]);
      const kinds = async (target: string) => (await s.outbox.claimBatch(target, NOW_MS, 100, LEASE_MS))?.events.map((e) => e.kind) ?? [];
      expect((await s.outbox.pendingTargets()).map((t) => t.target).sort()).toEqual(
        ["oa", endpointTarget("all"), endpointTarget("deliveries")].sort(),
      );
      // The config webhook's batch is retried later; the endpoints' lanes do not wait for it.
      const config = await s.outbox.claimBatch("oa", NOW_MS, 100, LEASE_MS);
      expect(config!.events.map((e) => e.kind)).toEqual(["registration", "dispatch", "delivery"]);
      expect(await s.outbox.finishRetry(config!.lease, NOW_MS + 3_600_000)).toBe(true);
      expect(await kinds(endpointTarget("deliveries"))).toEqual(["delivery"]);
      expect(await kinds(endpointTarget("all"))).toEqual(["registration", "dispatch", "delivery"]);
      expect(await kinds(endpointTarget("bounces"))).toEqual([]);
      // A bounce kind with an underscore matches its own name only.
      await s.events.record([event("soft_bounce")]);
      expect(await kinds(endpointTarget("bounces"))).toEqual(["soft_bounce"]);
      expect(await s.outbox.pendingOf(endpointTarget("deliveries"))).toMatchObject({ events: 1 });
      // Deleted: what it had not acknowledged is dropped, and new events no longer reach it.
      expect(await r.remove("acct-a", "deliveries")).toBe(true);
      expect(await s.outbox.pendingOf(endpointTarget("deliveries"))).toMatchObject({ events: 0 });
      await s.events.record([event("open", NOW_MS + 1)]);
      expect((await s.outbox.pendingTargets()).map((t) => t.target)).not.toContain(endpointTarget("deliveries"));
    },
  );
});
