// Typed starting points for route modules: a module builds its routes on the context its
// group provides (the request's facts here; its caller in an account group), so its
// handlers are typed with what the group's middleware derives before they run.
import { Elysia } from "elysia";
import type { RequestContext } from "./exchange.ts";

// A mapped type: Elysia wants the derived values as an object type with an index signature.
// biome-ignore lint/complexity/noBannedTypes: Elysia's own spelling of "nothing decorated, stored or resolved"
export type Routes<Derived> = Elysia<"", { decorator: {}; store: {}; derive: { [K in keyof Derived]: Derived[K] }; resolve: {} }>;

/** Routes whose group's middleware derives `Derived` into their context. */
export const routesWith = <Derived>(name: string): Routes<Derived> => new Elysia({ name });

/** Routes of a group without a caller: the request's facts only (http/exchange.ts). */
export const requestRoutes = (name: string): Routes<RequestContext> => routesWith<RequestContext>(name);
