// SQL for webhook endpoints (webhook-endpoint.ts): the WebhookEndpointRepo port
// (webhook-endpoints.port.ts), written once for both engines against a Db. The token and
// signing secret are sealed with the store's SecretBox (data_dir/keys/secrets.key) before
// they are written, so the database never holds them in clear (docs/security.md). Which
// events reach an endpoint is decided when they are recorded (events.repo.ts).
import type { SecretBox } from "../lib/secret-key.ts";
import type { Db } from "../store/db/db.ts";
import { lockKey, toInt } from "../store/db/dialect.ts";
import { sql } from "../store/db/sql.ts";
import { endpointTarget } from "./outbox.port.ts";
import { decodeFilter, encodeFilter, type WebhookEndpoint } from "./webhook-endpoint.ts";
import type { WebhookEndpointRepo } from "./webhook-endpoints.port.ts";

interface Row {
  id: string;
  account_id: string;
  outbound_account_id: string;
  url: string;
  events: string;
  token: string | null;
  signing_secret: string;
  created_at: unknown;
}

/** The advisory locks that serialize creates per outbound account on PostgreSQL (the outbox's claims use 0x0b0e). */
const CREATE_LOCK_CLASS = 0x0b0f;

const COLUMNS = sql`id, account_id, outbound_account_id, url, events, token, signing_secret, created_at`;

export function createWebhookEndpointRepo(db: Db, box: SecretBox): WebhookEndpointRepo {
  const fromRow = (r: Row): WebhookEndpoint => ({
    id: r.id,
    accountId: r.account_id,
    outboundAccountId: r.outbound_account_id,
    url: r.url,
    events: decodeFilter(r.events),
    token: r.token === null ? null : box.open(r.token),
    signingSecret: box.open(r.signing_secret),
    createdAtMs: toInt(r.created_at, "webhook_endpoints.created_at"),
  });
  return {
    async create(e, max) {
      const token = e.token === null ? null : box.seal(e.token);
      const secret = box.seal(e.signingSecret);
      return db.tx(async (tx) => {
        await lockKey(tx, CREATE_LOCK_CLASS, e.outboundAccountId);
        const taken = await tx.get<{ n: unknown }>(
          sql`SELECT COUNT(*) AS n FROM webhook_endpoints WHERE outbound_account_id = ${e.outboundAccountId}`,
        );
        if (toInt(taken!.n, "count") >= max) return false;
        await tx.run(sql`INSERT INTO webhook_endpoints (${COLUMNS})
          VALUES (${e.id}, ${e.accountId}, ${e.outboundAccountId}, ${e.url}, ${encodeFilter(e.events)}, ${token}, ${secret}, ${e.createdAtMs})`);
        return true;
      });
    },
    async list(accountId, outboundAccountId) {
      const rows = await db.all<Row>(
        outboundAccountId === null
          ? sql`SELECT ${COLUMNS} FROM webhook_endpoints WHERE account_id = ${accountId} ORDER BY created_at, id`
          : sql`SELECT ${COLUMNS} FROM webhook_endpoints WHERE account_id = ${accountId} AND outbound_account_id = ${outboundAccountId}
              ORDER BY created_at, id`,
      );
      return rows.map(fromRow);
    },
    async get(id) {
      const row = await db.get<Row>(sql`SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = ${id}`);
      return row ? fromRow(row) : null;
    },
    async remove(accountId, id) {
      return db.tx(async (tx) => {
        const gone = await tx.run(sql`DELETE FROM webhook_endpoints WHERE account_id = ${accountId} AND id = ${id}`);
        if (gone.changes === 0) return false;
        // Its deliveries stop here: a batch being posted is not acknowledged (its lease finds the rows dropped).
        await tx.run(sql`UPDATE webhook_outbox SET state = 'dropped' WHERE state = 'pending' AND target = ${endpointTarget(id)}`);
        return true;
      });
    },
  };
}
