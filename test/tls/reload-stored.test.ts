// Several nodes on one store, ACME mode: only the node holding the check-certificate lease
// orders, and its renewal reaches the store only. Every other node's TlsManager takes the
// stored certificate at its own reload (reloadStored, the per-node reload-certificate job),
// serves it and tells its listeners, without ordering one itself. Two managers on one store
// (on PostgreSQL, each with its own SQL client, as two nodes are).
import { SQL } from "bun";
import { afterAll, beforeAll, describe, expect } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfigText } from "../../src/config/load.ts";
import type { Config } from "../../src/config/config.ts";
import { systemClock } from "../../src/lib/clock.ts";
import { createResolver } from "../../src/lib/dns.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { secretBox } from "../../src/lib/secret-key.ts";
import type { TlsMaterial } from "../../src/tls/certificate.ts";
import { ChallengeResponder } from "../../src/tls/challenges.ts";
import { TlsManager } from "../../src/tls/manager.ts";
import { TlsStore } from "../../src/tls/tls-store.port.ts";
import { createTlsStateRepo, sqliteTlsStore } from "../../src/tls/tls-store.repo.ts";
import { pgDb } from "../../src/store/db/pg-db.ts";
import { acmeWithoutCa } from "../helpers/acme-offline.ts";
import { makeSelfSignedCert } from "../helpers/certs.ts";
import { STORE_ENGINES, type EngineHandle } from "../helpers/engines.ts";
import { testConfigToml } from "../helpers/fixtures.ts";
import { tempDir } from "../helpers/tmp.ts";

const NAME = "mail.postroom.test";
const work = tempDir();
afterAll(() => work.remove());

// 90 days: not due for renewal, so no node orders (and an order would fail: no CA answers).
const pair = (name: string): TlsMaterial => {
  const { certFile, keyFile } = makeSelfSignedCert(work.path, NAME, name, 90);
  return { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") };
};

function acmeConfig(): Config {
  const parsed = parseConfigText(testConfigToml({ dataDir: join(work.path, "data"), tls: acmeWithoutCa(NAME, "1m") }));
  if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
  return parsed.config;
}

describe.each(STORE_ENGINES)("TlsManager.reloadStored on $name", (engine) => {
  const it = engine.test;
  let handle: EngineHandle | undefined;
  let second: SQL | undefined;
  const stores: TlsStore[] = [];

  beforeAll(async () => {
    if (!engine.available()) return;
    handle = await engine.open();
    if (handle.kind === "sqlite") {
      stores.push(sqliteTlsStore(handle.store, Date.now), sqliteTlsStore(handle.store, Date.now));
    } else {
      second = new SQL(handle.url, { max: 2 });
      const box = secretBox(() => Buffer.alloc(32, 7));
      stores.push(
        new TlsStore(createTlsStateRepo(handle.db), box, Date.now),
        new TlsStore(createTlsStateRepo(pgDb(second)), box, Date.now),
      );
    }
  }, 60_000);
  afterAll(async () => {
    await second?.close();
    await handle?.close();
  });

  it("a node serves the certificate another node saved once it reloads, tells its listeners, and orders nothing itself", async () => {
    const config = acmeConfig();
    const lines: string[] = [];
    const node = (store: TlsStore, id: string) =>
      new TlsManager({
        config: () => config,
        clock: systemClock,
        resolver: createResolver({ servers: ["127.0.0.1:9"] }),
        responder: new ChallengeResponder(store),
        store,
        logger: createLogger({ level: "info", sink: (l) => lines.push(l), fields: { node: id } }),
      });
    const first = pair("first");
    await stores[0]!.saveCertificate(first);
    const holder = node(stores[0]!, "a");
    const other = node(stores[1]!, "b");
    await holder.start();
    await other.start();
    expect(other.current()).toStrictEqual(first);
    const changes: TlsMaterial[] = [];
    other.onChange((m) => changes.push(m));

    // What the lease holder's renewal does with the certificate its order returned.
    const renewed = pair("renewed");
    await stores[0]!.saveCertificate(renewed);
    expect(other.current()).toStrictEqual(first);

    await other.reloadStored();
    expect(other.current()).toStrictEqual(renewed);
    expect(changes).toStrictEqual([renewed]);
    expect(other.status()).toMatchObject({ problem: null, certificate: { names: [NAME] } });
    // The same certificate again is no change.
    await other.reloadStored();
    expect(changes).toHaveLength(1);
    expect(lines.some((l) => l.includes('"acme order"'))).toBe(false);
  });
});
