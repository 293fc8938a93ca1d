/**
 * The request body's size limit: a body larger than `maxBytes` is answered by `onTooLarge` (413).
 * As Hono's bodyLimit, a declared Content-Length is judged before anything is read, and a chunked
 * body is read and counted here; but the counted body goes into a new Request built from the URL,
 * method and headers, never from the old Request: that would copy `request.signal`, and reading it
 * makes Deno.serve print its legacy-abort warning into the service's JSON output.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.ts";

export function bodySizeLimit(
  maxBytes: number,
  onTooLarge: (c: Context<AppEnv>) => Response | Promise<Response>,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const body = c.req.raw.body;
    if (body === null) return await next();
    const declared = c.req.raw.headers.get("content-length");
    if (declared !== null && !c.req.raw.headers.has("transfer-encoding")) {
      return Number(declared) > maxBytes ? await onTooLarge(c) : await next();
    }
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        return await onTooLarge(c);
      }
      chunks.push(value);
    }
    const bytes = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.byteLength;
    }
    c.req.raw = new Request(c.req.url, {
      method: c.req.method,
      headers: c.req.raw.headers,
      body: bytes,
    });
    return await next();
  };
}
