/** PayPal's webhooks, POST /rails/paypal/{company}/{environment}/webhook (issue 19): not built yet. */
import { Hono } from "hono";
import type { AppDeps, AppEnv } from "./context.ts";

export function paypalWebhookRoutes(_deps: AppDeps): Hono<AppEnv> {
  return new Hono<AppEnv>();
}
