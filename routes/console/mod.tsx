/** @jsxImportSource hono/jsx */
/**
 * The operator console under /console (issue 20): server-rendered pages for the payments team,
 * on the operators of lib/operators. Sign-in and the assets are public; every other page passes
 * consoleSession (session, environment, CSRF, TOTP for live). Each page is a sub-app mounted on
 * one line below; its changes go through the same services and commands as the CLI.
 */
import { Hono } from "hono";
import type { AppDeps } from "../context.ts";
import { consoleCss, consoleJs, notFoundPage, refusalPage } from "./kit.tsx";
import { type ConsoleEnv, consoleSession } from "./session.ts";
import { signInRoutes, signOutRoutes } from "./sign_in.tsx";
import { webhooksConsoleRoutes } from "./webhooks.tsx";
import { jobsConsoleRoutes } from "./jobs.tsx";
import { sandboxConsoleRoutes } from "./sandbox.tsx";
import { bankFilesConsoleRoutes } from "./bank_files.tsx";
import { handImportConsoleRoutes } from "./hand_imports.tsx";
import { reviewsConsoleRoutes } from "./reviews.tsx";
import { keysConsoleRoutes } from "./keys.tsx";
import { ledgerConsoleRoutes } from "./ledger.tsx";
import { disbursementsConsoleRoutes } from "./disbursements.tsx";
import { fundingConsoleRoutes } from "./funding.tsx";
import { auditConsoleRoutes } from "./audit.tsx";
import { railExceptionsConsoleRoutes } from "./rail_exceptions.tsx";
import { reconciliationConsoleRoutes } from "./reconciliation.tsx";
import { needsActionConsoleRoutes } from "./needs_action.tsx";
import { approvalsConsoleRoutes } from "./approvals.tsx";
import { overviewConsoleRoutes } from "./overview.tsx";
import { payoutsConsoleRoutes } from "./payouts.tsx";
import { payoutDetailConsoleRoutes } from "./payout_detail.tsx";
import { unclaimedConsoleRoutes } from "./unclaimed.tsx";

/** Strict headers on every console page: no framing, no referrer, scripts and styles of our own. */
const consoleSecurityHeaders: Readonly<Record<string, string>> = {
  "Content-Security-Policy":
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Cache-Control": "no-store",
};

export function consoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.use(async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(consoleSecurityHeaders)) {
      if (!c.res.headers.has(name)) c.res.headers.set(name, value);
    }
  });
  app.get("/assets/console.css", (c) => {
    c.header("Content-Type", "text/css; charset=utf-8");
    c.header("Cache-Control", "public, max-age=3600");
    return c.body(consoleCss);
  });
  app.get("/assets/console.js", (c) => {
    c.header("Content-Type", "text/javascript; charset=utf-8");
    c.header("Cache-Control", "public, max-age=3600");
    return c.body(consoleJs);
  });
  app.route("/", signInRoutes(deps));

  app.use(consoleSession(deps, refusalPage));
  app.route("/", signOutRoutes(deps));
  // One line per page (h4: overview, payouts; h5: the others).
  app.route("/", webhooksConsoleRoutes(deps));
  app.route("/", jobsConsoleRoutes(deps));
  app.route("/", sandboxConsoleRoutes(deps));
  app.route("/", bankFilesConsoleRoutes(deps));
  app.route("/", handImportConsoleRoutes(deps));
  app.route("/", reviewsConsoleRoutes(deps));
  app.route("/", keysConsoleRoutes(deps));
  app.route("/", ledgerConsoleRoutes(deps));
  app.route("/", disbursementsConsoleRoutes(deps));
  app.route("/", fundingConsoleRoutes(deps));
  app.route("/", auditConsoleRoutes(deps));
  app.route("/", approvalsConsoleRoutes(deps));
  app.route("/", railExceptionsConsoleRoutes(deps));
  app.route("/", reconciliationConsoleRoutes(deps));
  app.route("/", unclaimedConsoleRoutes(deps));
  app.route("/", needsActionConsoleRoutes(deps));
  app.route("/", overviewConsoleRoutes(deps));
  app.route("/payouts", payoutsConsoleRoutes(deps));
  app.route("/payouts", payoutDetailConsoleRoutes(deps));

  app.all("*", (c) => notFoundPage(c));
  return app;
}
