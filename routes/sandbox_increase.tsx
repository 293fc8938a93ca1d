/** @jsxImportSource hono/jsx */
/**
 * The Increase simulator's hosted card field, /sandbox/increase/card: the sandbox's stand-in for
 * the tokenization provider's page. A developer types a test card, its expiry and CVV here (GET:
 * the form; POST: the vault checks and keeps it, a problem shown beside its field in the page's
 * language), and the browser goes back to the portal with only the card token, as in live
 * (the portal reads its last four from the token at Increase). It speaks the portal's language (`lang`, from the portal's own texts) and sends
 * browsers back only to this service's own portal. HTTP only.
 */
import { type Context, Hono } from "hono";
import { type HostedCardProblem, tokenizeSandboxCard } from "../lib/instant/simulator.ts";
import { type Language, languageOf } from "../lib/notify/messages.ts";
import { portalText } from "../lib/portal/portal_text.ts";
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
  const page = (
    back: { returnUrl: string; state: string; language: Language },
    problem: HostedCardProblem | null,
  ) => {
    const t = portalText(back.language).hostedCard;
    // The vault's fields in their order, each with the browser's autofill name.
    const fields: readonly [HostedCardProblem["field"], string, string][] = [
      ["pan", t.cardNumber, "cc-number"],
      ["exp", t.expiry, "cc-exp"],
      ["cvv", t.cvv, "cc-csc"],
    ];
    return (
      <html lang={back.language}>
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <title>{t.title}</title>
        </head>
        <body>
          <main>
            <h1>{t.title}</h1>
            <p>{t.intro}</p>
            {problem ? <p class="error" id="card-problem">{t.problems[problem.code]}</p> : null}
            <form method="post" action="/sandbox/increase/card">
              <input type="hidden" name="return_url" value={back.returnUrl} />
              <input type="hidden" name="state" value={back.state} />
              <input type="hidden" name="lang" value={back.language} />
              {fields.map(([field, label, autocomplete]) => (
                <>
                  <label for={field}>{label}</label>
                  <input
                    id={field}
                    name={field}
                    inputmode="numeric"
                    autocomplete={autocomplete}
                    {...(problem?.field === field
                      ? { "aria-invalid": "true", "aria-describedby": "card-problem" }
                      : {})}
                  />
                </>
              ))}
              <button type="submit">{t.save}</button>
            </form>
          </main>
        </body>
      </html>
    );
  };
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
    const language = languageOf(c.req.query("lang"));
    return c.html(page({ returnUrl, state: c.req.query("state") ?? "", language }, null));
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
      { pan: text("pan"), expiry: text("exp"), cvv: text("cvv") },
      deps.clock.now(),
    );
    if (!tokenized.ok) {
      return c.html(page({ returnUrl, state, language: languageOf(text("lang")) }, tokenized), 422);
    }
    back.searchParams.set("state", state);
    back.searchParams.set("card_token_id", tokenized.tokenId);
    return c.redirect(back.href, 303);
  });
  return app;
}
