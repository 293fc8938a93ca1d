/** GET /v1/events and /v1/events/{id}: the line's event log in the webhook envelope's shape. */
import { Hono } from "hono";
import * as v from "valibot";
import {
  lineEvent,
  lineEvents,
  replayLineEvent,
  type StoredEvent,
} from "../../lib/webhooks/service.ts";
import { latestV1Signatures, v1EventView } from "../../lib/webhooks/event_view.ts";
import type { AppDeps, AppEnv, LinePrincipal } from "../context.ts";
import { errorResponse, refusalError } from "../errors.ts";
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
    const page = await lineEvents(principal.database, principal, {
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
    return await respondIdempotently(
      c,
      deps,
      target,
      (tx) => replayLineEvent(tx, principal, id, deps.clock.now()),
      (replayed) =>
        replayed.ok
          ? {
            status: 202,
            body: { object: "event_replay", event_id: id, deliveries: replayed.value.deliveries },
          }
          : refusalOutcome(c, refusalError(replayed)),
    );
  });

  app.get("/:id", async (c) => {
    const principal = c.get("linePrincipal");
    const event = await lineEvent(principal.database, principal, c.req.param("id"));
    if (!event.ok) return errorResponse(c, refusalError(event));
    const [view] = await eventViews(principal, [event.value]);
    return c.json(view);
  });
  return app;
}
