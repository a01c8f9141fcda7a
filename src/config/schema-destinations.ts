// [[outbound.destinations]] (issue 29, DESIGN.md "Keys added for sending at volume"):
// recipient domains whose MX hosts a rule names share one window, one pace and one pause.
// The rule's meaning is src/outbound/destinations/rules.ts's; the built-in rules it can
// replace are in builtin.ts beside it.
import { Type } from "@sinclair/typebox";
import { int, nonzeroDuration, rate } from "./schema-keys.ts";

/** A destination's name: used in the operator API's paths and /metrics labels, so short and plain. */
export const DESTINATION_NAME_PATTERN = "^[a-z0-9][a-z0-9._-]{0,62}$";

export const DestinationRuleSchema = Type.Object(
  {
    name: Type.String({
      pattern: DESTINATION_NAME_PATTERN,
      errorMessage: 'must be 1 to 63 lowercase letters, digits, ".", "_" or "-" (such as "gmail")',
      description: "the destination's name (the operator API, /metrics); the same name as a built-in rule replaces it",
    }),
    mx: Type.Array(
      Type.String({
        pattern: "^\\.?[a-zA-Z0-9]([a-zA-Z0-9.-]*[a-zA-Z0-9])?$",
        errorMessage: 'must be an MX host name ("mx.example.com") or a suffix starting with "." (".google.com")',
      }),
      { minItems: 1, maxItems: 100, description: 'MX host names, or suffixes starting with ".", whose domains share this destination' },
    ),
    max_connections: Type.Optional(
      int(20, 1, 100, "connections at once per source IP to every domain of the destination together; none = outbound.domain_concurrency"),
    ),
    rate: rate("off", 'transactions per source IP, spread evenly ("600/min" = one every 100 ms); "off" = no pace'),
    throttle_replies: Type.Array(
      Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: "^[^\\x00-\\x1f\\x7f]+$",
        errorMessage: "must be 1 to 200 characters of reply text, without control characters",
      }),
      { default: [], maxItems: 50, description: "reply texts (any part, any case) that pause the whole destination" },
    ),
    pause: nonzeroDuration("5m", "the first pause after a throttle reply; doubled while throttles go on, at most 1h"),
  },
  { additionalProperties: false },
);

export const DestinationsKey = Type.Array(DestinationRuleSchema, {
  default: [],
  maxItems: 1000,
  description: "recipient domains whose MX hosts match share one window and pace (per source IP); built-in rules cover the large providers",
});
