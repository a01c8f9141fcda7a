// The [http] and [dashboard] sections of the config schema: the HTTP API's listener and
// request limits, and the dashboard served on it. Apart from schema.ts so each part of the
// config reads on its own; schema.ts composes the sections.
import { Type } from "@sinclair/typebox";
import { bool, int, listen, nonzeroDuration, rate, SECRET_HASH, section, size, str } from "./schema-keys.ts";

export const HttpSection = section(
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
    trusted_proxies: Type.Array(Type.String({ errorMessage: 'must be an IP address or CIDR range such as "127.0.0.1" or "10.0.0.0/8"' }), {
      default: [],
      description:
        "addresses or CIDR ranges of the reverse proxies in front of the API: only from them is the client's address taken from X-Forwarded-For or Forwarded (for the dashboard's sign-in limit and the log); [] = every request's client is the connecting address",
    }),
  },
  "the HTTP API",
);

export const DashboardSection = section(
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
);
