// The OpenAPI document: valid OpenAPI 3.1, and equal to the committed snapshot so every
// change to the published surface shows up in review. Refresh it after an intended
// change with: UPDATE_SNAPSHOTS=1 bun test test/api/openapi.test.ts
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { validate } from "@readme/openapi-parser";
import Ajv2020 from "ajv/dist/2020";
import { startTestApp, type TestApp } from "../helpers/app.ts";

const SNAPSHOT = new URL("./openapi.snapshot.json", import.meta.url);

let t: TestApp;
let doc: Record<string, any>;
beforeAll(async () => {
  t = await startTestApp();
  const res = await t.call("GET", "/api/v0.1/openapi.json");
  expect(res.status).toBe(200);
  doc = (await res.json()) as Record<string, any>;
});
afterAll(() => t.stop());

describe("GET /api/v0.1/openapi.json", () => {
  test("is valid OpenAPI 3.1", async () => {
    expect(doc.openapi).toBe("3.1.0");
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
  });

  test("documents every operation with its security scheme", () => {
    const ops = Object.entries<Record<string, any>>(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({ path, method, op })),
    );
    for (const { path, method, op } of ops) {
      if (path === "/healthz") expect(op.security).toEqual([]);
      else if (method === "post" && /\/messages(\/batch)?$/.test(path))
        expect(op.security).toEqual([{ smtpAuth: [] }, { bearerSMTPKey: [] }]);
      else if (path.startsWith("/api/v0.1/operator/")) expect(op.security).toEqual([{ operatorToken: [] }]);
      else expect(op.security).toEqual([{ bearerAPIToken: [] }, { basicAPIToken: [] }]);
      expect(op.operationId).toBeString();
    }
    expect(ops.map((o) => o.op.operationId).sort()).toEqual(
      [
        "createAddress",
        "createCustomDomain",
        "deleteAddress",
        "deleteCustomDomain",
        "getAddress",
        "health",
        "listAddresses",
        "listCustomDomains",
        "listIncomingStatuses",
        "replaceAddress",
        "updateAddress",
        "sendMessage",
        "listOutboundMessages",
        "getOutboundMessage",
        "listSendingDomains",
        "createSendingDomain",
        "getSendingDomain",
        "deleteSendingDomain",
        "verifySendingDomain",
        "listSuppressions",
        "createSuppression",
        "deleteSuppression",
        "getStats",
        "getWebhook",
        "listWebhookPosts",
        "testWebhook",
        "retryWebhook",
        "listWebhookEndpoints",
        "createWebhookEndpoint",
        "deleteWebhookEndpoint",
        "getOutboundMessageSource",
        "getOutboundMessageContent",
        "retryOutboundMessage",
        "cancelOutboundMessage",
        "rescheduleOutboundMessage",
        "sendMessageBatch",
        "testAddress",
        "postIncomingAgain",
        "getIncomingMessage",
        // The operator API (API.md section 10).
        "listAccounts",
        "createAccount",
        "getAccount",
        "updateAccount",
        "deleteAccount",
        "createApiToken",
        "revokeApiToken",
        "createOutboundAccount",
        "createOutboundKey",
        "revokeOutboundKey",
        "listAudit",
        "getSendingHealth",
        "listQueue",
        "queueSummary",
        "queueHold",
        "queueRelease",
        "queueRetry",
        "queueCancel",
        "queueRedeliver",
        "listWaitingInbound",
        "tryWaitingInboundNow",
        // The operator API (API.md section 10): destinations (issue 29).
        "listPausedDestinations",
        "pauseDestination",
        "resumeDestination",
      ].sort(),
    );
  });

  test("every example validates against its schema", () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema(doc, "openapi.json");
    const invalid: string[] = [];
    let checked = 0;
    for (const [name, schema] of Object.entries<Record<string, any>>(doc.components.schemas)) {
      for (const example of schema.examples ?? []) {
        checked++;
        const check = ajv.compile({ $ref: `openapi.json#/components/schemas/${name}` });
        if (!check(example)) invalid.push(`${name}: ${ajv.errorsText(check.errors)}`);
      }
    }
    expect(invalid).toEqual([]);
    for (const name of ["Error", "AddressInput", "ComposedMessage", "RawMessage", "MessageEvent"])
      expect(doc.components.schemas[name].examples?.length).toBeGreaterThan(0);
    expect(checked).toBeGreaterThanOrEqual(5);
  });

  test("matches the committed snapshot", async () => {
    const text = JSON.stringify({ ...doc, info: { ...doc.info, version: "(version)" } }, null, 2) + "\n";
    if (process.env.UPDATE_SNAPSHOTS === "1") await Bun.write(SNAPSHOT, text);
    expect(text).toBe(await Bun.file(SNAPSHOT).text());
  });
});
