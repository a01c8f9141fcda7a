// The context an account route's handler gets: the request's facts (http/exchange.ts) and
// its caller, derived by the middleware of its group (src/router.ts) before the handler
// runs. Route modules are built on these so their handlers are typed with what the group
// provides; the group, not the module, decides how the caller was authenticated.
import type { CallerContext, OperatorContext } from "../http/authenticate.ts";
import type { RequestContext } from "../http/exchange.ts";
import { requestRoutes, type Routes, routesWith } from "../http/routes.ts";
import type { SendContext } from "./send-body.ts";

/** An account route's context: its caller, and the account the path names (the caller's). */
export type AccountContext = RequestContext & CallerContext;

/** Routes under /api/v0.1/{accountID}/ taking the account's management token (or its dashboard session). */
export const accountRoutes = (name: string): Routes<AccountContext> => routesWith<AccountContext>(name);

/** E11's routes: the caller is an outbound account (its key), with the Idempotency-Key it claimed. */
export const sendRoutes = (name: string): Routes<AccountContext & SendContext> => routesWith<AccountContext & SendContext>(name);

/** Routes outside any account (health, tracking links, attachments, unsubscribe). */
export const publicRoutes = requestRoutes;

/** Routes under /api/v0.1/operator/ (API.md section 10): the caller is an operator token, named for logs. */
export const operatorRoutes = (name: string): Routes<RequestContext & OperatorContext> =>
  routesWith<RequestContext & OperatorContext>(name);
