// The [outbound] keys of deliverability health (docs/operations.md, Deliverability health):
// the blocklists every sending IP is checked on, whether a pool avoids its listed addresses,
// and the complaint rate that earns a warning. Spread into OutboundSection (schema-outbound.ts).
import { Type } from "@sinclair/typebox";
import { bool } from "./schema-keys.ts";

/** A DNS name of at least two labels whose last is not all digits (so no IPv4 address). */
export const ZONE_PATTERN =
  "^(?=.{1,253}\\.?$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.?$";

export const deliverabilityKeys = {
  dnsbl_zones: Type.Array(
    Type.String({ pattern: ZONE_PATTERN, errorMessage: 'must be a domain name, the blocklist\'s zone (e.g. "zen.spamhaus.org")' }),
    {
      default: ["zen.spamhaus.org", "b.barracudacentral.org", "bl.spamcop.net"],
      maxItems: 20,
      description:
        "DNS blocklist zones every sending IP is looked up on, at start and hourly; [] = none. Spamhaus refuses queries from public resolvers: set dns.servers to your own",
    },
  ),
  avoid_listed_ips: bool(
    true,
    "a pool with other addresses opens no new connection from an address listed on a dnsbl_zones blocklist (all listed: all are used)",
  ),
  complaint_rate_warning: Type.Number({
    default: 0.001,
    minimum: 0,
    maximum: 1,
    description:
      "complaints per delivered message of an outbound account over the last 24 hours above which /healthz and the dashboard warn (0.001 = 0.1 %)",
    errorMessage: "must be a fraction from 0 to 1 (0.001 = 0.1 %)",
  }),
};
