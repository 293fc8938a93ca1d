/**
 * Lob's webhooks, POST /rails/lob/{company}/{environment}/webhook: the Lob-Signature (HMAC-SHA256
 * of `<Lob-Signature-Timestamp>.<body>` under that company's webhook secret) is checked before
 * anything is written (forged: 400, nothing written); a verified check event naming one of our
 * checks is kept once and applied (lib/lob/service.ts). HTTP only.
 */
import type { Hono } from "hono";
import { receiveLobWebhook } from "../lib/lob/service.ts";
import type { AppDeps, AppEnv } from "./context.ts";
import { railWebhookRoutes } from "./rail_webhooks.ts";

export function lobWebhookRoutes(deps: AppDeps): Hono<AppEnv> {
  return railWebhookRoutes(
    ({ environment, companyId, header, body }) =>
      receiveLobWebhook({ database: deps.databases[environment], secretBox: deps.secretBox }, {
        companyId,
        headers: {
          signature: header("lob-signature"),
          timestamp: header("lob-signature-timestamp"),
        },
        body,
      }, deps.clock.now()),
    { lob_not_configured: 404, webhook_not_verified: 400, invalid_input: 400 },
  );
}
