// (beyond) GET /api/v0.1/operator/health/sending (API.md section 10): every sending IP's
// PTR, forward-confirmed reverse DNS, HELO match and blocklist listings at the last check
// (src/deliverability/), with the checks that could not be made. Operator tokens only.
import { t } from "elysia";
import { ipWarnings } from "../deliverability/sending-ip.ts";
import { errorResponses } from "../http/errors.ts";
import { isoTime } from "../lib/clock.ts";
import { operatorRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";

const nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T) => t.Union([schema, t.Null()]);

const SendingIpSchema = t.Object(
  {
    ip: t.String({ description: "the address mail leaves from" }),
    helo: t.String({ description: "the name it gives in EHLO" }),
    ptr: nullable(t.String({ description: "its PTR name; null when it has none or the lookup failed (see unknown)" })),
    fcrdns: nullable(t.Boolean({ description: "whether the PTR name resolves back to the address; null when that could not be asked" })),
    helo_matches: nullable(t.Boolean({ description: "whether the PTR name is the HELO name; null without a PTR name" })),
    listed: t.Array(
      t.Object(
        { zone: t.String({ description: "the blocklist zone" }), text: t.String({ description: 'the zone\'s TXT reason, "" when none' }) },
        { additionalProperties: false },
      ),
      { description: "the blocklists (outbound.dnsbl_zones) that list the address" },
    ),
    unknown: t.Array(
      t.Object(
        { check: t.String({ description: '"ptr", "fcrdns" or a blocklist zone' }), reason: t.String() },
        { additionalProperties: false },
      ),
      { description: "checks that could not be made (a DNS failure, a refused query): neither good nor bad" },
    ),
    warnings: t.Array(t.String(), { description: "what to fix, in words; also on /healthz" }),
  },
  { additionalProperties: false, title: "SendingIpHealth" },
);

const SendingHealthSchema = t.Object(
  {
    ips: t.Array(SendingIpSchema),
    checked_at: nullable(t.String({ format: "date-time", description: "when the last check ran; null before the first" })),
  },
  { additionalProperties: false, title: "SendingHealth" },
);

/** What the route takes of the API's dependencies. */
export type SendingHealthDeps = Pick<ApiDeps, "deliverability">;

export function sendingHealthRoutes(deps: SendingHealthDeps) {
  return operatorRoutes("sending-health").get(
    "/health/sending",
    async () => {
      const rows = await deps.deliverability.sending.list();
      const checkedAtMs = rows.length === 0 ? null : Math.max(...rows.map((r) => r.checkedAtMs));
      return {
        ips: rows.map(({ checkedAtMs: _, ...h }) => ({ ...h, warnings: ipWarnings(h) })),
        checked_at: checkedAtMs === null ? null : isoTime(checkedAtMs),
      };
    },
    {
      response: { 200: SendingHealthSchema, ...errorResponses(401, 403) },
      detail: {
        operationId: "getSendingHealth",
        summary: "(beyond) every sending IP's PTR, FCrDNS and blocklist listings at the last check",
        tags: ["Operator"],
        security: [{ operatorToken: [] }],
      },
    },
  );
}
