/**
 * Lithic's webhooks, POST /rails/lithic/{company}/{environment}/webhook: the Standard Webhooks
 * signature (webhook-id, webhook-timestamp, webhook-signature) is checked with that
 * configuration's secret before anything is written (forged: 400, nothing written); a verified
 * event naming one of our cards records its notice once and queues the check that reads the card
 * from Lithic (lib/cards/service.ts). HTTP only.
 */
import type { Hono } from "hono";
import { receiveLithicWebhook } from "../lib/cards/service.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { railWebhookRoutes } from "./rail_webhooks.ts";

export function lithicWebhookRoutes(deps: AppDeps): Hono<AppEnv> {
  return railWebhookRoutes(
    ({ environment, companyId, header, body }) =>
      receiveLithicWebhook({ database: deps.databases[environment], secretBox: deps.secretBox }, {
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
}
