// What a SIGHUP reload reports as needing a restart: the settings read once at start-up.
import { expect, test } from "bun:test";
import { parseConfigText } from "../../src/config/load.ts";
import { restartNeededFor } from "../../src/config/reload.ts";
import { ACCOUNT_A, testConfigToml } from "../helpers/fixtures.ts";

const base = testConfigToml({ dataDir: "/tmp/postroom-reload-test", accounts: [ACCOUNT_A] });
const config = (text: string) => {
  const parsed = parseConfigText(text);
  if (!parsed.ok) throw new Error(parsed.problems.join("\n"));
  return parsed.config;
};

test.each([
  ["nothing changed", base, []],
  ["an account (applied at once)", base.replace(`"${ACCOUNT_A.id}"`, '"a0a0a0a0a0a0a0a9"'), []],
  ["the HTTP listener", base.replace('listen = "127.0.0.1:0"', 'listen = "127.0.0.1:8081"'), ["http.listen"]],
  ["data_dir", base.replace("/tmp/postroom-reload-test", "/tmp/elsewhere"), ["data_dir"]],
  ["store.url", `${base}\n[store]\nurl = "postgres://postroom:pw@db/postroom"`, ["store"]],
  ["the node id", `${base}\n[cluster]\nnode_id = "node-2"`, ["cluster.node_id"]],
  ["the job lease time", `${base}\n[cluster]\njob_lease_time = "1m"`, ["cluster.job_lease_time"]],
  [
    "the recipient and webhook lease times (read at every claim and heartbeat)",
    base.replace("[outbound]\n", '[outbound]\nlease_time = "1m"\n').replace("[dns]", '[webhooks]\nlease_time = "1m"\n[dns]'),
    [],
  ],
  ["the log level", base.replace('level = "warn"', 'level = "debug"'), ["log"]],
  [
    "SMTP limits (read when a session opens)",
    base
      .replace(
        "[smtp]\n",
        '[smtp]\nmax_connections = 10\nmax_recipients = 2\nsocket_timeout = "1m"\nmax_connections_per_ip = 5\nmax_junk_commands = 10\nmax_session_time = "1m"\nmin_data_rate = 1000\ndata_rate_window = "5s"\nauth_timeout = "10s"\n',
      )
      .replace("allow_insecure_auth = false", "allow_insecure_auth = true"),
    [],
  ],
  ["a retention (read at every purge)", `${base}\n[retention]\nincoming_statuses = "90d"\nbatch_size = 10`, []],
  ["the purge interval", `${base}\n[retention]\ninterval = "1h"`, ["retention.interval"]],
])("%s", (_name, nextText, expected) => {
  expect(restartNeededFor(config(base), config(nextText))).toEqual(expected);
});
