/**
 * What an endpoint receives, in its own surface's shape (DESIGN 8): Surface B gets
 * `{id, type, created, data}`; Surface A gets `{"webhookTrigger": {"payload": {…}}}` with the seed's
 * 2.12 fields. Both are built from the snapshot recorded when the event happened.
 */
import { centsToDollars } from "../money.ts";
import {
  eventCatalogue,
  modalityOf,
  type PayoutStatus,
  surfaceAStatus,
  surfaceBStatus,
} from "../payouts/states.ts";

export interface DeliverableEvent {
  readonly id: string;
  readonly type: string | null;
  readonly eventTypeId: number;
  readonly reason: string | null;
  readonly createdAt: number;
  readonly data: Record<string, unknown>;
  readonly company: { readonly name: string; readonly tin: string };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The Surface B envelope; modality_selected data is exactly the seed's 6.2 shape. */
export function surfaceBEnvelope(event: DeliverableEvent): Record<string, unknown> {
  const d = event.data;
  let data: Record<string, unknown>;
  if (event.type === "payee.updated") {
    data = { id: d.payee_id, object: "payee", changed: d.changed };
  } else {
    const modality = d.payment_method_id == null
      ? null
      : modalityOf(Number(d.payment_method_id))!.code;
    const amount = centsToDollars(Number(d.amount_cents));
    data = event.type === "disbursement.modality_selected"
      ? {
        disbursement_id: d.disbursement_id,
        claim_id: d.claim_id,
        modality,
        amount,
        payee: { id: d.payee_uuid },
      }
      : {
        id: d.disbursement_id,
        object: "disbursement",
        status: surfaceBStatus[d.status as PayoutStatus],
        amount,
        currency: "USD",
        claim_id: d.claim_id,
        payee: { id: d.payee_uuid },
        modality,
        reason: d.reason ?? null,
      };
  }
  return { id: event.id, type: event.type, created: iso(event.createdAt), data };
}

/** The Surface A envelope with every 2.12 field the service knows; the rest are null. */
export function surfaceAEnvelope(event: DeliverableEvent): Record<string, unknown> {
  const d = event.data;
  const catalogued = Object.values(eventCatalogue).find((e) => e.id === event.eventTypeId)!;
  const method = d.payment_method_id == null ? null : modalityOf(Number(d.payment_method_id))!;
  const simple = d.disbursement_kind === "simple_payment";
  const cents = (key: string) => Number(d[key] ?? 0);
  const status = d.status === undefined ? null : surfaceAStatus[d.status as PayoutStatus];
  return {
    webhookTrigger: {
      payload: {
        PaymentMethodId: method?.id ?? null,
        PaymentMethodName: method?.name ?? null,
        EventDateTime: iso(event.createdAt),
        EventTypeId: catalogued.id,
        EventTypeName: catalogued.name,
        EventReason: event.reason,
        PaymentType: simple ? "SIMPLE_PAYMENT" : "DISBURSEMENT",
        DisbursementUUID: simple ? null : d.disbursement_id ?? null,
        DisbursementPayeeUUID: simple ? null : d.payee_uuid ?? null,
        SimplePaymentUUID: simple ? d.disbursement_id : null,
        SimplePaymentPayee: null,
        DisbursementUrl: null,
        DocumentLink: null,
        CheckImgURL: null,
        DDAId: null,
        CompanyName: event.company.name,
        CompanyTin: event.company.tin,
        Amount: d.amount_cents == null ? null : centsToDollars(cents("amount_cents")),
        BilledAmount: d.amount_cents == null ? null : centsToDollars(
          cents("amount_cents") + cents("payor_fee_cents") + cents("service_fee_cents"),
        ),
        PaymentMethodPayorFee: centsToDollars(cents("payor_fee_cents")),
        PaymentMethodPayeeFee: centsToDollars(cents("payee_fee_cents")),
        ServiceFee: centsToDollars(cents("service_fee_cents")),
        ExtCustomerClaimID: d.claim_id ?? null,
        DisbursementPayee: status === null ? null : {
          PayeeUUID: d.payee_uuid ?? null,
          PayeeStatusId: status.id,
          Status: status.name,
          Amount: centsToDollars(cents("amount_cents")),
        },
      },
    },
  };
}
