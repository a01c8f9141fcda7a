// What bench:memory prints for each phase, and the checks each phase must pass (bench/memory.ts's header).
import { mb } from "./memory-peers.ts";
import { GAUGE, HEADROOM, type PhaseResult, size } from "./memory-phase.ts";

export function report(r: PhaseResult): void {
  const perMessage = r.maxInFlight > 0 ? (r.peak - r.idle) / r.maxInFlight : 0;
  console.log(`\n${r.label}`);
  console.log(
    `  RSS: idle ${mb(r.idle)}, peak ${mb(r.peak)} (VmHWM ${mb(r.hwm)}); in flight at most ${r.maxInFlight} at once: ${mb(perMessage)} of peak growth per message in flight`,
  );
  console.log(
    `  ${r.sent} sent: ${r.accepted} accepted, ${r.deferred} deferred, ${r.other.length} other; ${r.delivered} delivered; ${r.seconds.toFixed(1)} s`,
  );
  if (r.gaugeAfter !== null) console.log(`  ${GAUGE} afterwards: ${r.gaugeAfter}; refusals for memory: ${r.refusals}`);
  for (const o of r.other.slice(0, 5)) console.log(`  other: ${o}`);
}

export function checks(r: PhaseResult, budget: string | null, raised: boolean): string[] {
  const failed: string[] = [];
  if (r.other.length > 0) failed.push(`${r.label}: ${r.other.length} messages neither accepted nor deferred`);
  if (r.delivered !== r.accepted) failed.push(`${r.label}: ${r.accepted} accepted but ${r.delivered} delivered`);
  if (budget === null) return failed;
  if (r.gaugeAfter !== 0) failed.push(`${r.label}: ${GAUGE} is ${r.gaugeAfter} afterwards, not 0`);
  if (raised && r.accepted !== r.sent) failed.push(`${r.label}: only ${r.accepted} of ${r.sent} accepted with the budget raised`);
  if (!raised && r.peak > size(budget) + HEADROOM)
    failed.push(`${r.label}: peak RSS ${mb(r.peak)} is over the budget plus ${mb(HEADROOM)}`);
  return failed;
}
