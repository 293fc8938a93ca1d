/**
 * The address a request came from, as the server handed it to the app (Deno.serve's, or the Node
 * listener's, `remoteAddr`), or null without one (`app.request()` in tests). Not hono/deno's
 * getConnInfo: that module brings hono's static-file helper, whose `node:path` loads Deno's Node
 * compatibility layer before the service's first answer.
 */
import type { Context } from "hono";

export function peerAddressOf(c: Context): string | null {
  const info = c.env as { remoteAddr?: { hostname?: string } } | undefined;
  return info?.remoteAddr?.hostname ?? null;
}
