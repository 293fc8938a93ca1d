/** @jsxImportSource hono/jsx */
/**
 * The Increase simulator's hosted card field, /sandbox/increase/card: the sandbox's stand-in for
 * the tokenization provider's page. A developer types a test card here (GET: the form; POST: the
 * vault keeps it), and the browser goes back to the portal with only a token and the last four,
 * as in live. It sends browsers back only to this service's own portal. HTTP only.
 */
import { type Context, Hono } from "hono";
import { tokenizeSandboxCard } from "../lib/instant/simulator.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { errorResponse } from "./errors.ts";

export function sandboxIncreaseRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const portalReturn = (returnUrl: string): URL | null => {
    try {
      const back = new URL(returnUrl);
      const portal = new URL("/portal/", deps.config.baseUrl);
      return back.origin === portal.origin && back.pathname.startsWith(portal.pathname)
        ? back
        : null;
    } catch {
      return null;
    }
  };
  const page = (back: { returnUrl: string; state: string }, problem: string | null) => (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Sandbox card partner</title>
      </head>
      <body>
        <main>
          <h1>Sandbox card partner</h1>
          <p>
            The Increase simulator's hosted card field: type a sandbox test card. The portal gets
            back only a token and the last four digits.
          </p>
          {problem ? <p class="error">{problem}</p> : null}
          <form method="post" action="/sandbox/increase/card">
            <input type="hidden" name="return_url" value={back.returnUrl} />
            <input type="hidden" name="state" value={back.state} />
            <label for="pan">Card number</label>
            <input id="pan" name="pan" inputmode="numeric" autocomplete="cc-number" />
            <button type="submit">Save card</button>
          </form>
        </main>
      </body>
    </html>
  );
  const refusedReturn = (c: Context) =>
    errorResponse(c, {
      status: 400,
      code: "validation_error",
      message:
        `return_url must be a page of this service's portal (${deps.config.baseUrl}/portal/…)`,
    });

  app.get("/card", (c) => {
    const returnUrl = c.req.query("return_url") ?? "";
    if (!portalReturn(returnUrl)) return refusedReturn(c);
    c.header("Cache-Control", "no-store");
    return c.html(page({ returnUrl, state: c.req.query("state") ?? "" }, null));
  });

  app.post("/card", async (c) => {
    const form = await c.req.parseBody();
    const text = (name: string) => typeof form[name] === "string" ? String(form[name]) : "";
    const returnUrl = text("return_url");
    const back = portalReturn(returnUrl);
    if (!back) return refusedReturn(c);
    const state = text("state");
    const tokenized = await tokenizeSandboxCard(
      deps.databases.test,
      text("pan"),
      deps.clock.now(),
    );
    if (!tokenized.ok) return c.html(page({ returnUrl, state }, tokenized.message), 422);
    back.searchParams.set("state", state);
    back.searchParams.set("card_token_id", tokenized.tokenId);
    back.searchParams.set("last4", tokenized.lastFour);
    return c.redirect(back.href, 303);
  });
  return app;
}
