/**
 * Surface A operations on one payee of a disbursement (DESIGN 6): resend the notification, the
 * payee transaction, and the signed documents.
 */
import { Hono } from "hono";
import type { Context } from "hono";
import {
  findApiPayout,
  listSignedDocuments,
  loadPayoutTransaction,
} from "../../lib/disbursements/api_store.ts";
import type { SqlExecutor } from "../../lib/ledger/store.ts";
import { claimResend, notifyPayee } from "../../lib/notify/store.ts";
import { payoutRuntime, runtimeSettingsOf } from "../../lib/payouts/runtime.ts";
import { domainNow } from "../../lib/sandbox/clock_store.ts";
import type { DocumentLinkSigner } from "../../lib/documents/links.ts";
import { centsToDollars } from "../../lib/platform/money.ts";
import {
  modalityOf,
  type PayoutStatus,
  resendableStatuses,
  surfaceAStatus,
} from "../../lib/payouts/states.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { companyTarget } from "./request.ts";
import { errorResponse } from "../errors.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { seedTimestamp } from "./format.ts";

const payeeNotFound = (c: Context<AppEnv>) => ({
  status: 404 as const,
  code: "not_found",
  message: `no payee ${JSON.stringify(c.req.param("payee_uuid"))} in disbursement ${
    JSON.stringify(c.req.param("disbursement_uuid"))
  } for this company`,
});

export function apiPayeeRoutes(deps: AppDeps, documentLinks: DocumentLinkSigner): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const find = (
    c: Context<AppEnv>,
    executor: SqlExecutor = c.get("apiPrincipal").database.readClient,
  ) =>
    findApiPayout(
      executor,
      c.get("apiPrincipal").companyId,
      c.req.param("disbursement_uuid")!,
      c.req.param("payee_uuid")!,
    );

  app.post("/:disbursement_uuid/payees/:payee_uuid/resend-notification", async (c) => {
    const principal = c.get("apiPrincipal");
    return await respondIdempotently(c, deps, companyTarget(c), async (tx) => {
      const payout = await find(c, tx);
      if (!payout) return refusalOutcome(c, payeeNotFound(c));
      if (!resendableStatuses.has(payout.status)) {
        return refusalOutcome(c, {
          status: 409,
          code: "not_resendable",
          message: `payee ${c.req.param("payee_uuid")} is ${
            surfaceAStatus[payout.status].name
          }: there is no notification to resend`,
        });
      }
      const resendsPerHourMax = deps.config.limits.RESEND_PER_HOUR_MAX;
      const allowance = await claimResend(tx, payout.id, {
        realNow: deps.clock.now(),
        resendsPerHourMax,
      });
      if (!allowance.ok) {
        return {
          ...refusalOutcome(c, {
            status: 429,
            code: "rate_limited",
            message:
              `at most ${resendsPerHourMax} notifications per payee per hour; retry in ${allowance.retryAfterSeconds} s`,
            headers: { "Retry-After": String(allowance.retryAfterSeconds) },
          }),
          retryable: true,
        };
      }
      const now = await domainNow(principal.database, principal.companyId, deps.clock.now());
      const { notifications } = payoutRuntime(
        principal.environment,
        runtimeSettingsOf(deps.config),
      );
      const notice = await notifyPayee(tx, notifications, payout.id, "resend", now);
      return {
        status: 202,
        body: {
          disbursement_uuid: c.req.param("disbursement_uuid"),
          payee_uuid: c.req.param("payee_uuid"),
          channels: notice.channels,
          sent_at: seedTimestamp(now),
        },
        commit: true,
      };
    });
  });

  app.get("/:disbursement_uuid/payees/:payee_uuid/transaction", async (c) => {
    const payout = await find(c);
    if (!payout) return errorResponse(c, payeeNotFound(c));
    const { payout: row, history } = await loadPayoutTransaction(
      c.get("apiPrincipal").database.readClient,
      payout.id,
    );
    const cents = (column: string) => Number(row[column]);
    const method = row.payment_method_id === null
      ? null
      : modalityOf(Number(row.payment_method_id))!;
    const firstAt = (status: PayoutStatus) => {
      const at = history.find((step) => step.toStatus === status)?.at;
      return at === undefined ? null : seedTimestamp(at);
    };
    const status = row.status as PayoutStatus;
    return c.json({
      disbursement_uuid: c.req.param("disbursement_uuid"),
      payee_uuid: c.req.param("payee_uuid"),
      status: surfaceAStatus[status].name,
      status_id: surfaceAStatus[status].id,
      amount: centsToDollars(cents("amount_cents")),
      fees: {
        payor_fee: centsToDollars(cents("payor_fee_cents")),
        service_fee: centsToDollars(cents("service_fee_cents")),
        payee_fee: centsToDollars(cents("payee_fee_cents")),
      },
      // What the company pays for this payee, and what reaches the payee.
      billed_amount: centsToDollars(
        cents("amount_cents") + cents("payor_fee_cents") + cents("service_fee_cents"),
      ),
      net_amount: centsToDollars(cents("amount_cents") - cents("payee_fee_cents")),
      held_amount: centsToDollars(cents("held_cents")),
      payment_method_id: method?.id ?? null,
      payment_method: method?.name ?? null,
      account_last_four: row.method_last_four ?? null,
      rail_reference: row.rail_reference ?? null,
      failure_reason: row.failure_reason ?? null,
      retry_count: Number(row.retry_count),
      created_at: seedTimestamp(Number(row.created_at)),
      updated_at: seedTimestamp(Number(row.updated_at)),
      selected_at: firstAt("modality_selected"),
      sent_at: firstAt("funds_sent"),
      completed_at: firstAt("completed"),
      history: history.map((step) => ({
        status: surfaceAStatus[step.toStatus].name,
        status_id: surfaceAStatus[step.toStatus].id,
        at: seedTimestamp(step.at),
        detail: step.detail,
      })),
    });
  });

  app.get("/:disbursement_uuid/payees/:payee_uuid/signed-documents", async (c) => {
    const principal = c.get("apiPrincipal");
    const payout = await find(c);
    if (!payout) return errorResponse(c, payeeNotFound(c));
    const signed = await listSignedDocuments(principal.database.readClient, payout.id);
    const now = deps.clock.now();
    return c.json(
      await Promise.all(signed.map(async (document) => ({
        DocumentName: document.name,
        SignedBy: document.signedBy,
        SignedOn: seedTimestamp(document.signedAt),
        DocumentLink: deps.config.baseUrl +
          await documentLinks.link(principal.environment, document.id, now),
      }))),
    );
  });
  return app;
}
