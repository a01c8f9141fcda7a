// SQL for ACME's state on SQLite: the TlsStateRepo port (tls-store.port.ts). Its
// statements run synchronously; the methods are async only to share the port with
// PostgreSQL (tls-store.pg.repo.ts).
import type { Store } from "../store/store.ts";
import { TlsStore, type TlsStateRepo } from "./tls-store.port.ts";

export function createTlsStateRepo(store: Store): TlsStateRepo {
  const db = store.db;
  const select = db.query<{ value: string }, [string]>("SELECT value FROM tls_state WHERE name = ?");
  const upsert = db.query(
    "INSERT INTO tls_state (name, value, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
  );
  const insertNew = db.query("INSERT INTO tls_state (name, value, updated_at) VALUES (?1, ?2, ?3) ON CONFLICT (name) DO NOTHING");
  const del = db.query("DELETE FROM tls_state WHERE name = ?");
  const dropExpired = db.query("DELETE FROM acme_challenges WHERE expires_at <= ?");
  const setChallenge = db.query(
    "INSERT INTO acme_challenges (token, key_authorization, expires_at) VALUES (?1, ?2, ?3) ON CONFLICT (token) DO UPDATE SET key_authorization = excluded.key_authorization, expires_at = excluded.expires_at",
  );
  const selectChallenge = db.query<{ key_authorization: string }, [string, number]>(
    "SELECT key_authorization FROM acme_challenges WHERE token = ? AND expires_at > ?",
  );
  const delChallenge = db.query("DELETE FROM acme_challenges WHERE token = ?");
  return {
    get: async (name) => select.get(name)?.value ?? null,
    put: async (name, value, nowMs) => void upsert.run(name, value, nowMs),
    putIfAbsent: async (name, value, nowMs) => void insertNew.run(name, value, nowMs),
    remove: async (name) => void del.run(name),
    setChallenge: async (token, keyAuthorization, expiresAtMs, nowMs) =>
      store.tx(() => {
        dropExpired.run(nowMs);
        setChallenge.run(token, keyAuthorization, expiresAtMs);
      }),
    challenge: async (token, nowMs) => selectChallenge.get(token, nowMs)?.key_authorization ?? null,
    deleteChallenge: async (token) => void delChallenge.run(token),
  };
}

/** The TlsStore of a SQLite store, its keys sealed with the store's secrets key. */
export const sqliteTlsStore = (store: Store, nowMs: () => number): TlsStore =>
  new TlsStore(createTlsStateRepo(store), store.secrets, nowMs);
