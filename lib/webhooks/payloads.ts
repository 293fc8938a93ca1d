/**
 * What an endpoint receives, in its own surface's shape (docs/contract.md §8): Surface B gets
 * `{id, type, created, data}` (the dispatcher adds `signature` and `sequence`); Surface A gets
 * `{"webhookTrigger": {"payload": {…}}}` with the specification's payload fields and `sequence`.
 * Both are built from the snapshot recorded when the event happened.
 */
import { centsToDollars } from "../platform/money.ts";
import { surfaceAEventReason } from "./event_reason.ts";
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
  /** The business line and its ledger account ids by code, for the Ext* references of 2.12. */
  readonly lineId?: string | null;
  readonly ledgerAccounts?: Readonly<Record<string, string>>;
  /** Its place among its payout's events (1, 2, … in commit order); null without a payout. */
  readonly sequence?: number | null;
}

/** What the Surface B envelope is built from: the event's own row, nothing of the endpoint's. */
export type EnvelopeSource = Pick<DeliverableEvent, "id" | "type" | "createdAt" | "data">;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The ids a /v1 event carries, each readable through /v1 with the line's key: a /v1 disbursement
 * by its own id and payee; a payout made through Surface A by the payout's id (one /v1
 * disbursement per payee), the company's own reference as its claim id, and no /v1 payee.
 */
function v1Identity(d: Record<string, unknown>) {
  if (d.disbursement_kind === "v1") {
    return { id: d.disbursement_id, claimId: d.claim_id, payee: { id: d.payee_uuid } };
  }
  return { id: d.payout_id, claimId: d.claim_id ?? d.disbursement_id, payee: null };
}

/** The Surface B envelope's four signed fields. */
export interface SurfaceBEnvelope {
  readonly id: string;
  readonly type: string | null;
  readonly created: string;
  readonly data: Record<string, unknown>;
}

/** The Surface B envelope; modality_selected data is exactly the specification's shape. */
export function surfaceBEnvelope(event: EnvelopeSource): SurfaceBEnvelope {
  const d = event.data;
  let data: Record<string, unknown>;
  if (event.type === "payee.updated") {
    data = { id: d.payee_id, object: "payee", changed: d.changed };
  } else {
    const modality = d.payment_method_id == null
      ? null
      : modalityOf(Number(d.payment_method_id))!.code;
    const amount = centsToDollars(Number(d.amount_cents));
    const { id, claimId, payee } = v1Identity(d);
    data = event.type === "disbursement.modality_selected"
      ? { disbursement_id: id, claim_id: claimId, modality, amount, payee }
      : {
        id,
        object: "disbursement",
        status: surfaceBStatus[d.status as PayoutStatus],
        amount,
        currency: "USD",
        claim_id: claimId,
        payee,
        modality,
        reason: d.reason ?? null,
      };
  }
  return { id: event.id, type: event.type, created: iso(event.createdAt), data };
}

/** Links a Surface A payload carries when they exist (made by the dispatcher, which can sign). */
export interface SurfaceALinks {
  readonly documentLink: string | null;
}

const parsed = (value: unknown, fallback: unknown) =>
  typeof value === "string" ? JSON.parse(value) : fallback;

/**
 * The Surface A envelope (seed 2.12) from the event's snapshot. Fields the service has no data
 * for (DDAId, CheckImgURL, notes, logos, Transcard) are null, zero or empty as the seed samples show.
 */
export function surfaceAEnvelope(
  event: DeliverableEvent,
  links: SurfaceALinks = { documentLink: null },
): Record<string, unknown> {
  const d = event.data;
  const payee = (d.payee ?? {}) as Record<string, unknown>;
  const accounts = event.ledgerAccounts ?? {};
  const catalogued = Object.values(eventCatalogue).find((e) => e.id === event.eventTypeId)!;
  const method = d.payment_method_id == null ? null : modalityOf(Number(d.payment_method_id))!;
  const simple = d.disbursement_kind === "simple_payment";
  const cents = (key: string) => Number(d[key] ?? 0);
  const status = d.status === undefined ? null : surfaceAStatus[d.status as PayoutStatus];
  // Events written before the facts were recorded fall back to the payee's own status.
  const disbursementStatus = surfaceAStatus[(d.disbursement_status ?? d.status) as PayoutStatus];
  const customDocuments = parsed(payee.custom_document_uuids, []) as string[];
  const permissions = parsed(payee.permission_required_from, []) as string[];
  const processed = d.status === "funds_sent" || d.status === "completed";
  const text = (key: string) => (payee[key] ?? null) as string | null;
  const time = (key: string) => (payee[key] == null ? "" : iso(Number(payee[key])));
  const railReference = text("rail_reference");
  const disbursementPayee = status === null ? null : {
    Id: payee.payout_number ?? null,
    DisbursementId: payee.disbursement_number ?? null,
    PayeeUUID: d.payee_uuid ?? null,
    RegisteredPayeeId: d.registered_payee_id ?? null,
    PayeeTypeId: payee.payee_type_id ?? null,
    PayeeStatusId: status.id,
    DisbursementStatusId: disbursementStatus.id,
    Status: status.name,
    FirstName: text("first_name"),
    LastName: text("last_name"),
    FullName: [text("first_name"), text("last_name")].filter(Boolean).join(" ") || null,
    BussinessName: null,
    Email: d.email ?? null,
    Phone: text("phone"),
    AddressOne: text("address_one"),
    AddressTwo: text("address_two"),
    City: text("city"),
    State: text("state"),
    Zip: text("zip_code"),
    Amount: centsToDollars(cents("amount_cents")),
    IsProcessed: processed,
    IsAuthorizedByAuthParties: permissions.length === 0 ||
      !["pending_funds", "created", "awaiting_endorsement"].includes(String(d.status)),
    IsUserUnreadNotePresent: false,
    NumberOfUnreadNotes: 0,
    DocumentsCount: typeof d.documents_shown === "number"
      ? d.documents_shown
      : customDocuments.length,
    CreatedAt: time("created_at"),
    UpdatedAt: time("updated_at"),
    IssueDate: processed ? time("updated_at") : "",
    AllowedPaymentMethodIds: parsed(payee.allowed_payment_method_ids, []),
    PermissionRequiredFrom: permissions,
    DeliveryOptions: parsed(payee.delivery_options, null),
    PaymentMethodSettings: parsed(payee.payment_method_settings, null),
    AuthParties: permissions.map((partyUuid) => ({ PartyUUID: partyUuid })),
    CustomDocuments: customDocuments,
    CustomFields: parsed(payee.field_values, []),
    Transaction: method === null ? null : {
      PaymentMethodId: method.id,
      PaymentMethodName: method.name,
      RailReference: railReference,
      Amount: centsToDollars(cents("amount_cents")),
      NetAmount: centsToDollars(cents("amount_cents") - cents("payee_fee_cents")),
    },
    TranscardToken: null,
    CompanyLogoUrl: null,
  };
  return {
    webhookTrigger: {
      payload: {
        PaymentMethodId: method?.id ?? null,
        PaymentMethodName: method?.name ?? null,
        EventDateTime: iso(event.createdAt),
        EventTypeId: catalogued.id,
        EventTypeName: catalogued.name,
        EventReason: surfaceAEventReason(event, {
          status: (d.status ?? null) as PayoutStatus | null,
          // A late return carries its own code; the payout's last failure, if any, is older.
          failureCode: (event.eventTypeId === eventCatalogue.returned.id
            ? d.reason
            : d.failure_reason ?? d.reason ?? null) as string | null,
          methodId: method?.id ?? null,
          simple,
        }),
        PaymentType: simple ? "SIMPLE_PAYMENT" : "DISBURSEMENT",
        DisbursementUUID: simple ? null : d.disbursement_id ?? null,
        DisbursementPayeeUUID: simple ? null : d.payee_uuid ?? null,
        SimplePaymentUUID: simple ? d.disbursement_id : null,
        SimplePaymentPayee: simple && disbursementPayee
          ? {
            FirstName: disbursementPayee.FirstName,
            LastName: disbursementPayee.LastName,
            Email: disbursementPayee.Email,
            Phone: disbursementPayee.Phone,
            Memo: d.memo ?? null,
            Status: disbursementPayee.Status,
            PayeeStatusId: disbursementPayee.PayeeStatusId,
          }
          : null,
        DisbursementUrl: null,
        DocumentLink: links.documentLink,
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
        ExtAccountID: accounts.available ?? null,
        // The company's own reference: the claim id, else its disbursement or simple payment uuid.
        ExtCustomerClaimID: d.claim_id ?? d.disbursement_id ?? null,
        ExtFboAcctID: accounts.reserved ?? null,
        ExtPaidThruID: d.ledger_transaction_id ?? null,
        ExtPayPalAcctID: method?.code === "paypal" ? railReference : null,
        ExtChartofaccountID: event.lineId ?? null,
        ExtCustPayorFeeID: accounts.fees_payor ?? null,
        ExtCustPayeeFeeID: accounts.fees_payee ?? null,
        DisbursementPayee: simple ? null : disbursementPayee,
        // An extension: receivers order a payout's events by it (delivery order is not kept).
        sequence: event.sequence ?? null,
      },
    },
  };
}
