// Two Postroom nodes on one PostgreSQL (issue 21): each its own SQL client, repository and
// routing cache, node B listening for address changes. The routing cache's clock is frozen,
// so its age limit never runs out here: a cached address that B drops was dropped because
// A's write announced it (NOTIFY postroom_addresses). Without the listener B would serve the
// old address forever, and these tests fail.
import { SQL } from "bun";
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import { secretBox } from "../../../src/lib/secret-key.ts";
import { createAddressRepo, listenForAddressChanges } from "../../../src/inbound/addresses/addresses.repo.ts";
import { pgDb } from "../../../src/store/db/pg-db.ts";
import { routingCache, type AddressRepo } from "../../../src/inbound/addresses/addresses.port.ts";
import { notify, subscribe, type ChannelSubscription } from "../../../src/store/pg-notify.ts";
import { STORE_ENGINES, type EngineHandle } from "../../helpers/engines.ts";
import { cutListeners, noticeSettler } from "../../helpers/pg-notices.ts";
import { eventually } from "../../helpers/sink.ts";
import { address, INBOUND_TABLES, NOW_MS } from "../inbound-repos.ts";

const engine = STORE_ENGINES.find((e) => e.name === "PostgreSQL")!;
const it = engine.test;
// "An address created on one node receives mail on the other within a second" (issue 21).
const PROPAGATION_MS = 1_000;
// After the listening connection is cut, Bun reconnects with backoff before resubscribing.
const RECONNECT_MS = 15_000;

interface Node {
  sql: SQL;
  addresses: AddressRepo;
  listen(): Promise<void>;
  subscription?: ChannelSubscription;
}

function node(url: string): Node {
  const sql = new SQL(url, { max: 2 });
  const secrets = secretBox(() => Buffer.alloc(32, 7));
  const nowMs = () => NOW_MS;
  const cache = routingCache(nowMs);
  const n: Node = {
    sql,
    addresses: createAddressRepo(pgDb(sql), secrets, nowMs, cache),
    async listen() {
      n.subscription = await listenForAddressChanges((c, m, r) => subscribe(sql, c, m, r), cache);
    },
  };
  return n;
}

describe("address changes across two nodes on one PostgreSQL", () => {
  let handle: EngineHandle | undefined;
  let url = "";
  let a: Node;
  let b: Node;
  // Every notice B's client received, in order: B's cache hears on the same connection, so
  // once a marker sent after a write is here, B's cache has had that write's notice too.
  const heard: string[] = [];
  const settleNotices = noticeSettler("postroom_addresses", PROPAGATION_MS);
  const settle = () => settleNotices(a.sql, heard);

  beforeAll(async () => {
    if (!engine.available()) return;
    handle = await engine.open();
    if (handle.kind === "postgres") url = handle.url;
    a = node(url);
    b = node(url);
    await b.listen();
    await b.sql.listen("postroom_addresses", (payload) => heard.push(payload));
  }, 60_000);
  beforeEach(async () => {
    await handle?.clear(INBOUND_TABLES);
  });
  afterAll(async () => {
    await b?.subscription?.stop();
    await a?.sql.close();
    await b?.sql.close();
    await handle?.close();
  });

  const targetOnB = async (id: string) => (await b.addresses.findLive(id))?.target.url ?? null;

  it("a target changed on node A is routed to by node B within a second, though B had the old one cached", async () => {
    await a.addresses.insert(address("addr_move"));
    await settle();
    expect(await targetOnB("addr_move")).toBe("https://user@example.com/hook/addr_move");
    // The cache serves B now: a change behind its back (no NOTIFY) is not seen.
    await a.sql`UPDATE addresses SET target = 'https://unannounced.example/' WHERE id = 'addr_move'`;
    expect(await targetOnB("addr_move")).toBe("https://user@example.com/hook/addr_move");

    await a.addresses.update(address("addr_move", { target: { url: "https://moved.example/hook", password: null } }));
    await eventually(
      async () => (await targetOnB("addr_move")) === "https://moved.example/hook",
      PROPAGATION_MS,
      "B to see the new target",
    );
  });

  it("an address deleted on node A no longer routes on node B within a second", async () => {
    await a.addresses.insert(address("addr_gone"));
    await settle();
    expect(await targetOnB("addr_gone")).not.toBeNull();
    expect(await a.addresses.softDelete("acc_a", "addr_gone", NOW_MS)).toBe(true);
    await eventually(async () => (await targetOnB("addr_gone")) === null, PROPAGATION_MS, "B to forget the deleted address");
  });

  it("an address created on node A routes on node B, which had looked it up as absent, within a second", async () => {
    expect(await targetOnB("addr_new")).toBeNull();
    await a.addresses.insert(address("addr_new"));
    await eventually(async () => (await targetOnB("addr_new")) !== null, PROPAGATION_MS, "B to find the new address");
  });

  it("a write that is rolled back announces nothing: B keeps serving its cached address", async () => {
    await a.addresses.insert(address("addr_kept"));
    await settle();
    expect(await targetOnB("addr_kept")).toBe("https://user@example.com/hook/addr_kept");
    // A unique violation rolls the insert's transaction back, notice included.
    await expect(a.addresses.insert(address("addr_kept"))).rejects.toThrow();
    await a.sql`UPDATE addresses SET target = 'https://unannounced.example/' WHERE id = 'addr_kept'`;
    await settle();
    expect(await targetOnB("addr_kept")).toBe("https://user@example.com/hook/addr_kept");
  });

  it("when B's listening connection is cut, B reconnects, forgets what it cached (notices may be lost) and hears later changes", async () => {
    await a.addresses.insert(address("addr_cut"));
    await settle();
    expect(await targetOnB("addr_cut")).not.toBeNull();
    await a.sql`UPDATE addresses SET target = 'https://while-down.example/' WHERE id = 'addr_cut'`;
    expect(await cutListeners(a.sql)).toBe(1);
    // Unannounced, the change is only seen because the resubscription dropped the whole cache.
    await eventually(
      async () => (await targetOnB("addr_cut")) === "https://while-down.example/",
      RECONNECT_MS,
      "B to drop its cache on resubscribing",
    );
    await a.addresses.update(address("addr_cut", { target: { url: "https://after.example/", password: null } }));
    await eventually(async () => (await targetOnB("addr_cut")) === "https://after.example/", PROPAGATION_MS, "B to hear changes again");
  }, 30_000);

  it("a node whose SQL client is closed while listening does not crash, and A's writes still succeed", async () => {
    const c = node(url);
    await c.listen();
    await c.sql.close();
    await a.addresses.insert(address("addr_after_close"));
    await a.addresses.update(address("addr_after_close", { nickname: "still fine" }));
    // Stopping a subscription that outlived its client is harmless.
    await c.subscription!.stop();
    expect(await targetOnB("addr_after_close")).not.toBeNull();
  });

  it("a notice handler that throws is reported, not thrown: the process and the listener go on", async () => {
    const handled: string[] = [];
    const sub = await subscribe(b.sql, "postroom_test_throwing", (payload) => {
      handled.push(payload);
      if (payload === "bad") throw new Error("cannot handle bad");
    });
    await notify(a.sql, "postroom_test_throwing", "bad");
    await notify(a.sql, "postroom_test_throwing", "good");
    await eventually(() => handled.includes("good"), PROPAGATION_MS, "the notice after the throwing one");
    expect(handled).toEqual(["bad", "good"]);
    await sub.stop();
  });
});
