/**
 * Surface A funding: POST /api/funds (ACH or WireTransfer, optional funding_uuid, line and the
 * disbursement_uuid of the large disbursement it is for), GET /api/funds (the company's fundings,
 * with what each released) and GET /api/balance. Amounts are dollars read from the JSON text;
 * Idempotency-Key applies.
 */
import { Hono } from "hono";
import {
  achFundingSchedule,
  type FundingReport,
  fundLine,
  listCompanyFundings,
} from "../../lib/funding/service.ts";
import { lineBalances } from "../../lib/ledger/service.ts";
import { requestFingerprint } from "../../lib/idempotency/rules.ts";
import { centsToDollars } from "../../lib/platform/money.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { companyTarget, requestedLine } from "./request.ts";
import { apiSchemas } from "./schemas.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { refusalError } from "../errors.ts";
import { invalidInput, parseJsonBody, parseQuery } from "../validation.ts";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const fundingView = (f: FundingReport) => ({
  funding_uuid: f.fundingUuid ?? f.id,
  payment_method: f.paymentMethod,
  amount: centsToDollars(f.amountCents),
  description: f.description,
  large_disbursement: f.largeDisbursement,
  disbursement_uuid: f.disbursementUuid,
  status: f.status,
  expected_available_at: iso(f.expectedAvailableAt),
  completed_at: iso(f.completedAt),
  line: f.lineCode,
  created_at: iso(f.createdAt),
  released_disbursements: f.released.map((r) => ({
    disbursement_uuid: r.disbursementUuid,
    released_at: iso(r.releasedAt),
  })),
});

export function fundRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { addFunds: addFundsBody, listFunds } = apiSchemas(deps.config);

  app.post("/funds", async (c) => {
    const principal = c.get("apiPrincipal");
    const body = await parseJsonBody(c, addFundsBody);
    if (!body.ok) return body.response;
    const input = body.value;
    const requested = await requestedLine(c, input.line);
    if (!requested.ok) return requested.response;
    const line = requested.line;
    const fingerprint = await requestFingerprint("POST", "/api/funds", body.text);
    const funding = {
      companyId: principal.companyId,
      lineId: line.id,
      fundingUuid: input.funding_uuid ?? null,
      paymentMethod: input.payment_method,
      amountCents: input.amount,
      description: input.description,
      largeDisbursement: input.large_disbursement,
      disbursementUuid: input.disbursement_uuid ?? null,
      requestFingerprint: fingerprint,
      achSchedule: input.payment_method === "ACH"
        ? await achFundingSchedule(principal.database, deps.secretBox, principal.companyId)
        : null,
    };
    return await respondIdempotently(
      c,
      deps,
      companyTarget(c),
      (tx) => fundLine(tx, principal.database, funding, deps.clock.now()),
      (added) =>
        added.ok
          ? {
            status: added.value.replayed ? 200 : 201,
            body: fundingView(added.value.funding),
          }
          : refusalOutcome(c, refusalError(added)),
    );
  });

  app.get("/funds", async (c) => {
    const principal = c.get("apiPrincipal");
    const query = parseQuery(c, listFunds);
    if (!query.ok) return query.response;
    // Every line's fundings unless ?line= names one.
    let lineId: string | null = null;
    if (query.value.line !== undefined) {
      const requested = await requestedLine(c, query.value.line, "query");
      if (!requested.ok) return requested.response;
      lineId = requested.line.id;
    }
    const page = await listCompanyFundings(
      principal.database,
      { companyId: principal.companyId, lineId },
      { limit: query.value.limit, startingAfter: query.value.starting_after ?? null },
    );
    if (!page) {
      const cursor = JSON.stringify(query.value.starting_after);
      return invalidInput(c, "starting_after", "query", `no funding ${cursor} to start after`);
    }
    return c.json({
      object: "list",
      data: page.data.map(fundingView),
      has_more: page.hasMore,
    });
  });

  app.get("/balance", async (c) => {
    const principal = c.get("apiPrincipal");
    const requested = await requestedLine(c, c.req.query("line"), "query");
    if (!requested.ok) return requested.response;
    const line = requested.line;
    const balances = await lineBalances(principal.database, line.id);
    return c.json({
      line: line.code,
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
