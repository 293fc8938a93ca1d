/** Surface B disbursements: create, get, list, cancel (contract §7). */
import { Hono } from "hono";
import {
  cancelV1Disbursement,
  findV1Disbursement,
  listLineDisbursements,
  v1Creates,
  type V1Disbursement,
} from "../../lib/disbursements/service.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { errorResponse, refusalError } from "../errors.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { invalidInput, parseJsonBody, parseQuery } from "../validation.ts";
import { disbursementView, v1Schemas } from "./schemas.ts";

export function disbursementRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const schemas = v1Schemas(deps.config);
  app.post("/", async (c) => {
    const principal = c.get("linePrincipal");
    const body = await parseJsonBody(c, schemas.createDisbursement);
    if (!body.ok) return body.response;
    const input = body.value;
    const scope = { companyId: principal.companyId, lineId: principal.lineId };
    const request = {
      payeeExternalId: input.payee.id,
      amountCents: input.amount,
      modalities: input.modalities,
      claimId: input.claim_id,
      metadata: input.metadata,
      payBy: input.pay_by ?? null,
    };
    return await respondIdempotently(
      c,
      deps,
      { ...scope, database: principal.database, scopeLine: principal.lineId },
      {
        batch: v1Creates,
        input: {
          database: principal.database,
          scope,
          request,
          realNow: deps.clock.now(),
          micrFont: deps.config.checkMicrFont,
        },
      },
      (created) => {
        if (created.ok) {
          return {
            status: 201,
            body: disbursementView(created.value, principal, deps.config.baseUrl),
          };
        }
        const missing = created.code === "payee_not_found";
        return refusalOutcome(c, refusalError(created, missing ? { issue: "no such payee" } : {}));
      },
    );
  });

  app.get("/", async (c) => {
    const principal = c.get("linePrincipal");
    const query = parseQuery(c, schemas.listQuery);
    if (!query.ok) return query.response;
    const page = await listLineDisbursements(
      principal.database,
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

  // The body of each disbursement the read cache holds, built once per cached copy: building and
  // serializing the view was about a quarter of a cached read's CPU. A copy is never changed (a
  // change drops it from the cache), and its line's code, environment and the base URL are fixed.
  const bodies = new WeakMap<V1Disbursement, string>();
  app.get("/:id", async (c) => {
    const principal = c.get("linePrincipal");
    const id = c.req.param("id");
    const found = await findV1Disbursement(principal.database, principal, id);
    if (!found.ok) return errorResponse(c, refusalError(found));
    let body = bodies.get(found.value);
    if (body === undefined) {
      body = JSON.stringify(disbursementView(found.value, principal, deps.config.baseUrl));
      bodies.set(found.value, body);
    }
    return c.body(body, 200, { "Content-Type": "application/json" });
  });

  app.post("/:id/cancel", async (c) => {
    const principal = c.get("linePrincipal");
    const id = c.req.param("id");
    const scope = { companyId: principal.companyId, lineId: principal.lineId };
    return await respondIdempotently(
      c,
      deps,
      { ...scope, database: principal.database, scopeLine: principal.lineId },
      (tx) => cancelV1Disbursement(tx, principal.database, scope, id, deps.clock.now()),
      (canceled) =>
        canceled.ok
          ? { status: 200, body: disbursementView(canceled.value, principal, deps.config.baseUrl) }
          : refusalOutcome(c, refusalError(canceled)),
    );
  });
  return app;
}
