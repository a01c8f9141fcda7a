// How the recipients of one claim are split over connections: by recipient domain, each
// domain a connection per RECIPIENTS_PER_NEW_CONNECTION recipients (at most
// RECIPIENTS_PER_CONNECTION each), within what its destination (the domain's MX, or the
// smarthost every domain shares) may still open and the connections free in all. Recipients that
// get no connection (their domain has no room, or too little for all of them) wait for the
// next free slot.

/** Recipients given to one connection at most, so one busy domain cannot hold a slot forever. */
export const RECIPIENTS_PER_CONNECTION = 50;
/**
 * Recipients waiting for each connection opened, within the window: a few share a
 * connection (one TCP and TLS handshake for several messages), more are spread over more
 * connections, so a window grown by slow start is used at once rather than after the
 * chunks already running have ended.
 */
export const RECIPIENTS_PER_NEW_CONNECTION = 10;

export interface ChunkPlan<T> {
  /** Each chunk goes over one connection to its domain. */
  chunks: { domain: string; items: T[] }[];
  /** Items that got no connection now. */
  unstarted: T[];
}

/**
 * Pure. `free`: connections free in all; `room(destination)`: connections the destination
 * may still open (its window less those open); `destinationOf(domain)`: whose window a
 * domain's connections count against: the domain itself when mail goes to its MX, the
 * one relay for every domain when it goes through a smarthost. Domains are served in the
 * order of their first item.
 */
export function planChunks<T>(
  items: readonly T[],
  domainOf: (item: T) => string,
  free: number,
  room: (destination: string) => number,
  destinationOf: (domain: string) => string = (domain) => domain,
): ChunkPlan<T> {
  const byDomain = new Map<string, T[]>();
  for (const item of items) {
    const d = domainOf(item);
    const list = byDomain.get(d);
    if (list) list.push(item);
    else byDomain.set(d, [item]);
  }
  const plan: ChunkPlan<T> = { chunks: [], unstarted: [] };
  let slots = free;
  /** Connections this plan gives each destination: several domains may share one window. */
  const planned = new Map<string, number>();
  for (const [domain, list] of byDomain) {
    const destination = destinationOf(domain);
    const connections = Math.min(
      room(destination) - (planned.get(destination) ?? 0),
      slots,
      Math.ceil(list.length / RECIPIENTS_PER_NEW_CONNECTION),
    );
    if (connections <= 0) {
      plan.unstarted.push(...list);
      continue;
    }
    // At most RECIPIENTS_PER_CONNECTION each also when the room, not the count, limits the
    // connections: the rest wait for the next free one (or a wider window) instead of
    // queueing up behind one connection for minutes.
    const size = Math.min(RECIPIENTS_PER_CONNECTION, Math.ceil(list.length / connections));
    const started = Math.min(list.length, size * connections);
    for (let i = 0; i < started; i += size) plan.chunks.push({ domain, items: list.slice(i, i + size) });
    plan.unstarted.push(...list.slice(started));
    slots -= connections;
    planned.set(destination, (planned.get(destination) ?? 0) + connections);
  }
  return plan;
}
