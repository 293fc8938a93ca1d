/**
 * Lithic's webhooks, POST /rails/lithic/{company}/{environment}/webhook: the Standard Webhooks
 * signature (webhook-id, webhook-timestamp, webhook-signature) is checked with that
 * configuration's secret before anything is written (forged: 400, nothing written); a verified
 * event naming one of our cards records its notice once and queues the check that reads the card
 * from Lithic (lib/cards/service.ts). And the sandbox's Lithic hosted card page,
 * GET /rails/lithic/sandbox/v1/embed/card, which the portal frames for a test company without
 * Lithic settings (the rest of the sandbox's Lithic is reached in process, never over HTTP). HTTP
 * only.
 */
import type { Hono } from "hono";
import { receiveLithicWebhook } from "../lib/cards/service.ts";
import { sandboxLithicPage } from "../lib/cards/sandbox_lithic.ts";
import { networkReachesOf } from "../lib/payouts/provider_reaches.ts";
import { runtimeSettingsOf } from "../lib/payouts/settings.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { railWebhookRoutes } from "./rail_webhooks.ts";

/** The sandbox's card page may be framed by the portal (same origin) and loads nothing. */
const SANDBOX_CARD_PAGE_CSP = "default-src 'none'; frame-ancestors 'self'; base-uri 'none'";

export function lithicWebhookRoutes(deps: AppDeps): Hono<AppEnv> {
  const network = networkReachesOf(runtimeSettingsOf(deps.config), deps.secretBox);
  const app = railWebhookRoutes(
    ({ environment, companyId, header, body }) =>
      receiveLithicWebhook({ database: deps.databases[environment], lithic: network.lithic }, {
        companyId,
        headers: {
          id: header("webhook-id"),
          timestamp: header("webhook-timestamp"),
          signature: header("webhook-signature"),
        },
        body,
      }, deps.clock.now()),
    { lithic_not_configured: 404, webhook_not_verified: 400, invalid_input: 400 },
  );
  app.get("/sandbox/v1/embed/card", async (c) => {
    const page = await sandboxLithicPage(deps.databases.test, deps.clock, c.req.raw);
    const headers = new Headers(page.headers);
    headers.set("Content-Security-Policy", SANDBOX_CARD_PAGE_CSP);
    headers.set("Cache-Control", "no-store");
    return new Response(page.body, { status: page.status, headers });
  });
  return app;
}
