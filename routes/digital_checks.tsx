/** @jsxImportSource hono/jsx */
/**
 * Digital checks by signed link (issue 19): GET /checks/{environment}/digital/{check id} with the
 * link's expiry and signature. A valid link gives the check's PDF once its positive-pay file was
 * sent; before that, a page saying it is not ready yet (200, nothing is wrong). A voided or stale
 * check gets a page saying it can no longer be used (410), a paid one a page saying it was paid
 * (410); an altered or unknown link a 404 page,
 * an expired one a 410 page pointing to the payment page, so a link reveals nothing else.
 */
import { Hono } from "hono";
import { digitalCheckPdf, verifyDigitalCheckLink } from "../lib/checks/digital.ts";
import type { Environment } from "../lib/platform/config.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { chooseLocale } from "./portal/language.ts";
import { portalSecurityHeaders } from "./portal/mod.tsx";
import { Page } from "./portal/views.tsx";

export function digitalCheckRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/:environment/digital/:checkId", async (c) => {
    const environment = c.req.param("environment");
    const checkId = c.req.param("checkId");
    const locale = chooseLocale(c, {
      base: c.req.path,
      holder: null,
      secure: new URL(c.req.url).protocol === "https:",
    });
    const t = locale.text.digitalCheck;
    const page = (title: string, body: string, status: 200 | 404 | 410) => {
      for (const [name, value] of Object.entries(portalSecurityHeaders)) c.header(name, value);
      return c.html(
        <Page locale={locale} title={title}>
          <h1>{title}</h1>
          <p>{body}</p>
        </Page>,
        status,
      );
    };
    if (environment !== "test" && environment !== "live") return page(t.linkTitle, t.invalid, 404);
    const verdict = await verifyDigitalCheckLink(deps.secretBox, {
      environment,
      checkId,
      expires: c.req.query("expires"),
      signature: c.req.query("signature"),
    }, deps.clock.now());
    if (verdict === "invalid") return page(t.linkTitle, t.invalid, 404);
    if (verdict === "expired") return page(t.linkTitle, t.expired, 410);
    const answer = await digitalCheckPdf({
      database: deps.databases[environment as Environment],
      environment,
      secretBox: deps.secretBox,
      micrFont: deps.config.checkMicrFont,
    }, checkId);
    switch (answer.kind) {
      case "not_found":
        return page(t.linkTitle, t.invalid, 404);
      case "not_ready":
        return page(t.notReadyTitle, t.notReady(answer.checkNumber), 200);
      case "void":
        return page(t.voidedTitle, t.voided(answer.checkNumber), 410);
      case "paid":
        return page(t.paidTitle, t.paid(answer.checkNumber, answer.paidDate), 410);
      case "pdf":
        c.header("Content-Type", "application/pdf");
        c.header("Content-Disposition", `inline; filename="check-${answer.checkNumber}.pdf"`);
        c.header("X-Content-Type-Options", "nosniff");
        c.header("Referrer-Policy", "no-referrer");
        c.header("Cache-Control", "private, no-store");
        return c.body(answer.bytes as Uint8Array<ArrayBuffer>);
    }
  });
  return app;
}
