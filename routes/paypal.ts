/**
 * PayPal's webhooks, POST /rails/paypal/{company}/{environment}/webhook (issue 19): the body is
 * verified with that configuration's verify-webhook-signature call before anything is written
 * (unverified: 400, nothing written); a verified one only records its notice and queues the job
 * that reads the item from PayPal (lib/paypal/service.ts). The app's body limit applies. HTTP only.
 */
import { Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { receiveWebhook } from "../lib/paypal/service.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { errorResponse } from "./errors.ts";

const statusOf: Readonly<Record<string, ContentfulStatusCode>> = {
  paypal_not_configured: 404,
  invalid_input: 400,
  webhook_not_verified: 400,
  paypal_unavailable: 503,
};

export function paypalWebhookRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post(
    "/:company/:environment/webhook",
    async (c) => {
      const environment = c.req.param("environment");
      if (environment !== "test" && environment !== "live") {
        return errorResponse(c, {
          status: 404,
          code: "not_found",
          message: `no environment ${JSON.stringify(environment)}: test or live`,
        });
      }
      const header = (name: string) => c.req.header(name) ?? null;
      const received = await receiveWebhook({
        database: deps.databases[environment],
        secretBox: deps.secretBox,
      }, {
        companyId: c.req.param("company"),
        headers: {
          authAlgo: header("PAYPAL-AUTH-ALGO"),
          certUrl: header("PAYPAL-CERT-URL"),
          transmissionId: header("PAYPAL-TRANSMISSION-ID"),
          transmissionSig: header("PAYPAL-TRANSMISSION-SIG"),
          transmissionTime: header("PAYPAL-TRANSMISSION-TIME"),
        },
        body: await c.req.text(),
      }, deps.clock.now());
      if (!received.ok) {
        return errorResponse(c, {
          status: statusOf[received.code] ?? 400,
          code: received.code,
          message: received.message,
          ...(received.field
            ? { issues: [{ field: received.field, location: "body", message: received.message }] }
            : {}),
        });
      }
      return c.json({ received: true, event_id: received.value.eventId }, 200);
    },
  );
  return app;
}
