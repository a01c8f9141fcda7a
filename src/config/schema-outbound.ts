// The [outbound] and [webhooks] sections of the config schema: sending mail (queue,
// delivery, TLS policy) and posting the events of sent mail to webhooks (E10). Apart from
// schema.ts so each part of the config reads on its own; schema.ts composes the sections.
import { Type } from "@sinclair/typebox";
import { IpPools } from "./schema-ip-pools.ts";
import { deliverabilityKeys } from "./schema-deliverability.ts";
import { bool, duration, int, nonzeroDuration, section, size, str } from "./schema-keys.ts";
import { DestinationsKey } from "./schema-destinations.ts";
import { DURATION_PATTERN } from "./units.ts";

export const OutboundSection = section(
  {
    bounce_host: str("bounces.example.com", "host every sending domain's mta_domain must be a CNAME to"),
    sending_ips: Type.Array(Type.String({ format: "ipv4-or-ipv6", errorMessage: "must be an IPv4 or IPv6 address" }), {
      default: [],
      description: "addresses mail leaves from; SPF must authorise each",
    }),
    ip_pools: IpPools,
    smarthost: str("", 'relay every message through "smtp://user:pass@host:587" instead of the MX; "" = off', {
      pattern: "^(smtps?://.+)?$",
      errorMessage: 'must be "smtp://[user:pass@]host[:port]" or "smtps://..."',
    }),
    mx_port: Type.Integer({
      default: 25,
      minimum: 1,
      maximum: 65535,
      description: "port of remote MX hosts",
      errorMessage: "must be a port number (1-65535)",
    }),
    allow_private_mx: bool(false, "allow MX hosts that resolve to loopback or private addresses"),
    max_queue_time: duration("5d", "how long a message is retried before it bounces"),
    suppression_ttl: nonzeroDuration(
      "90d",
      "how long a hard bounce keeps an address on the suppression list (complaints and manual entries never expire)",
    ),
    max_recipients: Type.Integer({
      default: 20,
      minimum: 1,
      maximum: 1000,
      description: "most recipients (to, cc and bcc) of one message",
      errorMessage: "must be an integer from 1 to 1000",
    }),
    max_size: size("10MB", "largest outgoing message"),
    max_send_ahead: nonzeroDuration("30d", "how far ahead E11's send_at may schedule a message"),
    batch_max_messages: int(500, 1, 10_000, "most messages in one POST /messages/batch"),
    concurrency: int(100, 1, 1000, "connections delivering mail at once, in all (Postfix's default_process_limit)"),
    domain_concurrency: int(
      20,
      1,
      100,
      "most connections delivering mail at once to one destination domain (Postfix's default_destination_concurrency_limit)",
    ),
    destinations: DestinationsKey,
    initial_domain_concurrency: int(
      5,
      1,
      100,
      "connections a destination gets at first; each window's worth of good connections adds one, up to domain_concurrency, and failures take them away (Postfix's slow start)",
    ),
    retry_delays: Type.Array(Type.String({ pattern: DURATION_PATTERN, errorMessage: 'must be a duration such as "5m"' }), {
      default: ["5m", "15m", "30m", "1h", "2h", "4h", "8h"],
      minItems: 1,
      description: "waits between attempts after a temporary failure; the last repeats until max_queue_time",
    }),
    digest_interval: duration("15m", 'how often "digest" messages go out, in one batch'),
    tls_session_cache: int(
      1000,
      0,
      100000,
      "remote servers whose last TLS session is kept, so the next connection resumes it (a shorter handshake); 0 = off",
    ),
    connect_timeout: duration("30s", "how long to wait for a remote server to connect and greet"),
    command_timeout: duration("5m", "how long to wait for a remote server's reply to a command"),
    lease_time: duration(
      "30s",
      "how long a recipient being delivered stays with its node without a renewal: the node renews its leases every third of this while it delivers, however long an attempt takes, so a node that dies (or loses the store) hands its recipients to the others this long after its last renewal; at least 1s",
    ),
    require_tls: Type.Array(
      Type.String({
        pattern: "^\\.?[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$",
        errorMessage: 'must be a domain ("example.com") or a parent with a dot (".example.com" = its subdomains)',
      }),
      {
        default: [],
        description: "recipient domains never delivered to in clear: without STARTTLS the attempt fails and is retried, then bounces",
      },
    ),
    mta_sts: bool(true, "fetch and enforce the MTA-STS policy (RFC 8461) of recipient domains that publish one"),
    mta_sts_port: Type.Integer({
      default: 443,
      minimum: 1,
      maximum: 65535,
      description: "port of MTA-STS policy hosts (tests and proxies)",
      errorMessage: "must be a port number (1-65535)",
    }),
    tls_ca_file: str(
      "",
      "extra CA bundle trusted, besides the public roots, for MX certificates under MTA-STS and for policy hosts (private PKI)",
    ),
    blocked_extensions: Type.Array(
      Type.String({ pattern: "^[A-Za-z0-9]{1,16}$", errorMessage: "must be a file extension without the dot" }),
      {
        default: ["vbs", "exe", "bin", "bat", "chm", "com", "hta", "pif", "reg", "vbe", "vba", "msc", "msi"],
        description: "attachment file name endings refused on POST /messages and SMTP submission (every part of a raw message)",
      },
    ),
    tracking_link_ttl: duration(
      "180d",
      "how long a click-tracking link redirects, counted from when its message was accepted; then 410 Gone",
    ),
    webhook_endpoints_max: int(
      10,
      1,
      100,
      "webhook endpoints an outbound account may have through the API (besides the config's webhook): each is one more POST of every event it takes",
    ),
    ...deliverabilityKeys,
  },
  "sending mail",
);

export const WebhooksSection = section(
  {
    timeout: duration("10s", "how long a webhook receiver may take to answer"),
    lease_time: nonzeroDuration(
      "30s",
      "how long a webhook batch being posted stays with its node without a renewal: the node renews it every third of this while the POST waits (up to timeout), so a node that dies mid-POST hands the batch to another this long after its last renewal; at least 1s",
    ),
    retry_delays: Type.Array(Type.String({ pattern: DURATION_PATTERN, errorMessage: 'must be a duration such as "5m"' }), {
      default: ["10s", "1m", "5m", "30m", "2h", "6h"],
      minItems: 1,
      description: "waits before posting a batch again after a failure (with 10% jitter); the last repeats",
    }),
    max_age: duration("3d", "how long an event is kept for a receiver that does not acknowledge it"),
    batch_size: int(100, 1, 100, "most events in one POST"),
    allow_private: bool(false, "allow webhook URLs on loopback, private and link-local addresses"),
  },
  "the message events webhook (E10)",
);
