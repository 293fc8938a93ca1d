/**
 * The operator commands of the two outboxes (issue 20, beside event:replay): replay one webhook
 * delivery or every failed delivery of an endpoint since a time, and retry a failed notification.
 * A clerk may run them, as a resend or a replay; each is audited in the unit that queues it.
 */
import { ok, refuse, type Result } from "../platform/result.ts";
import { replayCompany, replayDelivery, replayFailedDeliveries } from "../webhooks/replay.ts";
import { notificationCompany, retryFailedNotification } from "../notify/retry.ts";
import {
  type Command,
  environmentFlag,
  environmentReach,
  type Flags,
  type Reach,
  rowsIn,
} from "./command_kit.ts";

/** --since: an ISO 8601 date or date-time. */
function sinceFlag(flags: Flags): Result<number, "invalid_input"> {
  const raw = flags.since ?? "";
  const at = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(at)) {
    return refuse("invalid_input", `--since ${JSON.stringify(raw)}: a date or time in ISO 8601`, {
      field: "since",
    });
  }
  return ok(at);
}

/** What a replay names: one delivery, or an endpoint with a time. */
function replayTarget(
  flags: Flags,
): Result<{ deliveryId: string } | { endpointId: string }, "invalid_input"> {
  if ((flags.delivery === undefined) === (flags.endpoint === undefined)) {
    return refuse(
      "invalid_input",
      "webhooks:replay takes either --delivery <id> or --endpoint <id> with --since <time>",
      { field: "delivery" },
    );
  }
  if (flags.endpoint !== undefined && flags.since === undefined) {
    return refuse("invalid_input", "webhooks:replay --endpoint needs --since <time>", {
      field: "since",
    });
  }
  return ok(
    flags.delivery !== undefined ? { deliveryId: flags.delivery } : { endpointId: flags.endpoint },
  );
}

const replayCommand: Command = {
  summary:
    "deliver a webhook delivery's event again to its endpoint, or every failed delivery of an endpoint since a time",
  flags: {
    delivery: "the delivery id (wd_…)",
    endpoint: "the endpoint id (we_…), with --since",
    since: "failed deliveries created at or after this time (ISO 8601)",
    environment: "live (default) or test",
  },
  optional: ["delivery", "endpoint", "since"],
  role: "clerk",
  reach: async (request, f): Promise<Result<Reach>> => {
    const named = environmentReach(f, true);
    if (!named.ok) return named;
    const target = replayTarget(f);
    if (!target.ok) return target;
    const { environment, writes } = named.value;
    const found = await replayCompany(request.databases[environment].readClient, target.value);
    const [what, id] = "deliveryId" in target.value
      ? ["delivery", target.value.deliveryId]
      : ["endpoint", target.value.endpointId];
    return ok({
      writes,
      companies: found ? [found.companyId] : [],
      hidden: refuse(`${what}_not_found`, `no webhook ${what} ${id} in ${environment}`, {
        field: what,
      }),
      objectId: id,
    });
  },
  audit: (f, reach) => ({
    action: "webhooks:replay",
    objectType: f.delivery !== undefined ? "webhook_delivery" : "webhook_endpoint",
    objectId: reach.objectId ?? null,
    companyId: reach.companies[0] ?? null,
    snapshot: (tx) =>
      rowsIn(
        tx,
        `SELECT status, count(*) AS deliveries FROM webhook_deliveries WHERE endpoint_id =
           coalesce((SELECT endpoint_id FROM webhook_deliveries WHERE id = ?), ?)
         GROUP BY status ORDER BY status`,
        [f.delivery ?? null, f.endpoint ?? null],
      ),
  }),
  run: async (ctx, f) => {
    const environment = environmentFlag(f, "live");
    if (!environment.ok) return environment;
    const target = replayTarget(f);
    if (!target.ok) return target;
    const database = ctx.databases[environment.value];
    if ("deliveryId" in target.value) {
      const deliveryId = target.value.deliveryId;
      const done = await database.writer.write((tx) => replayDelivery(tx, deliveryId, ctx.realNow));
      return done.ok
        ? ok({
          environment: environment.value,
          delivery_id: deliveryId,
          replay_id: done.value.replayed,
          endpoint_id: done.value.endpointId,
          event_id: done.value.eventId,
        })
        : done;
    }
    const since = sinceFlag(f);
    if (!since.ok) return since;
    const endpointId = target.value.endpointId;
    const done = await database.writer.write((tx) =>
      replayFailedDeliveries(tx, endpointId, since.value, ctx.realNow)
    );
    return done.ok
      ? ok({
        environment: environment.value,
        endpoint_id: endpointId,
        since: new Date(since.value).toISOString(),
        replay_ids: done.value.replayed,
        has_more: done.value.hasMore,
      })
      : done;
  },
};

const notificationRetryCommand: Command = {
  summary: "send a failed notification (e-mail or SMS) again, with a fresh attempt schedule",
  flags: { notification: "the notification id (ntf_…)", environment: "live (default) or test" },
  role: "clerk",
  reach: async (request, f): Promise<Result<Reach>> => {
    const named = environmentReach(f, true);
    if (!named.ok) return named;
    const { environment, writes } = named.value;
    const found = await notificationCompany(
      request.databases[environment].readClient,
      f.notification,
    );
    return ok({
      writes,
      // A message about no company is the installation's: only an operator of every company.
      companies: found === null
        ? []
        : found.companyId === null
        ? "installation"
        : [found.companyId],
      hidden: refuse(
        "notification_not_found",
        `no notification ${f.notification} in ${environment}`,
        { field: "notification" },
      ),
      objectId: f.notification,
    });
  },
  audit: (f, reach) => ({
    action: "notifications:retry",
    objectType: "notification",
    objectId: f.notification,
    companyId: reach.companies === "installation" ? null : reach.companies[0] ?? null,
    snapshot: (tx) =>
      rowsIn(
        tx,
        "SELECT id, channel, status, attempt_count, last_error FROM notifications WHERE id = ?",
        [f.notification],
      ),
  }),
  run: async (ctx, f) => {
    const environment = environmentFlag(f, "live");
    if (!environment.ok) return environment;
    const done = await ctx.databases[environment.value].writer.write((tx) =>
      retryFailedNotification(tx, f.notification)
    );
    return done.ok
      ? ok({ environment: environment.value, notification_id: done.value.id, status: "pending" })
      : done;
  },
};

export const outboxCommands: Readonly<Record<string, Command>> = {
  "webhooks:replay": replayCommand,
  "notifications:retry": notificationRetryCommand,
};
