/** @jsxImportSource hono/jsx */
/**
 * `payee_url` (contract §9): a non-secret landing page for a /v1 disbursement. It shows nothing
 * about the payment; its one button sends the payee a fresh portal link on the channel the
 * company has on file, within the hourly resend allowance. The answer is the same whether or not
 * the id exists, so the page cannot be used to discover payments: for the same reason its
 * language never follows the payee's, only the page's switch and the browser's Accept-Language.
 */
import { Hono } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { payoutRuntime, runtimeSettingsOf } from "../../lib/payouts/settings.ts";
import { sendLinkOfV1Disbursement } from "../../lib/portal/service.ts";
import { constantTimeEqual, randomBase62 } from "../../lib/platform/keys.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { chooseLocale } from "./language.ts";
import { portalSecurityHeaders } from "./mod.tsx";
import { Page } from "./views.tsx";

const FORM_COOKIE = "pay_form";

export function payLandingRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const secure = deps.config.baseUrl.startsWith("https:");
  const baseOf = (id: string) => `/pay/${encodeURIComponent(id)}`;
  app.use(async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(portalSecurityHeaders)) {
      c.res.headers.set(name, value);
    }
  });

  app.get("/:id", (c) => {
    const base = baseOf(c.req.param("id"));
    const locale = chooseLocale(c, { base, holder: null, secure });
    const token = randomBase62(22);
    setCookie(c, FORM_COOKIE, token, { path: base, httpOnly: true, sameSite: "Strict", secure });
    return c.html(
      <Page locale={locale} title={locale.text.landing.title}>
        <p>{locale.text.landing.intro}</p>
        <form method="post">
          <input type="hidden" name="csrf" value={token} />
          <button type="submit">{locale.text.landing.button}</button>
        </form>
      </Page>,
    );
  });

  app.post("/:id", async (c) => {
    const id = c.req.param("id");
    const base = baseOf(id);
    const locale = chooseLocale(c, { base, holder: null, secure });
    const t = locale.text;
    const body = await c.req.parseBody();
    const cookie = getCookie(c, FORM_COOKIE);
    if (!cookie || typeof body.csrf !== "string" || !constantTimeEqual(cookie, body.csrf)) {
      return c.html(
        <Page locale={locale} title={t.landing.forgedTitle}>
          <p role="alert">{t.landing.forged}</p>
          <p>
            <a href={base}>{t.landing.startAgain}</a>
          </p>
        </Page>,
        403,
      );
    }
    // Rate-limited and closed payouts get the same answer: the page tells nothing.
    await sendLinkOfV1Disbursement(
      deps.databases,
      (environment) => payoutRuntime(environment, runtimeSettingsOf(deps.config)).notifications,
      id,
      deps.clock.now(),
    );
    return c.html(
      <Page locale={locale} title={t.landing.sentTitle}>
        <p role="status">{t.landing.sent}</p>
      </Page>,
    );
  });
  return app;
}
