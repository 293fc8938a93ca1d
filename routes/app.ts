/**
 * The whole HTTP application: the API's surfaces (routes/api_app.ts) and those no API request
 * needs: the payee's pages (portal, document links, digital checks), the operator console, the
 * loopback admin endpoint, the sandbox pages and the rails' webhooks. Built by main.ts once the
 * API answers, and by tests.
 */
import type { Hono } from "hono";
import { adminRoutes } from "./admin.ts";
import { buildApp } from "./api_app.ts";
import { consoleRoutes } from "./console/mod.tsx";
import { digitalCheckRoutes } from "./digital_checks.tsx";
import { documentLinkRoutes } from "./documents.ts";
import { payLandingRoutes } from "./portal/landing.tsx";
import { portalRoutes } from "./portal/mod.tsx";
import type { AppDeps, AppEnv } from "./context.ts";
import { increaseWebhookRoutes } from "./increase.ts";
import { lithicWebhookRoutes } from "./lithic.ts";
import { lobWebhookRoutes } from "./lob.ts";
import { paypalWebhookRoutes } from "./paypal.ts";
import { sandboxRoutes } from "./sandbox.tsx";
import { sandboxIncreaseRoutes } from "./sandbox_increase.tsx";

export function createApp(deps: AppDeps): Hono<AppEnv> {
  // Each under a prefix of LATER_SURFACES (routes/lazy_app.ts), which waits for this app.
  return buildApp(deps, (app, documentLinks) => {
    // The payee's pages: the portal, its landing, document links and digital checks.
    app.route("/portal", portalRoutes(deps));
    app.route("/pay", payLandingRoutes(deps));
    app.route("/documents", documentLinkRoutes(deps, documentLinks));
    app.route("/checks", digitalCheckRoutes(deps));
    // The Increase simulator's hosted card field serves the sandbox's portal, inbox on or off.
    app.route("/sandbox/increase", sandboxIncreaseRoutes(deps));
    app.route("/sandbox", sandboxRoutes(deps));
    if (deps.adminToken) app.route("/admin", adminRoutes({ ...deps, adminToken: deps.adminToken }));
    app.route("/console", consoleRoutes(deps));
    app.route("/rails/paypal", paypalWebhookRoutes(deps));
    app.route("/rails/lithic", lithicWebhookRoutes(deps));
    app.route("/rails/lob", lobWebhookRoutes(deps));
    app.route("/rails/increase", increaseWebhookRoutes(deps));
  });
}
