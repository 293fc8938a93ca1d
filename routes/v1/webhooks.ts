/**
 * Surface B webhook endpoints: register (the signing secret is shown once), get, delete, and the
 * endpoint's deliveries. Delivery itself is the dispatcher's work.
 */
import { Hono } from "hono";
import * as v from "valibot";
import {
  createEndpoint,
  deleteEndpoint,
  type EndpointRecord,
  findEndpoint,
  listDeliveries,
  rotateEndpointSecret,
} from "../../db/webhook_store.ts";
import { newWebhookSecret } from "../../lib/crypto.ts";
import { eventCatalogue } from "../../lib/payouts/states.ts";
import { checkEndpointUrl } from "../../lib/webhooks/endpoint_url.ts";
import type { AppDeps, AppEnv, LinePrincipal } from "../context.ts";
import { errorResponse } from "../errors.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { parseJsonBody, requiredObject } from "../validation.ts";

/** The Surface B event types an endpoint may subscribe to. */
export const v1EventTypes = Object.values(eventCatalogue).flatMap((e) => (e.type ? [e.type] : []));

const DELIVERIES_PAGE_MAX = 100;

const endpointView = (endpoint: EndpointRecord, principal: LinePrincipal) => ({
  id: endpoint.id,
  object: "webhook_endpoint",
  url: endpoint.url,
  events: endpoint.events.length > 0 ? endpoint.events : v1EventTypes,
  description: endpoint.description,
  status: endpoint.disabledAt === null ? "enabled" : "disabled",
  line: principal.lineCode,
  livemode: principal.environment === "live",
  created: new Date(endpoint.createdAt).toISOString(),
});

export function webhookRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const lengthMax = deps.config.limits.STRING_LENGTH_MAX;
  const registration = requiredObject({
    url: v.pipe(
      v.string("url must be a string"),
      v.maxLength(2048, "url is at most 2048 characters"),
    ),
    events: v.optional(
      v.pipe(
        v.array(
          v.picklist(v1EventTypes, `each event must be one of ${v1EventTypes.join(", ")}`),
          "events must be an array",
        ),
        v.transform((events) => [...new Set(events)]),
      ),
      [],
    ),
    description: v.optional(
      v.nullable(
        v.pipe(
          v.string(),
          v.maxLength(lengthMax, `description is at most ${lengthMax} characters`),
        ),
      ),
      null,
    ),
  });
  const notFound = (id: string) => ({
    status: 404 as const,
    code: "not_found",
    message: `no webhook endpoint ${JSON.stringify(id)} for this key`,
  });

  app.post("/", async (c) => {
    const principal = c.get("linePrincipal");
    const body = await parseJsonBody(c, registration);
    if (!body.ok) return body.response;
    const target = {
      database: principal.database,
      companyId: principal.companyId,
      scopeLine: principal.lineId,
    };
    return await respondIdempotently(c, deps, target, async (tx) => {
      const url = checkEndpointUrl(body.value.url, principal.environment);
      if (!url.ok) {
        return refusalOutcome(c, {
          status: 400,
          code: "url_not_allowed",
          message: url.message,
          issues: [{ field: "url", location: "body", message: url.message }],
        });
      }
      const secret = newWebhookSecret();
      const endpoint = await createEndpoint(tx, {
        companyId: principal.companyId,
        lineId: principal.lineId,
      }, {
        surface: "v1",
        url: url.value.href,
        events: body.value.events,
        description: body.value.description,
        sealedSecret: await deps.secretBox.sealText(secret),
      }, deps.clock.now());
      return {
        status: 201,
        commit: true,
        sensitive: true,
        body: { ...endpointView(endpoint, principal), secret },
      };
    });
  });

  app.post("/:id/rotate-secret", async (c) => {
    const principal = c.get("linePrincipal");
    const id = c.req.param("id");
    const target = {
      database: principal.database,
      companyId: principal.companyId,
      scopeLine: principal.lineId,
    };
    return await respondIdempotently(c, deps, target, async (tx) => {
      const secret = newWebhookSecret();
      const previousExpiresAt = deps.clock.now() + deps.config.limits.KEY_GRACE_SECONDS * 1000;
      const rotated = await rotateEndpointSecret(tx, principal, id, {
        sealedNew: await deps.secretBox.sealText(secret),
        previousExpiresAt,
      });
      if (!rotated) return refusalOutcome(c, notFound(id));
      return {
        status: 200,
        commit: true,
        sensitive: true,
        body: {
          id,
          object: "webhook_endpoint_secret",
          secret,
          previous_secret_expires_at: new Date(previousExpiresAt).toISOString(),
        },
      };
    });
  });

  app.get("/:id", async (c) => {
    const principal = c.get("linePrincipal");
    const endpoint = await findEndpoint(
      principal.database.readClient,
      principal,
      c.req.param("id"),
    );
    if (!endpoint) return errorResponse(c, notFound(c.req.param("id")));
    return c.json(endpointView(endpoint, principal));
  });

  app.delete("/:id", async (c) => {
    const principal = c.get("linePrincipal");
    const id = c.req.param("id");
    const deleted = await principal.database.writer.write((tx) =>
      deleteEndpoint(tx, principal, id, deps.clock.now())
    );
    if (!deleted) return errorResponse(c, notFound(id));
    return c.json({ id, object: "webhook_endpoint", deleted: true });
  });

  app.get("/:id/deliveries", async (c) => {
    const principal = c.get("linePrincipal");
    const endpoint = await findEndpoint(
      principal.database.readClient,
      principal,
      c.req.param("id"),
    );
    if (!endpoint) return errorResponse(c, notFound(c.req.param("id")));
    const deliveries = await listDeliveries(
      principal.database.readClient,
      endpoint.id,
      DELIVERIES_PAGE_MAX,
    );
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    return c.json({
      object: "list",
      data: deliveries.map((d) => ({
        id: d.id,
        object: "webhook_delivery",
        event_id: d.eventId,
        status: d.status,
        manual: d.manual,
        attempts: d.attemptCount,
        next_attempt_at: iso(d.nextAttemptAt),
        created: iso(d.createdAt),
        completed: iso(d.completedAt),
      })),
      has_more: false,
    });
  });
  return app;
}
