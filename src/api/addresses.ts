// E1-E5: addresses of an account.
import { t } from "elysia";
import type { Address } from "../inbound/addresses/address.ts";
import { maskTarget } from "../inbound/addresses/target-url.ts";
import { newAddressId } from "../lib/ids.ts";
import { AddressCreateBody, AddressPatchBody, addressRecord, AddressRecordSchema, addressValues } from "./address-records.ts";
import { accountRoutes } from "./context.ts";
import type { ApiDeps } from "./deps.ts";
import { errorResponses, notFound } from "../http/errors.ts";
import { noRecord } from "../http/refusals.ts";
import { nextLink, pageRequest, pagingQueryFields } from "./paging.ts";

const security = [{ bearerAPIToken: [] }];
const AddressParams = t.Object({ accountId: t.String(), addressId: t.String() });
const AccountParams = t.Object({ accountId: t.String() });

/** E4's route options: PUT and PATCH differ in their body. */
const e4 = <Body extends typeof AddressCreateBody | typeof AddressPatchBody>(body: Body, operationId: string, summary: string) => ({
  params: AddressParams,
  body,
  response: { 200: AddressRecordSchema, ...errorResponses(401, 403, 404, 413, 422, 429) },
  detail: { operationId, summary, tags: ["Addresses"], security },
});

/** What the routes take of the API's dependencies. */
export type AddressRouteDeps = Pick<ApiDeps, "config" | "clock" | "addresses">;

export function addressRoutes(deps: AddressRouteDeps) {
  const record = (a: Address, revealSecret = false) => addressRecord(a, deps.config().inbound.domain, revealSecret);
  /** Whether this write has just turned signing on (the only answer that shows the secret). */
  const turnedOn = (before: Address | null, after: Address) =>
    after.signingSecret !== null && after.signingSecret !== before?.signingSecret;
  /** E4 (PUT, or PATCH merged onto the stored address): checks the values, stores them, answers the record. */
  const save = async (stored: Address, input: Parameters<typeof addressValues>[0]) => {
    const updated = {
      ...stored,
      ...addressValues(input, stored, deps.config().inbound.allowPrivateTargets),
      updatedAtMs: deps.clock.nowMs(),
    };
    await deps.addresses.update(updated);
    return record(updated, turnedOn(stored, updated));
  };

  return accountRoutes("addresses")
    .get(
      "/addresses",
      async ({ account, request, query, set }) => {
        const page = await deps.addresses.list(account.id, query.query?.trim() || null, pageRequest(query));
        const link = nextLink(request.url, query, page);
        if (link) set.headers["link"] = link;
        return page.items.map((a) => record(a));
      },
      {
        params: AccountParams,
        query: t.Object(pagingQueryFields),
        response: { 200: t.Array(AddressRecordSchema), ...errorResponses(401, 403, 422, 429) },
        detail: { operationId: "listAddresses", summary: "E1: list addresses, newest first", tags: ["Addresses"], security },
      },
    )
    .post(
      "/addresses",
      async ({ account, body, set }) => {
        const values = addressValues(body, null, deps.config().inbound.allowPrivateTargets);
        const now = deps.clock.nowMs();
        const address = { id: newAddressId(), accountId: account.id, ...values, createdAtMs: now, updatedAtMs: now };
        await deps.addresses.insert(address);
        set.status = 201;
        return record(address, turnedOn(null, address));
      },
      {
        params: AccountParams,
        body: AddressCreateBody,
        response: { 201: AddressRecordSchema, ...errorResponses(401, 403, 413, 422, 429) },
        detail: { operationId: "createAddress", summary: "E2: create an address", tags: ["Addresses"], security },
      },
    )
    .get(
      "/addresses/:addressId",
      async ({ account, params }) => {
        const address = await deps.addresses.get(account.id, params.addressId);
        if (!address) throw notFound(noRecord("address", params.addressId, `GET /api/v0.1/${account.id}/addresses`));
        return record(address);
      },
      {
        params: AddressParams,
        response: { 200: AddressRecordSchema, ...errorResponses(401, 403, 404, 429) },
        detail: { operationId: "getAddress", summary: "E3: get an address", tags: ["Addresses"], security },
      },
    )
    .put(
      "/addresses/:addressId",
      async ({ account, params, body }) => {
        const stored = await deps.addresses.get(account.id, params.addressId);
        if (!stored) throw notFound(noRecord("address", params.addressId, `GET /api/v0.1/${account.id}/addresses`));
        return save(stored, body);
      },
      e4(AddressCreateBody, "replaceAddress", "E4: update an address (whole body)"),
    )
    .patch(
      "/addresses/:addressId",
      async ({ account, params, body }) => {
        const stored = await deps.addresses.get(account.id, params.addressId);
        if (!stored) throw notFound(noRecord("address", params.addressId, `GET /api/v0.1/${account.id}/addresses`));
        const merged = {
          target: body.target ?? maskTarget(stored.target),
          target_format: body.target_format ?? stored.targetFormat,
          nickname: body.nickname === undefined ? stored.nickname : body.nickname,
          attachments: body.attachments ?? stored.attachments,
          signed: body.signed,
          store_messages: body.store_messages,
          on_target_failure: body.on_target_failure,
          spam_threshold: body.spam_threshold,
        };
        return save(stored, merged);
      },
      e4(AddressPatchBody, "updateAddress", "E4: update some fields of an address"),
    )
    .delete(
      "/addresses/:addressId",
      async ({ account, params, set }) => {
        const accountId = account.id;
        const stored = await deps.addresses.get(accountId, params.addressId);
        if (!stored || !(await deps.addresses.softDelete(accountId, stored.id, deps.clock.nowMs())))
          throw notFound(noRecord("address", params.addressId, `GET /api/v0.1/${account.id}/addresses`));
        set.status = 202;
        return record(stored);
      },
      {
        params: AddressParams,
        response: { 202: AddressRecordSchema, ...errorResponses(401, 403, 404, 429) },
        detail: {
          operationId: "deleteAddress",
          summary: "E5: delete an address; mail to it is refused at once",
          tags: ["Addresses"],
          security,
        },
      },
    );
}
