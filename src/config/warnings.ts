// Settings that are valid but will not do what the operator wants: printed by
// `postroom check-config` and logged at serve start, without failing either (a config
// error exits 1; these do not). Each names its key first, as config errors do.
import type { Config } from "./config.ts";

export function configWarnings(config: Config): string[] {
  const warnings: string[] = [];
  if (config.outbound.sendingIps.length === 0) {
    // `postroom init` writes sending_ips = [] because it cannot know the host's public
    // addresses; the SPF record would then authorise nobody, so none is offered.
    const whose = config.outbound.smarthost ? "the addresses outbound.smarthost sends from" : "this host's public addresses";
    warnings.push(
      `outbound.sending_ips: is empty, so no SPF record is offered for sending domains and none can be verified; set it to ${whose}`,
    );
  }
  return warnings;
}
