// The TOML config file's schema. Every key has a type, a default and a description;
// config.example.toml documents the same keys and a test keeps the two in step.
// Key names are never renamed: a config that worked keeps working after an upgrade.
import { Type, type Static } from "@sinclair/typebox";
import { Account } from "./schema-accounts.ts";
import { SHARE_PATTERN } from "./units.ts";
import {
  bool,
  duration,
  int,
  listen,
  NONZERO_DURATION,
  nonzeroDuration,
  rate,
  retention,
  SECRET_HASH,
  section,
  size,
  str,
} from "./schema-keys.ts";
import { DURATION_PATTERN } from "./units.ts";

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
    http: section(
      {
        listen: listen("127.0.0.1:8080", "address of the HTTP API and of attachment and tracking URLs"),
        public_url: str("http://localhost:8080", "base URL of this server as the world reaches it", {
          format: "http-url",
          errorMessage: "must be an http(s) URL",
        }),
        max_body_size: size("1MB", "largest request body of a management API call (413 beyond)"),
        search_window: int(
          10_000,
          100,
          10_000_000,
          "most records one search of incoming statuses (E6) or sent messages (E12) reads per request; with fewer matches than a page among them, the page ends with a Link to search on",
        ),
        search_max_terms: int(
          16,
          1,
          100,
          "most terms in one search query of E6 or E12 (422 beyond): each term is tested on every record the search reads",
        ),
        search_timeout: nonzeroDuration(
          "5s",
          "longest one search of E6 or E12 may run (503 beyond, saying so): searches run off the event loop, one at a time on SQLite, and a search waiting its turn counts too",
        ),
        max_json_depth: int(32, 2, 1000, "deepest nesting of arrays and objects in a request body (422 beyond, refused before parsing)"),
        tls: bool(
          false,
          "serve the API over HTTPS with the [tls] certificate; plain HTTP stays on tls.acme.challenge_listen for challenges and redirects",
        ),
        metrics_token: str("", 'hash of the token that reads GET /metrics (Bearer); "" = /metrics off', {
          pattern: "^(sha256:[0-9a-f]{64})?$",
          errorMessage: "must be sha256:<64 lowercase hex> (mint one with `postroom secret`) or empty",
        }),
        trusted_proxies: Type.Array(
          Type.String({ errorMessage: 'must be an IP address or CIDR range such as "127.0.0.1" or "10.0.0.0/8"' }),
          {
            default: [],
            description:
              "addresses or CIDR ranges of the reverse proxies in front of the API: only from them is the client's address taken from X-Forwarded-For or Forwarded (for the dashboard's sign-in limit and the log); [] = every request's client is the connecting address",
          },
        ),
      },
      "the HTTP API",
    ),
    smtp: section(
      {
        inbound_listen: listen("0.0.0.0:2525", 'inbound SMTP (25 in production); "" = off'),
        submission_listen: listen("0.0.0.0:5870", 'SMTP submission with STARTTLS (587 in production); "" = off'),
        submission_tls_listen: listen("", 'SMTP submission with implicit TLS (465 in production); "" = off'),
        max_message_size: size("25MB", "largest inbound message; announced as SIZE, larger mail gets 552"),
        allow_insecure_auth: bool(false, "allow AUTH before STARTTLS; for loopback tests only"),
        max_recipients: int(100, 1, 10_000, "most recipients of one inbound message; more get 452"),
        max_unknown_recipients: int(20, 1, 10_000, "refused recipients one connection may try before it is dropped (421)"),
        max_header_size: size("256KB", "largest header section of an inbound message; larger mail gets 552"),
        max_mime_depth: int(20, 1, 200, "deepest nesting of MIME parts in an inbound message; deeper mail gets 554"),
        max_mime_parts: int(500, 1, 100_000, "most MIME parts in an inbound message; more get 554"),
        max_connections: int(1000, 1, 1_000_000, "simultaneous SMTP connections per listener; more get 421"),
        socket_timeout: duration("5m", "idle time after which an SMTP connection is closed"),
        max_connections_per_ip: int(
          50,
          1,
          1_000_000,
          "simultaneous connections one client may hold on each SMTP listener (an IPv6 client by its /64; loopback too); more get 421 4.7.0",
        ),
        max_junk_commands: int(
          100,
          1,
          1_000_000,
          "NOOP, RSET, VRFY, EXPN, HELP, ETRN, HELO and EHLO one SMTP session may send since its last message; more get 421 4.7.0",
        ),
        max_session_time: nonzeroDuration(
          "10m",
          "longest an SMTP session may last, busy or not; then 421 4.4.2 (a message still arriving is not accepted)",
        ),
        min_data_rate: int(
          500,
          0,
          1_000_000_000,
          "bytes per second a client must send during DATA, over each data_rate_window; slower gets 421 4.4.2 and the message is not accepted; 0 = no minimum",
        ),
        data_rate_window: nonzeroDuration("30s", "the window over which min_data_rate is measured"),
        auth_timeout: nonzeroDuration("60s", "how long a submission session may go without a successful AUTH; then 421 4.7.0"),
        auth_failures_before_delay: int(
          5,
          0,
          1_000_000,
          "failed submission AUTH attempts one client (an IPv6 client by its /64) may make within auth_failure_window before each further attempt waits before it is checked",
        ),
        auth_failure_delay: nonzeroDuration(
          "1s",
          "wait before the first AUTH attempt past auth_failures_before_delay is checked; doubled at each further one, up to auth_failure_max_delay",
        ),
        auth_failure_max_delay: nonzeroDuration("30s", "longest wait before an AUTH attempt is checked"),
        auth_failures_before_close: int(
          10,
          1,
          1_000_000,
          "failed submission AUTH attempts from one client within auth_failure_window at which its connection is closed (421 4.7.0); its further attempts get 421 unchecked until the window has passed",
        ),
        auth_failure_window: nonzeroDuration("15m", "how long a client's failed AUTH attempts are remembered after its last one"),
        auth_failure_clients: int(
          10_000,
          1,
          10_000_000,
          "client addresses whose failed AUTH attempts are remembered at once (in memory; the least recently failing are forgotten first)",
        ),
      },
      "SMTP listeners",
    ),
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
    inbound: section(
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
          description: 'worker threads that parse received mail; 0 = the main thread; "auto" = one per core beyond two',
          errorMessage: 'must be "auto" or an integer from 0 to 64',
        }),
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
    ),
    outbound: section(
      {
        bounce_host: str("bounces.example.com", "host every sending domain's mta_domain must be a CNAME to"),
        sending_ips: Type.Array(Type.String({ format: "ipv4-or-ipv6", errorMessage: "must be an IPv4 or IPv6 address" }), {
          default: [],
          description: "addresses mail leaves from; SPF must authorise each",
        }),
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
        max_recipients: Type.Integer({
          default: 20,
          minimum: 1,
          maximum: 1000,
          description: "most recipients (to + cc) of one message",
          errorMessage: "must be an integer from 1 to 1000",
        }),
        max_size: size("10MB", "largest outgoing message"),
        concurrency: int(100, 1, 1000, "connections delivering mail at once, in all (Postfix's default_process_limit)"),
        domain_concurrency: int(
          20,
          1,
          100,
          "most connections delivering mail at once to one destination domain (Postfix's default_destination_concurrency_limit)",
        ),
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
      },
      "sending mail",
    ),
    webhooks: section(
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
    ),
    dashboard: section(
      {
        enabled: bool(true, "serve the dashboard at /dashboard/ on the HTTP listener (sign in with an account's API token)"),
        session_lifetime: nonzeroDuration("12h", "how long a dashboard session lasts after sign-in, however active"),
        session_idle: nonzeroDuration("2h", "a dashboard session unused for this long ends"),
        sign_in_rate: rate("10/min", "sign-in attempts allowed per client IP address per window (429 beyond)"),
        rate_limit: rate(
          "600/min",
          "API calls allowed per dashboard session per window; the account's own rate_limit is for its integrations and is not used",
        ),
        admin_tokens: Type.Array(
          Type.String({ pattern: SECRET_HASH, errorMessage: "must be sha256:<64 lowercase hex> (mint one with `postroom secret`)" }),
          {
            default: [],
            description:
              "hashes of operator tokens: they sign in to the dashboard's admin view, which switches between every account and shows the system; they open no API path by themselves",
          },
        ),
      },
      "the dashboard in the browser",
    ),
    domains: section(
      {
        recheck_unverified: duration("10m", "how often the DNS of a not yet verified sending domain is checked again"),
        recheck_verified: duration("24h", "how often the DNS of a verified sending domain is checked again"),
        grace_period: duration("72h", "how long a verified domain whose records fail keeps sending before it stops"),
      },
      "sending domains",
    ),
    retention: section(
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
    ),
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
    tls: section(
      {
        mode: Type.Union([Type.Literal("off"), Type.Literal("files"), Type.Literal("acme")], {
          default: "off",
          description: "where certificates come from",
          errorMessage: 'must be "off", "files" or "acme"',
        }),
        cert_file: str("", "PEM certificate chain (mode files)"),
        key_file: str("", "PEM private key (mode files)"),
        check_interval: duration("1m", "how often the files are checked for a replaced certificate and the ACME certificate for renewal"),
        renew_before: duration("30d", "an ACME certificate is renewed when less than this remains"),
        expiry_warning: duration("14d", "/healthz warns about a certificate that expires within this"),
        acme: section(
          {
            directory_url: str("https://acme-v02.api.letsencrypt.org/directory", "ACME directory of the CA", {
              format: "http-url",
              errorMessage: "must be an http(s) URL",
            }),
            email: str("", "contact address given to the CA"),
            domains: Type.Array(Type.String(), { default: [], description: "names the certificate covers" }),
            challenge_listen: listen("0.0.0.0:80", "where HTTP-01 challenges are answered"),
            ca_file: str("", "extra CA bundle to trust for the ACME server"),
            key_type: Type.Union([Type.Literal("rsa"), Type.Literal("ecdsa")], {
              default: "rsa",
              description: "key of the certificate: RSA 2048 (every SMTP client) or ECDSA P-256",
              errorMessage: 'must be "rsa" or "ecdsa"',
            }),
            failure_backoff: duration(
              "5m",
              "wait after a failed order before the first retry; doubles with each further failure, up to a day",
            ),
          },
          "ACME (mode acme)",
        ),
      },
      "certificates",
    ),
    accounts: Type.Array(Account, { default: [], description: "accounts, their tokens and SMTP credentials" }),
  },
  { additionalProperties: false },
);

export type RawConfig = Static<typeof ConfigSchema>;
export type RawAccount = Static<typeof Account>;
