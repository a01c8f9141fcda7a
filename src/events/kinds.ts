// Event kinds of a sent message's recipients (docs/webhooks.md, Event kinds).

export const LIFECYCLE_KINDS = [
  "registration",
  "dispatch",
  "delivery",
  "soft_bounce",
  "bounce",
  "retries_exhausted",
  "suppressed",
  "open",
  "click",
  "error",
  "auto_reply",
] as const;

/** Recorded for our own use; never shown by E13 nor posted to webhooks. */
export const INTERNAL_KINDS = ["process", "spamd", "complaint"] as const;

export type LifecycleKind = (typeof LIFECYCLE_KINDS)[number];
export type EventKind = LifecycleKind | (typeof INTERNAL_KINDS)[number];

export const isInternalKind = (k: string): boolean => (INTERNAL_KINDS as readonly string[]).includes(k);

/** Details of dispatch, delivery, soft_bounce and bounce. */
export interface AttemptDetails {
  mx: string | null;
  smtp_code: number | null;
  smtp_response: string | null;
  attempt: number;
  /** The pool address the attempt left from; absent when the outbound account has no ip_pool. */
  source_ip?: string;
}
