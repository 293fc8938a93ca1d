/**
 * Webhook endpoints of either surface: register (the signing secret is shown once), get, delete,
 * rotate the secret, and the endpoint's deliveries. Delivery itself is the dispatcher's work. A /v1
 * endpoint belongs to the key's line and subscribes to Surface B types; a Surface A endpoint
 * belongs to the company and subscribes to EventTypeNames.
 */
import { Hono } from "hono";
import * as v from "valibot";
import {
  createEndpoint,
  deleteEndpoint,
  type EndpointRecord,
  findEndpoint,
  listDeliveries,
  listEndpoints,
  rotateEndpointSecret,
} from "../../lib/webhooks/store.ts";
import { newWebhookSecret } from "../../lib/platform/crypto.ts";
import { eventCatalogue } from "../../lib/payouts/states.ts";
import { checkEndpointUrl } from "../../lib/webhooks/endpoint_url.ts";
import type { Context } from "hono";
import type { Database } from "../../db/client.ts";
import type { Environment } from "../../lib/platform/config.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { errorResponse } from "../errors.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { parseJsonBody, requiredObject } from "../validation.ts";

/** The Surface B event types a /v1 endpoint may subscribe to. */
export const v1EventTypes = Object.values(eventCatalogue).flatMap((e) => (e.type ? [e.type] : []));
/** The EventTypeNames a Surface A endpoint may subscribe to. */
export const apiEventNames = Object.values(eventCatalogue).map((e) => e.name);

/** Who registers endpoints on a surface, and where they belong. */
export interface EndpointOwner {
  readonly surface: "api" | "v1";
  readonly eventNames: readonly string[];
  readonly owner: (c: Context<AppEnv>) => {
    database: Database;
    environment: Environment;
    companyId: string;
    /** The /v1 key's line; null for Surface A endpoints. */
    lineId: string | null;
    lineCode: string | null;
  };
}

const DELIVERIES_PAGE_MAX = 100;

const endpointView = (
  endpoint: EndpointRecord,
  owner: ReturnType<EndpointOwner["owner"]>,
  eventNames: readonly string[],
) => ({
  id: endpoint.id,
  object: "webhook_endpoint",
  url: endpoint.url,
  events: endpoint.events.length > 0 ? endpoint.events : eventNames,
  description: endpoint.description,
  status: endpoint.disabledAt === null ? "enabled" : "disabled",
  ...(owner.lineCode ? { line: owner.lineCode } : {}),
  livemode: owner.environment === "live",
  created: new Date(endpoint.createdAt).toISOString(),
});

export function webhookRoutes(deps: AppDeps, surface: EndpointOwner): Hono<AppEnv> {
  const { eventNames } = surface;
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
          v.picklist(eventNames as string[], `each event must be one of ${eventNames.join(", ")}`),
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
    const principal = surface.owner(c);
    const body = await parseJsonBody(c, registration);
    if (!body.ok) return body.response;
    const target = {
      database: principal.database,
      companyId: principal.companyId,
      scopeLine: principal.lineId ?? "",
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
        surface: surface.surface,
        url: url.value.href,
        events: body.value.events,
        description: body.value.description,
        sealedSecret: await deps.secretBox.sealText(secret),
      }, deps.clock.now());
      return {
        status: 201,
        commit: true,
        sensitive: true,
        body: { ...endpointView(endpoint, principal, eventNames), secret },
      };
    });
  });

  app.post("/:id/rotate-secret", async (c) => {
    const principal = surface.owner(c);
    const id = c.req.param("id");
    const target = {
      database: principal.database,
      companyId: principal.companyId,
      scopeLine: principal.lineId ?? "",
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

  app.get("/", async (c) => {
    const principal = surface.owner(c);
    const endpoints = await listEndpoints(principal.database.readClient, principal);
    return c.json({
      object: "list",
      data: endpoints.map((endpoint) => endpointView(endpoint, principal, eventNames)),
      has_more: false,
    });
  });

  app.get("/:id", async (c) => {
    const principal = surface.owner(c);
    const endpoint = await findEndpoint(
      principal.database.readClient,
      principal,
      c.req.param("id"),
    );
    if (!endpoint) return errorResponse(c, notFound(c.req.param("id")));
    return c.json(endpointView(endpoint, principal, eventNames));
  });

  app.delete("/:id", async (c) => {
    const principal = surface.owner(c);
    const id = c.req.param("id");
    const deleted = await principal.database.writer.write((tx) =>
      deleteEndpoint(tx, principal, id, deps.clock.now())
    );
    if (!deleted) return errorResponse(c, notFound(id));
    return c.json({ id, object: "webhook_endpoint", deleted: true });
  });

  app.get("/:id/deliveries", async (c) => {
    const principal = surface.owner(c);
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
