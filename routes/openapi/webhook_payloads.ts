/**
 * The webhook bodies in the OpenAPI document (3.1 `webhooks`): Surface A's
 * `{"webhookTrigger": {"payload": …}}` with the specification's payload fields, and the /v1
 * envelope. A field the specification types as integer or string is nullable here exactly where
 * the service sends null.
 */
import { apiEventNames, v1EventTypes } from "../v1/webhooks.ts";
import { type JsonObject, ref } from "./parts.ts";

const text = { type: "string" };
const maybe = (type: string, description?: string) => ({
  type: [type, "null"],
  ...(description ? { description } : {}),
});
const dollars = { type: "number", description: "US dollars." };
const methodNames = [
  "ACHPayment",
  "CheckPayment",
  "VirtualCardPayment",
  "InstantDepositPayment",
  "DigitalCheckPayment",
  "VenmoPayment",
  "PayPalPayment",
];
const NO_PAYOUT = "null on PAYEE.UPDATED, which is about a /v1 payee, not a payout.";
const SIMPLE_OR_NO_PAYOUT = `null for a Simple Payment; ${NO_PAYOUT}`;
const NEVER_SET = "Always null: no rail produces it yet.";
const SEQUENCE =
  "An extension: the event's place among its payout's events, 1, 2, … in the order they were committed; null for an event about no payout (payee.updated). Deliveries can arrive out of order: keep the highest sequence applied per payout and ignore a lower one (docs/webhooks.md, Ordering).";

const disbursementPayee: JsonObject = {
  type: ["object", "null"],
  description: SIMPLE_OR_NO_PAYOUT,
  properties: {
    Id: { type: "integer" },
    DisbursementId: { type: "integer" },
    PayeeUUID: text,
    RegisteredPayeeId: maybe("string", "The /v1 payee's id; null for a Surface A payee."),
    PayeeTypeId: maybe("integer", "null for a /v1 payee (no payee_type_id)."),
    PayeeStatusId: { type: "integer", description: "This payee's status (docs/contract.md §4)." },
    DisbursementStatusId: {
      type: "integer",
      description:
        "Derived from every payee of the disbursement when the event happened: Completed (6) when all are terminal, Canceled (8) when all were canceled, else the least advanced payee state in the order PendingFunds, Created, PendingAuthorizationPartiesPermission, PendingPaymentMethodSelection, Failed, PaymentMethodSelected, Processing.",
    },
    Status: text,
    FirstName: maybe("string"),
    LastName: maybe("string"),
    FullName: maybe("string"),
    BussinessName: maybe("string", NEVER_SET),
    Email: maybe("string"),
    Phone: maybe("string"),
    AddressOne: maybe("string"),
    AddressTwo: maybe("string"),
    City: maybe("string"),
    State: maybe("string"),
    Zip: maybe("string"),
    Amount: dollars,
    IsProcessed: { type: "boolean" },
    IsAuthorizedByAuthParties: { type: "boolean" },
    IsUserUnreadNotePresent: { type: "boolean" },
    NumberOfUnreadNotes: { type: "integer" },
    DocumentsCount: {
      type: "integer",
      description:
        "Documents the portal shows this payee when the event happened: every type-1 document of the company, the payee's custom (type-4) documents, and the type-2 ACH authorization once ACH is the chosen method.",
    },
    CreatedAt: { type: "string", description: "ISO 8601 UTC." },
    UpdatedAt: { type: "string", description: "ISO 8601 UTC." },
    IssueDate: { type: "string", description: 'ISO 8601 UTC once processed, else "".' },
    AllowedPaymentMethodIds: { type: "array", items: { type: "integer" } },
    PermissionRequiredFrom: { type: "array", items: text },
    DeliveryOptions: maybe("object"),
    PaymentMethodSettings: maybe("object"),
    AuthParties: { type: "array", items: { type: "object" } },
    CustomDocuments: { type: "array", items: text },
    CustomFields: { type: "array", items: { type: "object" } },
    Transaction: maybe("object", "null before a method is chosen."),
    TranscardToken: maybe("string", NEVER_SET),
    CompanyLogoUrl: maybe("string", NEVER_SET),
  },
};

const surfaceAPayload: JsonObject = {
  type: "object",
  properties: {
    PaymentMethodId: {
      type: ["integer", "null"],
      minimum: 1,
      maximum: 7,
      description: "null before the payee chooses a method (and after a re-offer).",
    },
    PaymentMethodName: { enum: [...methodNames, null], description: "As PaymentMethodId." },
    EventDateTime: { type: "string", format: "date-time" },
    EventTypeId: {
      type: "integer",
      minimum: 1,
      maximum: 12,
      description:
        "1-11 as the seed; 12 DISBURSEMENT.RETURNED (extension): money of a completed payout came back, the payee stays Completed. 13-15 (extensions): payment approval. 16 DISBURSEMENT.FALLBACK_AT_DEADLINE (extension): the pay_by deadline chose a mailed check for the payee. 17 DISBURSEMENT.ESCHEATED (extension): remitted to a state as unclaimed property.",
    },
    EventTypeName: { enum: apiEventNames },
    EventReason: {
      type: "string",
      description:
        'What happened, in words: "Payee status changed to Processing"; on DISBURSEMENT.FAILED the rail\'s answer with its code ("ACH returned R03: no account / unable to locate account", "Instant deposit declined: the card issuer refused the payment (card_declined)"); the party and its decision on events 3 and 11; on DISBURSEMENT.RETURNED what came back ("ACH returned R10 after the payment completed: …", "PayPal refunded after the payment completed"); on events 16 and 17 "Fallback at deadline: …" and "Remitted to the state as unclaimed property: …".',
    },
    PaymentType: { enum: ["DISBURSEMENT", "SIMPLE_PAYMENT"] },
    DisbursementUUID: maybe("string", SIMPLE_OR_NO_PAYOUT),
    DisbursementPayeeUUID: maybe("string", SIMPLE_OR_NO_PAYOUT),
    SimplePaymentUUID: maybe("string", "Set for a Simple Payment only."),
    SimplePaymentPayee: maybe("object", "Set for a Simple Payment only."),
    DisbursementUrl: maybe("string", "Always null."),
    DocumentLink: maybe("string", "An expiring link to the payee's latest signed document."),
    CheckImgURL: maybe("string", NEVER_SET),
    DDAId: maybe("string", NEVER_SET),
    CompanyName: text,
    CompanyTin: text,
    Amount: { type: ["number", "null"], description: `US dollars; ${NO_PAYOUT}` },
    BilledAmount: { type: ["number", "null"], description: `Amount + fees; ${NO_PAYOUT}` },
    PaymentMethodPayorFee: dollars,
    PaymentMethodPayeeFee: dollars,
    ServiceFee: dollars,
    ExtAccountID: { type: "string", description: "The line's available ledger account." },
    ExtCustomerClaimID: maybe(
      "string",
      `The company's reference: the claim id, else the disbursement_uuid or simple_payment_uuid; ${NO_PAYOUT}`,
    ),
    ExtFboAcctID: { type: "string", description: "The line's reserved ledger account." },
    ExtPaidThruID: maybe(
      "string",
      "The ledger transaction the event's change posted; null when it posted none (an offer, a selection without a fee change, an approval).",
    ),
    ExtPayPalAcctID: maybe(
      "string",
      "The PayPal payment's reference once sent; null for other methods and before sending.",
    ),
    ExtChartofaccountID: { type: "string", description: "The business line." },
    ExtCustPayorFeeID: { type: "string", description: "The line's payor-fee ledger account." },
    ExtCustPayeeFeeID: { type: "string", description: "The line's payee-fee ledger account." },
    DisbursementPayee: ref("SurfaceADisbursementPayee"),
    sequence: maybe("integer", SEQUENCE),
  },
};

/** Component schemas of the webhook bodies. */
export const webhookPayloadSchemas: JsonObject = {
  SurfaceADisbursementPayee: disbursementPayee,
  SurfaceAWebhookPayload: surfaceAPayload,
  SurfaceAWebhook: {
    type: "object",
    required: ["webhookTrigger"],
    properties: {
      webhookTrigger: {
        type: "object",
        required: ["payload"],
        properties: { payload: ref("SurfaceAWebhookPayload") },
      },
    },
  },
  V1Webhook: {
    type: "object",
    description: "What a /v1 endpoint receives; GET /v1/events shows the same with object.",
    required: ["id", "type", "created", "data", "signature", "sequence"],
    properties: {
      id: text,
      type: { enum: v1EventTypes },
      created: { type: "string", format: "date-time" },
      data: {
        type: "object",
        description:
          "A disbursement's: id (dsb_…, or po_… for a payout made through /api), object, status, amount, currency, claim_id, payee ({id}, or null for a payout made through /api), modality (null before a choice), reason; disbursement.modality_selected: disbursement_id, claim_id, modality, amount, payee; payee.updated: id, object, changed. disbursement.returned (extension): status stays completed, reason is the return's code (R10, refunded). disbursement.fallback_at_deadline (extension): the pay_by deadline chose a mailed check for a payee who had not chosen (status modality_selected, modality check, reason fallback at deadline: …). disbursement.escheated (extension): remitted to a state as unclaimed property (status escheated).",
      },
      signature: {
        type: "string",
        description:
          "v1=t=<unix>,sha256=<hex> where hex = HMAC-SHA256(key, `<unix>.<JSON of {id, type, created, data}>`): those four fields in that order, serialized without spaces (JSON.stringify). <unix> is the X-Signature header's; one sha256= per valid secret during a rotation. The key is the 32 bytes the whsec_ secret encodes. X-Signature still signs the whole raw body.",
      },
      sequence: maybe("integer", SEQUENCE),
    },
  },
};

const delivery = (summary: string, schema: string) => ({
  post: {
    summary,
    description:
      "Signed: X-Signature v1=t=<unix>,sha256=<hex> over `<unix>.<raw body>`, and the Standard Webhooks headers (docs/contract.md §8).",
    requestBody: { required: true, content: { "application/json": { schema: ref(schema) } } },
    responses: { 200: { description: "Any 2xx acknowledges the delivery." } },
  },
});

/** The OpenAPI 3.1 `webhooks` object: what each surface's endpoints receive. */
export const webhookDeliveries: JsonObject = {
  surfaceAEvent: delivery("A Surface A endpoint's delivery (seed 2.12)", "SurfaceAWebhook"),
  v1Event: delivery("A /v1 endpoint's delivery", "V1Webhook"),
};
