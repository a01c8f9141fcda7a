// (beyond) POST /api/v0.1/{accountId}/addresses/{addressId}/test: the dashboard's "send a
// test POST". A sample message goes to the address's target as received mail would
// (src/inbound/test-post.ts); the answer is what the target said and the SMTP reply a
// sender would have got. Nothing is recorded.
import { t } from "elysia";
import { accountRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { errorResponses, notFound } from "../http/errors.ts";
import { noRecord } from "../http/refusals.ts";

const TestPostSchema = t.Object(
  {
    status: t.String({
      description: 'the target\'s HTTP status ("200", "404"), client_timeout or unreachable, as an incoming status would show it',
    }),
    status_category: t.Union([t.Literal("successful"), t.Literal("rejected"), t.Literal("delayed")]),
    smtp_reply: t.String({ description: "what a sender would have been told" }),
    response: t.Union([t.String(), t.Null()], {
      description: "the target's answer (first bytes) or why there was none, for every non-2xx",
    }),
    duration_ms: t.Integer(),
  },
  { additionalProperties: false, title: "TestPostResult" },
);

/** What the routes take of the API's dependencies. */
export type AddressTestDeps = Pick<ApiDeps, "config" | "addresses" | "testPost">;

export function addressTestRoutes(deps: AddressTestDeps) {
  return accountRoutes("address-test").post(
    "/addresses/:addressId/test",
    async ({ account, params }) => {
      const address = await deps.addresses.get(account.id, params.addressId);
      if (!address) throw notFound(noRecord("address", params.addressId, `GET /api/v0.1/${account.id}/addresses`));
      const r = await deps.testPost(address, `${address.id}@${deps.config().inbound.domain}`);
      return { status: r.status, status_category: r.category, smtp_reply: r.reply, response: r.response, duration_ms: r.durationMs };
    },
    {
      params: t.Object({ accountId: t.String(), addressId: t.String() }),
      response: { 200: TestPostSchema, ...errorResponses(401, 403, 404, 429) },
      detail: {
        operationId: "testAddress",
        summary: "(beyond) POST a sample message to the address's target now and return its answer; nothing is recorded",
        tags: ["Addresses"],
        security: [{ bearerAPIToken: [] }],
      },
    },
  );
}
