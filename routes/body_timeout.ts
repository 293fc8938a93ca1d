/**
 * Request bodies that stop arriving (a Content-Length larger than what is sent, a chunked body
 * that pauses for good): the whole body must arrive within BODY_TIMEOUT_MS of the request, or the
 * request is answered 408 in its surface's format and its connection closed. The body is read here,
 * before any route runs, so no route ever waits on a client: a stalled request holds no
 * idempotency key, no write unit, nothing but its socket until the deadline.
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

/** Reads every request body whole, within its size limit and its deadline, before routing. */
export function bodyArrival(options: BodyArrivalOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const source = c.req.raw.body;
    if (source === null) return await next();
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), options.timeoutMs);
    // At the deadline the pipe cancels the client's stream and errors every read of ours.
    const guarded = source.pipeThrough(new TransformStream(), { signal: deadline.signal });
    // Built from the parts, not from the request itself: copying a served request's signal makes
    // Deno print a notice about its legacy abort behaviour.
    const { url, method, headers } = c.req.raw;
    const withBody = (body: BodyInit) =>
      new Request(url, { method, headers, body, duplex: "half" } as RequestInit);
    c.req.raw = withBody(guarded);
    let arrived = false;
    let refused: Response | void = undefined;
    try {
      refused = await options.limit(c)(c, async () => {
        c.req.raw = withBody(await c.req.raw.arrayBuffer());
        arrived = true;
      });
    } catch (error) {
      if (!deadline.signal.aborted) throw error;
    } finally {
      clearTimeout(timer);
    }
    if (arrived) return await next();
    if (!deadline.signal.aborted) return refused as Response;
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
