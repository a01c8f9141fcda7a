// SQL for ACME's state on PostgreSQL: the TlsStateRepo port (tls-store.port.ts), the same
// statements as tls-store.repo.ts on SQLite.
import type { SQL } from "bun";
import type { TlsStateRepo } from "./tls-store.port.ts";

export function createPgTlsStateRepo(sql: SQL): TlsStateRepo {
  return {
    async get(name) {
      const rows: { value: string }[] = await sql`SELECT value FROM tls_state WHERE name = ${name}`;
      return rows[0]?.value ?? null;
    },
    async put(name, value, nowMs) {
      await sql`INSERT INTO tls_state (name, value, updated_at) VALUES (${name}, ${value}, ${nowMs})
        ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`;
    },
    async putIfAbsent(name, value, nowMs) {
      await sql`INSERT INTO tls_state (name, value, updated_at) VALUES (${name}, ${value}, ${nowMs}) ON CONFLICT (name) DO NOTHING`;
    },
    async remove(name) {
      await sql`DELETE FROM tls_state WHERE name = ${name}`;
    },
    async setChallenge(token, keyAuthorization, expiresAtMs, nowMs) {
      await sql.begin(async (tx) => {
        await tx`DELETE FROM acme_challenges WHERE expires_at <= ${nowMs}`;
        await tx`INSERT INTO acme_challenges (token, key_authorization, expires_at) VALUES (${token}, ${keyAuthorization}, ${expiresAtMs})
          ON CONFLICT (token) DO UPDATE SET key_authorization = excluded.key_authorization, expires_at = excluded.expires_at`;
      });
    },
    async challenge(token, nowMs) {
      const rows: { key_authorization: string }[] =
        await sql`SELECT key_authorization FROM acme_challenges WHERE token = ${token} AND expires_at > ${nowMs}`;
      return rows[0]?.key_authorization ?? null;
    },
    async deleteChallenge(token) {
      await sql`DELETE FROM acme_challenges WHERE token = ${token}`;
    },
  };
}
