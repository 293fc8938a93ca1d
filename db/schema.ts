/**
 * The whole domain's storage. One schema serves both databases (`test` and `live`): identities
 * are mirrored into both so that a key of one environment can only ever reach its own money.
 * Money is INTEGER cents; times are INTEGER milliseconds since the epoch, UTC.
 */
import { sql } from "drizzle-orm";
import {
  blob,
  check,
  index,
  integer,
  primaryKey,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";
import { ledgerAccountCodes } from "../lib/ledger/types.ts";
import { payoutStatuses } from "../lib/payouts/states.ts";

const createdAt = () => integer("created_at").notNull();

export const companies = sqliteTable("companies", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  tin: text("tin").notNull().unique(),
  retryMax: integer("retry_max").notNull().default(1),
  /** JSON array of failure reasons that an automatic retry may follow. */
  retryReasons: text("retry_reasons").notNull().default('["rail_unavailable"]'),
  /** Days a payee may wait (for their choice or an endorsement) before the payout needs action. */
  payeeWaitDays: integer("payee_wait_days").notNull().default(7),
  /**
   * What happens when a payee's offer expires unchosen: `cancel` gives the hold back, `fallback`
   * mails a check, `hold` keeps it owed. The column's default keeps rows that predate the setting
   * on cancel; company:create writes fallback for a new company.
   */
  offerExpiryAction: text("offer_expiry_action", { enum: ["cancel", "fallback", "hold"] })
    .notNull().default("cancel"),
  /** Days from create to a payout's pay_by when the request gives none; null: no deadline. */
  payByDays: integer("pay_by_days"),
  /** The holder's state of incorporation: where unclaimed property without a US address is owed. */
  holderState: text("holder_state"),
  /** Sandbox only: every dormancy period is this many days instead (null: the table's). */
  sandboxDormancyDays: integer("sandbox_dormancy_days"),
  createdAt: createdAt(),
}, (t) => [check("companies_tin_digits", sql`length(${t.tin}) = 9`)]);

export const users = sqliteTable("users", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  createdAt: createdAt(),
});

export const memberships = sqliteTable("memberships", {
  userId: text("user_id").notNull().references(() => users.id),
  companyId: text("company_id").notNull().references(() => companies.id),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.userId, t.companyId] })]);

export const businessLines = sqliteTable("business_lines", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  code: text("code").notNull(),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("business_lines_company_code").on(t.companyId, t.code)]);

/**
 * Every inbound credential: company keys (`cak_`), user keys (`uak_`) and line keys (`sk_`).
 * Only the SHA-256 of the secret is kept; `hint` is the non-secret start shown to operators.
 */
export const apiKeys = sqliteTable("api_keys", {
  id: text("id").primaryKey(),
  kind: text("kind", { enum: ["company", "user", "line"] }).notNull(),
  secretHash: text("secret_hash").notNull().unique(),
  hint: text("hint").notNull(),
  companyId: text("company_id").references(() => companies.id),
  userId: text("user_id").references(() => users.id),
  lineId: text("line_id").references(() => businessLines.id),
  createdAt: createdAt(),
  /** Set when the key is rotated: the old key keeps working until then. */
  expiresAt: integer("expires_at"),
  revokedAt: integer("revoked_at"),
  replacedBy: text("replaced_by"),
}, (t) => [
  index("api_keys_owner").on(t.kind, t.companyId, t.userId, t.lineId),
  check(
    "api_keys_owner_matches_kind",
    sql`(${t.kind} = 'company' AND ${t.companyId} IS NOT NULL AND ${t.userId} IS NULL AND ${t.lineId} IS NULL)
     OR (${t.kind} = 'user' AND ${t.userId} IS NOT NULL AND ${t.lineId} IS NULL)
     OR (${t.kind} = 'line' AND ${t.lineId} IS NOT NULL AND ${t.companyId} IS NOT NULL)`,
  ),
]);

/** Per company and payment method id (1-7); absent rows mean no fee. */
export const feeSchedules = sqliteTable("fee_schedules", {
  companyId: text("company_id").notNull().references(() => companies.id),
  paymentMethodId: integer("payment_method_id").notNull(),
  payorFeeCents: integer("payor_fee_cents").notNull().default(0),
  payeeFeeCents: integer("payee_fee_cents").notNull().default(0),
  serviceFeeCents: integer("service_fee_cents").notNull().default(0),
}, (t) => [
  primaryKey({ columns: [t.companyId, t.paymentMethodId] }),
  check("fee_schedules_method", sql`${t.paymentMethodId} BETWEEN 1 AND 7`),
  check(
    "fee_schedules_non_negative",
    sql`${t.payorFeeCents} >= 0 AND ${t.payeeFeeCents} >= 0 AND ${t.serviceFeeCents} >= 0`,
  ),
]);

/** Surface B payees, upserted by the company's own id within a business line. */
export const payees = sqliteTable("payees", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  lineId: text("line_id").notNull().references(() => businessLines.id),
  externalId: text("external_id").notNull(),
  name: text("name"),
  email: text("email"),
  phone: text("phone"),
  language: text("language").notNull().default("en"),
  contactChannel: text("contact_channel", { enum: ["email", "sms"] }).notNull().default("email"),
  modalityDefaults: text("modality_defaults").notNull().default("[]"),
  address: text("address"),
  /** A business's ACH credits go in a CCD batch, a person's in a PPD batch. */
  type: text("type", { enum: ["individual", "business"] }).notNull().default("individual"),
  createdAt: createdAt(),
  updatedAt: integer("updated_at").notNull(),
}, (t) => [uniqueIndex("payees_line_external").on(t.companyId, t.lineId, t.externalId)]);

/**
 * A group of payouts: a Surface A disbursement (many payees), a Surface B disbursement (one
 * payout with a claim id) or a Simple Payment (one payout with a memo).
 */
export const disbursements = sqliteTable("disbursements", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  lineId: text("line_id").notNull().references(() => businessLines.id),
  kind: text("kind", { enum: ["disbursement", "simple_payment", "v1"] }).notNull(),
  /** disbursement_uuid or simple_payment_uuid; for /v1 the public id. */
  externalUuid: text("external_uuid").notNull(),
  claimId: text("claim_id"),
  largeDisbursement: integer("large_disbursement", { mode: "boolean" }).notNull().default(false),
  /** The funding whose credit released this large disbursement from pending_funds, and when. */
  releasedByFundingId: text("released_by_funding_id"),
  releasedAt: integer("released_at"),
  payorUserId: text("payor_user_id"),
  /** SHA-256 of the canonical create body, to tell a replay from a conflicting reuse. */
  requestFingerprint: text("request_fingerprint").notNull(),
  memo: text("memo"),
  metadata: text("metadata").notNull().default("{}"),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("disbursements_company_kind_uuid").on(t.companyId, t.kind, t.externalUuid),
  index("disbursements_company_created").on(t.companyId, t.createdAt, t.id),
  // The console finds a payout by its claim id.
  index("disbursements_claim").on(t.claimId),
]);

export const authorizationParties = sqliteTable("authorization_parties", {
  id: text("id").primaryKey(),
  disbursementId: text("disbursement_id").notNull().references(() => disbursements.id),
  partyUuid: text("party_uuid").notNull(),
  partyType: text("party_type").notNull().default("INDIVIDUAL"),
  title: text("title"),
  companyName: text("company_name"),
  email: text("email"),
  firstName: text("first_name"),
  lastName: text("last_name"),
  phone: text("phone"),
}, (t) => [uniqueIndex("authorization_parties_uuid").on(t.disbursementId, t.partyUuid)]);

/**
 * One payee's payment; its state is moved only by the payout state machine. Its rowid keys the
 * console's payee index (`payee_search`, see payeeSearchProgress): a migration that rebuilds this
 * table must keep its rowids or empty that index and its progress.
 */
export const payouts = sqliteTable("payouts", {
  id: text("id").primaryKey(),
  disbursementId: text("disbursement_id").notNull().references(() => disbursements.id),
  companyId: text("company_id").notNull().references(() => companies.id),
  lineId: text("line_id").notNull().references(() => businessLines.id),
  payeeUuid: text("payee_uuid").notNull(),
  payeeId: text("payee_id").references(() => payees.id),
  payeeTypeId: integer("payee_type_id"),
  firstName: text("first_name"),
  lastName: text("last_name"),
  email: text("email"),
  phone: text("phone"),
  addressOne: text("address_one"),
  addressTwo: text("address_two"),
  city: text("city"),
  state: text("state"),
  zipCode: text("zip_code"),
  deliveryOptions: text("delivery_options").notNull().default('{"email":true,"sms":false}'),
  allowedPaymentMethodIds: text("allowed_payment_method_ids").notNull().default("[]"),
  permissionRequiredFrom: text("permission_required_from").notNull().default("[]"),
  fieldValues: text("field_values").notNull().default("[]"),
  paymentMethodSettings: text("payment_method_settings").notNull().default("{}"),
  customDocumentUuids: text("custom_document_uuids").notNull().default("[]"),
  amountCents: integer("amount_cents").notNull(),
  /** What the ledger holds in reserved/in_transit for this payout (amount plus held fees). */
  heldCents: integer("held_cents").notNull().default(0),
  status: text("status", { enum: payoutStatuses }).notNull(),
  paymentMethodId: integer("payment_method_id"),
  /** AES-GCM ciphertext of the chosen method's details; only last four are ever shown. */
  methodDetails: text("method_details"),
  methodLastFour: text("method_last_four"),
  payorFeeCents: integer("payor_fee_cents").notNull().default(0),
  payeeFeeCents: integer("payee_fee_cents").notNull().default(0),
  serviceFeeCents: integer("service_fee_cents").notNull().default(0),
  railReference: text("rail_reference"),
  failureReason: text("failure_reason"),
  /**
   * The last failure's time, method and account ending, kept after a re-offer clears the method
   * (failure_reason keeps its code), so the console can say what failed and where.
   */
  lastFailedAt: integer("last_failed_at"),
  lastFailureMethodId: integer("last_failure_method_id"),
  lastFailureLastFour: text("last_failure_last_four"),
  retryCount: integer("retry_count").notNull().default(0),
  /**
   * Submissions to a rail so far (first sends, retries and sends after a re-offer): the next
   * submission's number, so `payout id + number` is a reference no other submission shares.
   */
  submissionCount: integer("submission_count").notNull().default(0),
  /** The date (YYYY-MM-DD) the payout must be paid by; its offer falls back at 00:00 UTC that day. */
  payBy: text("pay_by"),
  /** When the deadline chose the company's fallback method for the payee. */
  fellBackAt: integer("fell_back_at"),
  /** When an offer fell due unchosen (canceled, kept owed or fallen back): still owed to its payee. */
  offerExpiredAt: integer("offer_expired_at"),
  /** Remitted as unclaimed property: to which state, and when. */
  escheatedState: text("escheated_state"),
  escheatedAt: integer("escheated_at"),
  createdAt: createdAt(),
  updatedAt: integer("updated_at").notNull(),
}, (t) => [
  uniqueIndex("payouts_disbursement_payee").on(t.disbursementId, t.payeeUuid),
  index("payouts_company_status").on(t.companyId, t.status, t.createdAt),
  // Every event write reads its disbursement's payout statuses (DisbursementStatusId).
  index("payouts_disbursement_status").on(t.disbursementId, t.status),
  // The console's payout search, newest first across the companies in an operator's scope.
  index("payouts_created").on(t.createdAt, t.id),
  // The console's overview: payouts that changed today.
  index("payouts_updated").on(t.updatedAt),
  // The console's payout search sorted by amount (set at insert, never changed).
  index("payouts_amount").on(t.amountCents, t.id),
  // The console's one search box by an account's last four (set after create, so a create does
  // not write these).
  index("payouts_method_last_four").on(t.methodLastFour).where(
    sql`${t.methodLastFour} IS NOT NULL`,
  ),
  index("payouts_last_failure_last_four").on(t.lastFailureLastFour).where(
    sql`${t.lastFailureLastFour} IS NOT NULL`,
  ),
  check("payouts_amount_positive", sql`${t.amountCents} > 0`),
  check("payouts_held_non_negative", sql`${t.heldCents} >= 0`),
]);

/** The timeline of a payout: every state it entered, when, and why. */
export const payoutTransitions = sqliteTable("payout_transitions", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  payoutId: text("payout_id").notNull().references(() => payouts.id),
  fromStatus: text("from_status"),
  toStatus: text("to_status").notNull(),
  detail: text("detail"),
  at: integer("at").notNull(),
}, (t) => [
  index("payout_transitions_payout").on(t.payoutId, t.id),
  // The console's 30-day chart of payouts sent.
  index("payout_transitions_to_at").on(t.toStatus, t.at),
]);

export const endorsements = sqliteTable("endorsements", {
  id: text("id").primaryKey(),
  payoutId: text("payout_id").notNull().references(() => payouts.id),
  partyUuid: text("party_uuid").notNull(),
  status: text("status", { enum: ["pending", "endorsed", "declined"] }).notNull(),
  /** Contact data the payee entered (the company's own values stay on the party). */
  contactEmail: text("contact_email"),
  contactPhone: text("contact_phone"),
  typedName: text("typed_name"),
  decidedAt: integer("decided_at"),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("endorsements_payout_party").on(t.payoutId, t.partyUuid)]);

/** Balances are materialized here in the same transaction as their entries: reads are O(1). */
export const ledgerAccounts = sqliteTable("ledger_accounts", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  lineId: text("line_id").notNull().references(() => businessLines.id),
  code: text("code", { enum: ledgerAccountCodes }).notNull(),
  balanceCents: integer("balance_cents").notNull().default(0),
}, (t) => [
  uniqueIndex("ledger_accounts_line_code").on(t.lineId, t.code),
  check(
    "ledger_accounts_never_negative",
    sql`${t.code} NOT IN ('available', 'reserved') OR ${t.balanceCents} >= 0`,
  ),
]);

export const ledgerTransactions = sqliteTable("ledger_transactions", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  lineId: text("line_id").notNull().references(() => businessLines.id),
  kind: text("kind").notNull(),
  payoutId: text("payout_id"),
  fundingId: text("funding_id"),
  /** Effective time: the sandbox clock in test. */
  postedAt: integer("posted_at").notNull(),
}, (t) => [
  index("ledger_transactions_line_posted").on(t.lineId, t.postedAt),
  // The console's payout detail lists the payout's transactions.
  index("ledger_transactions_payout").on(t.payoutId),
  // Whether an ACH funding's debit was counted as sent is read when its file goes. Only a
  // funding's transactions have one: a payout's (each create's hold) adds no entry to it.
  index("ledger_transactions_funding").on(t.fundingId).where(sql`${t.fundingId} IS NOT NULL`),
  // Unclaimed property lists a company's late returns: money of completed payouts still owed.
  index("ledger_transactions_late_return").on(t.companyId).where(
    sql`${t.kind} = 'payout.late_return'`,
  ),
]);

export const ledgerEntries = sqliteTable("ledger_entries", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  transactionId: text("transaction_id").notNull().references(() => ledgerTransactions.id),
  accountId: text("account_id").notNull().references(() => ledgerAccounts.id),
  amountCents: integer("amount_cents").notNull(),
}, (t) => [
  index("ledger_entries_transaction").on(t.transactionId),
  index("ledger_entries_account").on(t.accountId),
  check("ledger_entries_non_zero", sql`${t.amountCents} <> 0`),
]);

export const fundings = sqliteTable("fundings", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  lineId: text("line_id").notNull().references(() => businessLines.id),
  fundingUuid: text("funding_uuid"),
  paymentMethod: text("payment_method", { enum: ["ACH", "WireTransfer"] }).notNull(),
  amountCents: integer("amount_cents").notNull(),
  description: text("description").notNull(),
  largeDisbursement: integer("large_disbursement", { mode: "boolean" }).notNull(),
  /** The disbursement a large-disbursement funding is for: released first by its credit. */
  disbursementId: text("disbursement_id"),
  status: text("status", { enum: ["Pending", "Completed", "Returned"] }).notNull(),
  requestFingerprint: text("request_fingerprint").notNull(),
  expectedAvailableAt: integer("expected_available_at"),
  completedAt: integer("completed_at"),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("fundings_company_uuid").on(t.companyId, t.fundingUuid),
  check("fundings_amount_positive", sql`${t.amountCents} > 0`),
]);

export const documents = sqliteTable("documents", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  name: text("name").notNull(),
  docTypeId: integer("doc_type_id").notNull(),
  isSignRequired: integer("is_sign_required", { mode: "boolean" }).notNull().default(false),
  oneTimeUse: integer("one_time_use", { mode: "boolean" }).notNull().default(false),
  usedByPayoutId: text("used_by_payout_id"),
  sha256: text("sha256").notNull(),
  sizeBytes: integer("size_bytes").notNull(),
  content: blob("content", { mode: "buffer" }).notNull(),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("documents_company_name").on(t.companyId, t.name),
  check("documents_type", sql`${t.docTypeId} BETWEEN 1 AND 4`),
]);

export const signedDocuments = sqliteTable("signed_documents", {
  id: text("id").primaryKey(),
  documentId: text("document_id").notNull().references(() => documents.id),
  payoutId: text("payout_id").notNull().references(() => payouts.id),
  signedBy: text("signed_by").notNull(),
  signedAt: integer("signed_at").notNull(),
  signerIp: text("signer_ip"),
  signerUserAgent: text("signer_user_agent"),
  originalSha256: text("original_sha256").notNull(),
  content: blob("content", { mode: "buffer" }).notNull(),
}, (t) => [index("signed_documents_payout").on(t.payoutId)]);

/** The event log and webhook outbox: written in the same transaction as the state change. */
export const events = sqliteTable("events", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  lineId: text("line_id").references(() => businessLines.id),
  /** Surface B type (null for events /v1 does not publish) and the Surface A id. */
  type: text("type"),
  eventTypeId: integer("event_type_id").notNull(),
  disbursementId: text("disbursement_id"),
  payoutId: text("payout_id"),
  payeeId: text("payee_id"),
  reason: text("reason"),
  /** JSON snapshot of what the event reports, taken when it happened. */
  data: text("data").notNull(),
  createdAt: createdAt(),
}, (t) => [
  index("events_company_created").on(t.companyId, t.createdAt, t.id),
  index("events_payout").on(t.payoutId),
]);

export const webhookEndpoints = sqliteTable("webhook_endpoints", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  /** Set for /v1 endpoints, which receive the events of one line only. */
  lineId: text("line_id").references(() => businessLines.id),
  surface: text("surface", { enum: ["api", "v1"] }).notNull(),
  url: text("url").notNull(),
  events: text("events").notNull().default("[]"),
  description: text("description"),
  /** AES-GCM ciphertext: the secret must stay usable for signing. */
  secretCiphertext: text("secret_ciphertext").notNull(),
  previousSecretCiphertext: text("previous_secret_ciphertext"),
  previousSecretExpiresAt: integer("previous_secret_expires_at"),
  disabledAt: integer("disabled_at"),
  disabledReason: text("disabled_reason"),
  /** Start of an unbroken run of failed attempts (null after any success): the circuit breaker. */
  failingSince: integer("failing_since"),
  /** Deliveries also carry the Standard Webhooks ed25519 signature (`v1a,`) beside the HMAC. */
  ed25519Signatures: integer("ed25519_signatures", { mode: "boolean" }).notNull().default(false),
  deletedAt: integer("deleted_at"),
  createdAt: createdAt(),
}, (t) => [index("webhook_endpoints_company").on(t.companyId)]);

export const webhookDeliveries = sqliteTable("webhook_deliveries", {
  id: text("id").primaryKey(),
  endpointId: text("endpoint_id").notNull().references(() => webhookEndpoints.id),
  eventId: text("event_id").notNull().references(() => events.id),
  // canceled: still waiting when its endpoint was deleted.
  status: text("status", { enum: ["pending", "succeeded", "failed", "canceled"] }).notNull(),
  /** A manual replay is attempted once and never rescheduled by the automatic schedule. */
  manual: integer("manual", { mode: "boolean" }).notNull().default(false),
  attemptCount: integer("attempt_count").notNull().default(0),
  nextAttemptAt: integer("next_attempt_at"),
  claimedUntil: integer("claimed_until"),
  lastSignature: text("last_signature"),
  createdAt: createdAt(),
  completedAt: integer("completed_at"),
}, (t) => [
  index("webhook_deliveries_due").on(t.status, t.nextAttemptAt),
  index("webhook_deliveries_endpoint").on(t.endpointId, t.createdAt),
  index("webhook_deliveries_event").on(t.eventId),
]);

export const deliveryAttempts = sqliteTable("delivery_attempts", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  deliveryId: text("delivery_id").notNull().references(() => webhookDeliveries.id),
  attemptedAt: integer("attempted_at").notNull(),
  statusCode: integer("status_code"),
  durationMs: integer("duration_ms").notNull(),
  responseExcerpt: text("response_excerpt"),
  error: text("error"),
}, (t) => [index("delivery_attempts_delivery").on(t.deliveryId, t.id)]);

/**
 * Saved responses of idempotent POSTs. Scope: company, line ('' on /api) and key; the
 * environment is the database itself.
 */
export const idempotencyRecords = sqliteTable("idempotency_records", {
  companyId: text("company_id").notNull(),
  scopeLine: text("scope_line").notNull(),
  key: text("key").notNull(),
  fingerprint: text("fingerprint").notNull(),
  status: text("status", { enum: ["in_progress", "complete"] }).notNull(),
  leaseUntil: integer("lease_until"),
  responseStatus: integer("response_status"),
  responseHeaders: text("response_headers"),
  responseBody: blob("response_body", { mode: "buffer" }),
  createdAt: createdAt(),
  expiresAt: integer("expires_at").notNull(),
}, (t) => [
  primaryKey({ columns: [t.companyId, t.scopeLine, t.key] }),
  index("idempotency_records_expiry").on(t.expiresAt),
]);

/** The per-company sandbox clock: test-environment time is real time plus this offset. */
export const sandboxClocks = sqliteTable("sandbox_clocks", {
  companyId: text("company_id").primaryKey().references(() => companies.id),
  offsetMs: integer("offset_ms").notNull().default(0),
  updatedAt: integer("updated_at").notNull(),
});

/** Every timed rule is a due row, so a restart loses nothing. */
export const scheduledJobs = sqliteTable("scheduled_jobs", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  kind: text("kind").notNull(),
  subjectId: text("subject_id").notNull(),
  dueAt: integer("due_at").notNull(),
  payload: text("payload").notNull().default("{}"),
  doneAt: integer("done_at"),
  /**
   * The latest failure. With done_at set the job is parked for an operator; without it the job
   * failed transiently and waits for its retry at due_at.
   */
  error: text("error"),
  /** Runs started so far, failed ones included: picks the backoff of the next transient retry. */
  attempts: integer("attempts").notNull().default(0),
  /** A job that calls a rail or the network is claimed until then; after it another run may. */
  leaseUntil: integer("lease_until"),
  /**
   * The node whose run holds the claim (its DATA_DIR's node id): a node restarted on its DATA_DIR
   * takes its own claims over at once instead of waiting for their leases.
   */
  leaseHolder: text("lease_holder"),
  createdAt: createdAt(),
}, (t) => [
  index("scheduled_jobs_due").on(t.doneAt, t.dueAt),
  index("scheduled_jobs_company_due").on(t.companyId, t.doneAt, t.dueAt),
  // A subject's open job is looked up by kind (a file's statements planned once, a payout's
  // submission being called): a company's done jobs, tens of thousands after a large day, are not read.
  index("scheduled_jobs_subject").on(t.subjectId, t.kind),
]);

/** Notification outbox; in the sandbox it is also the inbox shown at /sandbox/inbox. */
export const notifications = sqliteTable("notifications", {
  id: text("id").primaryKey(),
  companyId: text("company_id").references(() => companies.id),
  /** The payout whose payee this message is for (null for messages about no payout). */
  payoutId: text("payout_id").references(() => payouts.id),
  channel: text("channel", { enum: ["email", "sms"] }).notNull(),
  recipient: text("recipient").notNull(),
  subject: text("subject"),
  body: text("body").notNull(),
  links: text("links").notNull().default("[]"),
  code: text("code"),
  status: text("status", { enum: ["pending", "sent", "failed"] }).notNull(),
  attemptCount: integer("attempt_count").notNull().default(0),
  /**
   * A live pending message is due when this is null or past. A claim moves it past the send's
   * lease, so a crash before the outcome is recorded makes the message due again (at least once).
   */
  nextAttemptAt: integer("next_attempt_at"),
  /** Why the latest attempt failed, as the transport said it. */
  lastError: text("last_error"),
  createdAt: createdAt(),
  sentAt: integer("sent_at"),
}, (t) => [
  index("notifications_status_created").on(t.status, t.createdAt),
  index("notifications_payout").on(t.payoutId),
]);

/** Resend requests per payee, on real time, for the hourly allowance of contract §11. */
export const notificationResends = sqliteTable("notification_resends", {
  id: text("id").primaryKey(),
  payoutId: text("payout_id").notNull().references(() => payouts.id),
  requestedAt: integer("requested_at").notNull(),
}, (t) => [index("notification_resends_payout").on(t.payoutId, t.requestedAt)]);

/** Secret portal links for payees and authorization parties (hashed, expiring, rotated). */
export const portalLinks = sqliteTable("portal_links", {
  id: text("id").primaryKey(),
  payoutId: text("payout_id").notNull().references(() => payouts.id),
  partyUuid: text("party_uuid"),
  tokenHash: text("token_hash").notNull().unique(),
  codeHash: text("code_hash"),
  codeExpiresAt: integer("code_expires_at"),
  failedCodeAttempts: integer("failed_code_attempts").notNull().default(0),
  lockedUntil: integer("locked_until"),
  verifiedAt: integer("verified_at"),
  expiresAt: integer("expires_at").notNull(),
  replacedAt: integer("replaced_at"),
  createdAt: createdAt(),
}, (t) => [index("portal_links_payout").on(t.payoutId)]);

/**
 * Batch rails (a bank file, a provider batch): payouts queue as entries without a batch; a cutoff
 * gathers the queued entries of a company and rail into one batch, which is then transmitted;
 * outcomes arrive per entry.
 */
export const railBatches = sqliteTable("rail_batches", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  rail: text("rail").notNull(),
  status: text("status", {
    enum: ["built", "transmitting", "transmitted", "in_doubt", "voided"],
  }).notNull(),
  entryCount: integer("entry_count").notNull(),
  totalCents: integer("total_cents").notNull(),
  cutoffAt: integer("cutoff_at").notNull(),
  /** What the rail called the batch when it took it (a file name, a provider batch id). */
  railReference: text("rail_reference"),
  transmittedAt: integer("transmitted_at"),
  error: text("error"),
  /**
   * When an operator first downloaded the file to hand it over themselves: until it is marked
   * sent it may be at the bank, so it is never voided and queued again without an in-doubt decision.
   */
  downloadedAt: integer("downloaded_at"),
  createdAt: createdAt(),
}, (t) => [index("rail_batches_company_status").on(t.companyId, t.status)]);

/**
 * Every transmission of a batch, with its answer (one row per try, never overwritten): what the
 * transport said, or that nobody knows (`in_doubt`, the run stopped before the answer was kept).
 */
export const railBatchAttempts = sqliteTable("rail_batch_attempts", {
  id: text("id").primaryKey(),
  batchId: text("batch_id").notNull().references(() => railBatches.id),
  /** 1 for the batch's first transmission. */
  attempt: integer("attempt").notNull(),
  startedAt: integer("started_at").notNull(),
  /** Null while the transmission runs. */
  answeredAt: integer("answered_at"),
  outcome: text("outcome", {
    enum: ["transmitted", "not_transmitted", "in_doubt"],
  }),
  /** The rail's reference when transmitted, or the reason it was not (or why nobody knows). */
  detail: text("detail"),
}, (t) => [uniqueIndex("rail_batch_attempts_batch").on(t.batchId, t.attempt)]);

export const railBatchEntries = sqliteTable("rail_batch_entries", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  rail: text("rail").notNull(),
  /** Null while queued for the next cutoff. */
  batchId: text("batch_id").references(() => railBatches.id),
  /** The payout a credit pays; null for a funding debit. */
  payoutId: text("payout_id").references(() => payouts.id),
  /** The ACH funding a debit collects from the company's funding account; null for a payout. */
  fundingId: text("funding_id").references(() => fundings.id),
  /** credit: money to a payee; debit: money collected from the company (ACH funding). */
  direction: text("direction", { enum: ["credit", "debit"] }).notNull().default("credit"),
  /**
   * The submission's idempotency reference (payout id + submission number, or funding id + attempt
   * for a debit). An entry voided with its file is queued again under a new reference.
   */
  reference: text("reference").notNull(),
  amountCents: integer("amount_cents").notNull(),
  status: text("status", {
    enum: ["queued", "batched", "sent", "completed", "failed", "voided"],
  }).notNull(),
  /** ACH: the ODFI's 8-digit routing and a 7-digit sequence, set when the entry enters a file. */
  traceNumber: text("trace_number"),
  /** ACH: the receiving DFI's 8-digit identification (routing without its check digit). */
  receivingDfi: text("receiving_dfi"),
  accountLastFour: text("account_last_four"),
  /** ACH: 22/32 credits to checking/savings, 27/37 debits; with the entry class (PPD, CCD). */
  transactionCode: integer("transaction_code"),
  entryClass: text("entry_class"),
  /** ACH: the effective entry date (YYYY-MM-DD, bank-local) of the file that carries it. */
  effectiveDate: text("effective_date"),
  /** ACH: the return reason code (R03, …) of a return, kept also for a late one. */
  returnCode: text("return_code"),
  settledAt: integer("settled_at"),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("rail_batch_entries_reference").on(t.reference),
  // A trace names one entry while a return may name it; after TRACE_REUSE_AFTER_DAYS (and a wrap
  // past 9,999,999) it may name a new one, so it is not unique over all time.
  index("rail_batch_entries_trace").on(t.traceNumber),
  // A cutoff takes its queue a page at a time, oldest first (created_at, then rowid: the order
  // entries were queued in, which an index keeps after its columns): no sort.
  index("rail_batch_entries_queue").on(t.companyId, t.rail, t.batchId, t.status, t.createdAt),
  // A transmitted batch sends its entries a page at a time in file order (created_at, id): each
  // page reads its first entries still batched without sorting the whole batch.
  index("rail_batch_entries_batch").on(t.batchId, t.status, t.createdAt, t.id),
  index("rail_batch_entries_funding").on(t.fundingId),
  check(
    "rail_batch_entries_subject",
    sql`(${t.payoutId} IS NULL) <> (${t.fundingId} IS NULL)`,
  ),
]);

/**
 * Rail outcomes a payout could not take (the bank paid the entry of a payout canceled meanwhile, a
 * return for a payout offered again): kept once per entry and outcome, never applied by force,
 * and resolved by an operator, audited (posting money needs a second admin in live). Nothing
 * else waits for them: the rest of the file or import goes on.
 */
export const railExceptions = sqliteTable("rail_exceptions", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  rail: text("rail").notNull(),
  entryId: text("entry_id").notNull().references(() => railBatchEntries.id),
  batchId: text("batch_id").references(() => railBatches.id),
  payoutId: text("payout_id").references(() => payouts.id),
  reference: text("reference").notNull(),
  /** What the rail reported: the entry was paid (`completed`) or its money came back (`failed`). */
  outcome: text("outcome", { enum: ["completed", "failed"] }).notNull(),
  returnCode: text("return_code"),
  amountCents: integer("amount_cents").notNull(),
  /** The payout's status when the outcome arrived, and why it could not take it. */
  payoutStatus: text("payout_status"),
  reason: text("reason").notNull(),
  status: text("status", { enum: ["open", "resolved"] }).notNull(),
  resolution: text("resolution"),
  ledgerTransactionId: text("ledger_transaction_id"),
  resolvedBy: text("resolved_by"),
  resolvedAt: integer("resolved_at"),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("rail_exceptions_entry_outcome").on(t.entryId, t.outcome),
  index("rail_exceptions_status").on(t.status, t.createdAt),
]);

/**
 * An operator's recorded request that the bank recall a transmitted entry (the payout must not be
 * paid after all): one per entry. The bank's answer arrives as the entry's return, or not at all.
 */
export const railRecallRequests = sqliteTable("rail_recall_requests", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  entryId: text("entry_id").notNull().references(() => railBatchEntries.id).unique(),
  payoutId: text("payout_id").references(() => payouts.id),
  batchId: text("batch_id").references(() => railBatches.id),
  reason: text("reason").notNull(),
  requestedBy: text("requested_by"),
  createdAt: createdAt(),
});

/**
 * A company's bank settings in this database's environment (file header, ODFI, company
 * identification, funding and settlement accounts, cutoffs, SFTP target), sealed as one JSON
 * document with ENCRYPTION_KEY because it holds account numbers and SFTP credentials.
 */
export const bankSettings = sqliteTable("bank_settings", {
  companyId: text("company_id").primaryKey().references(() => companies.id),
  settingsSealed: text("settings_sealed").notNull(),
  /** The sealed document's SHA-256, so an audit row can say what changed without the secrets. */
  fingerprint: text("fingerprint").notNull(),
  /**
   * Whether the sealed settings hold a check account: readable without the key, for "offer only
   * what can be paid".
   */
  hasCheckAccount: integer("has_check_account", { mode: "boolean" }).notNull().default(false),
  updatedBy: text("updated_by"),
  updatedAt: integer("updated_at").notNull(),
  createdAt: createdAt(),
});

/**
 * One NACHA file: the content of a rail_batches row of the `ach` rail, immutable once built. The
 * content holds full account numbers, so it is sealed; its SHA-256 is of the plain file.
 */
export const achFiles = sqliteTable("ach_files", {
  batchId: text("batch_id").primaryKey().references(() => railBatches.id),
  companyId: text("company_id").notNull().references(() => companies.id),
  immediateOrigin: text("immediate_origin").notNull(),
  immediateDestination: text("immediate_destination").notNull(),
  /** The bank-local creation date (YYYY-MM-DD) the file ID modifier is counted in. */
  bankDate: text("bank_date").notNull(),
  fileIdModifier: text("file_id_modifier").notNull(),
  effectiveDate: text("effective_date").notNull(),
  cutoffKind: text("cutoff_kind", { enum: ["same_day", "next_day"] }).notNull(),
  /** The last moment the file may be transmitted for its effective date (the cutoff's window). */
  windowEndsAt: integer("window_ends_at").notNull(),
  /** The sealed content; '' when it is kept in ach_file_pieces (then `contentPieces` is set). */
  contentSealed: text("content_sealed").notNull(),
  /**
   * How many rows of ach_file_pieces hold the sealed content, in order; null for a file kept
   * whole in `contentSealed` (recorded before the pieces).
   */
  contentPieces: integer("content_pieces"),
  sha256: text("sha256").notNull(),
  byteSize: integer("byte_size").notNull(),
  entryHash: text("entry_hash").notNull(),
  creditTotalCents: integer("credit_total_cents").notNull(),
  debitTotalCents: integer("debit_total_cents").notNull(),
  entryCount: integer("entry_count").notNull(),
  /** The name the file was (or is to be) uploaded under. */
  fileName: text("file_name").notNull(),
  /** Set when its release waits for a second admin (over the configured total). */
  approvalId: text("approval_id"),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("ach_files_modifier").on(
    t.immediateOrigin,
    t.immediateDestination,
    t.bankDate,
    t.fileIdModifier,
  ),
  index("ach_files_company_created").on(t.companyId, t.createdAt),
]);

/**
 * A file's sealed content in pieces, written a piece per write unit before its ach_files row: a
 * catastrophe day's file in one commit held the service's thread for its fsync.
 */
export const achFilePieces = sqliteTable("ach_file_pieces", {
  batchId: text("batch_id").notNull().references(() => railBatches.id),
  part: integer("part").notNull(),
  content: text("content").notNull(),
}, (t) => [primaryKey({ columns: [t.batchId, t.part] })]);

/** The next 7-digit trace sequence of each ODFI in this environment. */
export const achTraceSequences = sqliteTable("ach_trace_sequences", {
  odfi: text("odfi").primaryKey(),
  nextSequence: integer("next_sequence").notNull(),
});

/** Every imported return or notice-of-change file, once: a file imported again changes nothing. */
export const achImports = sqliteTable("ach_imports", {
  id: text("id").primaryKey(),
  /** Null when the file names no company this database knows (reported, nothing applied). */
  companyId: text("company_id").references(() => companies.id),
  sha256: text("sha256").notNull().unique(),
  source: text("source", { enum: ["sftp", "cli", "console", "sandbox_bank"] }).notNull(),
  fileName: text("file_name").notNull(),
  returnCount: integer("return_count").notNull(),
  correctionCount: integer("correction_count").notNull(),
  appliedCount: integer("applied_count").notNull(),
  /** JSON: the entries reported and not applied (unmatched, malformed), each with its reason. */
  report: text("report").notNull(),
  importedBy: text("imported_by"),
  importedAt: integer("imported_at").notNull(),
  /**
   * JSON while the file's entries are applied a unit at a time: how many of them the import went
   * through and the companies they named ({"entries_done": n, "companies": [...]}); null once the
   * import is complete. A second import of the same file takes an unfinished one up where it stopped.
   */
  progress: text("progress"),
  /**
   * The file's content, sealed (a return file carries full account numbers), while the import is
   * unfinished: the resume job takes the import up from it. Null once the import is complete.
   */
  contentSealed: text("content_sealed"),
});

/**
 * Notices of change: the corrected details a company's bank reported for a (routing, account),
 * applied to later entries to the same account. `accountKey` is an HMAC of the original account
 * number (never the number itself); the corrected details are sealed.
 */
export const achCorrections = sqliteTable("ach_corrections", {
  companyId: text("company_id").notNull().references(() => companies.id),
  routingNumber: text("routing_number").notNull(),
  accountKey: text("account_key").notNull(),
  changeCode: text("change_code").notNull(),
  correctedSealed: text("corrected_sealed").notNull(),
  importId: text("import_id").notNull().references(() => achImports.id),
  createdAt: createdAt(),
}, (t) => [primaryKey({ columns: [t.companyId, t.routingNumber, t.accountKey] })]);

/** The loaded sanctions (OFAC SDN) list of this database: one version at a time. */
export const sanctionsLists = sqliteTable("sanctions_lists", {
  id: text("id").primaryKey(),
  sha256: text("sha256").notNull(),
  entryCount: integer("entry_count").notNull(),
  fileName: text("file_name").notNull(),
  loadedBy: text("loaded_by"),
  loadedAt: integer("loaded_at").notNull(),
  /** Null for the list in force; set when a newer list replaced it. */
  replacedAt: integer("replaced_at"),
});

export const sanctionsEntries = sqliteTable("sanctions_entries", {
  listId: text("list_id").notNull().references(() => sanctionsLists.id),
  /** The SDN's ent_num. */
  entryNumber: integer("entry_number").notNull(),
  name: text("name").notNull(),
  /** The name as the matcher compares it (lib/sanctions/rules.ts). */
  normalizedName: text("normalized_name").notNull(),
  sdnType: text("sdn_type").notNull(),
  program: text("program").notNull(),
}, (t) => [primaryKey({ columns: [t.listId, t.entryNumber, t.name] })]);

/** A payout held for sanctions review: the names that matched, and the operator's decision. */
export const sanctionsReviews = sqliteTable(
  "sanctions_reviews",
  {
    id: text("id").primaryKey(),
    companyId: text("company_id").notNull().references(() => companies.id),
    payoutId: text("payout_id").notNull().references(() => payouts.id),
    /** JSON: each screened name with the list entries it matched and their scores. */
    matches: text("matches").notNull(),
    listId: text("list_id").notNull(),
    /** canceled: the company canceled the payout while it was held; nobody decided. */
    status: text("status", { enum: ["open", "cleared", "rejected", "canceled"] }).notNull(),
    decidedBy: text("decided_by"),
    decidedAt: integer("decided_at"),
    reason: text("reason"),
    createdAt: createdAt(),
  },
  (
    t,
  ) => [
    index("sanctions_reviews_payout").on(t.payoutId),
    index("sanctions_reviews_status").on(t.status),
  ],
);

/**
 * Operators: the people who run the service (not API users, not payees). Installation-wide and
 * kept in the live database only, which both environments read; the test database has the table,
 * empty. Passwords are argon2id strings; the TOTP secret must stay usable, so it is sealed.
 */
export const operators = sqliteTable("operators", {
  id: text("id").primaryKey(),
  email: text("email").notNull().unique(),
  role: text("role", { enum: ["viewer", "clerk", "admin"] }).notNull(),
  /** JSON array of the company ids the operator is limited to; null: every company. */
  companyScope: text("company_scope"),
  passwordHash: text("password_hash").notNull(),
  /** Sealed with ENCRYPTION_KEY; null for an operator without a second factor (dev sandbox). */
  totpSecretSealed: text("totp_secret_sealed"),
  /** The last accepted TOTP time step: a code of that step or an earlier one is a replay. */
  totpLastStep: integer("totp_last_step"),
  /** Failed sign-ins (password or TOTP) since the last success or lock. */
  failedAttempts: integer("failed_attempts").notNull().default(0),
  lockedUntil: integer("locked_until"),
  disabledAt: integer("disabled_at"),
  createdBy: text("created_by"),
  createdAt: createdAt(),
});

/** Operator sign-ins: the token is random and kept only as its SHA-256. */
export const operatorSessions = sqliteTable("operator_sessions", {
  id: text("id").primaryKey(),
  tokenHash: text("token_hash").notNull().unique(),
  operatorId: text("operator_id").notNull().references(() => operators.id),
  totpVerified: integer("totp_verified", { mode: "boolean" }).notNull(),
  /** Idle expiry, moved forward by each use, never past absolute_expires_at. */
  expiresAt: integer("expires_at").notNull(),
  absoluteExpiresAt: integer("absolute_expires_at").notNull(),
  endedAt: integer("ended_at"),
  createdAt: createdAt(),
}, (t) => [index("operator_sessions_operator").on(t.operatorId)]);

/**
 * One-time enrollments: a new or reset operator sets their own password and TOTP through a code
 * sent to them (never shown to whoever created or reset them). Only the code's SHA-256 is kept;
 * a code works once, until it expires, and a newer one replaces it.
 */
export const operatorEnrollments = sqliteTable("operator_enrollments", {
  id: text("id").primaryKey(),
  operatorId: text("operator_id").notNull().references(() => operators.id),
  codeHash: text("code_hash").notNull().unique(),
  /** `invite` for a new operator, `reset` for one whose credentials an admin cleared. */
  purpose: text("purpose", { enum: ["invite", "reset"] }).notNull(),
  expiresAt: integer("expires_at").notNull(),
  usedAt: integer("used_at"),
  replacedAt: integer("replaced_at"),
  createdAt: createdAt(),
}, (t) => [index("operator_enrollments_operator").on(t.operatorId)]);

/**
 * Dual control: an action of a kind that needs a second admin waits here until another admin
 * approves it (then it runs in the same unit), rejects it, or it expires. Kept in the live
 * database with the operators. Secrets inside `payload` are sealed.
 */
export const approvals = sqliteTable("approvals", {
  id: text("id").primaryKey(),
  kind: text("kind").notNull(),
  environment: text("environment", { enum: ["test", "live"] }).notNull(),
  companyId: text("company_id").references(() => companies.id),
  /** What the action acts on (a funding, an operator's e-mail, a bank file). */
  objectId: text("object_id").notNull(),
  summary: text("summary").notNull(),
  payload: text("payload").notNull(),
  status: text("status", { enum: ["pending_approval", "approved", "rejected", "expired"] })
    .notNull(),
  requestedBy: text("requested_by").notNull().references(() => operators.id),
  requestedAt: integer("requested_at").notNull(),
  expiresAt: integer("expires_at").notNull(),
  decidedBy: text("decided_by").references(() => operators.id),
  decidedAt: integer("decided_at"),
  /** The approved action's result as JSON, or the reason given for a rejection. */
  outcome: text("outcome"),
}, (t) => [index("approvals_status_expires").on(t.status, t.expiresAt)]);

/**
 * The append-only audit log of one database: every operator change, written in the same unit as
 * the change. Each row carries the hash of the previous row and of its own canonical content, so a
 * row altered or removed breaks the chain. Triggers refuse UPDATE and DELETE; no code path does
 * either. operator_id names an operator of the live database, so it has no foreign key.
 */
export const auditLog = sqliteTable("audit_log", {
  seq: integer("seq").primaryKey(),
  id: text("id").notNull().unique(),
  at: integer("at").notNull(),
  environment: text("environment", { enum: ["test", "live"] }).notNull(),
  operatorId: text("operator_id"),
  operatorEmail: text("operator_email"),
  /** Where the change came from: `cli`, or `http <address>` for the admin endpoint. */
  origin: text("origin").notNull(),
  action: text("action").notNull(),
  objectType: text("object_type").notNull(),
  objectId: text("object_id"),
  companyId: text("company_id"),
  /** JSON with secrets masked; null when there was nothing before (or after). */
  before: text("before"),
  after: text("after"),
  prevHash: text("prev_hash").notNull(),
  hash: text("hash").notNull(),
}, (t) => [
  index("audit_log_at").on(t.at),
  index("audit_log_operator").on(t.operatorId, t.seq),
  index("audit_log_object").on(t.objectId, t.seq),
]);

/**
 * The check register of a company in this database's environment: every number it gave, once.
 * A payout paid by check (postal or digital) takes the next number when it is submitted; the
 * number stays with that submission whatever becomes of it. `issued` until the bank reports it
 * `paid`, an operator voids it, or it goes `stale` (CHECK_STALE_DAYS after issue).
 */
export const checks = sqliteTable("checks", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  checkNumber: integer("check_number").notNull(),
  payoutId: text("payout_id").notNull().references(() => payouts.id),
  /** The payout submission's idempotency reference (payout id + submission number). */
  reference: text("reference").notNull(),
  kind: text("kind", { enum: ["postal", "digital"] }).notNull(),
  amountCents: integer("amount_cents").notNull(),
  payeeName: text("payee_name").notNull(),
  /** The claim id printed as the memo. */
  memo: text("memo"),
  /** Postal checks: the postage code printed on the mailing line and carried in the check file. */
  postageCode: text("postage_code"),
  status: text("status", { enum: ["issued", "paid", "voided", "stale"] }).notNull(),
  /** Bank-local issue date, YYYY-MM-DD. */
  issueDate: text("issue_date").notNull(),
  issuedAt: integer("issued_at").notNull(),
  /** The positive-pay file that told the bank of the issue; null until one was built. */
  issueFileId: text("issue_file_id").references(() => railBatches.id),
  /** The print file the check is in (postal checks); null until one was built. */
  printFileId: text("print_file_id").references(() => railBatches.id),
  paidDate: text("paid_date"),
  paidAmountCents: integer("paid_amount_cents"),
  paidAt: integer("paid_at"),
  voidedAt: integer("voided_at"),
  voidReason: text("void_reason"),
  voidedBy: text("voided_by"),
  /** The positive-pay file that told the bank of the void; the payout is re-offered only after it was sent. */
  voidFileId: text("void_file_id").references(() => railBatches.id),
  staleAt: integer("stale_at"),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("checks_company_number").on(t.companyId, t.checkNumber),
  uniqueIndex("checks_reference").on(t.reference),
  index("checks_payout").on(t.payoutId),
  index("checks_company_status").on(t.companyId, t.status, t.issuedAt),
  check("checks_amount_positive", sql`${t.amountCents} > 0`),
  check("checks_number_positive", sql`${t.checkNumber} > 0`),
]);

/** The next check number of each company's check account in this environment. */
export const checkSequences = sqliteTable("check_sequences", {
  companyId: text("company_id").primaryKey().references(() => companies.id),
  nextNumber: integer("next_number").notNull(),
});

/**
 * A check file: the content of a rail_batches row of a check rail (`check_positive_pay`,
 * `check_print`), immutable once built, sealed because it holds the account number.
 */
export const checkFiles = sqliteTable("check_files", {
  batchId: text("batch_id").primaryKey().references(() => railBatches.id),
  companyId: text("company_id").notNull().references(() => companies.id),
  kind: text("kind", { enum: ["positive_pay", "print"] }).notNull(),
  /** A print file's positive-pay file: it is released only after that one was sent. */
  positivePayFileId: text("positive_pay_file_id").references(() => railBatches.id),
  contentSealed: text("content_sealed").notNull(),
  sha256: text("sha256").notNull(),
  byteSize: integer("byte_size").notNull(),
  fileName: text("file_name").notNull(),
  issueCount: integer("issue_count").notNull(),
  voidCount: integer("void_count").notNull(),
  totalCents: integer("total_cents").notNull(),
  createdAt: createdAt(),
}, (t) => [index("check_files_company_created").on(t.companyId, t.createdAt)]);

/** Every imported paid-items file, once per company: a file imported again changes nothing. */
export const checkPaidImports = sqliteTable("check_paid_imports", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  sha256: text("sha256").notNull(),
  source: text("source", { enum: ["sftp", "cli", "console", "sandbox_bank"] }).notNull(),
  fileName: text("file_name").notNull(),
  itemCount: integer("item_count").notNull(),
  matchedCount: integer("matched_count").notNull(),
  exceptionCount: integer("exception_count").notNull(),
  /** JSON: the items not matched cleanly, each with its reason. */
  report: text("report").notNull(),
  importedBy: text("imported_by"),
  importedAt: integer("imported_at").notNull(),
}, (t) => [uniqueIndex("check_paid_imports_sha").on(t.companyId, t.sha256)]);

/**
 * A paid item that did not match its check cleanly (another amount, a voided or stale check, an
 * unknown number): never completed silently; an operator resolves it, audited.
 */
export const checkExceptions = sqliteTable("check_exceptions", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  importId: text("import_id").notNull().references(() => checkPaidImports.id),
  checkNumber: integer("check_number").notNull(),
  /** Null for a number the register never gave. */
  checkId: text("check_id").references(() => checks.id),
  /** not_sent: paid before the positive-pay file carrying its issue was sent. */
  kind: text("kind", {
    enum: ["amount_mismatch", "voided", "stale", "unknown", "duplicate", "not_sent"],
  })
    .notNull(),
  paidAmountCents: integer("paid_amount_cents").notNull(),
  paidDate: text("paid_date").notNull(),
  status: text("status", { enum: ["open", "resolved"] }).notNull(),
  resolution: text("resolution"),
  /** The ledger transaction the resolution posted, if any. */
  ledgerTransactionId: text("ledger_transaction_id"),
  resolvedBy: text("resolved_by"),
  resolvedAt: integer("resolved_at"),
  createdAt: createdAt(),
}, (t) => [index("check_exceptions_company_status").on(t.companyId, t.status)]);

/** A company's PayPal Payouts settings in this environment (client id, secret, base URL, webhook id), sealed. */
export const paypalSettings = sqliteTable("paypal_settings", {
  companyId: text("company_id").primaryKey().references(() => companies.id),
  settingsSealed: text("settings_sealed").notNull(),
  fingerprint: text("fingerprint").notNull(),
  updatedBy: text("updated_by"),
  updatedAt: integer("updated_at").notNull(),
  createdAt: createdAt(),
});

/**
 * PayPal's side of a batch entry of the `paypal` rail (a PayPal or Venmo payout item): the item
 * PayPal made of it and the latest state PayPal reported when asked (never a webhook body).
 */
export const paypalItems = sqliteTable("paypal_items", {
  entryId: text("entry_id").primaryKey().references(() => railBatchEntries.id),
  companyId: text("company_id").notNull().references(() => companies.id),
  batchId: text("batch_id").notNull().references(() => railBatches.id),
  recipientWallet: text("recipient_wallet", { enum: ["PAYPAL", "VENMO"] }).notNull(),
  payoutItemId: text("payout_item_id"),
  transactionStatus: text("transaction_status"),
  /** PayPal's error name for a failed item (RECEIVER_UNREGISTERED, …). */
  errorName: text("error_name"),
  checkedAt: integer("checked_at"),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("paypal_items_item").on(t.payoutItemId),
  index("paypal_items_batch").on(t.batchId),
]);

/**
 * The sandbox's PayPal simulator (lib/paypal/simulator.ts): the batches it took, once per company
 * (its PayPal account) and sender_batch_id, as PayPal keeps them.
 */
export const sandboxPaypalBatches = sqliteTable("sandbox_paypal_batches", {
  payoutBatchId: text("payout_batch_id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  senderBatchId: text("sender_batch_id").notNull(),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("sandbox_paypal_batches_sender").on(t.companyId, t.senderBatchId)]);

/** The items of the simulator's batches, with the state it gave each when it took it. */
export const sandboxPaypalItems = sqliteTable("sandbox_paypal_items", {
  payoutItemId: text("payout_item_id").primaryKey(),
  payoutBatchId: text("payout_batch_id").notNull()
    .references(() => sandboxPaypalBatches.payoutBatchId),
  companyId: text("company_id").notNull().references(() => companies.id),
  /** The item's place in its batch, from 1. */
  position: integer("position").notNull(),
  senderItemId: text("sender_item_id").notNull(),
  recipientType: text("recipient_type").notNull(),
  recipientWallet: text("recipient_wallet", { enum: ["PAYPAL", "VENMO"] }).notNull(),
  receiver: text("receiver").notNull(),
  amountValue: text("amount_value").notNull(),
  /** SUCCESS, FAILED or UNCLAIMED when taken; RETURNED once cancelled. */
  transactionStatus: text("transaction_status").notNull(),
  errorName: text("error_name"),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("sandbox_paypal_items_position").on(t.payoutBatchId, t.position)]);

/** Verified PayPal webhook notices, once per PayPal event id; a job re-reads the item from PayPal. */
export const paypalNotices = sqliteTable("paypal_notices", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  eventType: text("event_type").notNull(),
  /** The payout item or batch id the notice names. */
  resourceId: text("resource_id").notNull(),
  receivedAt: integer("received_at").notNull(),
  processedAt: integer("processed_at"),
});

/**
 * Payment approval rules of a company in this database's environment: a payout whose amount is
 * over a rule's threshold waits in pending_approval until someone of the company approves it.
 * A rule may be narrowed to one line and to one payment method (among the payout's allowed
 * ones); one rule per company, line and method.
 */
export const paymentApprovalRules = sqliteTable("payment_approval_rules", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  /** The business line it applies to; '' for every line (a key column cannot be null). */
  lineId: text("line_id").notNull().default(""),
  /** The payment method id it applies to; 0 for every method. */
  paymentMethodId: integer("payment_method_id").notNull().default(0),
  /** A payout whose amount is over this waits for approval. */
  thresholdCents: integer("threshold_cents").notNull(),
  createdBy: text("created_by"),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("payment_approval_rules_scope").on(t.companyId, t.lineId, t.paymentMethodId),
]);

/**
 * The sandbox seed of a shared primary (dev mode): one row, the lock one seeding node takes in one
 * write (its lease frees it if the node dies), then the credentials it sealed with ENCRYPTION_KEY
 * for every other node to open (lib/sandbox/seed_store.ts).
 */
export const sandboxSeed = sqliteTable("__sandbox_seed", {
  id: integer("id").primaryKey(),
  holder: text("holder").notNull(),
  leaseUntil: integer("lease_until").notNull(),
  /** Null while the holder seeds. */
  credentialsSealed: text("credentials_sealed"),
}, (t) => [check("sandbox_seed_one_row", sql`${t.id} = 1`)]);

/**
 * What a failing writer writes to learn whether the storage takes writes again (readiness):
 * one row of padding at a time, the older ones deleted by the same probe.
 */
export const writeProbes = sqliteTable("write_probes", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  probedAt: integer("probed_at").notNull(),
  padding: blob("padding").notNull(),
});

/**
 * How far the console's payee index has come: `payee_search` (an FTS5 trigram table of each
 * payout's full name and e-mail, keyed by the payout's rowid, created by hand in the migration
 * since drizzle has no virtual tables) holds every payout up to `indexed_rowid`. An upkeep step of
 * the scheduler's sweep fills it in batches rather than a trigger, so a create does not pay for it;
 * the search scans the payouts past it, so no payout is missing while the index catches up.
 */
export const payeeSearchProgress = sqliteTable("payee_search_progress", {
  id: integer("id").primaryKey(),
  indexedRowid: integer("indexed_rowid").notNull(),
}, (t) => [check("payee_search_progress_one_row", sql`${t.id} = 1`)]);

/** A company's Lithic settings in this environment (API key, base URL, webhook secret, card rules), sealed. */
export const lithicSettings = sqliteTable("lithic_settings", {
  companyId: text("company_id").primaryKey().references(() => companies.id),
  settingsSealed: text("settings_sealed").notNull(),
  fingerprint: text("fingerprint").notNull(),
  updatedBy: text("updated_by"),
  updatedAt: integer("updated_at").notNull(),
  createdAt: createdAt(),
});

/**
 * A single-use virtual card Lithic issued for one submission of a virtual-card payout: its spend
 * limit (the net amount), when it expires, and what came back of it (the unspent balance
 * reclaimed at its close, posted once as a late return).
 */
export const virtualCards = sqliteTable(
  "virtual_cards",
  {
    reference: text("reference").primaryKey(),
    payoutId: text("payout_id").notNull().references(() => payouts.id),
    companyId: text("company_id").notNull().references(() => companies.id),
    cardToken: text("card_token").notNull(),
    lastFour: text("last_four").notNull(),
    spendLimitCents: integer("spend_limit_cents").notNull(),
    expiresAt: integer("expires_at").notNull(),
    /** Lithic's card state as last read from Lithic (OPEN, PAUSED, CLOSED, …). */
    state: text("state").notNull(),
    spentCents: integer("spent_cents"),
    reclaimedCents: integer("reclaimed_cents"),
    closedAt: integer("closed_at"),
    checkedAt: integer("checked_at"),
    createdAt: createdAt(),
  },
  (
    t,
  ) => [
    uniqueIndex("virtual_cards_card").on(t.cardToken),
    index("virtual_cards_payout").on(t.payoutId),
  ],
);

/**
 * The sandbox's Lithic (lib/cards/simulator_store.ts): each card it issued to a test company
 * without Lithic settings, as Lithic reports it now, with the answer first given under its
 * idempotency key, its transactions and its card-level auth rules (JSON, Lithic's shapes).
 */
export const sandboxLithicCards = sqliteTable(
  "sandbox_lithic_cards",
  {
    token: text("token").primaryKey(),
    companyId: text("company_id").notNull().references(() => companies.id),
    idempotencyKey: text("idempotency_key"),
    request: text("request").notNull(),
    answer: text("answer").notNull(),
    card: text("card").notNull(),
    transactions: text("transactions").notNull().default("[]"),
    authRules: text("auth_rules").notNull().default("[]"),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("sandbox_lithic_cards_key").on(t.companyId, t.idempotencyKey)],
);

/** Verified Lithic webhook notices, once per webhook-id; a job re-reads the card from Lithic. */
export const lithicNotices = sqliteTable("lithic_notices", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  eventType: text("event_type").notNull(),
  cardToken: text("card_token").notNull(),
  receivedAt: integer("received_at").notNull(),
});

/**
 * Every imported bank statement file (BAI2 or camt.053), once per company by SHA-256: a file
 * imported again changes nothing.
 */
export const statementImports = sqliteTable("statement_imports", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  sha256: text("sha256").notNull(),
  format: text("format", { enum: ["bai2", "camt.053"] }).notNull(),
  source: text("source", { enum: ["sftp", "cli", "console", "sandbox_bank"] }).notNull(),
  fileName: text("file_name").notNull(),
  /** The bank's own identifier of the file (BAI2 file id, camt.053 message id). */
  bankFileId: text("bank_file_id").notNull(),
  dayCount: integer("day_count").notNull(),
  lineCount: integer("line_count").notNull(),
  matchedCount: integer("matched_count").notNull(),
  exceptionCount: integer("exception_count").notNull(),
  /** JSON: the accounts the file reported and this import did not read, each with why. */
  report: text("report").notNull(),
  importedBy: text("imported_by"),
  importedAt: integer("imported_at").notNull(),
}, (t) => [uniqueIndex("statement_imports_sha").on(t.companyId, t.sha256)]);

/**
 * One account's day as a statement reported it, reconciled once: a later file reporting the same
 * account and day again is not read for it. The account number is kept only as an HMAC key and
 * its last four.
 */
export const statementDays = sqliteTable("statement_days", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  importId: text("import_id").notNull().references(() => statementImports.id),
  accountKey: text("account_key").notNull(),
  accountLastFour: text("account_last_four").notNull(),
  /** What the account is to the company: settlement (ACH and wires), check, or both. */
  accountRole: text("account_role", { enum: ["settlement", "check", "settlement_check", "other"] })
    .notNull(),
  statementDate: text("statement_date").notNull(),
  openingCents: integer("opening_cents"),
  closingCents: integer("closing_cents"),
  creditCents: integer("credit_cents").notNull(),
  debitCents: integer("debit_cents").notNull(),
  /** The net of what the service expected on the day (credits less debits). */
  expectedNetCents: integer("expected_net_cents").notNull(),
  lineCount: integer("line_count").notNull(),
  matchedCount: integer("matched_count").notNull(),
  exceptionCount: integer("exception_count").notNull(),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("statement_days_account_date").on(t.companyId, t.accountKey, t.statementDate),
  index("statement_days_company_date").on(t.companyId, t.statementDate),
]);

/** A statement's transaction line, with what it matched and why (null: an exception). */
export const statementLines = sqliteTable("statement_lines", {
  id: text("id").primaryKey(),
  dayId: text("day_id").notNull().references(() => statementDays.id),
  companyId: text("company_id").notNull().references(() => companies.id),
  /** The line of the file it was read from. */
  fileLine: integer("file_line").notNull(),
  direction: text("direction", { enum: ["credit", "debit"] }).notNull(),
  amountCents: integer("amount_cents").notNull(),
  typeCode: text("type_code").notNull(),
  kind: text("kind").notNull(),
  bankReference: text("bank_reference"),
  customerReference: text("customer_reference"),
  text: text("text").notNull(),
  matchKind: text("match_kind"),
  matchSubjectId: text("match_subject_id"),
  matchReason: text("match_reason"),
}, (t) => [index("statement_lines_day").on(t.dayId)]);

/**
 * A difference between the bank and the service: a line the bank reported that nothing expected
 * (`bank`), or a move the service expected that the bank did not report (`service`). It stays open
 * until an operator resolves it with a note, and, when the ledger must follow the bank, an
 * adjusting entry (in live, decided by a second admin).
 */
export const reconExceptions = sqliteTable("recon_exceptions", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  dayId: text("day_id").notNull().references(() => statementDays.id),
  statementDate: text("statement_date").notNull(),
  accountLastFour: text("account_last_four").notNull(),
  side: text("side", { enum: ["bank", "service"] }).notNull(),
  /** The line's kind (bank side) or the expected move's kind (service side). */
  kind: text("kind").notNull(),
  lineId: text("line_id").references(() => statementLines.id),
  subjectId: text("subject_id"),
  direction: text("direction", { enum: ["credit", "debit"] }).notNull(),
  amountCents: integer("amount_cents").notNull(),
  reason: text("reason").notNull(),
  status: text("status", { enum: ["open", "resolved"] }).notNull(),
  note: text("note"),
  ledgerTransactionId: text("ledger_transaction_id"),
  resolvedBy: text("resolved_by"),
  resolvedAt: integer("resolved_at"),
  createdAt: createdAt(),
}, (t) => [
  index("recon_exceptions_status").on(t.status, t.createdAt),
  index("recon_exceptions_company_status").on(t.companyId, t.status),
]);

/**
 * The signed daily trial balance of a business line: one statement per line and bank day, its
 * canonical JSON body (opening, movements by kind and closing of every account), chained by the
 * previous day's hash and signed with an ed25519 key kept outside the database.
 */
export const ledgerStatements = sqliteTable("ledger_statements", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  lineId: text("line_id").notNull().references(() => businessLines.id),
  statementDate: text("statement_date").notNull(),
  /** 1 for the line's first statement. */
  seq: integer("seq").notNull(),
  body: text("body").notNull(),
  prevHash: text("prev_hash").notNull(),
  hash: text("hash").notNull(),
  signature: text("signature").notNull(),
  createdAt: createdAt(),
}, (t) => [
  uniqueIndex("ledger_statements_line_date").on(t.lineId, t.statementDate),
  uniqueIndex("ledger_statements_line_seq").on(t.lineId, t.seq),
]);
/** An admin's dormancy period for one state and NAUPA property type, over the built-in table. */
export const unclaimedDormancy = sqliteTable("unclaimed_dormancy", {
  companyId: text("company_id").notNull().references(() => companies.id),
  state: text("state").notNull(),
  propertyType: text("property_type").notNull(),
  days: integer("days").notNull(),
  updatedAt: integer("updated_at").notNull(),
}, (t) => [
  primaryKey({ columns: [t.companyId, t.state, t.propertyType] }),
  check("unclaimed_dormancy_days_positive", sql`${t.days} > 0`),
]);

/** A due-diligence notice to the owner of a still-owed payout, and what came of it. */
export const unclaimedNotices = sqliteTable("unclaimed_notices", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  payoutId: text("payout_id").notNull().references(() => payouts.id),
  /** `email` (with the portal link) or `letter` (printed PDF to the address on file). */
  channel: text("channel", { enum: ["email", "letter"] }).notNull(),
  outcome: text("outcome", { enum: ["sent", "no_address", "responded"] }).notNull(),
  sentAt: integer("sent_at").notNull(),
  respondedAt: integer("responded_at"),
}, (t) => [index("unclaimed_notices_payout").on(t.payoutId)]);

/** A NAUPA report written for one state and year, and its remittance once filed. */
export const unclaimedReports = sqliteTable("unclaimed_reports", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  state: text("state").notNull(),
  reportYear: integer("report_year").notNull(),
  /** JSON array of the payout ids the file reports. */
  payoutIds: text("payout_ids").notNull(),
  totalCents: integer("total_cents").notNull(),
  sha256: text("sha256").notNull(),
  status: text("status", { enum: ["written", "remitted"] }).notNull(),
  createdAt: createdAt(),
  remittedAt: integer("remitted_at"),
}, (t) => [index("unclaimed_reports_company").on(t.companyId, t.state, t.reportYear)]);

/**
 * A company's Lob settings in this environment (API key, base URL, webhook secret, Lob's bank
 * account and return address), sealed; `provider_mails` (1: Lob mails its postal checks, 0: the
 * company prints them) is kept beside them so a create can read the choice without the key.
 */
export const lobSettings = sqliteTable("lob_settings", {
  companyId: text("company_id").primaryKey().references(() => companies.id),
  settingsSealed: text("settings_sealed").notNull(),
  fingerprint: text("fingerprint").notNull(),
  providerMails: integer("provider_mails").notNull().default(1),
  updatedBy: text("updated_by"),
  updatedAt: integer("updated_at").notNull(),
  createdAt: createdAt(),
});

/**
 * What became of a check Lob mails: its Lob id once known, and each tracking event once (from a
 * verified webhook or the polling fallback, keyed by Lob's event or tracking-event id).
 */
export const checkMailEvents = sqliteTable("check_mail_events", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  checkId: text("check_id").notNull(),
  payoutId: text("payout_id").notNull().references(() => payouts.id),
  lobCheckId: text("lob_check_id").notNull(),
  /** Lob's event type (`check.in_transit`, `check.returned_to_sender`, `check.deleted`, …). */
  type: text("type").notNull(),
  at: integer("at").notNull(),
  receivedAt: integer("received_at").notNull(),
}, (t) => [index("check_mail_events_check").on(t.checkId, t.at)]);

/** A company's Increase settings for instant deposit in this environment, sealed. */
export const increaseSettings = sqliteTable("increase_settings", {
  companyId: text("company_id").primaryKey().references(() => companies.id),
  settingsSealed: text("settings_sealed").notNull(),
  fingerprint: text("fingerprint").notNull(),
  updatedBy: text("updated_by"),
  updatedAt: integer("updated_at").notNull(),
  createdAt: createdAt(),
});

/**
 * What Increase made of one submission of an instant deposit payout: a push to the payee's debit
 * card (its card token and $0 validation) or a Real-Time Payments transfer to their bank account,
 * the transfer and the network it took.
 */
export const instantTransfers = sqliteTable("instant_transfers", {
  reference: text("reference").primaryKey(),
  payoutId: text("payout_id").notNull().references(() => payouts.id),
  companyId: text("company_id").notNull().references(() => companies.id),
  /** A push's card token and validation; null for a bank payment. */
  cardTokenId: text("card_token_id"),
  validationId: text("validation_id"),
  transferId: text("transfer_id").notNull(),
  /** The network it took: a card route (visa, mastercard, pulse), or rtp for a bank payment. */
  route: text("route").notNull(),
  /** Increase's status as last read from Increase. */
  status: text("status").notNull(),
  checks: integer("checks").notNull().default(0),
  checkedAt: integer("checked_at"),
  createdAt: createdAt(),
}, (t) => [uniqueIndex("instant_transfers_transfer").on(t.transferId)]);

/** Verified Increase webhook events, once per event id; a job re-reads the transfer from Increase. */
export const increaseNotices = sqliteTable("increase_notices", {
  id: text("id").primaryKey(),
  companyId: text("company_id").notNull().references(() => companies.id),
  category: text("category").notNull(),
  objectId: text("object_id").notNull(),
  receivedAt: integer("received_at").notNull(),
});

/**
 * The sandbox's Increase simulator, the provider's side in the test database: the cards its hosted
 * card field tokenized (its vault), the validations and transfers it made (each as the JSON
 * object its API answers, with the status the sandbox clock moved it to), and its Idempotency-Key
 * answers, so a repeated creation gets the first object after a restart too.
 */
export const increaseSimulatorCards = sqliteTable("increase_simulator_cards", {
  tokenId: text("token_id").primaryKey(),
  /**
   * The sandbox test card the typed card behaves as (a magic one, else 4000056655665556): the
   * number typed is never kept, even when someone types a real card into the sandbox.
   */
  cardNumber: text("card_number").notNull(),
  /**
   * The last day of the expiry month typed with the card (Increase's Card Token
   * `expiration_date`); cards tokenized before the field took an expiry report 2030-12-31.
   */
  expirationDate: text("expiration_date").notNull().default("2030-12-31"),
  createdAt: createdAt(),
});

export const increaseSimulatorObjects = sqliteTable("increase_simulator_objects", {
  id: text("id").primaryKey(),
  /** The company whose sandbox clock and webhooks the object belongs to. */
  companyId: text("company_id").notNull().references(() => companies.id),
  /** card_validation, card_push_transfer or real_time_payments_transfer. */
  type: text("type").notNull(),
  object: text("object").notNull(),
  createdAt: createdAt(),
});

export const increaseSimulatorIdempotency = sqliteTable("increase_simulator_idempotency", {
  /** The creation's path and its Idempotency-Key. */
  key: text("key").primaryKey(),
  requestBody: text("request_body").notNull(),
  objectId: text("object_id").notNull(),
  createdAt: createdAt(),
});
