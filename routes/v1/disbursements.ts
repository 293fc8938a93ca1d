/** Surface B disbursements: create, get, list, cancel (DESIGN 7). */
import { Hono } from "hono";
import { applyMove, createDisbursement } from "../../lib/payouts/store.ts";
import { domainNow } from "../../lib/sandbox/clock_store.ts";
import {
  findPayee,
  listV1Disbursements,
  loadV1Disbursement,
  readV1Disbursement,
} from "../../lib/disbursements/v1_store.ts";
import { loadApiPayoutAsV1 } from "../../lib/disbursements/v1_api_payout.ts";
import { modalityOf, surfaceBStatus } from "../../lib/payouts/states.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { errorResponse } from "../errors.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { invalidInput, parseJsonBody, parseQuery } from "../validation.ts";
import { disbursementView, v1Schemas } from "./schemas.ts";

export function disbursementRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const schemas = v1Schemas(deps.config);
  const notFound = (id: string) => ({
    status: 404 as const,
    code: "not_found",
    message: `no disbursement ${JSON.stringify(id)} for this key`,
  });

  app.post("/", async (c) => {
    const principal = c.get("linePrincipal");
    const body = await parseJsonBody(c, schemas.createDisbursement);
    if (!body.ok) return body.response;
    const input = body.value;
    const scope = { companyId: principal.companyId, lineId: principal.lineId };
    return await respondIdempotently(c, deps, {
      ...scope,
      database: principal.database,
      scopeLine: principal.lineId,
    }, async (tx) => {
      const now = await domainNow(principal.database, principal.companyId, deps.clock.now());
      const payee = await findPayee(tx, principal.companyId, principal.lineId, input.payee.id);
      if (!payee) {
        return refusalOutcome(c, {
          status: 400,
          code: "payee_not_found",
          message: `no payee ${
            JSON.stringify(input.payee.id)
          } on this line: create it with POST /v1/payees first`,
          issues: [{ field: "payee.id", location: "body", message: "no such payee" }],
        });
      }
      const created = await createDisbursement(tx, {
        ...scope,
        kind: "v1",
        externalUuid: "",
        requestFingerprint: "",
        largeDisbursement: false,
        claimId: input.claim_id,
        metadata: input.metadata,
        payouts: [{
          payeeUuid: payee.externalId,
          payeeId: payee.id,
          amountCents: input.amount,
          allowedPaymentMethodIds: input.modalities.map((code) => modalityOf(code)!.id),
          payee: { email: payee.email, phone: payee.phone, first_name: payee.name },
          deliveryOptions: {
            email: payee.contactChannel === "email",
            sms: payee.contactChannel === "sms",
          },
        }],
      }, now);
      if (!created.ok) {
        return refusalOutcome(c, {
          status: created.code === "insufficient_funds" ? 409 : 400,
          code: created.code,
          message: created.message,
          issues: created.code === "amount_below_payee_fee"
            ? [{ field: "amount", location: "body", message: created.message }]
            : undefined,
        });
      }
      const view = await loadV1Disbursement(tx, scope, created.value.disbursementId);
      return {
        status: 201,
        body: disbursementView(view!, principal, deps.config.baseUrl),
        commit: true,
      };
    });
  });

  app.get("/", async (c) => {
    const principal = c.get("linePrincipal");
    const query = parseQuery(c, schemas.listQuery);
    if (!query.ok) return query.response;
    const page = await listV1Disbursements(
      principal.database.readClient,
      { companyId: principal.companyId, lineId: principal.lineId },
      { limit: query.value.limit, startingAfter: query.value.starting_after ?? null },
    );
    if (!page) {
      const cursor = JSON.stringify(query.value.starting_after);
      return invalidInput(c, "starting_after", "query", `no disbursement ${cursor} to start after`);
    }
    return c.json({
      object: "list",
      data: page.data.map((d) => disbursementView(d, principal, deps.config.baseUrl)),
      has_more: page.hasMore,
    });
  });

  app.get("/:id", async (c) => {
    const principal = c.get("linePrincipal");
    const id = c.req.param("id");
    // A Surface A payout of this line reads by the id its /v1 events carry.
    const found = await readV1Disbursement(principal.database, principal, id) ??
      await loadApiPayoutAsV1(principal.database.readClient, principal, id);
    if (!found) return errorResponse(c, notFound(id));
    return c.json(disbursementView(found, principal, deps.config.baseUrl));
  });

  app.post("/:id/cancel", async (c) => {
    const principal = c.get("linePrincipal");
    const id = c.req.param("id");
    const scope = { companyId: principal.companyId, lineId: principal.lineId };
    return await respondIdempotently(c, deps, {
      ...scope,
      database: principal.database,
      scopeLine: principal.lineId,
    }, async (tx) => {
      const found = await loadV1Disbursement(tx, scope, id);
      if (!found) return refusalOutcome(c, notFound(id));
      const now = await domainNow(principal.database, principal.companyId, deps.clock.now());
      const canceled = await applyMove(tx, found.payoutId, { kind: "cancel" }, now, {
        detail: "canceled by the company",
      });
      if (!canceled.ok) {
        return refusalOutcome(c, {
          status: 409,
          code: "not_cancelable",
          message: `disbursement ${id} is ${
            surfaceBStatus[found.status]
          }: it can be canceled only before a modality is selected, or after a failure`,
        });
      }
      const view = await loadV1Disbursement(tx, scope, id);
      return {
        status: 200,
        body: disbursementView(view!, principal, deps.config.baseUrl),
        commit: true,
      };
    });
  });
  return app;
}
