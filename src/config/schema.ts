// The TOML config file's schema. Every key has a type, a default and a description;
// config.example.toml documents the same keys and a test keeps the two in step.
// Key names are never renamed: a config that worked keeps working after an upgrade.
// The larger sections live in schema-<section>.ts beside it; this file composes them
// in the order config.example.toml lists them, and holds the small ones.
import { type Static, Type } from "@sinclair/typebox";
import { Account } from "./schema-accounts.ts";
import { DashboardSection, HttpSection } from "./schema-http.ts";
import { InboundSection } from "./schema-inbound.ts";
import { duration, int, nonzeroDuration, section, size, str } from "./schema-keys.ts";
import { OutboundSection, WebhooksSection } from "./schema-outbound.ts";
import { RetentionSection } from "./schema-retention.ts";
import { SmtpSection } from "./schema-smtp.ts";
import { TlsSection } from "./schema-tls.ts";
import { SHARE_PATTERN } from "./units.ts";

export const ConfigSchema = Type.Object(
  {
    hostname: str("localhost", "FQDN of this server: SMTP banner, EHLO name, Message-ID host", {
      pattern: "^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$",
      errorMessage: "must be a host name such as mx.example.com",
    }),
    data_dir: str("./data", "directory of the database and stored files, relative to the working directory"),
    store: section(
      {
        url: str(
          "",
          '"" = the embedded SQLite in data_dir; "postgres://user:password@host:5432/database" = PostgreSQL, which several nodes may share (run `postroom migrate` first, and after each upgrade)',
          {
            format: "store-url",
            errorMessage:
              'must be "" (the embedded SQLite in data_dir) or a PostgreSQL URL such as "postgres://user:password@host:5432/database" (postgres:// or postgresql://, with a host and a database; @ : / # ? in the password written as %40 %3A %2F %23 %3F)',
          },
        ),
        connect_timeout: nonzeroDuration("10s", "how long to wait for PostgreSQL to accept a connection"),
        max_connections: int(
          20,
          2,
          1000,
          "most connections this node opens to PostgreSQL (one more listens for other nodes' changes); the sum over all nodes must stay under the server's max_connections",
        ),
      },
      "where the store lives",
    ),
    cluster: section(
      {
        node_id: str(
          "",
          'the name of this node among those sharing one store: /healthz answers it as "node", /metrics as postroom_node_info, and it holds the leases of the jobs that run once per cluster and of the recipients it delivers (unique per node, two nodes on one machine included); "" = the hostname of the machine',
          {
            pattern: "^[A-Za-z0-9._-]{0,64}$",
            errorMessage: 'must be 1 to 64 letters, digits, ".", "_" or "-" (or "" for the machine\'s hostname)',
          },
        ),
        job_lease_time: nonzeroDuration(
          "30s",
          "how long the lease of a job that runs once per cluster stays with its node without a renewal: the node renews it every third of this for as long as it runs, so the job stays on one node, and a node that dies (or loses the store) hands it to another this long after its last renewal; at least 1s",
        ),
      },
      "running several nodes on one store",
    ),
    log: section(
      {
        level: Type.Union([Type.Literal("debug"), Type.Literal("info"), Type.Literal("warn"), Type.Literal("error")], {
          default: "info",
          description: "least severe level written to the log",
          errorMessage: 'must be "debug", "info", "warn" or "error"',
        }),
        flush_interval: duration(
          "100ms",
          'how long debug and info lines may be held to be written together (warn and error lines go out at once); "0ms" writes every line at once',
        ),
      },
      "logging (JSON lines on stdout)",
    ),
    http: HttpSection,
    smtp: SmtpSection,
    limits: section(
      {
        mail_in_flight: size(
          "256MB",
          "memory that mail being received or sent (inbound SMTP, submission, E11, deliveries) may hold at once, as Postroom counts it (a few times each message's size); a message that would pass it is deferred: 451 4.3.1 at MAIL FROM (SIZE=) or DATA, 503 with Retry-After from E11; a delivery waits",
        ),
        mail_in_flight_per_client: str(
          "25%",
          "the most of mail_in_flight one unauthenticated inbound client (an IPv4 address, an IPv6 /64) may hold, as a percentage of it or a size; past it its messages wait, unread; its oldest message may pass it, so one message larger than the share still comes in",
          { pattern: SHARE_PATTERN, errorMessage: 'must be a percentage from 0% to 100% (such as "25%") or a size such as "64MB"' },
        ),
        mail_in_flight_reserved: str(
          "25%",
          "the part of mail_in_flight unauthenticated inbound clients (port 25) can never take: kept for authenticated submission, E11 and deliveries, as a percentage of it or a size",
          { pattern: SHARE_PATTERN, errorMessage: 'must be a percentage from 0% to 100% (such as "25%") or a size such as "64MB"' },
        ),
        mail_in_flight_idle_time: nonzeroDuration(
          "10s",
          "a message being received whose client sends nothing for this long loses its memory: it is deferred (451 4.3.1 after its DATA)",
        ),
        mail_in_flight_max_wait: nonzeroDuration(
          "2m",
          "how long a message being received may wait, unread, for memory (older messages first); then it is deferred (451 4.3.1). Keep it under the senders' data timeout (Postfix: 180s)",
        ),
      },
      "memory held by mail in flight",
    ),
    inbound: InboundSection,
    outbound: OutboundSection,
    webhooks: WebhooksSection,
    dashboard: DashboardSection,
    domains: section(
      {
        recheck_unverified: duration("10m", "how often the DNS of a not yet verified sending domain is checked again"),
        recheck_verified: duration("24h", "how often the DNS of a verified sending domain is checked again"),
        grace_period: duration("72h", "how long a verified domain whose records fail keeps sending before it stops"),
      },
      "sending domains",
    ),
    retention: RetentionSection,
    dns: section(
      {
        servers: Type.Array(
          Type.String({ pattern: "^(\\[[0-9a-fA-F:.]+\\]|[0-9.]+|[0-9a-fA-F:]+)(:\\d{1,5})?$", errorMessage: 'must be "ip" or "ip:port"' }),
          {
            default: [],
            description: 'resolvers to ask; [] = the system resolvers; e.g. ["127.0.0.1:5353"]',
          },
        ),
      },
      "DNS",
    ),
    tls: TlsSection,
    accounts: Type.Array(Account, { default: [], description: "accounts, their tokens and SMTP credentials" }),
  },
  { additionalProperties: false },
);

export type RawConfig = Static<typeof ConfigSchema>;
export type RawAccount = Static<typeof Account>;
