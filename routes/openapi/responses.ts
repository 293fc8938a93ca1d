/**
 * The shapes of every /api and /v1 response body, as valibot schemas: the one description of what
 * the views return. The OpenAPI document derives its response schemas from them
 * (@valibot/to-json-schema), and the shared test fixture checks every response of the HTTP tests
 * against that document, so a view that adds, drops or retypes a field fails its tests until it
 * is described here. Objects are strict: a field the document does not name is a mismatch.
 */
import * as v from "valibot";
import type { Config } from "../../lib/platform/config.ts";
import { centsToDollars } from "../../lib/platform/money.ts";
import {
  eventCatalogue,
  modalities,
  surfaceAStatus,
  surfaceBStatus,
} from "../../lib/payouts/states.ts";
import { apiErrorNames, errorCatalogue } from "../errors.ts";

/** Webhook endpoint statuses and their deliveries' statuses. */
const DELIVERY_STATUSES = ["pending", "succeeded", "failed", "canceled"] as const;

const modalityCodes = modalities.map((m) => m.code);
const paymentMethodNames = modalities.map((m) => m.name);
/** Every /v1 status, from the one table of states (in_review and pending_approval included). */
const surfaceBStatuses = [...new Set(Object.values(surfaceBStatus))] as [string, ...string[]];
const surfaceAStatusNames = Object.values(surfaceAStatus).map((s) => s.name);
const v1EventTypes = Object.values(eventCatalogue).flatMap((e) => (e.type ? [e.type] : []));
const apiEventNames = Object.values(eventCatalogue).map((e) => e.name);

const integer = (description?: string, bounds: { min?: number; max?: number } = {}) =>
  v.pipe(
    v.number(),
    v.integer(),
    v.metadata({
      ...(bounds.min === undefined ? {} : { minimum: bounds.min }),
      ...(bounds.max === undefined ? {} : { maximum: bounds.max }),
    }),
    v.description(description ?? "A whole number."),
  );

/**
 * US dollars as a JSON number with at most two decimals (said in words: a fractional `multipleOf`
 * refuses valid amounts in stock validators' float arithmetic), within bounds given in cents.
 */
const dollars = (description: string, bounds: { minCents?: number; maxCents?: number } = {}) =>
  v.pipe(
    v.number(),
    v.metadata({
      ...(bounds.minCents === undefined ? {} : { minimum: centsToDollars(bounds.minCents) }),
      ...(bounds.maxCents === undefined ? {} : { maximum: centsToDollars(bounds.maxCents) }),
    }),
    v.description(`US dollars, at most two decimals. ${description}`.trim()),
  );

const timestamp = (description?: string) =>
  v.pipe(v.string(), v.isoTimestamp(), v.description(description ?? "UTC, ISO 8601."));
/** The seed's timestamp form (seed 2.4): `YYYY-MM-DD HH:MM:SS` in UTC. */
const seedTime = v.pipe(
  v.string(),
  v.regex(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
  v.description("UTC, YYYY-MM-DD HH:MM:SS"),
);
const text = (description?: string) =>
  description ? v.pipe(v.string(), v.description(description)) : v.string();
const maybeText = (description?: string) => v.nullable(text(description));
const url = (description?: string) =>
  v.pipe(v.string(), v.url(), v.description(description ?? "An absolute URL."));
const listOf = <T extends v.GenericSchema>(item: T, hasMoreDescription?: string) =>
  v.strictObject({
    object: v.literal("list"),
    data: v.array(item),
    has_more: v.pipe(
      v.boolean(),
      v.description(hasMoreDescription ?? "True when another page follows: pass starting_after."),
    ),
  });

/** The response schemas of both surfaces under this configuration's limits. */
export function responseSchemas(config: Config) {
  const { limits } = config;
  const payeeAmount = (description = "") =>
    dollars(description, { minCents: limits.AMOUNT_MIN_CENTS, maxCents: limits.AMOUNT_MAX_CENTS });
  const nonNegative = (description = "") => dollars(description, { minCents: 0 });

  const Problem = v.pipe(
    v.strictObject({
      type: v.pipe(
        v.string(),
        v.description("`/docs/errors#<code>`: the errors page's section on this code."),
      ),
      title: text("The status's reason phrase."),
      status: integer("The HTTP status.", { min: 400, max: 599 }),
      detail: text("What was refused, which rule, and the value seen."),
      code: v.picklist(Object.keys(errorCatalogue) as [string, ...string[]]),
      errors: v.exactOptional(v.array(v.strictObject({
        param: text("The field, as a dotted path (payee.id, payees.0.amount)."),
        message: text(),
      }))),
    }),
    v.description("RFC 9457 problem details; `errors` names each wrong field."),
  );
  const ApiError = v.pipe(
    v.strictObject({
      name: v.picklist(apiErrorNames as [string, ...string[]]),
      message: text(),
      details: v.array(v.strictObject({
        Issue: text(),
        Field: text("The field, as a dotted path."),
        Location: v.picklist(["body", "path", "query", "header"]),
      })),
    }),
    v.description("The seed's error record (seed 2.11)."),
  );

  // Surface B
  const Disbursement = v.strictObject({
    id: text(
      "dsb_… for a disbursement created through /v1; po_… for a payout made through /api on the key's line (a disbursement's payee or a Simple Payment), the id its /v1 events carry.",
    ),
    object: v.literal("disbursement"),
    status: v.picklist(surfaceBStatuses),
    amount: payeeAmount(),
    currency: v.literal("USD"),
    claim_id: text(
      "For a payout made through /api: its disbursement_uuid or simple_payment_uuid.",
    ),
    payee: v.pipe(
      v.nullable(v.strictObject({ id: text() })),
      v.description("null for a payout made through /api: its payee is no /v1 payee."),
    ),
    modalities: v.array(v.picklist(modalityCodes)),
    modality: v.pipe(
      v.nullable(v.picklist(modalityCodes)),
      v.description("The payee's choice; null before it."),
    ),
    metadata: v.record(v.string(), v.string()),
    pay_by: maybeText(
      "Extension: the date (YYYY-MM-DD) it must be paid by; at 00:00 UTC that day an unchosen offer gets the company's offer-expiry action. null: no deadline, the offer's own expiry applies.",
    ),
    network: maybeText(
      "Extension: the network an instant_deposit went over (visa, mastercard or pulse for a debit card; rtp for a bank account); null for other methods and before it is sent.",
    ),
    line: text("The line code of the key."),
    livemode: v.boolean(),
    created: timestamp(),
    payee_url: v.pipe(
      v.nullable(url()),
      v.description(
        "A landing page that sends the payee a fresh link and code; null for a payout made through /api (its payee is told through /api).",
      ),
    ),
    timeline: v.array(v.strictObject({
      status: v.picklist(surfaceBStatuses),
      at: timestamp(),
      detail: v.exactOptional(text()),
    })),
  });
  const PayeeAddress = v.strictObject({
    line1: text(),
    line2: v.exactOptional(text()),
    city: text(),
    state: text("Two-letter US state code, uppercase."),
    postal_code: text(),
  });
  const Payee = v.strictObject({
    id: text("Your payee id."),
    object: v.literal("payee"),
    name: maybeText(),
    email: maybeText(),
    phone: maybeText("E.164."),
    language: v.picklist(["en", "es"]),
    contact_channel: v.picklist(["email", "sms"]),
    modality_defaults: v.array(v.picklist(modalityCodes)),
    address: v.nullable(PayeeAddress),
    type: v.pipe(
      v.picklist(["individual", "business"]),
      v.description("Extension: a business payee's ACH credits go in a CCD batch."),
    ),
    line: text(),
    livemode: v.boolean(),
    created: timestamp(),
    updated: timestamp(),
  });
  const Balance = v.strictObject({
    object: v.literal("balance"),
    line: text(),
    available: nonNegative("What new payouts can hold."),
    pending: nonNegative("ACH fundings not yet available."),
    reserved: nonNegative("Held for payouts not yet sent."),
    in_transit: nonNegative("Sent, not yet settled."),
    currency: v.literal("USD"),
    livemode: v.boolean(),
    as_of: timestamp(),
  });
  const TieOut = v.pipe(
    v.strictObject({
      object: v.literal("tieout"),
      line: text(),
      date: v.pipe(v.string(), v.isoDate()),
      currency: v.literal("USD"),
      livemode: v.boolean(),
      opening: nonNegative(),
      funded: nonNegative(),
      returned_funding: nonNegative("ACH fundings the bank returned."),
      returned: nonNegative(
        "Money of completed payouts that came back (late ACH returns, refunds), back in available.",
      ),
      disbursed: nonNegative(),
      fees: nonNegative(),
      closing: nonNegative(),
      difference: dollars("Always 0 for a sound ledger."),
    }),
    v.description(
      "A UTC day of the line (sandbox days in test): difference = opening + funded − returned_funding + returned − disbursed − fees − closing.",
    ),
  );
  const Event = v.pipe(
    v.strictObject({
      id: text("evt_…"),
      object: v.literal("event"),
      type: v.picklist(v1EventTypes),
      created: timestamp("When it happened (sandbox time in test)."),
      data: v.pipe(
        v.record(v.string(), v.unknown()),
        v.description("Exactly the webhook body's `data` (see V1Webhook)."),
      ),
      signature: v.pipe(
        v.nullable(v.string()),
        v.description(
          "The body's `signature` of the latest delivery attempt to a /v1 endpoint (`v1=t=<unix>,sha256=<hex>` over `<unix>.<JSON of {id, type, created, data}>`; each attempt is signed afresh), or null before any attempt.",
        ),
      ),
      sequence: v.pipe(
        v.nullable(v.pipe(v.number(), v.integer())),
        v.description(
          "An extension: the event's place among its payout's events, 1, 2, … in commit order; null for an event about no payout.",
        ),
      ),
    }),
    v.description(
      "Exactly the body a /v1 webhook of this event carries (`id`, `type`, `created`, `data`, `signature`, `sequence`), with `object`.",
    ),
  );
  const endpointHealth = {
    status: v.pipe(
      v.picklist(["enabled", "disabled"]),
      v.description(
        "Disabled after a 410 Gone or 5 days of only failed attempts, until enabled again.",
      ),
    ),
    disabled_at: v.nullable(timestamp()),
    disabled_reason: v.pipe(v.nullable(v.string()), v.description("Why it was disabled.")),
    failing_since: v.pipe(
      v.nullable(timestamp()),
      v.description(
        "Start of an unbroken run of failed attempts (null after any success). After 1 hour the endpoint gets one attempt at a time, at most one per 5 minutes.",
      ),
    ),
  };
  const endpointEntries = (events: readonly string[]) => ({
    id: text("we_…"),
    object: v.literal("webhook_endpoint"),
    url: url(),
    events: v.array(v.picklist(events)),
    description: v.nullable(v.string()),
    ...endpointHealth,
    ed25519_signatures: v.pipe(
      v.boolean(),
      v.description(
        "Deliveries also carry the Standard Webhooks ed25519 signature (`v1a,`) in webhook-signature; verify it with GET …/webhooks/keys/ed25519.",
      ),
    ),
    livemode: v.boolean(),
    created: timestamp(),
  });
  const WebhookEndpoint = v.strictObject({
    ...endpointEntries(v1EventTypes),
    line: text("The key's line."),
  });
  const ApiWebhookEndpoint = v.strictObject(endpointEntries(apiEventNames));
  const registered = (schema: typeof WebhookEndpoint | typeof ApiWebhookEndpoint) =>
    v.strictObject({
      ...schema.entries,
      secret: text("whsec_…: shown in this response only."),
    });
  const EndpointDeleted = v.strictObject({
    id: text(),
    object: v.literal("webhook_endpoint"),
    deleted: v.literal(true),
  });
  const PublicKey = v.strictObject({
    object: v.literal("webhook_public_key"),
    public_key: text("whpk_… and the base64 of the 32-byte ed25519 public key."),
    algorithm: v.literal("ed25519"),
    livemode: v.boolean(),
  });
  const EndpointSecret = v.strictObject({
    id: text(),
    object: v.literal("webhook_endpoint_secret"),
    secret: text("whsec_…: shown in this response only."),
    previous_secret_expires_at: timestamp("Until then the previous secret signs beside it."),
  });
  const Delivery = v.strictObject({
    id: text(),
    object: v.literal("webhook_delivery"),
    event_id: text(),
    status: v.pipe(
      v.picklist(DELIVERY_STATUSES),
      v.description(
        "canceled: it was still waiting when its endpoint was deleted; replay its event to another endpoint.",
      ),
    ),
    manual: v.pipe(v.boolean(), v.description("True for a replay.")),
    attempts: integer("Attempts made.", { min: 0 }),
    next_attempt_at: v.nullable(timestamp()),
    created: timestamp(),
    completed: v.nullable(timestamp()),
  });
  const deliveries = listOf(Delivery, "True when older deliveries than these 100 exist.");
  const EventReplay = v.strictObject({
    object: v.literal("event_replay"),
    event_id: text(),
    deliveries: integer("Deliveries queued, one per subscribed endpoint.", { min: 0 }),
  });
  const ApiKey = v.strictObject({
    object: v.literal("api_key"),
    id: text(),
    secret: text("sk_test_… or sk_live_…: shown in this response only."),
    line: text(),
    livemode: v.boolean(),
    created: timestamp(),
    previous_key: v.strictObject({
      id: text(),
      expires_at: timestamp("The calling key works until then."),
    }),
  });
  const SandboxClock = v.strictObject({
    object: v.literal("sandbox_clock"),
    now: timestamp("The company's sandbox time."),
    advanced_seconds: integer(undefined, { min: 1 }),
    jobs_run: integer("Timed rules that fell due and ran, in time order.", { min: 0 }),
  });
  const SandboxClockReading = v.strictObject({
    object: v.literal("sandbox_clock"),
    now: timestamp("The company's sandbox time."),
    ahead_seconds: integer(
      "How far the sandbox clock runs ahead of real time: the sum of its advances.",
      { min: 0 },
    ),
  });

  // Surface A
  const Token = v.strictObject({
    access_token: text("A JWT for `Authorization: Bearer …`."),
    token_type: v.literal("Bearer"),
    expires_in: integer("Seconds.", { min: 1 }),
  });
  const ApiFunding = v.strictObject({
    funding_uuid: text("Yours when you sent one, else the service's id."),
    payment_method: v.picklist(["ACH", "WireTransfer"]),
    amount: dollars("", {
      minCents: limits.AMOUNT_MIN_CENTS,
      maxCents: limits.FUNDING_AMOUNT_MAX_CENTS,
    }),
    description: text(),
    large_disbursement: v.boolean(),
    disbursement_uuid: maybeText(
      "The large disbursement this funding is for: its credit releases that one first.",
    ),
    status: v.picklist(["Pending", "Completed", "Returned"]),
    expected_available_at: v.pipe(
      v.nullable(timestamp()),
      v.description(
        "When the money is expected in available. A wire: when received (null while a live wire is pending). An ACH funding: estimated at once from the company's next cutoff (an entry over $1,000,000.00 waits for a next-day one), its effective date and the 17:00 bank-time clearing two banking days later; set again when its file is built.",
      ),
    ),
    completed_at: v.nullable(timestamp()),
    line: text(),
    created_at: timestamp(),
    released_disbursements: v.pipe(
      v.array(v.strictObject({ disbursement_uuid: text(), released_at: timestamp() })),
      v.description(
        "The large disbursements this funding's credit released from PendingFunds, in release order.",
      ),
    ),
  });
  const ApiAchFile = v.strictObject({
    object: v.literal("ach_file"),
    id: text("The file's id (rbt_…)."),
    environment: v.picklist(["test", "live"]),
    created_at: timestamp("When the file was built."),
    effective_date: v.pipe(
      v.string(),
      v.regex(/^\d{4}-\d{2}-\d{2}$/),
      v.description("The effective entry date (bank-local, YYYY-MM-DD): when the money settles."),
    ),
    entry_count: integer("Entries of the file, offset entry not counted.", { min: 0 }),
    credit_total: nonNegative("Credits to payees."),
    debit_total: nonNegative("Debits of the company's funding account (ACH fundings)."),
    status: v.picklist(["built", "transmitting", "transmitted", "in_doubt", "voided"]),
    sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/), v.description("Of the plain file.")),
    transmitted_at: v.nullable(timestamp()),
  });
  const ApiAchFileEntry = v.strictObject({
    trace: maybeText("The trace number: the ODFI's 8-digit routing and a 7-digit sequence."),
    direction: v.picklist(["credit", "debit"]),
    amount: payeeAmount(),
    payout_id: maybeText("The payout a credit pays (po_…; /v1 reads it too); null for a debit."),
    disbursement_uuid: maybeText("For a payee of an /api disbursement."),
    payee_uuid: maybeText("For a payee of an /api disbursement."),
    simple_payment_uuid: maybeText("For a Simple Payment."),
    v1_disbursement_id: maybeText("For a disbursement made through /v1."),
    funding_uuid: maybeText("The ACH funding a debit collects; null for a credit."),
    account_last_four: maybeText("The last four digits of the account; never more."),
    status: v.picklist(["queued", "batched", "sent", "completed", "failed", "voided"]),
    return_code: maybeText("The bank's return code (R03, …) when the entry came back."),
  });
  const ApiAchFileDetail = v.strictObject({
    ...ApiAchFile.entries,
    entries: v.array(ApiAchFileEntry),
  });
  const ApiCheck = v.strictObject({
    object: v.literal("check"),
    number: integer("The check number: the register's, never reused.", {
      min: 1,
      max: 999_999_999,
    }),
    environment: v.picklist(["test", "live"]),
    kind: v.pipe(
      v.picklist(["postal", "digital"]),
      v.description("postal: printed and mailed; digital: the payee prints or deposits it."),
    ),
    amount: nonNegative("The check's amount: the payout's less the payee fee."),
    status: v.pipe(
      v.picklist(["issued", "paid", "voided", "stale"]),
      v.description(
        "issued until the bank reports it paid, it is voided, or it goes stale (180 days by default).",
      ),
    ),
    payout_id: text("The payout the check pays (po_…)."),
    payee_name: text(),
    memo: maybeText("The claim id printed as the memo."),
    postage_code: maybeText("A postal check's postage code; null for a digital check."),
    issue_date: v.pipe(
      v.string(),
      v.regex(/^\d{4}-\d{2}-\d{2}$/),
      v.description("Bank-local, YYYY-MM-DD."),
    ),
    paid_date: v.nullable(v.pipe(
      v.string(),
      v.regex(/^\d{4}-\d{2}-\d{2}$/),
      v.description("The bank's paid date, YYYY-MM-DD."),
    )),
    paid_amount: v.nullable(nonNegative("What the bank paid.")),
    voided_at: v.nullable(timestamp()),
    void_reason: maybeText(),
    stale_at: v.nullable(timestamp()),
  });
  const ApiCheckFile = v.strictObject({
    object: v.literal("check_file"),
    id: text("The file's id (rbt_…)."),
    environment: v.picklist(["test", "live"]),
    kind: v.pipe(
      v.picklist(["positive_pay", "print"]),
      v.description(
        "positive_pay: the issues and voids the bank is told of; print: the postal checks' PDF, released only after its positive-pay file was sent.",
      ),
    ),
    status: v.picklist(["built", "transmitting", "transmitted", "in_doubt", "voided"]),
    created_at: timestamp("When the file was built."),
    positive_pay_file_id: maybeText(
      "A print file's positive-pay file; null for a positive-pay file.",
    ),
    issue_count: integer("Checks issued in the file.", { min: 0 }),
    void_count: integer("Voids the file tells the bank of.", { min: 0 }),
    total: nonNegative("The issued checks' total."),
    byte_size: integer("The plain file's size in bytes.", { min: 0 }),
    sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/), v.description("Of the plain file.")),
    transmitted_at: v.nullable(timestamp()),
  });
  const ApiBalance = v.strictObject({
    line: text(),
    available: nonNegative(),
    pending: nonNegative("ACH fundings not yet available."),
    reserved: nonNegative(),
    in_transit: nonNegative(),
    currency: v.literal("USD"),
    livemode: v.boolean(),
    as_of: timestamp(),
  });
  const methodId = integer("A payment method id (1 ACH … 7 PayPal).", { min: 1, max: 7 });
  const ApiPayee = v.strictObject({
    payee_type_id: v.nullable(integer(undefined, { min: 1, max: 4 })),
    amount: payeeAmount(),
    payee_uuid: text(),
    email: maybeText(),
    first_name: maybeText(),
    last_name: maybeText(),
    address_one: maybeText(),
    address_two: maybeText(),
    city: maybeText(),
    state: maybeText(),
    zip_code: maybeText(),
    phone: maybeText("E.164."),
    delivery_options: v.strictObject({ email: v.boolean(), sms: v.boolean() }),
    allowed_payment_method_ids: v.array(methodId),
    permission_required_from: v.array(text("A party_uuid.")),
    field_values: v.array(v.strictObject({ name: text(), value: text() })),
    custom_document_uuids: v.array(text()),
    status: v.picklist(surfaceAStatusNames),
  });
  const ApiDisbursement = v.strictObject({
    disbursement_uuid: text(),
    payor_email: maybeText("The user who created it."),
    authorization_parties: v.pipe(
      v.array(v.strictObject({
        party_uuid: text(),
        party_type: v.optional(v.literal("INDIVIDUAL")),
        title: maybeText(),
        Company_name: v.optional(v.nullable(v.string())),
        email: maybeText(),
        first_name: maybeText(),
        last_name: maybeText(),
        phone: maybeText(),
      })),
      v.description(
        "The create's answer leaves out party_type and Company_name, as the specification shows; GET /api/disbursements/{disbursement_uuid} shows them as sent.",
      ),
    ),
    payees: v.array(ApiPayee),
    pay_by: maybeText(
      "Extension: the date (YYYY-MM-DD) every payee must be paid by; at 00:00 UTC that day an unchosen offer gets the company's offer-expiry action. null: no deadline, the offer's own expiry applies.",
    ),
    created_at: seedTime,
  });
  const Resent = v.strictObject({
    disbursement_uuid: text(),
    payee_uuid: text(),
    channels: v.array(v.picklist(["email", "sms"])),
    sent_at: seedTime,
  });
  const statusStep = {
    status: v.picklist(surfaceAStatusNames),
    status_id: integer(undefined, { min: 1, max: 9 }),
  };
  const Transaction = v.strictObject({
    disbursement_uuid: text(),
    payee_uuid: text(),
    ...statusStep,
    amount: payeeAmount(),
    fees: v.strictObject({
      payor_fee: nonNegative(),
      service_fee: nonNegative(),
      payee_fee: nonNegative(),
    }),
    billed_amount: nonNegative("amount + payor_fee + service_fee: what the company pays."),
    net_amount: nonNegative("amount − payee_fee: what reaches the payee."),
    held_amount: nonNegative("Held in reserved for this payee now."),
    payment_method_id: v.nullable(methodId),
    payment_method: v.nullable(v.picklist(paymentMethodNames)),
    account_last_four: maybeText(),
    rail_reference: maybeText(),
    failure_reason: maybeText(),
    retry_count: integer(undefined, { min: 0 }),
    created_at: seedTime,
    updated_at: seedTime,
    selected_at: v.nullable(seedTime),
    sent_at: v.nullable(seedTime),
    completed_at: v.nullable(seedTime),
    field_values: v.pipe(
      v.array(v.strictObject({ name: v.string(), value: v.string() })),
      v.description("The payee's metadata: its field_values as the create sent them."),
    ),
    history: v.array(v.strictObject({ ...statusStep, at: seedTime, detail: maybeText() })),
  });
  const SignedDocuments = v.array(v.strictObject({
    DocumentName: text(),
    SignedBy: text(),
    SignedOn: seedTime,
    DocumentLink: url("Expires 15 minutes after this response."),
  }));
  const DocumentUploaded = v.strictObject({ document_uuid: text() });
  const ApiDocument = v.strictObject({
    document_uuid: text(),
    name: text(),
    doc_type_id: integer(undefined, { min: 1, max: 4 }),
    doc_type: v.picklist([
      "After Payee Authentication",
      "ACH Authorization",
      "Authorization Party Approval",
      "Custom",
    ]),
    is_sign_required: v.boolean(),
    one_time_use: v.boolean(),
    size_bytes: integer(undefined, { min: 1 }),
    sha256: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
    created_at: seedTime,
  });
  const ApiSimplePayment = v.strictObject({
    simple_payment_uuid: text(),
    amount: payeeAmount(),
    first_name: maybeText(),
    last_name: maybeText(),
    email: maybeText(),
    phone: maybeText("E.164."),
    delivery_options: v.strictObject({ email: v.boolean(), sms: v.boolean() }),
    memo: maybeText(),
    allowed_payment_method_ids: v.array(methodId),
    pay_by: maybeText(
      "Extension: the date (YYYY-MM-DD) it must be paid by; at 00:00 UTC that day an unchosen offer gets the company's offer-expiry action. null: no deadline, the offer's own expiry applies.",
    ),
    ...statusStep,
    link: v.strictObject({
      state: v.picklist(["not_sent", "sent", "verified", "expired"]),
      expires_at: v.nullable(seedTime),
    }),
    created_at: seedTime,
  });

  return {
    Problem,
    ApiError,
    Disbursement,
    DisbursementList: listOf(Disbursement),
    Payee,
    Balance,
    TieOut,
    Event,
    EventList: listOf(Event),
    EventReplay,
    WebhookEndpoint,
    WebhookEndpointRegistered: registered(WebhookEndpoint),
    WebhookEndpointList: listOf(WebhookEndpoint, "Always false: every endpoint is listed."),
    ApiWebhookEndpoint,
    ApiWebhookEndpointRegistered: registered(ApiWebhookEndpoint),
    ApiWebhookEndpointList: listOf(ApiWebhookEndpoint, "Always false: every endpoint is listed."),
    WebhookEndpointDeleted: EndpointDeleted,
    WebhookEndpointSecret: EndpointSecret,
    WebhookPublicKey: PublicKey,
    WebhookDeliveryList: deliveries,
    ApiKey,
    SandboxClock,
    SandboxClockReading,
    Token,
    ApiFunding,
    ApiFundingList: listOf(ApiFunding),
    ApiBalance,
    ApiAchFile,
    ApiAchFileList: listOf(ApiAchFile),
    ApiAchFileDetail,
    ApiCheck,
    ApiCheckList: listOf(ApiCheck),
    ApiCheckFile,
    ApiCheckFileList: listOf(ApiCheckFile),
    ApiPayee,
    ApiDisbursement,
    ApiResent: Resent,
    ApiTransaction: Transaction,
    ApiSignedDocuments: SignedDocuments,
    ApiDocumentUploaded: DocumentUploaded,
    ApiDocument,
    ApiSimplePayment,
  };
}

export type ResponseSchemas = ReturnType<typeof responseSchemas>;
