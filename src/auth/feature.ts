// The tenants feature: accounts made through the operator API. It loads them from the
// store into the account registry before anything that authenticates starts, follows
// other nodes' changes (tenant-sync.ts), and gives the operator routes their TenantAdmin.
import type { Clock } from "../lib/clock.ts";
import type { Feature } from "../lib/feature.ts";
import type { Logger } from "../lib/logger.ts";
import type { AccountRegistry } from "./accounts.ts";
import { TenantAdmin } from "./tenant-admin.ts";
import { TenantSync } from "./tenant-sync.ts";
import type { TenantRepo } from "./tenants.port.ts";

export interface TenantsFeatureDeps {
  repo: TenantRepo;
  /** Hears another node's change (Repos.followTenants). */
  follow(onChange: () => void): Promise<void>;
  registry: AccountRegistry;
  logger: Logger;
  clock: Clock;
}

export interface TenantsFeature extends Feature {
  admin: TenantAdmin;
}

export function tenantsFeature(deps: TenantsFeatureDeps): TenantsFeature {
  const logger = deps.logger.child({ component: "tenants" });
  const sync = new TenantSync({ repo: deps.repo, registry: deps.registry, logger, follow: deps.follow });
  return {
    admin: new TenantAdmin({ repo: deps.repo, registry: deps.registry, sync, nowMs: () => deps.clock.nowMs() }),
    start: () => sync.start(),
    stop: () => sync.stop(),
  };
}
