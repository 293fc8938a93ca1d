/**
 * Request bodies that stop arriving (a Content-Length larger than what is sent, a chunked body
 * that pauses for good): the whole body must arrive within BODY_TIMEOUT_MS of the request, or the
 * request is answered 408 in its surface's format with `Connection: close`. The body is read here,
 * before any route runs, so no route ever waits on a client: a stalled request holds no
 * idempotency key and no write unit, only its socket (which Deno's server keeps until the client
 * closes it).
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.ts";
import { errorResponse } from "./errors.ts";

export interface BodyArrivalOptions {
  /** How long the whole body may take to arrive, from the moment the request reached us. */
  readonly timeoutMs: number;
  /** The size limit of the request's body (413 above it), applied while the body is read. */
  readonly limit: (c: Context<AppEnv>) => MiddlewareHandler<AppEnv>;
}

const EXPIRED = Symbol("expired");

/** Reads every request body whole, within its size limit and its deadline, before routing. */
export function bodyArrival(options: BodyArrivalOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.raw.body === null) return await next();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<typeof EXPIRED>((resolve) => {
      timer = setTimeout(() => resolve(EXPIRED), options.timeoutMs);
    });
    let arrived = false;
    // Routes read the body from Hono's cache of it, filled here.
    const reading = options.limit(c)(c, async () => {
      await c.req.arrayBuffer();
      arrived = true;
    });
    // A read left at the deadline fails once the response is sent; nobody waits for it.
    reading.catch(() => {});
    let first: Response | void | typeof EXPIRED;
    try {
      first = await Promise.race([reading, expired]);
    } finally {
      clearTimeout(timer);
    }
    if (arrived) return await next();
    if (first !== EXPIRED) return first as Response;
    const message = `the request body did not arrive within ${options.timeoutMs} ms`;
    // The rest of the body may still come, or never: the connection is not read again.
    return errorResponse(c, {
      status: 408,
      code: "request_timeout",
      message,
      issues: [{ field: "body", location: "body", message }],
      headers: { Connection: "close" },
    });
  };
}
