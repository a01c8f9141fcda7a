// How many connections one destination gets at once: a window that starts at
// outbound.initial_domain_concurrency, grows while the destination accepts and shrinks when
// it fails us, within outbound.domain_concurrency. Postfix's queue manager does the same
// ("slow start": initial_destination_concurrency 5, default_destination_concurrency_limit
// 20, feedback of 1/concurrency per delivery), so a destination that takes mail fast gets
// it fast and one that struggles is not hammered.
//
// Feedback comes from connections, not recipients: a recipient refused (550 user unknown)
// says nothing about the destination's capacity; a connection that could not be made, a
// 421 or a dropped session does.

export interface WindowLimits {
  initial: number;
  max: number;
}

/** What one connection to the destination came to. */
export type ConnectionFeedback =
  /** It carried its messages (each accepted or refused by the destination on its merits). */
  | "carried"
  /** It could not be made, was refused (421, 4xx greeting), timed out or dropped. */
  | "failed";

/**
 * A destination's window: the connections it may have open, and the feedback gathered
 * towards the next step (counted in whole connections, so no fraction drifts).
 */
export interface DestinationWindow {
  connections: number;
  /** Good connections minus failed ones since the last step: a full window of either moves it by one. */
  credit: number;
}

/** The window of a destination never seen (or forgotten): the initial concurrency, within the limit. */
export const initialWindow = (limits: WindowLimits): DestinationWindow => ({ connections: Math.max(1, Math.min(limits.initial, limits.max)), credit: 0 });

/**
 * The window after one connection's feedback: a window's worth of good connections adds
 * one (+1/window each), a window's worth of failures takes one away (-1/window each);
 * never below 1 nor above the limit (a limit lowered by a reload applies at once).
 */
export function nextWindow(w: DestinationWindow, feedback: ConnectionFeedback, limits: WindowLimits): DestinationWindow {
  const connections = Math.min(w.connections, limits.max);
  const credit = w.credit + (feedback === "carried" ? 1 : -1);
  if (credit >= connections) return { connections: Math.min(limits.max, connections + 1), credit: 0 };
  if (credit <= -connections) return { connections: Math.max(1, connections - 1), credit: 0 };
  return { connections, credit };
}
