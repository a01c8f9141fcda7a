// (beyond) The operator's destination pauses (API.md section 10): pause a destination (a
// [[outbound.destinations]] rule's name, or a recipient domain no rule takes) until resumed,
// resume it, and list what is paused and why. Pauses live in the store: every node's
// delivery worker reads them each second, so a paused destination gets no attempt on any node.
import { t } from "elysia";
import { isoTime } from "../lib/clock.ts";
import type { DestinationPause } from "../outbound/destinations/rules.ts";
import { pauseHolds } from "../outbound/destinations/rules.ts";
import { DESTINATION_NAME_PATTERN } from "../config/schema-destinations.ts";
import { errorResponses, invalid } from "../http/errors.ts";
import { operatorRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";

const security = [{ operatorToken: [] }];
const NAME = new RegExp(DESTINATION_NAME_PATTERN);
/** A recipient domain names its destination when no rule takes it: up to 253 characters. */
const DOMAIN = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

const PauseAnswer = t.Object(
  { destination: t.String(), paused: t.Boolean() },
  { additionalProperties: false, title: "DestinationPauseAnswer" },
);

const PausedDestination = t.Object(
  {
    destination: t.String(),
    source: t.Union([t.Literal("throttle"), t.Literal("operator")]),
    reason: t.String({ description: "the throttle reply, or the operator token that paused it" }),
    paused_at: t.String({ format: "date-time" }),
    until: t.Union([t.String({ format: "date-time" }), t.Null()], { description: "null: until resumed" }),
  },
  { additionalProperties: false, title: "PausedDestination" },
);

const paused = (p: DestinationPause) => ({
  destination: p.destination,
  source: p.source,
  reason: p.reason,
  paused_at: isoTime(p.pausedAtMs),
  until: p.untilMs === null ? null : isoTime(p.untilMs),
});

/** What the routes take of the API's dependencies. */
export type DestinationRouteDeps = Pick<ApiDeps, "clock" | "logger" | "destinations">;

/** The destination the path names, lowercased; 422 when it can name none. */
function destinationParam(raw: string): string {
  const d = decodeURIComponent(raw).toLowerCase();
  if (!NAME.test(d) && !DOMAIN.test(d))
    throw invalid("destination", 'must be a destination\'s name ("google") or a recipient domain ("example.com")');
  return d;
}

export function destinationRoutes(deps: DestinationRouteDeps) {
  const params = t.Object({ destination: t.String({ description: "a [[outbound.destinations]] rule's name, or a recipient domain" }) });
  return operatorRoutes("destinations")
    .get(
      "/destinations/paused",
      async () => {
        const now = deps.clock.nowMs();
        return (await deps.destinations.listPauses()).filter((p) => pauseHolds(p, now)).map(paused);
      },
      {
        response: { 200: t.Array(PausedDestination), ...errorResponses(401, 403) },
        detail: {
          operationId: "listPausedDestinations",
          summary: "(beyond) destinations paused now, by a throttle reply or an operator, and why",
          tags: ["Operator"],
          security,
        },
      },
    )
    .post(
      "/destinations/:destination/pause",
      async ({ params, operator }) => {
        const destination = destinationParam(params.destination);
        const now = deps.clock.nowMs();
        await deps.destinations.putPause({
          destination,
          source: "operator",
          reason: `paused by ${operator.tokenLabel}`,
          pausedAtMs: now,
          untilMs: null,
          pauseMs: 0,
        });
        deps.logger.info("operator paused a destination", { destination, operator: operator.tokenLabel });
        return { destination, paused: true };
      },
      {
        params,
        response: { 200: PauseAnswer, ...errorResponses(401, 403, 422) },
        detail: {
          operationId: "pauseDestination",
          summary: "(beyond) pause a destination on every node until resumed: its recipients wait in the queue, keeping their place",
          tags: ["Operator"],
          security,
        },
      },
    )
    .post(
      "/destinations/:destination/resume",
      async ({ params, operator }) => {
        const destination = destinationParam(params.destination);
        await deps.destinations.removePause(destination);
        deps.logger.info("operator resumed a destination", { destination, operator: operator.tokenLabel });
        return { destination, paused: false };
      },
      {
        params,
        response: { 200: PauseAnswer, ...errorResponses(401, 403, 422) },
        detail: {
          operationId: "resumeDestination",
          summary: "(beyond) resume a destination paused by an operator or a throttle reply: its recipients go out at once",
          tags: ["Operator"],
          security,
        },
      },
    );
}
