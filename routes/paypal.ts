/**
 * PayPal's webhooks, POST /rails/paypal/{company}/{environment}/webhook (issue 19): the body is
 * verified with that configuration's verify-webhook-signature call before anything is written
 * (unverified: 400, nothing written); a verified one only records its notice and queues the job
 * that reads the item from PayPal (lib/paypal/service.ts). The app's body limit applies. HTTP only.
 */
import type { Hono } from "hono";
import { receiveWebhook } from "../lib/paypal/service.ts";
import { networkReachesOf } from "../lib/payouts/provider_reaches.ts";
import { runtimeSettingsOf } from "../lib/payouts/settings.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { railWebhookRoutes } from "./rail_webhooks.ts";

export function paypalWebhookRoutes(deps: AppDeps): Hono<AppEnv> {
  const network = networkReachesOf(runtimeSettingsOf(deps.config), deps.secretBox);
  return railWebhookRoutes(
    ({ environment, companyId, header, body }) =>
      receiveWebhook({ database: deps.databases[environment], paypal: network.paypal }, {
        companyId,
        headers: {
          authAlgo: header("PAYPAL-AUTH-ALGO"),
          certUrl: header("PAYPAL-CERT-URL"),
          transmissionId: header("PAYPAL-TRANSMISSION-ID"),
          transmissionSig: header("PAYPAL-TRANSMISSION-SIG"),
          transmissionTime: header("PAYPAL-TRANSMISSION-TIME"),
        },
        body,
      }, deps.clock.now()),
    {
      paypal_not_configured: 404,
      invalid_input: 400,
      webhook_not_verified: 400,
      paypal_unavailable: 503,
    },
  );
}
