/** @jsxImportSource hono/jsx */
/**
 * `payee_url` (DESIGN 14): a non-secret landing page for a /v1 disbursement. It shows nothing
 * about the payment; its one button sends the payee a fresh portal link on the channel the
 * company has on file, within the hourly resend allowance. The answer is the same whether or not
 * the id exists, so the page cannot be used to discover payments.
 */
import { Hono } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { resendPayeeLink } from "../../db/notification_store.ts";
import { payoutRuntime, runtimeSettingsOf } from "../../db/runtime.ts";
import { domainNow } from "../../db/sandbox_clock_store.ts";
import type { Environment } from "../../lib/config.ts";
import { constantTimeEqual, randomBase62 } from "../../lib/keys.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { portalSecurityHeaders } from "./mod.tsx";
import { Page } from "./views.tsx";

const FORM_COOKIE = "pay_form";

export function payLandingRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(portalSecurityHeaders)) {
      c.res.headers.set(name, value);
    }
  });

  app.get("/:id", (c) => {
    const token = randomBase62(22);
    setCookie(c, FORM_COOKIE, token, {
      path: `/pay/${c.req.param("id")}`,
      httpOnly: true,
      sameSite: "Strict",
      secure: deps.config.baseUrl.startsWith("https:"),
    });
    return c.html(
      <Page title="Your payment">
        <p>
          To see your payment and choose how to be paid, we send a private link to the e-mail or
          phone the company has for you.
        </p>
        <form method="post">
          <input type="hidden" name="csrf" value={token} />
          <button type="submit">Send me my link</button>
        </form>
      </Page>,
    );
  });

  app.post("/:id", async (c) => {
    const id = c.req.param("id");
    const body = await c.req.parseBody();
    const cookie = getCookie(c, FORM_COOKIE);
    if (!cookie || typeof body.csrf !== "string" || !constantTimeEqual(cookie, body.csrf)) {
      return c.html(
        <Page title="Please try again">
          <p role="alert">This form was not accepted because it did not come from this page.</p>
          <p>
            <a href={`/pay/${encodeURIComponent(id)}`}>Start again</a>
          </p>
        </Page>,
        403,
      );
    }
    if (/^dsb_[0-9A-Za-z]{22}$/.test(id)) {
      for (const environment of ["test", "live"] as Environment[]) {
        const database = deps.databases[environment];
        const { rows } = await database.readClient.execute({
          sql: `SELECT p.id, p.company_id FROM payouts p JOIN disbursements d
                  ON d.id = p.disbursement_id WHERE d.id = ? AND d.kind = 'v1'`,
          args: [id],
        });
        const payout = rows[0];
        if (!payout) continue;
        const realNow = deps.clock.now();
        const domainTime = await domainNow(database, String(payout.company_id), realNow);
        const { notifications } = payoutRuntime(environment, runtimeSettingsOf(deps.config));
        // Rate-limited and closed payouts get the same answer: the page tells nothing.
        await database.writer.write((tx) =>
          resendPayeeLink(tx, notifications, String(payout.id), { realNow, domainNow: domainTime })
        );
      }
    }
    return c.html(
      <Page title="Check your messages">
        <p role="status">
          If this payment is waiting for you, we just sent a private link to the e-mail or phone the
          company has for you. Open the newest message and follow its link.
        </p>
      </Page>,
    );
  });
  return app;
}
