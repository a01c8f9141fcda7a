// A chunk's outcomes as they settle (src/outbound/delivery/pending-outcomes.ts): one that
// fails while the chunk still waits on something else is handled at once, not left as a
// rejection nobody handled (which ends the node: src/main.ts), and counted at the end.
import { expect, test } from "bun:test";
import { PendingOutcomes } from "../../src/outbound/delivery/pending-outcomes.ts";

test("an outcome that fails before the chunk asks is handled at once and reported when it asks", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    const outcomes = new PendingOutcomes();
    const lost = new Error("terminating connection due to administrator command");
    outcomes.add(Promise.reject(lost));
    outcomes.add(Promise.resolve());
    // The chunk goes on with the next message meanwhile (a turn of the event loop or more).
    await Bun.sleep(20);
    let late: (value: unknown) => void = () => {};
    outcomes.add(new Promise((resolve) => (late = resolve)));
    let settled = false;
    const failures = outcomes.settled().then((f) => ((settled = true), f));
    await Bun.sleep(5);
    expect(settled).toBe(false);
    late(undefined);
    expect(await failures).toEqual([lost]);
    expect(unhandled).toEqual([]);
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});
