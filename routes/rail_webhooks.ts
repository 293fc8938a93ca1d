/**
 * The one shape of a provider's webhook route, POST /rails/<provider>/{company}/{environment}/
 * webhook: the environment is named in the path, the raw body and headers go to the provider's
 * use case (which verifies the signature before anything is written), and a refusal becomes the
 * error format with its status. HTTP only.
 */
import { Hono } from "hono";
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { Environment } from "../lib/platform/config.ts";
import type { Result } from "../lib/platform/result.ts";
import type { AppEnv } from "./context.ts";
import { errorResponse } from "./errors.ts";

/** What a provider's webhook use case is handed. */
export interface WebhookDelivery {
  readonly environment: Environment;
  readonly companyId: string;
  readonly header: (name: string) => string | null;
  readonly body: string;
}

/** The route of one provider's webhooks; `statusOf` maps its refusal codes (others are 400). */
export function railWebhookRoutes(
  receive: (delivery: WebhookDelivery) => Promise<Result<{ eventId: string | null }>>,
  statusOf: Readonly<Record<string, ContentfulStatusCode>>,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post("/:company/:environment/webhook", async (c: Context<AppEnv>) => {
    const environment = c.req.param("environment");
    if (environment !== "test" && environment !== "live") {
      return errorResponse(c, {
        status: 404,
        code: "not_found",
        message: `no environment ${JSON.stringify(environment)}: test or live`,
      });
    }
    const received = await receive({
      environment,
      companyId: c.req.param("company")!,
      header: (name) => c.req.header(name) ?? null,
      body: await c.req.text(),
    });
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
  });
  return app;
}
