// Rate-limit middleware: counts the call against the caller's budget (authenticate.ts chose
// it), puts RateLimit-Limit/-Remaining/-Reset on the answer whatever it is, and refuses
// with 429 and Retry-After past the limit (docs/api.md, Rate limits).
import type { RateDecision } from "../auth/rate-limit.ts";
import type { CallBudget } from "./authenticate.ts";
import { ApiError } from "./errors.ts";
import { tooManyRequests } from "./refusals.ts";

export function rateHeaders(d: RateDecision): Record<string, string> {
  return { "RateLimit-Limit": String(d.limit), "RateLimit-Remaining": String(d.remaining), "RateLimit-Reset": String(d.resetSeconds) };
}

/** The transform that follows authentication in a group with a budget. */
export function limitRate(nowMs: () => number) {
  return async ({ budget, set }: { budget: CallBudget | null; set: { headers: Record<string, string | number> } }): Promise<void> => {
    if (!budget) return;
    const decision = await budget.limiter.take(budget.key, budget.rate, nowMs());
    // On the context's headers, the router puts them on every answer, refusals included.
    Object.assign(set.headers, rateHeaders(decision));
    if (!decision.allowed) {
      const text = tooManyRequests(budget.owner, budget.rate, decision.resetSeconds);
      throw new ApiError(429, text, {}, { "Retry-After": String(decision.resetSeconds) });
    }
  };
}
