/** GET /v1/ledgers/{line}/balance: the segregated balance of the key's own line. */
import { Hono } from "hono";
import { readLineBalances } from "../../db/ledger_store.ts";
import { centsToDollars } from "../../lib/money.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { errorResponse } from "../errors.ts";

export function ledgerRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/:line/balance", async (c) => {
    const principal = c.get("linePrincipal");
    // A key sees only its own line; any other line is as absent as one that does not exist.
    if (c.req.param("line") !== principal.lineCode) {
      return errorResponse(c, {
        status: 404,
        code: "not_found",
        message: `no ledger ${JSON.stringify(c.req.param("line"))} for this key`,
      });
    }
    const balances = await readLineBalances(principal.database.readClient, principal.lineId);
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
