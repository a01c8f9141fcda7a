// A client of the Postroom API made only from the OpenAPI document: `./api` is what
// openapi-typescript generates from the served document (test/api/openapi-tools.test.ts
// writes it beside a copy of this file and runs tsc on both). One typed call to every
// operation, and typed handlers of both webhooks. Not part of the project's own typecheck
// (tsconfig.json excludes this folder): `./api` exists only in the test's temp dir.
import createClient from "openapi-fetch";
import type { components, paths, webhooks } from "./api";

type Schemas = components["schemas"];

export async function callEveryOperation(
  baseUrl: string,
  account: { id: string; token: string; outboundId: string; smtpKey: string },
  operatorToken: string,
): Promise<[string, number][]> {
  const api = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${account.token}` } });
  const sending = createClient<paths>({ baseUrl, headers: { authorization: `Basic ${btoa(`${account.outboundId}:${account.smtpKey}`)}` } });
  const accountId = account.id;
  const seen: [string, number][] = [];
  const note = (operationId: string, r: { response: Response }) => seen.push([operationId, r.response.status]);

  const health = await api.GET("/healthz");
  note("health", health);
  if (health.data) health.data.status satisfies string;

  const input: Schemas["AddressInput"] = {
    target: "https://hooks.example.com/in",
    target_format: "json+n",
    nickname: "orders",
    attachments: { store: "local" },
  };
  const created = await api.POST("/api/v0.1/{accountId}/addresses", { params: { path: { accountId } }, body: input });
  note("createAddress", created);
  const addressId = created.data?.id ?? "0".repeat(20);
  const listed = await api.GET("/api/v0.1/{accountId}/addresses", { params: { path: { accountId }, query: { query: "orders" } } });
  note("listAddresses", listed);
  const first: Schemas["Address"] | undefined = listed.data?.[0];
  if (first) first.email satisfies string;
  const testPost = await api.POST("/api/v0.1/{accountId}/addresses/{addressId}/test", { params: { path: { accountId, addressId } } });
  note("testAddress", testPost);
  testPost.data?.smtp_reply satisfies string | undefined;
  note("getAddress", await api.GET("/api/v0.1/{accountId}/addresses/{addressId}", { params: { path: { accountId, addressId } } }));
  note(
    "replaceAddress",
    await api.PUT("/api/v0.1/{accountId}/addresses/{addressId}", {
      params: { path: { accountId, addressId } },
      body: { ...input, target_format: "multipart+n" },
    }),
  );
  note(
    "updateAddress",
    await api.PATCH("/api/v0.1/{accountId}/addresses/{addressId}", {
      params: { path: { accountId, addressId } },
      body: { nickname: null, signed: true },
    }),
  );

  const statuses = await api.GET("/api/v0.1/{accountId}/incoming_statuses", {
    params: { path: { accountId }, query: { address_id: addressId, query: "status:200" } },
  });
  note("listIncomingStatuses", statuses);
  statuses.data?.[0]?.status_category satisfies string | undefined;
  // No message came to this address: both answer 404 for the unknown status.
  const kept = { params: { path: { accountId, statusId: statuses.data?.[0]?.id ?? "0".repeat(16) }, query: { address_id: addressId } } };
  const keptMessage = await api.GET("/api/v0.1/{accountId}/incoming_statuses/{statusId}/message", kept);
  note("getIncomingMessage", keptMessage);
  keptMessage.data?.payload?.body satisfies string | undefined;
  note("postIncomingAgain", await api.POST("/api/v0.1/{accountId}/incoming_statuses/{statusId}/post_again", kept));

  const domain = await api.POST("/api/v0.1/{accountId}/custom_domains", {
    params: { path: { accountId }, query: { address_id: addressId } },
    body: { domain: "shop.example.net", auth_regex: null },
  });
  note("createCustomDomain", domain);
  note(
    "listCustomDomains",
    await api.GET("/api/v0.1/{accountId}/custom_domains", { params: { path: { accountId }, query: { address_id: addressId } } }),
  );
  const customDomainId = domain.data?.id ?? "0".repeat(16);
  note(
    "deleteCustomDomain",
    await api.DELETE("/api/v0.1/{accountId}/custom_domains/{customDomainId}", {
      params: { path: { accountId, customDomainId }, query: { address_id: addressId } },
    }),
  );

  // In test mode the sender's domain need only be a sending domain of the account.
  const sendingDomain = await api.POST("/api/v0.1/{accountId}/sending_domains", {
    params: { path: { accountId } },
    body: { domain: "mail.example.net" },
  });
  note("createSendingDomain", sendingDomain);
  const sendingDomainId = sendingDomain.data?.id ?? "0".repeat(16);
  const composed: Schemas["MessageToSend"] = {
    from: "news@mail.example.net",
    to: ["reader@example.org"],
    subject: "Hello",
    plain: "Hi",
    test_mode: true,
    attachments: [{ file_name: "a.txt", content: btoa("a"), content_type: "text/plain" }],
  };
  const raw: Schemas["RawMessage"] = {
    from: "news@mail.example.net",
    to: "reader@example.org",
    raw: "From: news@mail.example.net\r\nTo: reader@example.org\r\nSubject: Hi\r\n\r\nHi\r\n",
    test_mode: true,
  };
  const sent = await sending.POST("/api/v0.1/{accountId}/messages", {
    params: { path: { accountId: account.outboundId } },
    body: composed,
  });
  note("sendMessage", sent);
  note(
    "sendMessage",
    await sending.POST("/api/v0.1/{accountId}/messages", { params: { path: { accountId: account.outboundId } }, body: raw }),
  );
  if (sent.error) sent.error.status satisfies number;
  const batch = await sending.POST("/api/v0.1/{accountId}/messages/batch", {
    params: { path: { accountId: account.outboundId } },
    body: { messages: [{ ...composed, send_at: new Date(Date.now() + 3_600_000).toISOString(), metadata: { order: "1" } }, raw] },
  });
  note("sendMessageBatch", batch);
  batch.data?.results[0]?.status satisfies number | undefined;

  const messages = await api.GET("/api/v0.1/{accountId}/outbound_messages", {
    params: { path: { accountId }, query: { outbound_account_id: account.outboundId } },
  });
  note("listOutboundMessages", messages);
  const outboundMessageId = messages.data?.[0]?.id ?? sent.data?.id ?? "00000000-0000-4000-8000-000000000000";
  const message = await api.GET("/api/v0.1/{accountId}/outbound_messages/{outboundMessageId}", {
    params: { path: { accountId, outboundMessageId } },
  });
  note("getOutboundMessage", message);
  message.data?.recipients[0]?.events[0]?.kind satisfies string | undefined;
  const one = { params: { path: { accountId, outboundMessageId } } };
  note(
    "getOutboundMessageSource",
    await api.GET("/api/v0.1/{accountId}/outbound_messages/{outboundMessageId}/raw", { ...one, parseAs: "text" }),
  );
  const content = await api.GET("/api/v0.1/{accountId}/outbound_messages/{outboundMessageId}/content", one);
  note("getOutboundMessageContent", content);
  content.data?.headers[0]?.name satisfies string | undefined;
  note("retryOutboundMessage", await api.POST("/api/v0.1/{accountId}/outbound_messages/{outboundMessageId}/retry", one));
  note(
    "rescheduleOutboundMessage",
    await api.PATCH("/api/v0.1/{accountId}/outbound_messages/{outboundMessageId}", {
      ...one,
      body: { send_at: new Date(Date.now() + 3_600_000).toISOString() },
    }),
  );
  const cancelled = await api.POST("/api/v0.1/{accountId}/outbound_messages/{outboundMessageId}/cancel", one);
  note("cancelOutboundMessage", cancelled);
  cancelled.data?.in_delivery satisfies number | undefined;

  note(
    "listSendingDomains",
    await api.GET("/api/v0.1/{accountId}/sending_domains", { params: { path: { accountId }, query: { page: "1" } } }),
  );
  note(
    "getSendingDomain",
    await api.GET("/api/v0.1/{accountId}/sending_domains/{sendingDomainId}", { params: { path: { accountId, sendingDomainId } } }),
  );
  const verified = await api.POST("/api/v0.1/{accountId}/sending_domains/{sendingDomainId}/verify", {
    params: { path: { accountId, sendingDomainId } },
  });
  note("verifySendingDomain", verified);
  verified.data?.dns_records[0]?.verified satisfies boolean | undefined;
  note(
    "deleteSendingDomain",
    await api.DELETE("/api/v0.1/{accountId}/sending_domains/{sendingDomainId}", { params: { path: { accountId, sendingDomainId } } }),
  );

  const suppression = await api.POST("/api/v0.1/{accountId}/suppressions", {
    params: { path: { accountId } },
    body: { outbound_account_id: account.outboundId, email: "gone@example.org" },
  });
  note("createSuppression", suppression);
  note(
    "listSuppressions",
    await api.GET("/api/v0.1/{accountId}/suppressions", {
      params: { path: { accountId }, query: { outbound_account_id: account.outboundId } },
    }),
  );
  const suppressionId = suppression.data?.id ?? "0";
  note(
    "deleteSuppression",
    await api.DELETE("/api/v0.1/{accountId}/suppressions/{suppressionId}", { params: { path: { accountId, suppressionId } } }),
  );

  const waiting = await api.GET("/api/v0.1/{accountId}/inbound_queue", { params: { path: { accountId } } });
  note("listWaitingInbound", waiting);
  waiting.data?.[0]?.next_attempt_at satisfies string | undefined;
  note(
    "tryWaitingInboundNow",
    await api.POST("/api/v0.1/{accountId}/inbound_queue/{queueId}/try_now", {
      params: { path: { accountId, queueId: waiting.data?.[0]?.id ?? "0000000000000000" } },
    }),
  );

  const stats = await api.GET("/api/v0.1/{accountId}/stats", { params: { path: { accountId }, query: { period: "7d" } } });
  note("getStats", stats);
  stats.data?.buckets[0]?.at satisfies string | undefined;
  stats.data?.queue.recipients satisfies number | undefined;

  const outbound = { params: { path: { accountId }, query: { outbound_account_id: account.outboundId } } };
  const webhook = await api.GET("/api/v0.1/{accountId}/webhook", outbound);
  note("getWebhook", webhook);
  webhook.data?.pending.events satisfies number | undefined;
  note("listWebhookPosts", await api.GET("/api/v0.1/{accountId}/webhook/posts", outbound));
  const tested = await api.POST("/api/v0.1/{accountId}/webhook/test", outbound);
  note("testWebhook", tested);
  tested.data?.status satisfies number | null | undefined;
  note("retryWebhook", await api.POST("/api/v0.1/{accountId}/webhook/retry", outbound));
  const endpoint = await api.POST("/api/v0.1/{accountId}/webhooks", {
    params: { path: { accountId } },
    body: { outbound_account_id: account.outboundId, url: "https://hooks.example.com/events", events: ["delivery", "bounce"] },
  });
  note("createWebhookEndpoint", endpoint);
  endpoint.data?.signing_secret satisfies string | undefined;
  note("listWebhookEndpoints", await api.GET("/api/v0.1/{accountId}/webhooks", { params: { path: { accountId } } }));
  const endpointId = endpoint.data?.id ?? "none";
  note(
    "deleteWebhookEndpoint",
    await api.DELETE("/api/v0.1/{accountId}/webhooks/{endpointId}", { params: { path: { accountId, endpointId } } }),
  );

  note("deleteAddress", await api.DELETE("/api/v0.1/{accountId}/addresses/{addressId}", { params: { path: { accountId, addressId } } }));

  // The operator API (an operator token, dashboard.admin_tokens).
  const operator = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${operatorToken}` } });
  const made = await operator.POST("/api/v0.1/operator/accounts", { body: { name: "from the client" } });
  note("createAccount", made);
  const id = made.data?.id ?? "0".repeat(16);
  made.data?.source satisfies "config" | "api" | undefined;
  note("listAccounts", await operator.GET("/api/v0.1/operator/accounts"));
  note("getAccount", await operator.GET("/api/v0.1/operator/accounts/{id}", { params: { path: { id } } }));
  note("updateAccount", await operator.PATCH("/api/v0.1/operator/accounts/{id}", { params: { path: { id } }, body: { suspended: false } }));
  const token = await operator.POST("/api/v0.1/operator/accounts/{id}/api_tokens", {
    params: { path: { id } },
    body: { name: "ci", scopes: ["read"] },
  });
  note("createApiToken", token);
  token.data?.token satisfies string | undefined;
  note(
    "revokeApiToken",
    await operator.DELETE("/api/v0.1/operator/accounts/{id}/api_tokens/{tokenId}", {
      params: { path: { id, tokenId: token.data?.id ?? "0" } },
    }),
  );
  const sender = await operator.POST("/api/v0.1/operator/accounts/{id}/outbound_accounts", {
    params: { path: { id } },
    body: { name: "app" },
  });
  note("createOutboundAccount", sender);
  const outboundId = sender.data?.id ?? "0";
  const key = await operator.POST("/api/v0.1/operator/accounts/{id}/outbound_accounts/{outboundId}/keys", {
    params: { path: { id, outboundId } },
  });
  note("createOutboundKey", key);
  note(
    "revokeOutboundKey",
    await operator.DELETE("/api/v0.1/operator/accounts/{id}/outbound_accounts/{outboundId}/keys/{keyId}", {
      params: { path: { id, outboundId, keyId: key.data?.id ?? "0" } },
    }),
  );
  note("listAudit", await operator.GET("/api/v0.1/operator/audit", { params: { query: { account_id: id } } }));
  note("deleteAccount", await operator.DELETE("/api/v0.1/operator/accounts/{id}", { params: { path: { id } } }));
  const sendingHealth = await operator.GET("/api/v0.1/operator/health/sending");
  note("getSendingHealth", sendingHealth);
  sendingHealth.data?.ips[0]?.fcrdns satisfies boolean | null | undefined;
  sendingHealth.data?.checked_at satisfies string | null | undefined;

  // The operator's API, with an operator token.
  const queue = await operator.GET("/api/v0.1/operator/queue", { params: { query: { destination: "example.org", state: "held" } } });
  note("listQueue", queue);
  queue.data?.[0]?.last_response satisfies string | null | undefined;
  const summary = await operator.GET("/api/v0.1/operator/queue/summary");
  note("queueSummary", summary);
  summary.data?.[0]?.paused satisfies boolean | undefined;
  const filter: Schemas["QueueFilter"] = { destination: "example.org", older_than: "1h" };
  const held = await operator.POST("/api/v0.1/operator/queue/hold", { body: filter });
  note("queueHold", held);
  held.data?.affected satisfies number | undefined;
  note("queueRelease", await operator.POST("/api/v0.1/operator/queue/release", { body: filter }));
  note("queueRetry", await operator.POST("/api/v0.1/operator/queue/retry", { body: { outbound_account_id: account.outboundId } }));
  note("queueCancel", await operator.POST("/api/v0.1/operator/queue/cancel", { body: { message_id: "0".repeat(36) } }));
  note(
    "queueRedeliver",
    await operator.POST("/api/v0.1/operator/queue/redeliver", { body: { bounce_class: "block", since: "2026-11-27T00:00:00Z" } }),
  );
  const destination = { params: { path: { destination: "example.org" } } };
  const pause = await operator.POST("/api/v0.1/operator/destinations/{destination}/pause", destination);
  note("pauseDestination", pause);
  pause.data?.paused satisfies boolean | undefined;
  const paused = await operator.GET("/api/v0.1/operator/destinations/paused");
  note("listPausedDestinations", paused);
  paused.data?.[0]?.until satisfies string | null | undefined;
  note("resumeDestination", await operator.POST("/api/v0.1/operator/destinations/{destination}/resume", destination));
  return seen;
}

/** What a target's handler gets: the json+n payload, or the multipart+n form. */
export function subjectOf(
  payload: NonNullable<webhooks["inboundMessage"]["post"]["requestBody"]>["content"]["application/json"],
): string | undefined {
  const subject = payload.headers.subject;
  const size: string | undefined = payload.attachments[0]?.size;
  return size === undefined ? undefined : Array.isArray(subject) ? subject[0] : subject;
}

export function tlsOf(form: NonNullable<webhooks["inboundMessage"]["post"]["requestBody"]>["content"]["multipart/form-data"]): boolean {
  return form["envelope[tls]"] === "true";
}

/** What an events webhook gets (E10). */
export function deliveredTo(body: NonNullable<webhooks["messageEvents"]["post"]["requestBody"]>["content"]["application/json"]): string[] {
  return body.events.filter((e) => e.kind === "delivery").map((e) => e.recipient);
}
