// The webhooks feature: the dispatcher that posts committed message events to each
// account's webhook, in batches, with retries. The store kicks it when events commit
// (openRepos' onEvents); it polls as well, so a kick lost to a crash only delays.
import type { Feature } from "../lib/feature.ts";
import { type DispatcherDeps, WebhookDispatcher } from "./dispatcher.ts";

export interface EventsFeature extends Feature {
  webhooks: WebhookDispatcher;
}

/** The dispatcher's dependencies; it logs as component "webhooks". */
export function eventsFeature(deps: DispatcherDeps): EventsFeature {
  const webhooks = new WebhookDispatcher({ ...deps, logger: deps.logger.child({ component: "webhooks" }) });
  return { webhooks, start: () => webhooks.start(), stop: () => webhooks.stop() };
}
