// Lanes: a destination's window and pace from one pool's source addresses (issue 29). A
// claim's recipients are grouped by domain and pool (the outbound account's ip_pool): each
// group is one ChunkTarget, counted against its lane, so a rule's max_connections and rate
// hold per destination and source. Recipients of no pool share the "default" source.
import type { IpPoolConfig } from "../../config/config.ts";
import { DEFAULT_SOURCE_IP, type DestinationRule, type ResolvedDestination } from "../destinations/rules.ts";
import type { ClaimedRecipient } from "../queue/message.ts";
import type { ChunkTarget } from "./deliver-chunk.ts";

/** A lane: a destination's window from one source (a pool's addresses, or DEFAULT_SOURCE_IP). */
export const laneOf = (windowKey: string, sourceIp: string = DEFAULT_SOURCE_IP): string => `${windowKey} from ${sourceIp}`;

/** A pool's source part of its lanes: its addresses, in config order; DEFAULT_SOURCE_IP without one. */
export const sourceOf = (pool: IpPoolConfig | null): string => (pool ? pool.addresses.map((a) => a.ip).join(",") : DEFAULT_SOURCE_IP);

/** The key a claimed recipient is grouped (and planned) by: its domain and its pool. */
export const groupKeyOf = (domain: string, pool: IpPoolConfig | null): string => `${domain}\n${pool?.name ?? ""}`;

/** Lanes whose rule is remembered at most. */
const MAX_LANES = 10_000;

/** The rule of each lane seen (its window's limit) and the lanes seen of each destination window. */
export class LaneBook {
  private readonly rules = new Map<string, DestinationRule | null>();
  private readonly byWindow = new Map<string, Set<string>>();

  /** The rule bounding `lane`, if one was seen. */
  ruleOf(lane: string): DestinationRule | null | undefined {
    return this.rules.get(lane);
  }

  /** Each claimed group's target; remembers their lanes. */
  targets(
    claimed: readonly ClaimedRecipient[],
    poolFor: (item: ClaimedRecipient) => IpPoolConfig | null,
    resolved: ReadonlyMap<string, ResolvedDestination>,
  ): { targets: Map<string, ChunkTarget>; keyOf: Map<ClaimedRecipient, string> } {
    const targets = new Map<string, ChunkTarget>();
    const keyOf = new Map<ClaimedRecipient, string>();
    for (const item of claimed) {
      const domain = item.recipient.domain;
      const pool = poolFor(item);
      const key = groupKeyOf(domain, pool);
      keyOf.set(item, key);
      if (targets.has(key)) continue;
      const r = resolved.get(domain)!;
      const sourceIp = sourceOf(pool);
      const lane = laneOf(r.windowKey, sourceIp);
      this.remember(lane, r);
      targets.set(key, { domain, resolved: r, pool, lane, sourceIp });
    }
    return { targets, keyOf };
  }

  /**
   * Whether a claim should leave `r`'s domains alone: every lane of its window seen (the
   * default one if none) is busy. One pool's full lane does not hold back another pool.
   */
  allBusy(r: ResolvedDestination, laneBusy: (lane: string) => boolean): boolean {
    const lanes = this.byWindow.get(r.windowKey);
    if (!lanes || lanes.size === 0) return laneBusy(laneOf(r.windowKey));
    for (const lane of lanes) if (!laneBusy(lane)) return false;
    return true;
  }

  private remember(lane: string, r: ResolvedDestination): void {
    if (this.rules.size >= MAX_LANES && !this.rules.has(lane)) {
      this.rules.clear();
      this.byWindow.clear();
    }
    this.rules.set(lane, r.rule);
    let lanes = this.byWindow.get(r.windowKey);
    if (!lanes) this.byWindow.set(r.windowKey, (lanes = new Set()));
    lanes.add(lane);
  }
}
