/**
 * Webhook endpoints of either surface: register (the signing secret is shown once), get, delete,
 * rotate the secret, and the endpoint's deliveries. Delivery itself is the dispatcher's work. A /v1
 * endpoint belongs to the key's line and subscribes to Surface B types; a Surface A endpoint
 * belongs to the company and subscribes to EventTypeNames.
 */
import { Hono } from "hono";
import * as v from "valibot";
import {
  deleteEndpointOf,
  deliveriesOf,
  enableEndpointOf,
  endpointOf,
  type EndpointRecord,
  endpointsOf,
  judgeEndpointUrl,
  registerEndpoint,
  rotateSigningSecret,
  webhookPublicKey,
} from "../../lib/webhooks/service.ts";
import { eventCatalogue } from "../../lib/payouts/states.ts";
import type { Context } from "hono";
import type { Database } from "../../db/client.ts";
import type { Environment } from "../../lib/platform/config.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { errorResponse, refusalError } from "../errors.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { cleanText, freeText, parseJsonBody, requiredObject } from "../validation.ts";

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

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

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
  disabled_at: iso(endpoint.disabledAt),
  disabled_reason: endpoint.disabledReason,
  failing_since: iso(endpoint.failingSince),
  ed25519_signatures: endpoint.ed25519Signatures,
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
      cleanText("url"),
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
    description: v.optional(v.nullable(freeText("description", lengthMax)), null),
    ed25519_signatures: v.optional(v.boolean("ed25519_signatures must be true or false"), false),
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
    const endpoint = {
      surface: surface.surface,
      url: await judgeEndpointUrl(body.value.url, principal.environment, deps.resolveHost),
      events: body.value.events,
      description: body.value.description,
      ed25519Signatures: body.value.ed25519_signatures,
    };
    return await respondIdempotently(
      c,
      deps,
      target,
      (tx) =>
        registerEndpoint(tx, principal, endpoint, {
          secretBox: deps.secretBox,
          now: deps.clock.now(),
        }),
      (registered) =>
        registered.ok
          ? {
            status: 201,
            sensitive: true,
            body: {
              ...endpointView(registered.value.endpoint, principal, eventNames),
              secret: registered.value.secret,
            },
          }
          : refusalOutcome(c, refusalError(registered)),
    );
  });

  app.post("/:id/rotate-secret", async (c) => {
    const principal = surface.owner(c);
    const id = c.req.param("id");
    const target = {
      database: principal.database,
      companyId: principal.companyId,
      scopeLine: principal.lineId ?? "",
    };
    return await respondIdempotently(
      c,
      deps,
      target,
      (tx) =>
        rotateSigningSecret(tx, principal, id, {
          secretBox: deps.secretBox,
          graceMs: deps.config.limits.KEY_GRACE_SECONDS * 1000,
          now: deps.clock.now(),
        }),
      (rotated) =>
        rotated.ok
          ? {
            status: 200,
            sensitive: true,
            body: {
              id,
              object: "webhook_endpoint_secret",
              secret: rotated.value.secret,
              previous_secret_expires_at: new Date(rotated.value.previousExpiresAt)
                .toISOString(),
            },
          }
          : refusalOutcome(c, refusalError(rotated)),
    );
  });

  app.get("/", async (c) => {
    const principal = surface.owner(c);
    const endpoints = await endpointsOf(principal.database, principal);
    return c.json({
      object: "list",
      data: endpoints.map((endpoint) => endpointView(endpoint, principal, eventNames)),
      has_more: false,
    });
  });

  // The key an endpoint's `v1a,` signatures verify with: one per environment.
  app.get("/keys/ed25519", async (c) => {
    const principal = surface.owner(c);
    return c.json({
      object: "webhook_public_key",
      public_key: await webhookPublicKey(deps.secretBox, principal.environment),
      algorithm: "ed25519",
      livemode: principal.environment === "live",
    });
  });

  app.get("/:id", async (c) => {
    const principal = surface.owner(c);
    const endpoint = await endpointOf(principal.database, principal, c.req.param("id"));
    if (!endpoint.ok) return errorResponse(c, refusalError(endpoint));
    return c.json(endpointView(endpoint.value, principal, eventNames));
  });

  // An endpoint the circuit breaker (or a 410) disabled is enabled again only by this call.
  app.post("/:id/enable", async (c) => {
    const principal = surface.owner(c);
    const enabled = await enableEndpointOf(principal.database, principal, c.req.param("id"));
    if (!enabled.ok) return errorResponse(c, refusalError(enabled));
    return c.json(endpointView(enabled.value, principal, eventNames));
  });

  app.delete("/:id", async (c) => {
    const principal = surface.owner(c);
    const id = c.req.param("id");
    const deleted = await deleteEndpointOf(principal.database, principal, id, deps.clock.now());
    if (!deleted.ok) return errorResponse(c, refusalError(deleted));
    return c.json({ id, object: "webhook_endpoint", deleted: true });
  });

  app.get("/:id/deliveries", async (c) => {
    const principal = surface.owner(c);
    const deliveries = await deliveriesOf(
      principal.database,
      principal,
      c.req.param("id"),
      DELIVERIES_PAGE_MAX,
    );
    if (!deliveries.ok) return errorResponse(c, refusalError(deliveries));
    return c.json({
      object: "list",
      data: deliveries.value.map((d) => ({
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
