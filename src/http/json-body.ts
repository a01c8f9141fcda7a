// Body-limit middleware: a JSON body is read under its group's cap (413 past it, whether or
// not it declared its length) and parsed under the nesting limit, after authentication,
// and put where the route's schema validates it. The router itself never reads a body.
import type { Config } from "../config/config.ts";
import { parseJsonBody, readBodyCapped } from "./body.ts";
import { ApiError } from "./errors.ts";
import { payloadTooLarge } from "./refusals.ts";

const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH"]);

export const hasBody = (method: string): boolean => METHODS_WITH_BODY.has(method);

/** The Content-Length a request declares (0 without one). */
export const declaredBytes = (req: Request): number => Number(req.headers.get("content-length") ?? "0");

/** Reads the body's bytes under `limitBytes` (set by `limitKey`): 413 at once when the declared length is over it. */
export async function readCapped(req: Request, limitBytes: number, limitKey: string): Promise<Uint8Array> {
  const declared = declaredBytes(req);
  if (declared > limitBytes) throw new ApiError(413, payloadTooLarge(limitBytes, limitKey));
  return readBodyCapped(req, limitBytes, declared, limitKey);
}

/** The transform of a group whose bodies are JSON under http.max_body. */
export function jsonBody(config: () => Config) {
  return async (ctx: { request: Request; body: unknown }): Promise<void> => {
    if (!hasBody(ctx.request.method)) return;
    const c = config();
    ctx.body = parseJsonBody(await readCapped(ctx.request, c.http.maxBodyBytes, "http.max_body_size"), c.http.maxJsonDepth);
  };
}
