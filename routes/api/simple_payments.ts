/**
 * Simple Payments (an extension, contract §6): one recipient, a memo, a link to choose how to be
 * paid. Same rules as a disbursement of one payee: held at once or refused, the same uuid with the
 * same body replays, another body with it is a 409. Events carry PaymentType SIMPLE_PAYMENT.
 */
import { Hono } from "hono";
import {
  createSimplePayment,
  findSimplePayment,
  type SimplePaymentRow,
} from "../../lib/disbursements/service.ts";
import { requestFingerprint } from "../../lib/idempotency/rules.ts";
import { centsToDollars } from "../../lib/platform/money.ts";
import { type PayoutStatus, surfaceAStatus } from "../../lib/payouts/states.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { companyTarget, requestedLine } from "./request.ts";
import { errorResponse, refusalError } from "../errors.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { invalidFields, parseJsonBody } from "../validation.ts";
import { seedTimestamp } from "./format.ts";
import { apiSchemas, contactIssues } from "./schemas.ts";

/** Where the recipient's link stands: not yet sent, sent, opened (code verified), or expired. */
function linkState(row: SimplePaymentRow, now: number) {
  if (!row.link) return { state: "not_sent", expires_at: null };
  const state = row.link.verifiedAt !== null
    ? "verified"
    : row.link.expiresAt <= now
    ? "expired"
    : "sent";
  return { state, expires_at: seedTimestamp(row.link.expiresAt) };
}

function simplePaymentRecord(uuid: string, row: SimplePaymentRow, now: number) {
  const p = row.payout;
  const status = surfaceAStatus[p.status as PayoutStatus];
  return {
    simple_payment_uuid: uuid,
    amount: centsToDollars(Number(p.amount_cents)),
    first_name: p.first_name,
    last_name: p.last_name,
    email: p.email,
    phone: p.phone,
    delivery_options: JSON.parse(String(p.delivery_options)),
    memo: row.memo,
    allowed_payment_method_ids: JSON.parse(String(p.allowed_payment_method_ids)),
    // Extension: the date it must be paid by (prompt-payment rules), or null.
    pay_by: p.pay_by === null ? null : String(p.pay_by),
    status: status.name,
    status_id: status.id,
    link: linkState(row, now),
    created_at: seedTimestamp(row.createdAt),
  };
}

export function apiSimplePaymentRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { simplePayment } = apiSchemas(deps.config);

  app.post("/", async (c) => {
    const principal = c.get("apiPrincipal");
    const body = await parseJsonBody(c, simplePayment);
    if (!body.ok) return body.response;
    const input = body.value;
    const issues = contactIssues(input);
    if (issues.length > 0) return invalidFields(c, issues);
    const requested = await requestedLine(c, input.line);
    if (!requested.ok) return requested.response;
    const fingerprint = await requestFingerprint("POST", "/api/simple-payments", body.text);
    const uuid = input.simple_payment_uuid;
    const request = {
      companyId: principal.companyId,
      lineId: requested.line.id,
      payorUserId: principal.userId,
      fingerprint,
      simplePaymentUuid: uuid,
      memo: input.memo,
      payBy: input.pay_by ?? null,
      payout: {
        amountCents: input.amount,
        allowedPaymentMethodIds: input.allowed_payment_method_ids,
        payee: {
          first_name: input.first_name,
          last_name: input.last_name,
          email: input.email,
          phone: input.phone,
        },
        deliveryOptions: input.delivery_options,
      },
    };
    return await respondIdempotently(
      c,
      deps,
      companyTarget(c),
      (tx) =>
        createSimplePayment(
          tx,
          principal.database,
          request,
          deps.clock.now(),
          deps.config.checkMicrFont,
        ),
      (created) => {
        if (!created.ok) {
          const duplicate = created.code === "duplicate_simple_payment";
          return refusalOutcome(
            c,
            refusalError(created, duplicate ? { issue: "already used" } : {}),
          );
        }
        const { payment, now } = created.value;
        return {
          status: created.value.created ? 201 : 200,
          body: simplePaymentRecord(uuid, payment, now),
        };
      },
    );
  });

  app.get("/:simple_payment_uuid", async (c) => {
    const principal = c.get("apiPrincipal");
    const uuid = c.req.param("simple_payment_uuid");
    const found = await findSimplePayment(
      principal.database,
      principal.companyId,
      uuid,
      deps.clock.now(),
    );
    if (!found) {
      return errorResponse(c, {
        status: 404,
        code: "not_found",
        message: `no simple payment ${JSON.stringify(uuid)} for this company`,
      });
    }
    return c.json(simplePaymentRecord(uuid, found.payment, found.now));
  });
  return app;
}
