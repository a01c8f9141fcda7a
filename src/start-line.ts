// What the start line says (docs/operations.md, Log lines): the store the node uses and
// where each listener answers, so one line tells an operator which database and which
// ports this process is; the PostgreSQL URL's password never appears.
import { join } from "node:path";
import type { Config } from "./config/config.ts";
import type { ListenAddress } from "./config/units.ts";
import { DATABASE_FILE } from "./store/store.ts";
import { describePostgres, parsePostgresUrl } from "./config/store-url.ts";

/** "SQLite at /var/lib/postroom/postroom.db" or "PostgreSQL at db:5432, database postroom as user postroom". */
export function storeDescription(config: Pick<Config, "dataDir" | "store">): string {
  const url = config.store.postgresUrl;
  if (url === null) return `SQLite at ${join(config.dataDir, DATABASE_FILE)}`;
  const at = parsePostgresUrl(url);
  return at ? describePostgres(at) : "PostgreSQL";
}

/** "127.0.0.1:2525", "[::1]:8080": with the port bound (the config's may be 0), or null when it is not up. */
export function listenText(at: ListenAddress, boundPort: number | null): string {
  const host = at.host.includes(":") ? `[${at.host}]` : at.host;
  return boundPort === null ? `${host}:${at.port} (not listening yet)` : `${host}:${boundPort}`;
}

export interface StartLineInput {
  version: string;
  config: Config;
  /** The bound port of each listener, null when it is not up (implicit TLS waiting for a certificate). */
  port(kind: "http" | "inbound" | "submission" | "submissionTls"): number | null;
}

/** The fields of `postroom started`: listeners that are off are left out. */
export function startLineFields({ version, config, port }: StartLineInput): Record<string, unknown> {
  const listens: [string, ListenAddress | null, Parameters<StartLineInput["port"]>[0]][] = [
    ["http", config.http.listen, "http"],
    ["smtp_inbound", config.smtp.inboundListen, "inbound"],
    ["smtp_submission", config.smtp.submissionListen, "submission"],
    ["smtp_submission_tls", config.smtp.submissionTlsListen, "submissionTls"],
  ];
  const listeners = Object.fromEntries(listens.flatMap(([name, at, kind]) => (at ? [[name, listenText(at, port(kind))]] : [])));
  return { version, hostname: config.hostname, accounts: config.accounts.length, store: storeDescription(config), listeners };
}
