// The [inbound] section of the config schema: receiving mail and posting it to targets,
// with [inbound.spamd]. Apart from schema.ts so each part of the config reads on its own;
// schema.ts composes the sections.
import { Type } from "@sinclair/typebox";
import { bool, duration, int, listen, nonzeroDuration, section, size, str } from "./schema-keys.ts";
import { DURATION_PATTERN } from "./units.ts";

export const InboundSection = section(
  {
    domain: str("in.example.com", "addresses are <addressID>@<domain>", {
      pattern: "^[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$",
      errorMessage: "must be a domain name",
    }),
    target_timeout: duration("30s", "how long a target may take to answer the POST"),
    allow_private_targets: bool(false, "allow targets on loopback, private and link-local addresses"),
    max_redirects: int(3, 0, 10, "redirects (301, 302, 307, 308) followed when posting to a target"),
    target_response_max: size("4KB", "how much of a target's answer is kept on the incoming status"),
    attachment_url_ttl: duration("7d", "how long the signed URL of a locally stored attachment works"),
    status_retry_rows: int(
      10_000,
      0,
      1_000_000,
      "incoming statuses held in memory, to be written again, when their write failed after the target answered (the sender keeps its reply); beyond, they are logged and lost",
    ),
    parse_workers: Type.Union([Type.Literal("auto"), Type.Integer({ minimum: 0, maximum: 64 })], {
      default: "auto",
      description:
        'worker threads for received mail: one checks SPF and DKIM (the main thread parses), two or more also parse and check DMARC; 0 = all on the main thread; "auto" = one per core beyond the first, at most four',
      errorMessage: 'must be "auto" or an integer from 0 to 64',
    }),
    retry_delays: Type.Array(Type.String({ pattern: DURATION_PATTERN, errorMessage: 'must be a duration such as "5m"' }), {
      default: ["1m", "5m", "15m", "1h", "2h", "4h"],
      minItems: 1,
      errorMessage: 'must list at least one duration, such as ["1m", "5m", "1h"]',
      description:
        '(beyond) addresses with on_target_failure = "queue": waits between POSTs of a kept message to a failing target (at least 1s each); the last repeats until max_queue_time',
    }),
    max_queue_time: nonzeroDuration(
      "3d",
      '(beyond) how long a kept message (on_target_failure = "queue") is posted again before it expires',
    ),
    max_queued_per_account: size(
      "1GB",
      '(beyond) the most bytes of kept messages (on_target_failure = "queue") an account may have waiting; beyond, its mail is deferred (451) as with "defer", so one target down cannot fill the disk',
    ),
    spamd: section(
      {
        address: listen("", 'host:port of a SpamAssassin spamd that scores received mail (envelope.spamd in the payload); "" = off'),
        timeout: nonzeroDuration("2s", "how long mail waits for spamd's score at most; then it goes on without one (success false)"),
        max_size: size("512KB", "larger messages are not scanned (success false)"),
      },
      "(beyond) spam scores from SpamAssassin",
    ),
  },
  "receiving mail",
);
