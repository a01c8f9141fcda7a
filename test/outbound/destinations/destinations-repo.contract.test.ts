// The DestinationRepo contract (issue 29), on both engines: a pause reads back field for
// field (times as numbers, never BIGINT strings; an operator's pause has no end); a new
// pause replaces the destination's row; resume says whether there was one; stale throttle
// pauses are deleted and operator pauses never; a recipient's destination is recorded.
import { afterAll, beforeAll, beforeEach, describe, expect } from "bun:test";
import type { DestinationRepo } from "../../../src/outbound/destinations/destinations.port.ts";
import { createDestinationRepo } from "../../../src/outbound/destinations/destinations.repo.ts";
import type { DestinationPause } from "../../../src/outbound/destinations/rules.ts";
import { type EngineHandle, STORE_ENGINES } from "../../helpers/engines.ts";

// Past 2^32 ms, so a 32-bit column or binding would show.
const NOW_MS = 1_795_000_000_000;

const throttle: DestinationPause = {
  destination: "google",
  source: "throttle",
  reason: "421 4.7.28 rate limited",
  pausedAtMs: NOW_MS,
  untilMs: NOW_MS + 300_000,
  pauseMs: 300_000,
};
const operator: DestinationPause = {
  destination: "example.org",
  source: "operator",
  reason: "paused by admin_tokens:abc",
  pausedAtMs: NOW_MS,
  untilMs: null,
  pauseMs: 0,
};

describe.each(STORE_ENGINES)("DestinationRepo on $name", (engine) => {
  const it = engine.test;
  let handle: EngineHandle;
  let repo: DestinationRepo;
  beforeAll(async () => {
    if (!engine.available()) return;
    handle = await engine.open();
    repo = createDestinationRepo(handle.db);
  }, 60_000);
  beforeEach(async () => {
    await handle?.clear(["destination_pauses"]);
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("pauses read back field for field; a new pause replaces the row; resume says whether one was there", async () => {
    await repo.putPause(throttle);
    await repo.putPause(operator);
    expect(await repo.listPauses()).toEqual([operator, throttle]);
    const doubled = { ...throttle, untilMs: NOW_MS + 900_000, pauseMs: 600_000 };
    await repo.putPause(doubled);
    expect(await repo.getPause("google")).toEqual(doubled);
    expect(await repo.removePause("example.org")).toBe(true);
    expect(await repo.removePause("example.org")).toBe(false);
    expect(await repo.getPause("example.org")).toBeNull();
  });

  it("stale throttle pauses are deleted once they can no longer double the next; operator pauses never", async () => {
    await repo.putPause(throttle);
    await repo.putPause(operator);
    expect(await repo.removeStalePauses(NOW_MS + 600_000)).toBe(0);
    expect(await repo.removeStalePauses(NOW_MS + 600_001)).toBe(1);
    expect((await repo.listPauses()).map((p) => p.destination)).toEqual(["example.org"]);
  });
});
