// Whether an outbound account's events go to a webhook: its own, else its account's (the
// rule the webhook dispatcher applies when it posts). Decided when an event is recorded, so
// an account without one gets no webhook outbox rows to write and then drop.
import type { AccountConfig } from "../../config/config.ts";

export function webhookConfigured(accounts: readonly AccountConfig[], outboundAccountId: string): boolean {
  for (const a of accounts) {
    const o = a.outbound.find((x) => x.id === outboundAccountId);
    if (o) return (o.webhook ?? a.webhook) !== null;
  }
  // An outbound account no longer configured: the dispatcher would drop its events too.
  return false;
}
