// The retention purge on PostgreSQL while another node writes (issue 21): a window is read
// without locks and its delete checks each row again, so a row changed by another node
// between the two is not deleted for what it was. Here another node refreshes an expired
// MTA-STS policy in place (a new expiry) while the purge's delete of it waits for that
// node's transaction: the refreshed policy stays, the other expired one goes.
import { SQL } from "bun";
import { describe, expect } from "bun:test";
import { pgRetentionPurges } from "../../src/jobs/retention-tables.pg.ts";
import { ManualClock } from "../../src/lib/clock.ts";
import { createStsRepo } from "../../src/outbound/delivery/mta-sts.repo.ts";
import { STORE_ENGINES } from "../helpers/engines.ts";
import { DAY, T0 } from "./retention-rows.ts";

const postgres = STORE_ENGINES.find((e) => e.name === "PostgreSQL")!;

describe("retention purge on PostgreSQL with another node writing", () => {
  postgres.test(
    "a policy refreshed by another node between the window's read and its delete stays",
    async () => {
      const h = await postgres.open();
      if (h.kind !== "postgres") throw new Error("not PostgreSQL");
      const other = new SQL(h.url, { max: 1 });
      try {
        const sts = createStsRepo(h.db, new ManualClock(T0));
        const policy = (id: string, expiresAtMs: number) => ({
          id,
          mode: "enforce" as const,
          mx: ["mx.example"],
          maxAgeSeconds: 86_400,
          expiresAtMs,
        });
        await sts.put("refreshed.example", policy("p1", T0 + DAY));
        await sts.put("expired.example", policy("p2", T0 + DAY));

        // The other node's refresh, its transaction held open until the purge waits for it.
        let commit = () => {};
        const held = new Promise<void>((resolve) => (commit = resolve));
        let refreshed = () => {};
        const updated = new Promise<void>((resolve) => (refreshed = resolve));
        const refresh = other.begin(async (tx) => {
          await tx`UPDATE mta_sts_policies SET policy_id = 'p3', expires_at = ${T0 + 30 * DAY} WHERE domain = 'refreshed.example'`;
          refreshed();
          await held;
        });
        await updated;

        const purge = pgRetentionPurges(h.sql).mta_sts_policies(T0 + 2 * DAY, 0, 100);
        // The purge read both policies as expired; its delete now waits for the refreshed row's lock.
        for (;;) {
          const [waiting] = await h.sql.unsafe(
            "SELECT COUNT(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM%'",
          );
          if (Number(waiting.n) > 0) break;
          await Bun.sleep(5);
        }
        commit();
        await refresh;

        expect(await purge).toEqual({ deleted: 1, next: null });
        expect(await sts.get("expired.example")).toBeNull();
        expect((await sts.get("refreshed.example"))?.id).toBe("p3");
      } finally {
        await other.close();
        await h.close();
      }
    },
    60_000,
  );
});
