// The fields of the JSON log lines that tie the lines of one SMTP session, one message
// and one API request together, and those of the main lines about mail. Every name here
// has a row in docs/operations.md, "Log lines" (test/docs/reference.test.ts checks both
// ways), and the end-to-end test of the log (test/e2e/log-lines.test.ts) fails on a line
// about mail or an API request that carries a field not listed here.
export const LOG_FIELDS = [
  // Every line.
  "ts",
  "level",
  "msg",
  "component",
  // One SMTP session (a connection) and one message.
  "session_id",
  "message_id",
  "message_id_header",
  "from",
  "to",
  "ip",
  "tls",
  "reply",
  // Received mail.
  "address_id",
  "status_id",
  "status",
  "md5",
  "x_postroom_message_id",
  "at",
  "size",
  "bytes",
  "reason",
  "state",
  // Sent mail.
  "outbound_account_id",
  "recipient_id",
  "source",
  "test_mode",
  "send_at",
  "messages",
  "domain",
  "mx",
  "verdict",
  "smtp_code",
  "attempt",
  // Destinations (issue 29): throttle pauses and the operator's pauses.
  "destination",
  "pause_ms",
  "operator",
  // API requests.
  "request_id",
  "method",
  "path",
  "duration_ms",
  "account_id",
  "remote_ip",
  "error",
] as const;

export type LogField = (typeof LOG_FIELDS)[number];
