// Rows for the retention purge's tests (retention-purge.test.ts on SQLite,
// retention-purge.contract.test.ts on both engines): the settings, an incoming status and
// a sending domain, with what each test is about given as arguments.
import type { SendingDomain } from "../../src/domains/sending-domain.ts";
import type { IncomingStatus } from "../../src/inbound/statuses/incoming-status.ts";
import type { RetentionSettings } from "../../src/jobs/retention.ts";

export const DAY = 86_400_000;
export const T0 = Date.parse("2026-10-01T00:00:00Z");

export const DEFAULTS: RetentionSettings = {
  keepMs: {
    incoming_statuses: 30 * DAY,
    messages: 30 * DAY,
    bodies: 7 * DAY,
    events: 30 * DAY,
    webhook_outbox: DAY,
    domain_events: 30 * DAY,
    mta_sts_policies: DAY,
    stats: 400 * DAY,
    idempotency_keys: DAY,
    webhook_posts: 7 * DAY,
  },
  intervalMs: 600_000,
  batchSize: 1000,
  batchPauseMs: 0,
};

export const status = (id: string, createdAtMs: number, accountId = "acc", addressId = "addr"): IncomingStatus => ({
  id,
  accountId,
  addressId,
  messageId: null,
  mailFrom: "a@b.c",
  rcptTo: "addr@in.test",
  subject: id,
  status: "200",
  statusCategory: "successful",
  tls: null,
  sizeBytes: 1,
  remoteIp: null,
  response: null,
  postroomMessageId: null,
  createdAtMs,
});

export const sendingDomain = (id: string, accountId: string, domain: string, createdAtMs: number): SendingDomain => ({
  id,
  accountId,
  domain,
  dkimSelector: "s",
  dkimPublicKey: "k",
  dkimPrivateKeyEnc: "k",
  ed25519Selector: "e",
  ed25519PublicKey: "k",
  ed25519PrivateKeyEnc: "k",
  checks: { dkim: false, ed25519: false, return_path: false, spf: false },
  reasons: {},
  health: null,
  verifiedAtMs: null,
  failingSinceMs: null,
  checkedAtMs: null,
  nextCheckAtMs: createdAtMs,
  createdAtMs,
});
