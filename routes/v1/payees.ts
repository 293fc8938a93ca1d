/** Surface B payees: upsert by the company's own id (201 created, 200 updated), and get. */
import { Hono } from "hono";
import { domainNow } from "../../lib/sandbox/clock_store.ts";
import { findPayee, upsertPayee } from "../../lib/disbursements/v1_store.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { errorResponse } from "../errors.ts";
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
    return await respondIdempotently(c, deps, target, async (tx) => {
      const now = await domainNow(principal.database, principal.companyId, deps.clock.now());
      const saved = await upsertPayee(tx, {
        companyId: principal.companyId,
        lineId: principal.lineId,
        externalId: input.id,
      }, {
        name: input.name,
        email: input.email,
        phone: input.phone,
        language: input.language,
        contactChannel: input.contact_channel,
        modalityDefaults: input.modality_defaults,
        address: input.address === undefined ? undefined : input.address,
      }, now);
      // A payee must be reachable on the channel it asked for.
      const { payee } = saved;
      const missing = payee.contactChannel === "sms"
        ? (payee.phone ? null : "phone")
        : payee.email
        ? null
        : "email";
      if (missing) {
        return refusalOutcome(c, {
          status: 400,
          code: "contact_missing",
          message: `contact_channel ${payee.contactChannel} needs ${missing}`,
          issues: [{
            field: missing,
            location: "body",
            message: `required when contact_channel is ${payee.contactChannel}`,
          }],
        });
      }
      return { status: saved.created ? 201 : 200, body: payeeView(payee, principal), commit: true };
    });
  });

  app.get("/:id", async (c) => {
    const principal = c.get("linePrincipal");
    const id = c.req.param("id");
    const payee = await findPayee(
      principal.database.readClient,
      principal.companyId,
      principal.lineId,
      id,
    );
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
