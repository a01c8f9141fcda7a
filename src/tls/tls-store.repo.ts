// SQL for ACME's state: the TlsStateRepo port (tls-store.port.ts), written once for both
// engines against a Db (src/store/db/db.ts); test/tls/tls-store.contract.test.ts runs it
// on SQLite and PostgreSQL.
import type { Db } from "../store/db/db.ts";
import { sql } from "../store/db/sql.ts";
import type { Store } from "../store/store.ts";
import { TlsStore, type TlsStateRepo } from "./tls-store.port.ts";

export function createTlsStateRepo(db: Db): TlsStateRepo {
  return {
    get: async (name) => (await db.get<{ value: string }>(sql`SELECT value FROM tls_state WHERE name = ${name}`))?.value ?? null,
    async put(name, value, nowMs) {
      await db.run(sql`INSERT INTO tls_state (name, value, updated_at) VALUES (${name}, ${value}, ${nowMs})
        ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`);
    },
    async putIfAbsent(name, value, nowMs) {
      await db.run(sql`INSERT INTO tls_state (name, value, updated_at) VALUES (${name}, ${value}, ${nowMs}) ON CONFLICT (name) DO NOTHING`);
    },
    async remove(name) {
      await db.run(sql`DELETE FROM tls_state WHERE name = ${name}`);
    },
    async setChallenge(token, keyAuthorization, expiresAtMs, nowMs) {
      await db.tx(async (tx) => {
        await tx.run(sql`DELETE FROM acme_challenges WHERE expires_at <= ${nowMs}`);
        await tx.run(sql`INSERT INTO acme_challenges (token, key_authorization, expires_at) VALUES (${token}, ${keyAuthorization}, ${expiresAtMs})
          ON CONFLICT (token) DO UPDATE SET key_authorization = excluded.key_authorization, expires_at = excluded.expires_at`);
      });
    },
    async challenge(token, nowMs) {
      const row = await db.get<{ key_authorization: string }>(
        sql`SELECT key_authorization FROM acme_challenges WHERE token = ${token} AND expires_at > ${nowMs}`,
      );
      return row?.key_authorization ?? null;
    },
    async deleteChallenge(token) {
      await db.run(sql`DELETE FROM acme_challenges WHERE token = ${token}`);
    },
  };
}

/** The TlsStore of a SQLite store, its keys sealed with the store's secrets key. */
export const sqliteTlsStore = (store: Store, nowMs: () => number): TlsStore =>
  new TlsStore(createTlsStateRepo(store.main), store.secrets, nowMs);
