// The port of the webhook endpoints made through the account API, whatever the engine:
// webhook-endpoints.repo.ts implements it once for SQLite and PostgreSQL, and
// test/events/webhook-endpoints-repo.contract.test.ts runs the same cases on both.
import type { WebhookEndpoint } from "./webhook-endpoint.ts";

export interface WebhookEndpointRepo {
  /**
   * Stores `endpoint` unless its outbound account has `max` endpoints already (then false,
   * nothing stored). Counted and written in one transaction, so two calls at once cannot
   * pass the limit together.
   */
  create(endpoint: WebhookEndpoint, max: number): Promise<boolean>;
  /** An account's endpoints (only `outboundAccountId`'s when given), oldest first. */
  list(accountId: string, outboundAccountId: string | null): Promise<WebhookEndpoint[]>;
  /** One endpoint, whatever its account (the dispatcher's look-up); null when there is none. */
  get(id: string): Promise<WebhookEndpoint | null>;
  /**
   * Deletes an account's endpoint and drops its events not yet posted, in one transaction;
   * false when the account has no such endpoint.
   */
  remove(accountId: string, id: string): Promise<boolean>;
}
