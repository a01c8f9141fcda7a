// The [retention] section of the config schema: how long what grows with traffic is kept,
// and how the purge job paces itself. Apart from schema.ts so each part of the config
// reads on its own; schema.ts composes the sections.
import { duration, int, NONZERO_DURATION, retention, section, str } from "./schema-keys.ts";

export const RetentionSection = section(
  {
    incoming_statuses: retention("30d", "how long incoming statuses (E6) are kept"),
    messages: retention(
      "30d",
      "how long sent messages (E12, E13) are kept, with their recipients, events and bodies; a message still queued, or with events not yet posted to its webhook, is kept whatever its age",
    ),
    bodies: retention("7d", "how long the raw body of a sent message is kept; a message still queued keeps its body whatever its age"),
    events: retention(
      "30d",
      "how long message events are kept (for messages kept longer than their events); an event not yet posted to its webhook is kept",
    ),
    webhook_outbox: retention(
      "1d",
      "how long the webhook bookkeeping of an event is kept once the event was posted, expired or dropped (the event itself stays)",
    ),
    domain_events: retention("30d", "how long the verification history of sending domains is kept"),
    webhook_posts: retention(
      "7d",
      "how long the record of each POST to a webhook receiver (status, first bytes of its answer) is kept for the dashboard",
    ),
    stats: retention(
      "400d",
      "how long the hourly counts behind the dashboard's charts are kept (a few hundred small rows per account and day)",
    ),
    mta_sts_policies: retention(
      "1d",
      "how long a recipient domain's cached MTA-STS policy is kept after it expired (an expired policy is never applied)",
    ),
    idempotency_keys: retention(
      "24h",
      "how long an E11 Idempotency-Key, and the Message-ID of a submitted message, is remembered: the same request within it is answered as the first was and not queued again",
    ),
    interval: str("10m", "how often the purge runs", {
      pattern: `^\\s*${NONZERO_DURATION}\\s*$`,
      errorMessage: 'must be a duration above zero such as "10m"',
    }),
    batch_size: int(1000, 1, 100_000, "rows each purge statement deletes at most (messages: with their recipients, events and bodies)"),
    batch_pause: duration(
      "50ms",
      'wait between two purge statements, in which SMTP and the API are served; "0ms" = only hand over to pending I/O',
    ),
  },
  "how long what grows with traffic is kept; one job purges it in small batches",
);
