// A DestinationRepo in this process's memory: for a delivery worker built without a store's
// (unit tests of the worker), where pauses need not be shared and no row records a destination.
import type { DestinationRepo } from "./destinations.port.ts";
import type { DestinationPause } from "./rules.ts";

export function memoryDestinationRepo(): DestinationRepo {
  const pauses = new Map<string, DestinationPause>();
  return {
    listPauses: async () => [...pauses.values()],
    getPause: async (d) => pauses.get(d) ?? null,
    putPause: async (p) => void pauses.set(p.destination, p),
    removePause: async (d) => pauses.delete(d),
    async removeStalePauses(nowMs) {
      let n = 0;
      for (const [d, p] of pauses)
        if (p.source === "throttle" && p.untilMs !== null && p.untilMs + p.pauseMs < nowMs) n += pauses.delete(d) ? 1 : 0;
      return n;
    },
    recordDestination: async () => {},
  };
}
