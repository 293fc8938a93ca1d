/** Payout states, payment methods and the event catalogue (contract §4 and §8). */

export const payoutStatuses = [
  "pending_funds",
  "created",
  "pending_approval",
  "awaiting_endorsement",
  "modality_offered",
  "modality_selected",
  "in_review",
  "funds_sent",
  "completed",
  "failed",
  "canceled",
  "escheated",
] as const;

export type PayoutStatus = (typeof payoutStatuses)[number];

/** Surface A payee status name and id of each state. */
export const surfaceAStatus: Readonly<Record<PayoutStatus, { name: string; id: number }>> = {
  created: { name: "Created", id: 1 },
  // A payment approval rule holds it before the payee is told: an extension of the seed's ids.
  pending_approval: { name: "PendingApproval", id: 11 },
  awaiting_endorsement: { name: "PendingAuthorizationPartiesPermission", id: 2 },
  modality_offered: { name: "PendingPaymentMethodSelection", id: 3 },
  modality_selected: { name: "PaymentMethodSelected", id: 4 },
  in_review: { name: "InReview", id: 10 },
  funds_sent: { name: "Processing", id: 5 },
  completed: { name: "Completed", id: 6 },
  failed: { name: "Failed", id: 7 },
  canceled: { name: "Canceled", id: 8 },
  pending_funds: { name: "PendingFunds", id: 9 },
  // Remitted to a state as unclaimed property: an extension of the seed's ids.
  escheated: { name: "Escheated", id: 12 },
};

/** Surface B status of each state; Surface B shows pending_funds and awaiting_endorsement as created. */
export const surfaceBStatus: Readonly<Record<PayoutStatus, string>> = {
  pending_funds: "created",
  created: "created",
  pending_approval: "pending_approval",
  awaiting_endorsement: "created",
  modality_offered: "modality_offered",
  modality_selected: "modality_selected",
  in_review: "in_review",
  funds_sent: "funds_sent",
  completed: "completed",
  failed: "failed",
  canceled: "canceled",
  escheated: "escheated",
};

/**
 * States in which a payee can still act on or follow the payout, so a new link may be sent:
 * before the first notice there is nothing to resend, after the end nothing to act on.
 */
export const resendableStatuses: ReadonlySet<PayoutStatus> = new Set([
  "awaiting_endorsement",
  "modality_offered",
  "modality_selected",
  "funds_sent",
  "failed",
]);

export const modalities = [
  { code: "ach", id: 1, name: "ACHPayment" },
  { code: "check", id: 2, name: "CheckPayment" },
  { code: "vcc", id: 3, name: "VirtualCardPayment" },
  { code: "instant_deposit", id: 4, name: "InstantDepositPayment" },
  { code: "digital_check", id: 5, name: "DigitalCheckPayment" },
  { code: "venmo", id: 6, name: "VenmoPayment" },
  { code: "paypal", id: 7, name: "PayPalPayment" },
] as const;

export type ModalityCode = (typeof modalities)[number]["code"];

/** A modality by code (`instant` is accepted as an alias of `instant_deposit`) or by method id. */
export function modalityOf(codeOrId: string | number): (typeof modalities)[number] | undefined {
  const code = codeOrId === "instant" ? "instant_deposit" : codeOrId;
  return modalities.find((m) => m.code === code || m.id === code);
}

/**
 * Surface A EventTypeId and EventTypeName with the Surface B type (null where /v1 has none).
 * `returned` (12) is an extension: money of a completed payout came back (a late ACH return, a
 * refund); the payout stays completed. 13-15 are extensions too: a payment approval rule held
 * the payout before its offer, and someone of the company approved or rejected it. 16 and 17 are
 * insurer obligations: the pay_by deadline chose the company's fallback method (a mailed check)
 * for a payee who had not chosen, and the payout was remitted to a state as unclaimed property.
 */
export const eventCatalogue = {
  created: { id: 1, name: "DISBURSEMENT.CREATED", type: "disbursement.created" },
  pending_authorization: { id: 2, name: "DISBURSEMENT.PENDING_AUTHORIZATION", type: null },
  party_approved: { id: 3, name: "DISBURSEMENT.AUTHORIZATION_PARTY_APPROVED", type: null },
  offered: {
    id: 4,
    name: "DISBURSEMENT.PAYMENT_METHOD_OFFERED",
    type: "disbursement.modality_offered",
  },
  selected: {
    id: 5,
    name: "DISBURSEMENT.PAYMENT_METHOD_SELECTED",
    type: "disbursement.modality_selected",
  },
  processing: { id: 6, name: "DISBURSEMENT.PROCESSING", type: "disbursement.funds_sent" },
  completed: { id: 7, name: "DISBURSEMENT.COMPLETED", type: "disbursement.completed" },
  failed: { id: 8, name: "DISBURSEMENT.FAILED", type: "disbursement.failed" },
  canceled: { id: 9, name: "DISBURSEMENT.CANCELED", type: "disbursement.canceled" },
  payee_updated: { id: 10, name: "PAYEE.UPDATED", type: "payee.updated" },
  party_declined: { id: 11, name: "DISBURSEMENT.AUTHORIZATION_PARTY_DECLINED", type: null },
  returned: { id: 12, name: "DISBURSEMENT.RETURNED", type: "disbursement.returned" },
  pending_approval: {
    id: 13,
    name: "DISBURSEMENT.PENDING_APPROVAL",
    type: "disbursement.pending_approval",
  },
  payment_approved: { id: 14, name: "DISBURSEMENT.APPROVED", type: "disbursement.approved" },
  payment_rejected: { id: 15, name: "DISBURSEMENT.REJECTED", type: "disbursement.rejected" },
  fallback_at_deadline: {
    id: 16,
    name: "DISBURSEMENT.FALLBACK_AT_DEADLINE",
    type: "disbursement.fallback_at_deadline",
  },
  escheated: { id: 17, name: "DISBURSEMENT.ESCHEATED", type: "disbursement.escheated" },
} as const;

export type EventKey = keyof typeof eventCatalogue;
