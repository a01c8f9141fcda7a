// Two Postroom nodes on one PostgreSQL (issue 21): each its own SQL client, sending-domain
// repository and DomainService (the lookups and decrypted keys a node keeps), node B
// listening for sending-domain changes. What is checked is what sending does with a from
// domain on B (senderDomains: may mail go out, and its DKIM signature). B's clock is
// frozen, so the cache's age limit never runs out unless a test moves it: what B stops
// using, it stops using because A's write announced it (NOTIFY postroom_sending_domains).
import { SQL } from "bun";
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { randomBytes } from "node:crypto";
import { senderDomains } from "../../src/domains/sender-domains.ts";
import type { CheckOutcome } from "../../src/domains/sending-domain.ts";
import {
  createSendingDomainRepo,
  listenForSendingDomainChanges,
  SENDING_DOMAIN_CHANGES_CHANNEL,
} from "../../src/domains/sending-domains.repo.ts";
import { pgDb } from "../../src/store/db/pg-db.ts";
import { SENDING_DOMAIN_CACHE_MAX_AGE_MS, type SendingDomainRepo } from "../../src/domains/sending-domains.port.ts";
import { DomainService } from "../../src/domains/service.ts";
import { silentLogger } from "../../src/lib/logger.ts";
import type { SenderDomains } from "../../src/outbound/sending/sender-domains.ts";
import { type ChannelSubscription, subscribe } from "../../src/store/pg-notify.ts";
import { STORE_ENGINES, type EngineHandle } from "../helpers/engines.ts";
import { cutListeners, noticeSettler } from "../helpers/pg-notices.ts";
import { eventually } from "../helpers/sink.ts";

const engine = STORE_ENGINES.find((e) => e.name === "PostgreSQL")!;
const it = engine.test;
// "Within a second", as for addresses (issue 21).
const PROPAGATION_MS = 1_000;
// After the listening connection is cut, Bun reconnects with backoff before resubscribing.
const RECONNECT_MS = 15_000;
const NOW_MS = 1_795_000_000_000;
const ACCOUNT = "acc_1";
const CONFIG = { domains: { recheckUnverifiedMs: 60_000, recheckVerifiedMs: 3_600_000, graceMs: 86_400_000 } } as never;
// Every node has the same key at rest (one database, one secrets key).
const ENCRYPTION_KEY = randomBytes(32);
const RAW = Buffer.from("From: a@example.com\r\nTo: b@example.org\r\nSubject: hi\r\n\r\nbody\r\n");
const verified: CheckOutcome = {
  checks: { dkim: true, ed25519: true, return_path: true, spf: true },
  reasons: {},
  health: null,
  verifiedAtMs: NOW_MS,
  failingSinceMs: null,
  checkedAtMs: NOW_MS,
  nextCheckAtMs: NOW_MS + 3_600_000,
};

interface Node {
  sql: SQL;
  repo: SendingDomainRepo;
  service: DomainService;
  sending: SenderDomains;
  clock: { nowMs: () => number; ms: number };
  /** Domain IDs (and markers) this node was told to forget by a notice, in order. */
  heard: string[];
  subscription?: ChannelSubscription;
}

function node(url: string): Node {
  const sql = new SQL(url, { max: 2 });
  const repo = createSendingDomainRepo(pgDb(sql));
  const clock = { ms: NOW_MS, nowMs: () => clock.ms };
  const service = new DomainService({
    repo,
    resolver: {} as never,
    clock,
    logger: silentLogger,
    config: () => CONFIG,
    encryptionKey: ENCRYPTION_KEY,
  });
  return { sql, repo, service, sending: senderDomains(service), clock, heard: [] };
}

/** The s= of the first DKIM-Signature: which key signed. */
const selectorOf = (signed: Buffer): string | null => /DKIM-Signature:[\s\S]*?\bs=([^;\s]+)/.exec(signed.toString())?.[1] ?? null;

describe("sending-domain changes across two nodes on one PostgreSQL", () => {
  let handle: EngineHandle | undefined;
  let url = "";
  let a: Node;
  let b: Node;
  const settleNotices = noticeSettler(SENDING_DOMAIN_CHANGES_CHANNEL, PROPAGATION_MS);
  /** Waits until B has had the notice of every write made before. */
  const settle = () => settleNotices(a.sql, b.heard);
  const refusalOnB = (domain: string) => b.sending.refusal(ACCOUNT, domain, false);
  /** A domain added on A and checked there with every record in place. */
  const verifiedOnA = async (domain: string) => {
    const d = await a.service.create(ACCOUNT, domain);
    await a.repo.recordCheck(d.id, verified, []);
    return d;
  };

  beforeAll(async () => {
    if (!engine.available()) return;
    handle = await engine.open();
    if (handle.kind === "postgres") url = handle.url;
    [a, b] = [node(url), node(url)];
    const caches = b.service;
    b.subscription = await listenForSendingDomainChanges((c, m, r) => subscribe(b.sql, c, m, r), {
      forget: (id) => (b.heard.push(id), caches.forget(id)),
      forgetAll: () => (b.heard.push("*"), caches.forgetAll()),
    });
  }, 60_000);
  beforeEach(async () => {
    await handle?.clear(["sending_domain_events", "sending_domains"]);
    if (b) b.clock.ms = NOW_MS;
  });
  afterAll(async () => {
    await b?.subscription?.stop();
    for (const n of [a, b]) {
      n?.service.close();
      await n?.sql.close();
    }
    await handle?.close();
  });

  it("a domain verified on node A may send from node B within a second, though B had it cached as unverified", async () => {
    const d = await a.service.create(ACCOUNT, "verify.example");
    await settle();
    expect(await refusalOnB("verify.example")).toStartWith(
      "domain verify.example is not verified: publish the records in dns_records of GET ",
    );
    await a.repo.recordCheck(d.id, verified, []);
    await eventually(async () => (await refusalOnB("verify.example")) === null, PROPAGATION_MS, "B to see the domain verified");
  });

  it("a domain deleted on node A is refused by node B within a second, and its decrypted keys leave B's memory", async () => {
    const d = await verifiedOnA("gone.example");
    await settle();
    expect(selectorOf(await b.sending.sign(ACCOUNT, "gone.example", RAW))).toBe(d.dkimSelector);
    expect(b.service.cachedKeyIds()).toEqual([d.id]);
    expect(await a.repo.softDelete(ACCOUNT, d.id, NOW_MS)).toBe(true);
    await eventually(
      async () => (await refusalOnB("gone.example"))?.startsWith("domain gone.example is not a sending domain of this account: "),
      PROPAGATION_MS,
      "B to refuse the deleted domain",
    );
    expect(b.service.cachedKeyIds()).toEqual([]);
    // A message B accepted before the delete goes out unsigned rather than with the old key.
    expect(selectorOf(await b.sending.sign(ACCOUNT, "gone.example", RAW))).toBeNull();
  });

  it("a domain added on node A, which node B had looked up as absent, sends from B within a second", async () => {
    expect(await refusalOnB("new.example")).toStartWith("domain new.example is not a sending domain of this account: add it with POST ");
    const d = await a.service.create(ACCOUNT, "new.example");
    await eventually(
      async () => (await refusalOnB("new.example"))?.startsWith("domain new.example is not verified: "),
      PROPAGATION_MS,
      "B to find the new domain",
    );
    await a.repo.recordCheck(d.id, verified, []);
    await eventually(async () => (await refusalOnB("new.example")) === null, PROPAGATION_MS, "B to see it verified");
  });

  it("a domain re-keyed on node A (deleted and added again) is signed by node B with the new key within a second", async () => {
    const old = await verifiedOnA("rekey.example");
    await settle();
    expect(selectorOf(await b.sending.sign(ACCOUNT, "rekey.example", RAW))).toBe(old.dkimSelector);
    await a.repo.softDelete(ACCOUNT, old.id, NOW_MS);
    const fresh = await verifiedOnA("rekey.example");
    expect(fresh.dkimSelector).not.toBe(old.dkimSelector);
    await eventually(
      async () => selectorOf(await b.sending.sign(ACCOUNT, "rekey.example", RAW)) === fresh.dkimSelector,
      PROPAGATION_MS,
      "B to sign with the new key",
    );
  });

  it("a change nobody announced (made by hand) is used by node B once its lookup is SENDING_DOMAIN_CACHE_MAX_AGE_MS old, not before", async () => {
    const d = await verifiedOnA("hand.example");
    await settle();
    expect(await refusalOnB("hand.example")).toBeNull();
    // No settle() from here: a marker is a notice too, and any notice empties B's lookups.
    await a.sql`UPDATE sending_domains SET deleted_at = ${NOW_MS} WHERE id = ${d.id}`;
    b.clock.ms = NOW_MS + SENDING_DOMAIN_CACHE_MAX_AGE_MS - 1;
    expect(await refusalOnB("hand.example")).toBeNull();
    b.clock.ms = NOW_MS + SENDING_DOMAIN_CACHE_MAX_AGE_MS;
    expect(await refusalOnB("hand.example")).toStartWith("domain hand.example is not a sending domain of this account: add it with POST ");
  });

  it("when B's listening connection is cut, B reconnects, forgets every domain (notices may be lost) and hears later changes", async () => {
    const d = await a.service.create(ACCOUNT, "cut.example");
    await settle();
    expect(await refusalOnB("cut.example")).toStartWith("domain cut.example is not verified: ");
    await a.sql`UPDATE sending_domains SET verified_at = ${NOW_MS} WHERE id = ${d.id}`;
    expect(await cutListeners(a.sql)).toBe(1);
    // Unannounced, the change is only seen because the resubscription forgot everything.
    await eventually(async () => (await refusalOnB("cut.example")) === null, RECONNECT_MS, "B to forget its domains on resubscribing");
    await a.repo.softDelete(ACCOUNT, d.id, NOW_MS);
    await eventually(async () => (await refusalOnB("cut.example")) !== null, PROPAGATION_MS, "B to hear changes again");
  }, 30_000);
});
