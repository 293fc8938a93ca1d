/**
 * Surface A operations on one payee of a disbursement (contract §6): resend the notification, the
 * payee transaction, and the signed documents.
 */
import { Hono } from "hono";
import type { Context } from "hono";
import {
  payeeSignedDocuments,
  payeeTransaction,
  resendPayeeNotification,
} from "../../lib/disbursements/service.ts";
import { payoutRuntime, runtimeSettingsOf } from "../../lib/payouts/settings.ts";
import type { DocumentLinkSigner } from "../../lib/documents/links.ts";
import { centsToDollars } from "../../lib/platform/money.ts";
import { modalityOf, type PayoutStatus, surfaceAStatus } from "../../lib/payouts/states.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { companyTarget } from "./request.ts";
import { errorResponse, refusalError } from "../errors.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { seedTimestamp } from "./format.ts";

/** The payee a request names by the company's uuids. */
const payeeRef = (c: Context<AppEnv>) => ({
  companyId: c.get("apiPrincipal").companyId,
  disbursementUuid: c.req.param("disbursement_uuid")!,
  payeeUuid: c.req.param("payee_uuid")!,
});

export function apiPayeeRoutes(deps: AppDeps, documentLinks: DocumentLinkSigner): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.post("/:disbursement_uuid/payees/:payee_uuid/resend-notification", async (c) => {
    const principal = c.get("apiPrincipal");
    const ref = payeeRef(c);
    const runtime = payoutRuntime(principal.environment, runtimeSettingsOf(deps.config));
    return await respondIdempotently(
      c,
      deps,
      companyTarget(c),
      (tx) => resendPayeeNotification(tx, principal.database, runtime, ref, deps.clock.now()),
      (resent) => {
        if (resent.ok) {
          return {
            status: 202,
            body: {
              disbursement_uuid: ref.disbursementUuid,
              payee_uuid: ref.payeeUuid,
              channels: resent.value.channels,
              sent_at: seedTimestamp(resent.value.sentAt),
            },
          };
        }
        if (resent.code !== "rate_limited") return refusalOutcome(c, refusalError(resent));
        const retryAfter = String(resent.details?.retry_after_seconds);
        return {
          ...refusalOutcome(c, refusalError(resent, { headers: { "Retry-After": retryAfter } })),
          retryable: true,
        };
      },
    );
  });

  app.get("/:disbursement_uuid/payees/:payee_uuid/transaction", async (c) => {
    const found = await payeeTransaction(c.get("apiPrincipal").database, payeeRef(c));
    if (!found.ok) return errorResponse(c, refusalError(found));
    const { payout: row, history } = found.value;
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
      // The transaction's metadata: the payee's named fields as the company sent them.
      field_values: JSON.parse(String(row.field_values)),
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
    const signed = await payeeSignedDocuments(principal.database, payeeRef(c));
    if (!signed.ok) return errorResponse(c, refusalError(signed));
    const now = deps.clock.now();
    return c.json(
      await Promise.all(signed.value.map(async (document) => ({
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
