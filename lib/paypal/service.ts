/**
 * The PayPal use cases operators and PayPal's webhooks reach: recording a verified webhook notice
 * (and queueing the job that reads its item from PayPal), and cancelling an unclaimed item so its
 * payout can be offered again early. The cancel asks PayPal first and fails the payout only when
 * PayPal cancelled the item: until then the payee could still claim it.
 */
import * as v from "valibot";
import type { Database } from "../../db/client.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { WriteTx } from "../../db/writer.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { batchPayoutMoves, type PayoutRuntime } from "../payouts/jobs.ts";
import { loadPayout, type PayoutRow } from "../payouts/store.ts";
import { settleBatchEntry } from "../rails/batch.ts";
import type { ProviderReach } from "../rails/provider_reach.ts";
import { PaypalClient, type PaypalConnection, type WebhookHeaders } from "./client.ts";
import { namesBatch, noPaypalSettings } from "./jobs.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { UNCLAIMED_CANCELED } from "./rules.ts";
import { findItemOfPayout, insertNotice, PAYPAL_JOBS, recordItemState } from "./store.ts";

/** A verified notice: recorded once per PayPal event id, and its job queued. False: seen before. */
export async function recordVerifiedNotice(
  tx: WriteTx,
  notice: { id: string; companyId: string; eventType: string; resourceId: string },
  now: number,
): Promise<boolean> {
  if (!await insertNotice(tx, notice, now)) return false;
  await scheduleJob(tx, {
    companyId: notice.companyId,
    kind: PAYPAL_JOBS.notice,
    subjectId: notice.id,
    dueAt: now,
  }, now);
  return true;
}

export type CancelRefusal =
  | "payout_not_found"
  | "paypal_item_not_found"
  | "paypal_item_not_unclaimed"
  | "paypal_cancel_refused";

/** What a cancel did: the payout (failed, and offered again by today's rules) and the item. */
export interface CanceledItem {
  readonly payout: PayoutRow;
  readonly payoutItemId: string;
}

/**
 * Cancels a payout's unclaimed PayPal item: PayPal is asked for the item (it must be UNCLAIMED
 * now, not as we last saw it), then to cancel it; only a cancel PayPal confirmed fails the payout
 * (`unclaimed_canceled`), which is then offered again under today's rules, in one unit.
 */
export async function cancelUnclaimedItem(
  deps: {
    readonly database: Database;
    readonly runtime: PayoutRuntime;
    readonly timeoutMs?: number;
    /** The PayPal each company is paid through (its own, else the environment's simulator). */
    readonly paypal: ProviderReach<PaypalConnection>;
  },
  payoutId: string,
  now: number,
): Promise<Result<CanceledItem, CancelRefusal>> {
  const reader = deps.database.readClient;
  const payout = await loadPayout(reader, payoutId);
  if (!payout) return refuse("payout_not_found", `no payout ${payoutId}`, { field: "payout" });
  const item = await findItemOfPayout(reader, payoutId);
  if (!item || item.payoutItemId === null || item.entryStatus !== "sent") {
    return refuse(
      "paypal_item_not_found",
      `payout ${payoutId} (${payout.status}) has no PayPal item waiting to be claimed`,
      { field: "payout" },
    );
  }
  const connection = await deps.paypal.read(reader, payout.companyId);
  if (!connection) throw new Error(noPaypalSettings(payout.companyId));
  const paypal = new PaypalClient(connection, deps.timeoutMs);
  const current = await paypal.getItem(item.payoutItemId);
  if (current.transaction_status !== "UNCLAIMED") {
    return refuse(
      "paypal_item_not_unclaimed",
      `PayPal item ${item.payoutItemId} is ${current.transaction_status}; only an UNCLAIMED item can be cancelled`,
      { field: "payout", details: { transaction_status: current.transaction_status } },
    );
  }
  const canceled = await paypal.cancelItem(item.payoutItemId);
  if (canceled.kind === "refused") {
    return refuse(
      "paypal_cancel_refused",
      `PayPal refused to cancel item ${item.payoutItemId}: ${canceled.status} ${canceled.error.name} (${canceled.error.message})`,
      { field: "payout", details: { name: canceled.error.name } },
    );
  }
  return await deps.database.writer.write(async (tx) => {
    await recordItemState(tx, item.entryId, {
      payoutItemId: item.payoutItemId!,
      status: canceled.item.transaction_status,
      errorName: null,
    }, now);
    const settled = await settleBatchEntry(
      tx,
      batchPayoutMoves(deps.runtime),
      item.reference,
      { kind: "failed", reason: UNCLAIMED_CANCELED, returnCode: "UNCLAIMED_CANCELED" },
      now,
    );
    // Settled between our read and this unit (claimed, say): PayPal's cancel stands, nothing moves here.
    if (!settled.ok) {
      throw new Error(`PayPal item ${item.payoutItemId} was cancelled but ${settled.message}`);
    }
    return ok({ payout: (await loadPayout(tx, payoutId))!, payoutItemId: item.payoutItemId! });
  });
}

/** What a webhook must hold: PayPal's event id and type, and the resource it names. */
const webhookEvent = v.object({
  id: v.pipe(v.string("id must be a string"), v.minLength(1, "id must not be empty")),
  event_type: v.string("event_type must be a string"),
  resource: v.record(v.string(), v.unknown(), "resource must be an object"),
});

export type WebhookRefusal =
  | "paypal_not_configured"
  | "invalid_input"
  | "webhook_not_verified"
  | "paypal_unavailable";

/** The item or batch a payouts event names, or null for an event of no interest to payouts. */
function resourceOf(eventType: string, resource: Record<string, unknown>): string | null {
  if (namesBatch(eventType)) {
    const header = resource.batch_header as Record<string, unknown> | undefined;
    return typeof header?.payout_batch_id === "string" ? header.payout_batch_id : null;
  }
  if (eventType.startsWith("PAYMENT.PAYOUTS-ITEM.")) {
    return typeof resource.payout_item_id === "string" ? resource.payout_item_id : null;
  }
  return null;
}

/**
 * A webhook PayPal posted for a company in one environment: verified with that configuration's
 * verify-webhook-signature call (nothing is written unless PayPal says SUCCESS), then only its
 * notice is recorded, once per event id, and a job queued that asks PayPal for the item. `paypal`
 * is what the webhook came through: over the network a company's own settings, in process the
 * sandbox's PayPal too.
 */
export async function receiveWebhook(
  deps: { readonly database: Database; readonly paypal: ProviderReach<PaypalConnection> },
  request: {
    readonly companyId: string;
    readonly headers: WebhookHeaders;
    readonly body: string;
  },
  realNow: number,
): Promise<Result<{ recorded: boolean; eventId: string | null }, WebhookRefusal>> {
  const connection = await deps.paypal.read(deps.database.readClient, request.companyId);
  if (!connection) {
    return refuse(
      "paypal_not_configured",
      `no PayPal configuration for company ${request.companyId} in ${deps.database.environment}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(request.body);
  } catch {
    return refuse("invalid_input", "the body is not JSON", { field: "body" });
  }
  const parsed = v.safeParse(webhookEvent, json);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const field = issue.path?.map((p) => String(p.key)).join(".") || "body";
    return refuse("invalid_input", `${field}: ${issue.message}`, { field });
  }
  let verified: boolean;
  try {
    verified = await new PaypalClient(connection).verifyWebhook(request.headers, json);
  } catch (error) {
    // PayPal retries an unanswered webhook; nothing was written.
    return refuse(
      "paypal_unavailable",
      `the webhook could not be verified with PayPal now: ${(error as Error).message}`,
    );
  }
  if (!verified) {
    return refuse(
      "webhook_not_verified",
      "PayPal did not verify the webhook's signature for this configuration; nothing was recorded",
    );
  }
  const event = parsed.output;
  const resourceId = resourceOf(event.event_type, event.resource);
  if (resourceId === null) return ok({ recorded: false, eventId: event.id });
  const now = await domainNow(deps.database, request.companyId, realNow);
  const recorded = await deps.database.writer.write((tx) =>
    recordVerifiedNotice(tx, {
      id: event.id,
      companyId: request.companyId,
      eventType: event.event_type,
      resourceId,
    }, now)
  );
  return ok({ recorded, eventId: event.id });
}
