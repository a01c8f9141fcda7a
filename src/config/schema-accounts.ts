// The [[accounts]] tables of the config schema: an account, its outbound accounts, its
// webhook, tracking and List-Unsubscribe settings.
import { Type } from "@sinclair/typebox";
import { bool, HEX16, rate, SECRET_HASH, str } from "./schema-keys.ts";

const Webhook = Type.Object(
  {
    url: Type.String({
      format: "http-url",
      errorMessage: "must be an http(s) URL",
      description: "URL that receives the message events (POST, JSON)",
    }),
    token: Type.String({
      minLength: 1,
      errorMessage: "must be a non-empty string",
      description: "sent as `Authorization: Bearer <token>` with every webhook POST",
    }),
    signing_secret: str("", 'Standard Webhooks secret ("whsec_..."); "" = unsigned', {
      pattern: "^(whsec_[A-Za-z0-9+/=]+)?$",
      errorMessage: 'must start with "whsec_" followed by Base64',
    }),
  },
  { additionalProperties: false, description: "where the account's message events are posted" },
);

const Tracking = Type.Object(
  {
    opens: bool(false, "add a 1x1 image to HTML parts and record an open event when it is fetched"),
    clicks: bool(false, "rewrite http(s) links in HTML parts to signed redirects that record a click event"),
  },
  { additionalProperties: false, default: {}, description: "open and click tracking of the account's messages (opt-in)" },
);

const Unsubscribe = Type.Object(
  {
    url: str(
      "",
      'where one-click unsubscribes (RFC 8058) are passed on once Postroom has checked its signed List-Unsubscribe URL: a POST naming the message and recipient, signed as the events webhook; "" = none',
      {
        pattern: "^(https?://.+)?$",
        errorMessage: "must be an http(s) URL or empty",
      },
    ),
    mailto: str("", 'mailbox for unsubscribe requests (mailto:); "" = none', {
      pattern: "^([^@\\s]+@[^@\\s]+)?$",
      errorMessage: "must be an email address or empty",
    }),
  },
  { additionalProperties: false, default: {}, description: "List-Unsubscribe headers on the account's messages" },
);

const OutboundAccount = Type.Object(
  {
    id: Type.String({
      pattern: HEX16,
      errorMessage: "must be 16 lowercase hex",
      description: "SMTP username and the {outboundAccountID} of POST /messages",
    }),
    api_keys: Type.Array(
      Type.String({ pattern: SECRET_HASH, errorMessage: "must be sha256:<64 lowercase hex> (mint one with `postroom secret`)" }),
      {
        default: [],
        description: "hashes of the SMTP passwords / smtpAuth keys",
      },
    ),
    send_rate_limit: rate("600/min", "sends allowed per window through the API and SMTP"),
    test_mode: bool(false, "force test mode on every message: validated and recorded, never sent"),
    ip_pool: str("", 'the [[outbound.ip_pools]] its mail leaves from; "" = the system\'s default address', {
      pattern: "^[A-Za-z0-9._-]{0,64}$",
      errorMessage: 'must be the name of an [[outbound.ip_pools]] table, or ""',
    }),
    webhook: Type.Optional(Webhook),
  },
  { additionalProperties: false },
);

export const Account = Type.Object(
  {
    id: Type.String({ pattern: HEX16, errorMessage: "must be 16 lowercase hex", description: "the {accountID} in every API path" }),
    name: str("", "a label for logs and the operator"),
    api_tokens: Type.Array(
      Type.String({ pattern: SECRET_HASH, errorMessage: "must be sha256:<64 lowercase hex> (mint one with `postroom secret`)" }),
      {
        default: [],
        description: "hashes of the management API tokens (Bearer)",
      },
    ),
    rate_limit: rate("5/min", "management API calls allowed per window"),
    test_mode: bool(false, "force test mode on every message of every outbound account"),
    markdown: bool(false, "allow the `markdown` body on POST /messages"),
    domain_targets: bool(false, "allow `domain_target` on custom domains"),
    webhook: Type.Optional(Webhook),
    tracking: Tracking,
    unsubscribe: Unsubscribe,
    outbound: Type.Array(OutboundAccount, { default: [], description: "SMTP credentials of the account" }),
  },
  { additionalProperties: false },
);
