/** GET /v1/events and /v1/events/{id}: the line's event log in the webhook envelope's shape. */
import { Hono } from "hono";
import * as v from "valibot";
import {
  findLineEvent,
  listLineEvents,
  queueDeliveries,
  type StoredEvent,
} from "../../lib/webhooks/event_store.ts";
import { latestV1Signatures, v1EventView } from "../../lib/webhooks/event_view.ts";
import type { AppDeps, AppEnv, LinePrincipal } from "../context.ts";
import { errorResponse } from "../errors.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { invalidInput, parseQuery } from "../validation.ts";
import { v1Schemas } from "./schemas.ts";

/** The events as their webhook bodies show them, each with its latest attempt's signature. */
async function eventViews(principal: LinePrincipal, events: readonly StoredEvent[]) {
  const signatures = await latestV1Signatures(
    principal.database.readClient,
    events.map((event) => event.id),
  );
  return events.map((event) => v1EventView(event, signatures.get(event.id) ?? null));
}

export function eventRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const query = v.object({
    ...v1Schemas(deps.config).listQuery.entries,
    type: v.optional(
      v.pipe(
        v.string(),
        v.regex(/^[a-z_]+\.[a-z_]+$/, "type is an event type such as disbursement.created"),
      ),
    ),
  });
  app.get("/", async (c) => {
    const principal = c.get("linePrincipal");
    const parsed = parseQuery(c, query);
    if (!parsed.ok) return parsed.response;
    const page = await listLineEvents(principal.database.readClient, principal, {
      limit: parsed.value.limit,
      startingAfter: parsed.value.starting_after ?? null,
      type: parsed.value.type ?? null,
    });
    if (!page) {
      const cursor = JSON.stringify(parsed.value.starting_after);
      return invalidInput(c, "starting_after", "query", `no event ${cursor} to start after`);
    }
    return c.json({
      object: "list",
      data: await eventViews(principal, page.data),
      has_more: page.hasMore,
    });
  });
  app.post("/:id/replay", async (c) => {
    const principal = c.get("linePrincipal");
    const id = c.req.param("id");
    const target = {
      database: principal.database,
      companyId: principal.companyId,
      scopeLine: principal.lineId,
    };
    return await respondIdempotently(c, deps, target, async (tx) => {
      const event = await findLineEvent(tx, principal, id);
      if (!event) {
        return refusalOutcome(c, {
          status: 404,
          code: "not_found",
          message: `no event ${JSON.stringify(id)} for this key`,
        });
      }
      const deliveries = await queueDeliveries(
        tx,
        {
          id: event.id,
          companyId: principal.companyId,
          lineId: principal.lineId,
          eventTypeId: event.eventTypeId,
        },
        { manual: true, surfaces: "v1" },
        deps.clock.now(),
      );
      return {
        status: 202,
        commit: true,
        body: { object: "event_replay", event_id: id, deliveries },
      };
    });
  });

  app.get("/:id", async (c) => {
    const principal = c.get("linePrincipal");
    const event = await findLineEvent(principal.database.readClient, principal, c.req.param("id"));
    if (!event) {
      return errorResponse(c, {
        status: 404,
        code: "not_found",
        message: `no event ${JSON.stringify(c.req.param("id"))} for this key`,
      });
    }
    return c.json((await eventViews(principal, [event]))[0]);
  });
  return app;
}
