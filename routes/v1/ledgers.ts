/** GET /v1/ledgers/{line}/balance and /tieouts/{date}: the key's own line only. */
import { Hono } from "hono";
import { lineBalances, lineTieOutOn, tieOutJson } from "../../lib/ledger/service.ts";
import { centsToDollars } from "../../lib/platform/money.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { errorResponse } from "../errors.ts";
import { invalidInput } from "../validation.ts";

export function ledgerRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // A key sees only its own line; any other line is as absent as one that does not exist.
  app.use("/:line/*", async (c, next) => {
    if (c.req.param("line") !== c.get("linePrincipal").lineCode) {
      return errorResponse(c, {
        status: 404,
        code: "not_found",
        message: `no ledger ${JSON.stringify(c.req.param("line"))} for this key`,
      });
    }
    await next();
  });

  app.get("/:line/tieouts/:date", async (c) => {
    const principal = c.get("linePrincipal");
    const date = c.req.param("date");
    const tieOut = await lineTieOutOn(principal.database, principal.lineId, date);
    if (!tieOut) {
      return invalidInput(
        c,
        "date",
        "path",
        `date ${JSON.stringify(date)} is not a calendar date YYYY-MM-DD`,
      );
    }
    return c.json({
      object: "tieout",
      line: principal.lineCode,
      livemode: principal.environment === "live",
      ...tieOutJson(tieOut),
    });
  });

  app.get("/:line/balance", async (c) => {
    const principal = c.get("linePrincipal");
    const balances = await lineBalances(principal.database, principal.lineId);
    return c.json({
      object: "balance",
      line: principal.lineCode,
      available: centsToDollars(balances.available),
      pending: centsToDollars(balances.pending_funding),
      reserved: centsToDollars(balances.reserved),
      in_transit: centsToDollars(balances.in_transit),
      currency: "USD",
      livemode: principal.environment === "live",
      as_of: new Date(deps.clock.now()).toISOString(),
    });
  });
  return app;
}
