// The [smtp] section of the config schema: the SMTP listeners and the limits every SMTP
// session is held to (size, recipients, time, data rate, AUTH failures). Apart from
// schema.ts so each part of the config reads on its own; schema.ts composes the sections.
import { bool, duration, int, listen, nonzeroDuration, section, size } from "./schema-keys.ts";

export const SmtpSection = section(
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
);
