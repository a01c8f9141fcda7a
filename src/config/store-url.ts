// `store.url`: where the store lives. "" is the embedded SQLite in data_dir; a
// postgres:// (or postgresql://) URL is a PostgreSQL database. The URL carries the
// password, so nothing shows it: messages name the server by describePostgres and pass
// any text that might quote the URL through withoutPassword.

export interface PostgresLocation {
  url: string;
  host: string;
  port: number;
  database: string;
  /** "" when the URL names none (the client then uses its default). */
  user: string;
  /** "" when the URL has none. Never printed. */
  password: string;
}

const SCHEMES = new Set(["postgres:", "postgresql:"]);
const DEFAULT_PORT = 5432;

/** The parts of a PostgreSQL URL, or null for another scheme or a URL without host or database. */
export function parsePostgresUrl(url: string): PostgresLocation | null {
  if (!URL.canParse(url)) return null;
  const parsed = new URL(url);
  if (!SCHEMES.has(parsed.protocol) || parsed.hostname === "") return null;
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ""));
  if (database === "" || database.includes("/")) return null;
  return {
    url,
    host: parsed.hostname,
    port: parsed.port === "" ? DEFAULT_PORT : Number(parsed.port),
    database,
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
}

/** Whether a store.url is one this build understands: "" (SQLite) or a PostgreSQL URL. */
export const isStoreUrl = (value: string): boolean => value === "" || parsePostgresUrl(value) !== null;

/** "PostgreSQL at host:port, database d as user u": the server without the password. */
export function describePostgres(at: PostgresLocation): string {
  return `PostgreSQL at ${at.host}:${at.port}, database ${at.database}${at.user ? ` as user ${at.user}` : ""}`;
}

/** `text` with the URL's password (as written and decoded) replaced by "***", wherever it appears. */
export function withoutPassword(text: string, at: PostgresLocation): string {
  const forms = new Set([at.password, encodeURIComponent(at.password), new URL(at.url).password].filter((p) => p !== ""));
  let out = text;
  for (const form of forms) out = out.split(form).join("***");
  return out;
}
