// The [[outbound.ip_pools]] tables of the config schema (issue 29): the addresses mail
// leaves from, each with the name it greets with (EHLO) and, for an address still being
// warmed up, its daily caps. Apart from schema-outbound.ts so that section reads on its own.
import { Type } from "@sinclair/typebox";

/** A host name as EHLO sends it (and as the address's PTR record should name it). */
const HOST_NAME = "^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)+$";

/** A calendar day, "2026-11-01": the first day of a warm-up, counted in UTC. */
export const WARMUP_DATE_PATTERN = "^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$";

const Warmup = Type.Object(
  {
    start: Type.String({
      pattern: WARMUP_DATE_PATTERN,
      errorMessage: 'must be a date such as "2026-11-01" (the first day of the warm-up, UTC)',
      description: "the first day of the warm-up (UTC); before it the first day's cap applies",
    }),
    daily: Type.Array(Type.Integer({ minimum: 0, maximum: 10_000_000, errorMessage: "must be an integer from 0 to 10000000" }), {
      minItems: 1,
      maxItems: 366,
      errorMessage: "must be a list of 1 to 366 daily caps such as [50, 100, 200]",
      description:
        "recipients a day this address may send to one destination: the first number on the start day, the next the day after...; no cap once the list ends",
    }),
  },
  { additionalProperties: false, description: "daily caps per destination while the address warms up; left out = no cap" },
);

const PoolAddress = Type.Object(
  {
    ip: Type.String({
      format: "ipv4-or-ipv6",
      errorMessage: "must be an IPv4 or IPv6 address",
      description: "an address of this host that delivery connections bind to",
    }),
    helo: Type.String({
      pattern: HOST_NAME,
      errorMessage: "must be a host name such as mta1.example.com (the name this address's PTR record gives)",
      description: "the name connections from this address greet with (EHLO); its PTR record should name it",
    }),
    warmup: Type.Optional(Warmup),
  },
  { additionalProperties: false },
);

export const IpPool = Type.Object(
  {
    name: Type.String({
      pattern: "^[A-Za-z0-9._-]{1,64}$",
      errorMessage: 'must be 1 to 64 letters, digits, ".", "_" or "-"',
      description: "what outbound accounts name in ip_pool",
    }),
    addresses: Type.Array(PoolAddress, {
      minItems: 1,
      maxItems: 256,
      errorMessage: 'must list 1 to 256 addresses such as { ip = "203.0.113.7", helo = "mta1.example.com" }',
      description: "the pool's addresses; destinations are spread over them, each destination always from the same one",
    }),
  },
  { additionalProperties: false },
);

export const IpPools = Type.Array(IpPool, {
  default: [],
  description:
    "sending addresses in named pools; an outbound account with ip_pool sends from its pool; [] = the system's default address, EHLO = hostname",
});
