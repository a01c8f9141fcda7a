// bench:purge's store, filled before Postroom starts (bench/purge.ts's header says how and
// why): N incoming statuses in bands, one band per purge run, oldest first.
import { journaledStore } from "../src/inbound/statuses/statuses.repo.ts";
import type { IncomingStatus } from "../src/inbound/statuses/incoming-status.ts";
import { openStore } from "../src/store/store.ts";
import { MAIL_FROM, SENDER_DOMAIN } from "./message.ts";
import { ACCOUNT } from "./postroom.ts";

export const DAY_MS = 86_400_000;
/**
 * The statuses are in bands, one per slice: band k (0 the oldest) holds statuses from
 * OLDEST_DAYS - k days old to 12 hours younger, so each slice's retention falls in a gap of
 * 12 hours and no status crosses it while the run goes on.
 */
export const OLDEST_DAYS = 90;
export const BAND_MS = DAY_MS / 2;
const FILL_CHUNK = 50_000;

/** N statuses in `bands` bands (see BAND_MS), oldest first, stored as the repository stores them. */
export function fillStatuses(dataDir: string, rows: number, bands: number): number {
  const t0 = performance.now();
  const store = openStore(dataDir);
  const target = journaledStore(store);
  const oldestMs = Date.now() - OLDEST_DAYS * DAY_MS;
  for (let done = 0; done < rows; done += FILL_CHUNK) {
    const chunk: (IncomingStatus & { seq: number })[] = [];
    for (let i = done; i < Math.min(rows, done + FILL_CHUNK); i++) {
      const address = `addr${String(i % 100).padStart(16, "0")}`;
      chunk.push({
        id: i.toString(16).padStart(16, "0"),
        accountId: ACCOUNT.id,
        addressId: address,
        messageId: `<old-${i}@${SENDER_DOMAIN}>`,
        mailFrom: MAIL_FROM,
        rcptTo: `${address}@in.postroom.bench`,
        subject: "What's new in Postroom this month",
        status: "200",
        statusCategory: "successful",
        tls: null,
        sizeBytes: 4100,
        remoteIp: "127.0.0.1",
        response: null,
        postroomMessageId: null,
        createdAtMs: oldestMs + Math.floor((i * bands) / rows) * DAY_MS + Math.floor((((i * bands) % rows) / rows) * BAND_MS),
        seq: i + 1,
      });
    }
    target.store(chunk);
  }
  store.close();
  return performance.now() - t0;
}
