/** Surface B payees: upsert by the company's own id (201 created, 200 updated), and get. */
import { Hono } from "hono";
import { findV1Payee, upsertV1Payee } from "../../lib/disbursements/service.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { errorResponse, refusalError } from "../errors.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { parseJsonBody } from "../validation.ts";
import { payeeView, v1Schemas } from "./schemas.ts";

export function payeeRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const schemas = v1Schemas(deps.config);

  app.post("/", async (c) => {
    const principal = c.get("linePrincipal");
    const body = await parseJsonBody(c, schemas.upsertPayee);
    if (!body.ok) return body.response;
    const input = body.value;
    const target = {
      database: principal.database,
      companyId: principal.companyId,
      scopeLine: principal.lineId,
    };
    const scope = {
      companyId: principal.companyId,
      lineId: principal.lineId,
      externalId: input.id,
    };
    const patch = {
      name: input.name,
      email: input.email,
      phone: input.phone,
      language: input.language,
      contactChannel: input.contact_channel,
      modalityDefaults: input.modality_defaults,
      address: input.address === undefined ? undefined : input.address,
      type: input.type,
    };
    return await respondIdempotently(
      c,
      deps,
      target,
      (tx) => upsertV1Payee(tx, principal.database, scope, patch, deps.clock.now()),
      (saved) =>
        saved.ok
          ? {
            status: saved.value.created ? 201 : 200,
            body: payeeView(saved.value.payee, principal),
          }
          : refusalOutcome(
            c,
            refusalError(saved, {
              issue: `required when contact_channel is ${saved.details?.contact_channel}`,
            }),
          ),
    );
  });

  app.get("/:id", async (c) => {
    const principal = c.get("linePrincipal");
    const id = c.req.param("id");
    const payee = await findV1Payee(principal.database, principal, id);
    if (!payee) {
      return errorResponse(c, {
        status: 404,
        code: "not_found",
        message: `no payee ${JSON.stringify(id)} for this key`,
      });
    }
    return c.json(payeeView(payee, principal));
  });
  return app;
}
