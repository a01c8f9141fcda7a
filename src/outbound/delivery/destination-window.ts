// How many connections one destination gets at once: a window that starts at
// outbound.initial_domain_concurrency, grows while the destination accepts and shrinks when
// it fails us, within outbound.domain_concurrency. Postfix's queue manager does the same
// ("slow start": initial_destination_concurrency 5, default_destination_concurrency_limit
// 20, feedback of 1/concurrency per delivery), so a destination that takes mail fast gets
// it fast and one that struggles is not hammered.
//
// Feedback comes from every transaction, as Postfix's qmgr takes it from every delivery:
// one the destination answered (accepted, or refused on its merits: 550 user unknown says
// nothing of its capacity) counts for it; a connection that could not be made, a 421 or a
// dropped session counts against it.

export interface WindowLimits {
  initial: number;
  max: number;
}

/** What one transaction with the destination came to. */
export type ConnectionFeedback =
  /** The destination answered it (accepted, or refused on the message's merits). */
  | "carried"
  /** No connection, a 421 (or a refused greeting), a timeout or a dropped session. */
  | "failed";

/**
 * A destination's window: the connections it may have open, and the feedback gathered
 * towards the next step (counted in whole connections, so no fraction drifts).
 */
export interface DestinationWindow {
  connections: number;
  /** Transactions carried minus failed since the last step: a full window of either moves it by one. */
  credit: number;
}

/** The window of a destination never seen (or forgotten): the initial concurrency, within the limit. */
export const initialWindow = (limits: WindowLimits): DestinationWindow => ({
  connections: Math.max(1, Math.min(limits.initial, limits.max)),
  credit: 0,
});

/**
 * The window after one transaction's feedback: a window's worth carried adds one
 * (+1/window each), a window's worth of failures takes one away (-1/window each);
 * never below 1 nor above the limit (a limit lowered by a reload applies at once).
 */
export function nextWindow(w: DestinationWindow, feedback: ConnectionFeedback, limits: WindowLimits): DestinationWindow {
  const connections = Math.min(w.connections, limits.max);
  const credit = w.credit + (feedback === "carried" ? 1 : -1);
  if (credit >= connections) return { connections: Math.min(limits.max, connections + 1), credit: 0 };
  if (credit <= -connections) return { connections: Math.max(1, connections - 1), credit: 0 };
  return { connections, credit };
}

/** The one destination of every recipient domain when mail goes through a smarthost. */
export const relayDestination = (smarthost: string): string => `relay ${smarthost}`;

/**
 * Whose window a recipient domain's connections count against: the domain's own (its MX
 * hosts) when mail goes by MX, the relay's when it goes through a smarthost. Postfix's
 * relayhost is one destination too, so a relay is not opened 20 connections per
 * recipient domain (the provider behind it limits a sender's connections in all).
 */
export function destinationOf(domain: string, smarthost: string | null): string {
  return smarthost ? relayDestination(smarthost) : domain;
}

/** Destinations whose window is remembered while nothing is open to them; past it, a quiet one starts over. */
export const MAX_WINDOWS = 10_000;

/** The delivery worker's destinations: each one's window and the connections open to it now. */
export class DestinationWindows {
  private readonly open = new Map<string, number>();
  private readonly windows = new Map<string, DestinationWindow>();

  /**
   * `limits`: each destination's, from the config of the moment (a reload applies at the next
   * feedback): a [[outbound.destinations]] rule's max_connections, else outbound.domain_concurrency.
   */
  constructor(private readonly limits: (destination: string) => WindowLimits) {}

  /** Connections `domain` may still open now. */
  room(domain: string): number {
    const limits = this.limits(domain);
    const window = this.windows.get(domain) ?? initialWindow(limits);
    return Math.min(window.connections, limits.max) - (this.open.get(domain) ?? 0);
  }

  /** Destinations with no room left: a claim leaves their recipients alone. */
  full(): string[] {
    return [...this.open.keys()].filter((d) => this.room(d) <= 0);
  }

  opened(domain: string): void {
    this.open.set(domain, (this.open.get(domain) ?? 0) + 1);
  }

  closed(domain: string): void {
    const n = (this.open.get(domain) ?? 1) - 1;
    if (n > 0) return void this.open.set(domain, n);
    this.open.delete(domain);
    // Nothing open to it: what was learnt of it is kept while the map is small.
    if (this.windows.size > MAX_WINDOWS) this.windows.delete(domain);
  }

  /** What one transaction or connection said of the destination's capacity, as Postfix's qmgr counts it: each delivery. */
  feedback(domain: string, f: ConnectionFeedback): void {
    const limits = this.limits(domain);
    this.windows.set(domain, nextWindow(this.windows.get(domain) ?? initialWindow(limits), f, limits));
  }
}
