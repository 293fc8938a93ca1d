/**
 * Increase's webhooks, POST /rails/increase/{company}/{environment}/webhook: the
 * `Increase-Webhook-Signature` (t=…,v1=HMAC-SHA256 of `t.body`) is checked with that
 * configuration's secret before anything is written (forged: 400, nothing written); a verified
 * event naming one of our pushes records its notice once and queues the check that reads the push
 * from Increase (lib/instant/service.ts). HTTP only.
 */
import type { Hono } from "hono";
import { receiveIncreaseWebhook } from "../lib/instant/service.ts";
import { networkReachesOf } from "../lib/payouts/provider_reaches.ts";
import { runtimeSettingsOf } from "../lib/payouts/settings.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { railWebhookRoutes } from "./rail_webhooks.ts";

export function increaseWebhookRoutes(deps: AppDeps): Hono<AppEnv> {
  const network = networkReachesOf(runtimeSettingsOf(deps.config), deps.secretBox);
  return railWebhookRoutes(
    ({ environment, companyId, header, body }) =>
      receiveIncreaseWebhook(
        { database: deps.databases[environment], increase: network.increase },
        { companyId, signature: header("Increase-Webhook-Signature"), body },
        deps.clock.now(),
      ),
    { increase_not_configured: 404, webhook_not_verified: 400, invalid_input: 400 },
  );
}
