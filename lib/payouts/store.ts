/**
 * Payouts on the database: every move goes through the state machine, and its new state, ledger
 * transaction, timeline row and outbox events are written in the caller's one write unit.
 */
import {
  columnsOf,
  json,
  keptText,
  multiRowInserts,
  orDefault,
  type RowMapper,
  rowMapper,
  text,
  valuesPlaceholders,
} from "../../db/rows.ts";
import type { ResultSet } from "@libsql/client";
import { disbursements, payouts, scheduledJobs } from "../../db/schema.ts";
import { type FeeSchedule, feesFor, holdFor } from "./fees.ts";
import { newId } from "../platform/keys.ts";
import { formatDollars } from "../platform/money.ts";
import {
  eventCatalogue,
  type EventKey,
  modalityOf,
  type PayoutStatus,
  surfaceAStatus,
} from "./states.ts";
import {
  lateReturn,
  type LateReturnRefusal,
  type MoneyInFlight,
  moveConsultsMoneyInFlight,
  type PayoutMove,
  type PayoutSnapshot,
  returnedRemittance,
  type ReturnedRemittanceRefusal,
  transition,
  type TransitionOutcome,
} from "./transition.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import {
  type DeliveryContext,
  readDeliveryContext,
  recordEvents,
} from "../webhooks/event_store.ts";
import {
  createdPayoutFacts,
  type CreatedPayoutNumbers,
  eventFactsOf,
  type PayoutEventFacts,
  type PayoutsRead,
  readCreatedPayoutNumbers,
  readPlainNewPayoutDocumentsShown,
  readWithEventFacts,
} from "../webhooks/event_snapshot.ts";
import { readFeeSchedule } from "./fee_store.ts";
import { isLedgerTransactionKind, type LedgerTransactionKind } from "../ledger/postings.ts";
import type { Transfer } from "../ledger/types.ts";
import {
  type LineAccounts,
  postTransaction,
  postTransactions,
  readLineAccounts,
  readLineBalances,
} from "../ledger/store.ts";
import { scheduleJob, scheduleJobs } from "../../db/scheduler_store.ts";
import { RUN_ALONE, type RunAlone, type WriteTx } from "../../db/writer.ts";
import { type PaymentApprovalRule, ruleHolding, rulesOfCompany } from "./approval_rules.ts";
import { mayTryAgainAfter, SANCTIONS_REVIEW_FAILURE } from "./policy.ts";
import { closeReviewsOfCanceledPayout } from "../sanctions/store.ts";
import { type DeadlineSettings, payByFor } from "../obligations/deadline.ts";
import { readObligationSettings } from "../obligations/store.ts";
import { ensureSweep } from "../obligations/sweep.ts";
import { moneyInFlight, voidQueuedEntry } from "../rails/batch.ts";
import { submissionReference } from "../rails/seam.ts";
import { voidUnsentCheck } from "../checks/register.ts";

export interface PayoutRow extends PayoutSnapshot {
  readonly id: string;
  readonly disbursementId: string;
  readonly companyId: string;
  readonly lineId: string;
  readonly payeeUuid: string;
  readonly payeeId: string | null;
  readonly email: string | null;
  readonly paymentMethodId: number | null;
  readonly allowedPaymentMethodIds: number[];
  readonly permissionRequiredFrom: string[];
  readonly methodDetails: Record<string, unknown>;
  readonly retryCount: number;
  /** Submissions to a rail so far: the next one's idempotency reference ends in this plus one. */
  readonly submissionCount: number;
  readonly failureReason: string | null;
  /** The date (YYYY-MM-DD) it must be paid by, or null: the offer's own expiry applies. */
  readonly payBy: string | null;
  /** When the deadline's fallback chose a method for the payee (kept after later moves). */
  readonly fellBackAt: number | null;
  /** When an offer of it fell due unchosen, or null. */
  readonly offerExpiredAt: number | null;
  readonly createdAt: number;
}

const payout = columnsOf(payouts);
const toPayout: RowMapper<PayoutRow> = rowMapper({
  id: payout.id,
  disbursementId: payout.disbursementId,
  companyId: payout.companyId,
  lineId: payout.lineId,
  payeeUuid: payout.payeeUuid,
  payeeId: payout.payeeId,
  email: payout.email,
  status: payout.status,
  amountCents: payout.amountCents,
  heldCents: payout.heldCents,
  payorFeeCents: payout.payorFeeCents,
  payeeFeeCents: payout.payeeFeeCents,
  serviceFeeCents: payout.serviceFeeCents,
  paymentMethodId: payout.paymentMethodId,
  allowedPaymentMethodIds: json<number[]>(payout.allowedPaymentMethodIds, "array"),
  permissionRequiredFrom: json<string[]>(payout.permissionRequiredFrom, "array"),
  methodDetails: orDefault(
    json<Record<string, unknown>, string | null>(payout.methodDetails, "object"),
    () => ({}),
  ),
  retryCount: payout.retryCount,
  submissionCount: payout.submissionCount,
  failureReason: payout.failureReason,
  payBy: payout.payBy,
  fellBackAt: payout.fellBackAt,
  offerExpiredAt: payout.offerExpiredAt,
  createdAt: payout.createdAt,
});

const PAYOUT_COLUMNS = toPayout.columns.join(", ");
// Texts every move runs, built once: a text built at each call is also hashed whole to find its
// kept statement.
const LOAD_PAYOUT = `SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE id = ?`;
const LOAD_PAYOUTS = `SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE id IN`;

const disbursement = columnsOf(disbursements);
const toFailedPayout = rowMapper({ id: payout.id, failureReason: payout.failureReason });
const toSubmissionCount = rowMapper({ count: payout.submissionCount });
const toDisbursementId = rowMapper({ id: disbursement.id });
const toSubjectId = rowMapper({ subjectId: columnsOf(scheduledJobs).subjectId });

/** The disbursement's side of an event's snapshot; the payee's columns are carried as read. */
const toEventDisbursement = rowMapper({
  kind: disbursement.kind,
  externalUuid: disbursement.externalUuid,
  claimId: disbursement.claimId,
  memo: disbursement.memo,
});

/** The ledger kind a move posts under: `payout.` and the move. */
export function ledgerKindOf(move: PayoutMove["kind"]): LedgerTransactionKind {
  const kind = `payout.${move}`;
  // The state machine gave this move transfers, so the postings module must know its kind.
  if (!isLedgerTransactionKind(kind)) {
    throw new Error(`${kind} posts transfers but is no ledger kind`);
  }
  return kind;
}

/** A payout by id, in a unit or (for an operator's checks before one) from the read client. */
export async function loadPayout(
  tx: Pick<WriteTx, "execute">,
  payoutId: string,
): Promise<PayoutRow | null> {
  const { rows } = await tx.execute({
    sql: LOAD_PAYOUT,
    args: [payoutId],
  });
  return rows[0] ? toPayout(rows[0]) : null;
}

/** The mailing address fields a postal check needs, as the portal takes them. */
export const MAILING_ADDRESS_FIELDS = ["address_one", "city", "state", "zip_code"] as const;

/** Whether the payout's own record holds a whole mailing address (the company or /v1 payee gave it). */
export async function payoutHasMailingAddress(
  tx: Pick<WriteTx, "execute">,
  payoutId: string,
): Promise<boolean> {
  const { rows } = await tx.execute({
    sql: `SELECT ${MAILING_ADDRESS_FIELDS.join(", ")} FROM payouts WHERE id = ?`,
    args: [payoutId],
  });
  return rows[0] !== undefined &&
    MAILING_ADDRESS_FIELDS.every((field) => String(rows[0][field] ?? "").trim() !== "");
}

/** Counts one more submission of the payout to a rail and returns its number (1 for the first). */
export async function countSubmission(tx: WriteTx, payoutId: string): Promise<number> {
  const { rows } = await tx.execute({
    sql:
      "UPDATE payouts SET submission_count = submission_count + 1 WHERE id = ? RETURNING submission_count",
    args: [payoutId],
  });
  if (!rows[0]) throw new Error(`countSubmission: no payout ${payoutId}`);
  return toSubmissionCount(rows[0]).count;
}

/** What a payout's events are written from besides the payout itself, read in one round trip. */
interface EventContext {
  readonly row: Readonly<Record<string, unknown>>;
  readonly facts: PayoutEventFacts;
  readonly deliveries: DeliveryContext;
}

interface EventScope {
  readonly payoutId: string;
  readonly disbursementId: string;
  readonly companyId: string;
  readonly lineId: string;
}

/** The disbursement's side of a new payout's event row, as its create inserted it. */
interface NewDisbursementRow {
  readonly kind: string;
  readonly external_uuid: string;
  readonly claim_id: string | null;
  readonly memo: string | null;
}

/**
 * The event context of a payout its create just wrote, before any other move of it: its row and
 * its disbursement's are as inserted, and its disbursement's payouts are the create's so far
 * (`statuses`), so only the rowids and the documents shown are read, with the deliveries. The
 * general read (a join of both rows, and an aggregate over the disbursement's payouts) cost a
 * create about as much as two of its inserts. The row's fields are in the general read's order:
 * the events' data carries them so.
 */
async function readCreatedEventContext(
  tx: WriteTx,
  row: NewPayoutRow,
  disbursement: NewDisbursementRow,
  statuses: readonly PayoutStatus[],
  now: number,
): Promise<EventContext> {
  const [numbers, deliveries] = await Promise.all([
    readCreatedPayoutNumbers(tx, String(row.id)),
    readDeliveryContext(tx, String(row.company_id), String(row.line_id), now),
  ]);
  return createdEventContext(row, disbursement, statuses, numbers, deliveries);
}

/** The event context of a payout its create just wrote, from its numbers and deliveries read. */
function createdEventContext(
  row: NewPayoutRow,
  disbursement: NewDisbursementRow,
  statuses: readonly PayoutStatus[],
  numbers: CreatedPayoutNumbers,
  deliveries: DeliveryContext,
): EventContext {
  return {
    row: {
      ...disbursement,
      payout_number: numbers.payoutNumber,
      disbursement_number: numbers.disbursementNumber,
      payee_type_id: row.payee_type_id,
      first_name: row.first_name,
      last_name: row.last_name,
      phone: row.phone,
      address_one: row.address_one,
      address_two: row.address_two,
      city: row.city,
      state: row.state,
      zip_code: row.zip_code,
      delivery_options: row.delivery_options,
      allowed_payment_method_ids: row.allowed_payment_method_ids,
      permission_required_from: row.permission_required_from,
      payment_method_settings: row.payment_method_settings,
      field_values: row.field_values,
      custom_document_uuids: row.custom_document_uuids,
      rail_reference: null,
      created_at: row.created_at,
      updated_at: row.updated_at,
    },
    facts: createdPayoutFacts(statuses, numbers.documentsShown),
    deliveries,
  };
}

/** What an event's data carries of its payout and disbursement, in this order. */
const EVENT_CONTEXT_READ: PayoutsRead = {
  columns: `p.id AS event_payout_id, d.kind, d.external_uuid, d.claim_id, d.memo,
    p.rowid AS payout_number, d.rowid AS disbursement_number, p.payee_type_id, p.first_name,
    p.last_name, p.phone, p.address_one, p.address_two, p.city, p.state, p.zip_code,
    p.delivery_options, p.allowed_payment_method_ids, p.permission_required_from,
    p.payment_method_settings, p.field_values, p.custom_document_uuids, p.rail_reference,
    p.created_at, p.updated_at`,
  from: "payouts p JOIN disbursements d ON d.id = p.disbursement_id",
};

/** The event contexts of several payouts, in one round trip (each line's deliveries read once). */
async function readEventContexts(
  tx: WriteTx,
  scopes: readonly EventScope[],
  now: number,
): Promise<Map<string, EventContext>> {
  const lines = [...new Map(scopes.map((s) => [`${s.companyId} ${s.lineId}`, s])).values()];
  // The rows and their facts in one statement (the second cost an offer about 7 µs).
  const [{ rows }, deliveries] = await Promise.all([
    tx.execute(readWithEventFacts(EVENT_CONTEXT_READ, scopes.map((s) => s.payoutId))),
    Promise.all(lines.map((s) => readDeliveryContext(tx, s.companyId, s.lineId, now))),
  ]);
  const deliveriesOf = new Map(lines.map((s, i) => [`${s.companyId} ${s.lineId}`, deliveries[i]]));
  const contextOf = new Map(rows.map((row) => {
    const { facts, rest: { event_payout_id: id, ...rest } } = eventFactsOf(row);
    return [String(id), { row: rest, facts }];
  }));
  return new Map(scopes.map((s) => [s.payoutId, {
    ...contextOf.get(s.payoutId)!,
    deliveries: deliveriesOf.get(`${s.companyId} ${s.lineId}`)!,
  }]));
}

/**
 * Appends the payout's outbox events; `data` is the snapshot webhooks will carry. `context`, when
 * the caller read it with its own reads (after every write the events describe), saves a trip.
 */
async function writeEvents(
  tx: WriteTx,
  payout: PayoutRow,
  events: readonly EventKey[],
  reason: string | null,
  now: number,
  ledgerTransactionId: string | null,
  context?: EventContext,
): Promise<void> {
  await writeEventsOf(tx, [{ payout, events, reason, ledgerTransactionId, context }], now);
}

/** The events of one payout's move, as writeEventsOf takes them. */
interface PayoutEvents {
  readonly payout: PayoutRow;
  readonly events: readonly EventKey[];
  readonly reason: string | null;
  readonly ledgerTransactionId: string | null;
  readonly context?: EventContext;
}

/** Appends several payouts' outbox events, as writeEvents does one's, in bulk. */
async function writeEventsOf(
  tx: WriteTx,
  items: readonly PayoutEvents[],
  now: number,
): Promise<void> {
  const eventful = items.filter((item) => item.events.length > 0);
  if (eventful.length === 0) return;
  const unread = eventful.filter((item) => !item.context).map(({ payout }) => ({
    payoutId: payout.id,
    disbursementId: payout.disbursementId,
    companyId: payout.companyId,
    lineId: payout.lineId,
  }));
  const read = unread.length > 0 ? await readEventContexts(tx, unread, now) : new Map();
  await recordEvents(
    tx,
    eventful.flatMap(({ payout, events, reason, ledgerTransactionId, context }) => {
      const { row, facts, deliveries } = context ?? read.get(payout.id)!;
      const disbursement = toEventDisbursement(row);
      const { kind: _kind, external_uuid: _uuid, claim_id: _claim, memo: _memo, ...payee } = row;
      // What the webhooks of both surfaces need, as it was when the event happened.
      const data = {
        payout_id: payout.id,
        disbursement_id: disbursement.kind === "v1"
          ? payout.disbursementId
          : disbursement.externalUuid,
        disbursement_kind: disbursement.kind,
        claim_id: disbursement.claimId,
        payee_uuid: payout.payeeUuid,
        status: payout.status,
        amount_cents: payout.amountCents,
        payment_method_id: payout.paymentMethodId,
        payor_fee_cents: payout.payorFeeCents,
        payee_fee_cents: payout.payeeFeeCents,
        service_fee_cents: payout.serviceFeeCents,
        reason,
        email: payout.email,
        registered_payee_id: payout.payeeId,
        memo: disbursement.memo,
        ledger_transaction_id: ledgerTransactionId,
        payee,
        ...facts,
      };
      return events.map((key) => ({
        event: {
          companyId: payout.companyId,
          lineId: payout.lineId,
          key,
          disbursementId: payout.disbursementId,
          payoutId: payout.id,
          payeeId: payout.payeeId,
          reason: `${eventCatalogue[key].name}: payout ${payout.id} is now ${payout.status}`,
          data,
        },
        context: deliveries,
      }));
    }),
    now,
  );
}

/**
 * An event of the payout that is not a move (an authorization party approved or declined), in
 * the same shape and outbox as the events of moves.
 */
export async function recordPayoutEvent(
  tx: WriteTx,
  payoutId: string,
  key: EventKey,
  reason: string,
  now: number,
): Promise<void> {
  const payout = await loadPayout(tx, payoutId);
  if (!payout) throw new Error(`recordPayoutEvent: no payout ${payoutId}`);
  await writeEvents(tx, payout, [key], reason, now, null);
}

/** A payout's timeline row: what moved it from where to where. */
type TransitionRow = readonly [
  payoutId: string,
  from: PayoutStatus | null,
  to: PayoutStatus,
  detail: string | null,
  at: number,
];

/** Timeline rows of moves: read only by later statements, so they ride with them. */
function recordTransitions(tx: WriteTx, rows: readonly TransitionRow[]): void {
  for (
    const statement of multiRowInserts(
      "INSERT INTO payout_transitions (payout_id, from_status, to_status, detail, at)",
      rows,
    )
  ) tx.defer(statement);
}

function recordTransition(
  tx: WriteTx,
  payoutId: string,
  from: PayoutStatus | null,
  to: PayoutStatus,
  detail: string | null,
  now: number,
): void {
  recordTransitions(tx, [[payoutId, from, to, detail, now]]);
}

export type MoveRefusal =
  | "payout_not_found"
  | "illegal_transition"
  | "not_cancelable"
  | "retry_not_allowed"
  | "fee_exceeds_amount"
  | "insufficient_funds"
  | "negative_balance"
  | "payout_in_flight"
  | "not_a_fallback";

export interface MoveOptions {
  /** Why, for the timeline and the failure reason (rail codes such as R03). */
  readonly detail?: string;
  /** Non-secret details of a selection (scenario, last four), kept on the payout. */
  readonly methodDetails?: Record<string, unknown>;
  /** The rail's reference of a send or retry, written with the move so its events carry it. */
  readonly railReference?: string;
}

/** The moves that choose the payout's method (the payee's, or the deadline's fallback). */
function chosenMethod(step: PayoutMove): number | null {
  return step.kind === "select" || step.kind === "fallback" || step.kind === "rechoose"
    ? step.paymentMethodId
    : null;
}

/** A selection brings its last four digits; a re-offer forgets the failed method's. */
function lastFourAfter(step: PayoutMove, options: MoveOptions, payout: PayoutRow): string | null {
  if (chosenMethod(step) !== null) {
    const lastFour = options.methodDetails?.last_four;
    return typeof lastFour === "string" ? lastFour : null;
  }
  if (step.kind === "reoffer") return null;
  const kept = payout.methodDetails.last_four;
  return typeof kept === "string" ? kept : null;
}

/** The mark a `payout.submit` job carries from the unit that hands its payout to a provider. */
export const SUBMISSION_CALLING = "calling";
/** Where a `payout.submit` job keeps its rail's terms, decided at its first attempt. */
export const SUBMISSION_TERMS = "terms";

/**
 * The rail entry of the payout's current submission while it holds the money in flight, or null.
 * A per-payout rail has no entry: its submission is in flight from the unit that hands it to the
 * provider (its `payout.submit` job marked calling) until the answer is recorded; a call that
 * failed leaves it so until a retry asks again (the provider may have it).
 */
export async function payoutMoneyInFlight(
  tx: Pick<WriteTx, "execute">,
  payout: Pick<PayoutRow, "id" | "submissionCount" | "paymentMethodId">,
): Promise<MoneyInFlight | null> {
  if (payout.submissionCount === 0) return null;
  const entry = await moneyInFlight(tx, submissionReference(payout.id, payout.submissionCount));
  if (entry !== null) return entry;
  const { rows } = await tx.execute({
    sql: `SELECT 1 FROM scheduled_jobs
          WHERE done_at IS NULL AND kind = 'payout.submit' AND subject_id = ?
            AND json_extract(payload, '$.submission') = ? AND json_extract(payload, '$.calling') = 1
          LIMIT 1`,
    args: [payout.id, payout.submissionCount],
  });
  if (rows.length === 0) return null;
  const method = payout.paymentMethodId === null ? null : modalityOf(payout.paymentMethodId);
  return { stage: "transmitting", rail: method?.code ?? "payout", batchId: null };
}

/** Applies one move: state machine, ledger, payout row, timeline and events. */
export async function applyMove(
  tx: WriteTx,
  payoutId: string,
  step: PayoutMove,
  now: number,
  options: MoveOptions = {},
): Promise<Result<PayoutRow, MoveRefusal>> {
  const moved = await applyMoves(tx, [{ payoutId, step, options }], now);
  return moved.ok ? ok(moved.value[0]) : moved;
}

/** One payout's move, as applyMoves takes it. */
export interface MoveRequest {
  readonly payoutId: string;
  readonly step: PayoutMove;
  readonly options?: MoveOptions;
}

/** The payouts of `ids` that exist, by id, in one read. */
export async function loadPayouts(
  tx: Pick<WriteTx, "execute">,
  ids: readonly string[],
): Promise<Map<string, PayoutRow>> {
  if (ids.length === 0) return new Map();
  const { rows } = await tx.execute({
    sql: keptText(
      LOAD_PAYOUTS,
      ids.length,
      () => `${LOAD_PAYOUTS} (${ids.map(() => "?").join(", ")})`,
    ),
    args: [...ids],
  });
  return new Map(rows.map((row) => {
    const payout = toPayout(row);
    return [payout.id, payout];
  }));
}

/**
 * Applies several payouts' moves, as applyMove applies one: the state machine decides each move
 * from its payout alone, and the writing is set-based (their ledger transactions posted together,
 * one UPDATE of their rows guarded by the state each was decided from, one statement of timeline
 * rows, their events in bulk). A refusal of any refuses all, with no write when the state machine
 * refused. Returns the payouts as moved, in the order asked; a payout is asked at most once.
 */
export async function applyMoves(
  tx: WriteTx,
  requests: readonly MoveRequest[],
  now: number,
): Promise<Result<PayoutRow[], MoveRefusal>> {
  const loaded = await loadPayouts(tx, requests.map((request) => request.payoutId));
  if (new Set(requests.map((request) => request.payoutId)).size !== requests.length) {
    throw new Error("applyMoves: a payout is asked to move twice at once");
  }
  const decided = [];
  for (const { payoutId, step, options = {} } of requests) {
    const payout = loaded.get(payoutId);
    if (!payout) return refuse("payout_not_found", `no payout ${payoutId}`);
    const inFlight = moveConsultsMoneyInFlight(step.kind)
      ? await payoutMoneyInFlight(tx, payout)
      : null;
    const moved = transition({
      ...payout,
      inFlight,
      fellBack: payout.methodDetails.fallback === true,
      expiredUnchosen: payout.offerExpiredAt !== null,
    }, step);
    if (!moved.ok) return moved;
    decided.push({ payout, step, options, outcome: moved.value });
  }
  for (const { payout, step, outcome } of decided) {
    if (!outcome.voidsQueuedEntry) continue;
    const reference = submissionReference(payout.id, payout.submissionCount);
    await voidQueuedEntry(tx, reference);
    await voidUnsentCheck(tx, reference, `payout ${step.kind} before the cutoff`, now);
  }
  const posting = decided.filter(({ outcome }) => outcome.transfers.length > 0);
  const ledgerTransactionIds = new Map<string, string>();
  if (posting.length > 0) {
    const posted = await postTransactions(
      tx,
      posting.map(({ payout, step, outcome }) => ({
        companyId: payout.companyId,
        lineId: payout.lineId,
        kind: ledgerKindOf(step.kind),
        payoutId: payout.id,
        transfers: outcome.transfers,
        postedAt: now,
      })),
    );
    if (!posted.ok) return posted;
    posting.forEach(({ payout }, i) =>
      ledgerTransactionIds.set(payout.id, posted.value.transactionIds[i])
    );
  }
  const updated = await updateMovedPayouts(tx, decided, now);
  for (const disbursementId of new Set(decided.map(({ payout }) => payout.disbursementId))) {
    tx.changed(disbursementId);
  }
  for (const { payout, step } of decided) {
    // A payout canceled while held for sanctions review leaves nothing for an operator to decide.
    if (payout.status === "in_review" && step.kind === "cancel") {
      await closeReviewsOfCanceledPayout(tx, payout.id, now);
    }
  }
  recordTransitions(
    tx,
    decided.map(({ payout, options, outcome }) => [
      payout.id,
      payout.status,
      outcome.status,
      options.detail ?? null,
      now,
    ]),
  );
  await writeEventsOf(
    tx,
    decided.map(({ payout, options, outcome }) => ({
      payout: updated.get(payout.id)!,
      events: outcome.events,
      reason: options.detail ?? null,
      ledgerTransactionId: ledgerTransactionIds.get(payout.id) ?? null,
    })),
    now,
  );
  return ok(decided.map(({ payout }) => updated.get(payout.id)!));
}

/** Payouts one UPDATE moves at most (17 values each, under the statement's parameter limit). */
const MOVED_PAYOUTS_PER_UPDATE_MAX = 1000;

/** The columns a move sets, by parameter number as updateMovedPayouts lists a payout's values. */
const MOVED_COLUMNS = (value: (n: number) => string) =>
  `status = ${value(3)}, held_cents = ${value(4)},
   payor_fee_cents = ${value(5)}, payee_fee_cents = ${value(6)},
   service_fee_cents = ${value(7)}, payment_method_id = ${value(8)},
   method_details = ${value(9)}, method_last_four = ${value(10)},
   failure_reason = ${value(11)}, retry_count = ${value(12)}, updated_at = ${value(17)},
   last_failed_at = CASE WHEN ${value(13)} THEN ${value(17)} ELSE last_failed_at END,
   last_failure_method_id = CASE WHEN ${value(13)} THEN payment_method_id
     ELSE last_failure_method_id END,
   last_failure_last_four = CASE WHEN ${value(13)} THEN method_last_four
     ELSE last_failure_last_four END,
   rail_reference = coalesce(${value(14)}, rail_reference),
   fell_back_at = CASE WHEN ${value(15)} THEN ${value(17)} ELSE fell_back_at END,
   offer_expired_at = CASE WHEN ${value(16)} THEN ${value(17)} ELSE offer_expired_at END`;

/**
 * One payout's move, by id: a third of the time of the page's form (its VALUES table joined, its
 * rows returned) for the moves that move one payout (an offer, a selection, a cancel).
 */
const UPDATE_MOVED_PAYOUT = `UPDATE payouts SET ${MOVED_COLUMNS((n) => `?${n}`)}
  WHERE id = ?1 AND status = ?2`;

/** A page of payouts' moves in one statement, each row guarded by the state it was decided from. */
const UPDATE_MOVED_PAYOUTS = (count: number) =>
  `UPDATE payouts SET ${MOVED_COLUMNS((n) => `m.column${n}`)}
   FROM (VALUES ${valuesPlaceholders(17, count)}) AS m
   WHERE payouts.id = m.column1 AND payouts.status = m.column2
   RETURNING ${PAYOUT_COLUMNS}`;

/**
 * The payout as its move's UPDATE left it: the row the unit read, with what the move set (a
 * payout's values as updateMovedPayouts lists them).
 */
function movedPayout(payout: PayoutRow, values: readonly unknown[]): PayoutRow {
  const number = (index: number) => values[index] as number;
  const at = number(16);
  return {
    ...payout,
    status: values[2] as PayoutStatus,
    heldCents: number(3),
    payorFeeCents: number(4),
    payeeFeeCents: number(5),
    serviceFeeCents: number(6),
    paymentMethodId: values[7] as number | null,
    methodDetails: JSON.parse(values[8] as string),
    failureReason: values[10] as string | null,
    retryCount: number(11),
    fellBackAt: number(14) ? at : payout.fellBackAt,
    offerExpiredAt: number(15) ? at : payout.offerExpiredAt,
  };
}

/**
 * Writes the decided moves' payout rows, a page of payouts per UPDATE, each guarded by the state
 * it was decided from. A payout no longer in that state is a programmer error (the unit read it):
 * it throws, and the unit writes nothing.
 */
async function updateMovedPayouts(
  tx: WriteTx,
  decided: readonly {
    payout: PayoutRow;
    step: PayoutMove;
    options: MoveOptions;
    outcome: TransitionOutcome;
  }[],
  now: number,
): Promise<Map<string, PayoutRow>> {
  const rows = decided.map(({ payout, step, options, outcome }) => {
    // The row's method and last four before this move are the failed ones (read by the UPDATE).
    const failing = step.kind === "fail" || step.kind === "rail_refused" ||
      step.kind === "reject_review";
    const failureReason = step.kind === "fail" || step.kind === "rail_refused"
      ? step.reason
      : step.kind === "reject_review"
      ? SANCTIONS_REVIEW_FAILURE
      : payout.failureReason;
    return [
      payout.id,
      payout.status,
      outcome.status,
      outcome.heldCents,
      outcome.fees.payorFeeCents,
      outcome.fees.payeeFeeCents,
      outcome.fees.serviceFeeCents,
      chosenMethod(step) ?? (step.kind === "reoffer" ? null : payout.paymentMethodId),
      JSON.stringify(
        chosenMethod(step) !== null ? options.methodDetails ?? {} : payout.methodDetails,
      ),
      lastFourAfter(step, options, payout),
      failureReason,
      payout.retryCount + (step.kind === "retry" ? 1 : 0),
      failing ? 1 : 0,
      options.railReference ?? null,
      step.kind === "fallback" ? 1 : 0,
      step.kind === "hold_owed" || step.kind === "expire_offer" || step.kind === "fallback" ? 1 : 0,
      now,
    ];
  });
  const updated = new Map<string, PayoutRow>();
  if (rows.length === 1) {
    const written = await tx.execute({ sql: UPDATE_MOVED_PAYOUT, args: rows[0] });
    if (written.rowsAffected === 1) {
      const payout = movedPayout(decided[0].payout, rows[0]);
      updated.set(payout.id, payout);
    }
  }
  for (let at = 0; rows.length > 1 && at < rows.length; at += MOVED_PAYOUTS_PER_UPDATE_MAX) {
    const page = rows.slice(at, at + MOVED_PAYOUTS_PER_UPDATE_MAX);
    const { rows: written } = await tx.execute({
      sql: UPDATE_MOVED_PAYOUTS(page.length),
      args: page.flat(),
    });
    for (const row of written) {
      const payout = toPayout(row);
      updated.set(payout.id, payout);
    }
  }
  if (updated.size !== decided.length) {
    const moved = decided.find(({ payout }) => !updated.has(payout.id))!.payout;
    throw new Error(`payout ${moved.id} left ${moved.status} while its move was decided`);
  }
  return updated;
}

/**
 * Adds one fact the rail learned to the payout's method details (the network an instant deposit
 * took), shown on both surfaces with the rest of them.
 */
export async function recordMethodDetail(
  tx: WriteTx,
  payoutId: string,
  name: string,
  value: string,
): Promise<void> {
  await tx.execute({
    sql: "UPDATE payouts SET method_details = json_set(method_details, ?, ?) WHERE id = ?",
    args: [`$.${name}`, value, payoutId],
  });
}

/** What a late return did: the payout (still completed), the cents back in available, the posting. */
export interface LateReturn {
  readonly payout: PayoutRow;
  readonly returnedCents: number;
  readonly ledgerTransactionId: string;
}

/**
 * Records money of a completed payout that came back after completion (`reason`: the rail's
 * code, such as R10, or `refunded`), in the caller's unit: the state machine's `lateReturn`
 * decides the transfers, posted as `payout.late_return`; the payout stays completed, its timeline
 * gets a completed → completed row with the reason and its events a `returned`. Nothing is offered
 * again and no waiting disbursement is released: the money stays owed to the payee, counted as
 * unclaimed property from now (its due-diligence sweep is scheduled) until it is remitted. The
 * live rails' return imports, the card rail's close and the operator command call it.
 */
export async function recordLateReturn(
  tx: WriteTx,
  payoutId: string,
  reason: string,
  now: number,
  options: { readonly returnedCents?: number } = {},
): Promise<Result<LateReturn, "payout_not_found" | LateReturnRefusal>> {
  const payout = await loadPayout(tx, payoutId);
  if (!payout) return refuse("payout_not_found", `no payout ${payoutId}`);
  const earlier = await tx.execute({
    // Only a late return writes a timeline row that leaves completed.
    sql:
      "SELECT 1 FROM payout_transitions WHERE payout_id = ? AND from_status = 'completed' LIMIT 1",
    args: [payoutId],
  });
  const decided = lateReturn(payout, {
    returnedBefore: earlier.rows.length > 0,
    returnedCents: options.returnedCents,
  });
  if (!decided.ok) return decided;
  const posted = await postAfterCompletion(tx, payout, {
    kind: "payout.late_return",
    ...decided.value,
    detail: reason,
  }, now);
  // The return only adds to available, so the ledger has no reason to refuse it.
  if (!posted.ok) {
    throw new Error(`late return of ${payoutId} refused by the ledger: ${posted.message}`);
  }
  // The money is still the payee's: unclaimed property from now, with its due diligence.
  await ensureSweep(tx, payout.companyId, now, now);
  return ok({
    payout: posted.value.payout,
    returnedCents: decided.value.transfers.reduce((sum, t) => sum + t.amountCents, 0),
    ledgerTransactionId: posted.value.ledgerTransactionId,
  });
}

/**
 * Money of a completed payout that moves with no move of the payout (its late return, that
 * money's remittance), in the caller's unit: the transfers posted as `kind`, a completed →
 * completed timeline row with `detail`, and the events with the same reason.
 */
async function postAfterCompletion(
  tx: WriteTx,
  payout: PayoutRow,
  entry: {
    readonly kind: "payout.late_return" | "payout.escheat";
    readonly transfers: Transfer[];
    readonly events: EventKey[];
    readonly detail: string;
  },
  now: number,
): Promise<
  Result<
    { payout: PayoutRow; ledgerTransactionId: string },
    "insufficient_funds" | "negative_balance"
  >
> {
  const posted = await postTransaction(tx, {
    companyId: payout.companyId,
    lineId: payout.lineId,
    kind: entry.kind,
    payoutId: payout.id,
    transfers: entry.transfers,
    postedAt: now,
  });
  if (!posted.ok) return posted;
  const { rows } = await tx.execute({
    sql: `UPDATE payouts SET updated_at = ? WHERE id = ? RETURNING ${PAYOUT_COLUMNS}`,
    args: [now, payout.id],
  });
  tx.changed(payout.disbursementId);
  const updated = toPayout(rows[0]);
  recordTransition(tx, payout.id, "completed", "completed", entry.detail, now);
  await writeEvents(tx, updated, entry.events, entry.detail, now, posted.value.transactionId);
  return ok({ payout: updated, ledgerTransactionId: posted.value.transactionId });
}

/** Why money of a completed payout that came back could not be remitted. */
export type ReturnedMoneyRefusal =
  | "payout_not_found"
  | "not_returned"
  | ReturnedRemittanceRefusal
  | "insufficient_funds"
  | "negative_balance";

/**
 * Remits money of a completed payout that came back to a state as unclaimed property
 * (`detail` says where, for the timeline and the event), in the caller's unit: the state
 * machine's `returnedRemittance` decides the transfers, posted as `payout.escheat`; the payout
 * stays completed, its timeline gets a completed → completed row and its events an `escheated`.
 * Refused when the payout has no late return, or the ledger refuses (available short).
 */
export async function remitReturnedMoney(
  tx: WriteTx,
  payoutId: string,
  remittance: { readonly amountCents: number; readonly detail: string },
  now: number,
): Promise<Result<{ ledgerTransactionId: string }, ReturnedMoneyRefusal>> {
  const payout = await loadPayout(tx, payoutId);
  if (!payout) return refuse("payout_not_found", `no payout ${payoutId}`);
  const { rows: returns } = await tx.execute({
    sql: `SELECT sum(e.amount_cents) AS cents FROM ledger_transactions t
            JOIN ledger_entries e ON e.transaction_id = t.id
            JOIN ledger_accounts a ON a.id = e.account_id
          WHERE t.payout_id = ? AND t.kind = 'payout.late_return' AND a.code = 'available'`,
    args: [payoutId],
  });
  if (returns[0]?.cents === null || returns[0]?.cents === undefined) {
    return refuse("not_returned", `no money of payout ${payoutId} came back after completion`);
  }
  const decided = returnedRemittance(payout, {
    returnedCents: Number(returns[0].cents),
    remittedCents: remittance.amountCents,
  });
  if (!decided.ok) return decided;
  const posted = await postAfterCompletion(tx, payout, {
    kind: "payout.escheat",
    ...decided.value,
    detail: remittance.detail,
  }, now);
  return posted.ok ? ok({ ledgerTransactionId: posted.value.ledgerTransactionId }) : posted;
}

export interface NewPayout {
  readonly payeeUuid: string;
  readonly payeeId?: string | null;
  readonly amountCents: number;
  readonly allowedPaymentMethodIds: readonly number[];
  readonly permissionRequiredFrom?: readonly string[];
  readonly payee?: Readonly<Record<string, string | number | null>>;
  readonly deliveryOptions?: unknown;
  readonly fieldValues?: unknown;
  readonly paymentMethodSettings?: unknown;
  readonly customDocumentUuids?: readonly string[];
}

/** A Surface A disbursement, a Simple Payment, or a /v1 disbursement. */
export type DisbursementKind = typeof disbursements.$inferSelect.kind;

export interface NewDisbursement {
  readonly companyId: string;
  readonly lineId: string;
  readonly kind: DisbursementKind;
  readonly externalUuid: string;
  readonly requestFingerprint: string;
  readonly largeDisbursement: boolean;
  readonly claimId?: string | null;
  readonly payorUserId?: string | null;
  readonly memo?: string | null;
  readonly metadata?: Record<string, string>;
  /** The date (YYYY-MM-DD) every payout must be paid by; absent, the company's default applies. */
  readonly payBy?: string | null;
  readonly payouts: readonly NewPayout[];
}

/** The columns a create writes of a new payout. */
const NEW_PAYOUT_COLUMNS = [
  "id",
  "disbursement_id",
  "company_id",
  "line_id",
  "payee_uuid",
  "payee_id",
  "payee_type_id",
  "first_name",
  "last_name",
  "email",
  "phone",
  "address_one",
  "address_two",
  "city",
  "state",
  "zip_code",
  "delivery_options",
  "allowed_payment_method_ids",
  "permission_required_from",
  "field_values",
  "payment_method_settings",
  "custom_document_uuids",
  "amount_cents",
  "held_cents",
  "status",
  "pay_by",
  "created_at",
  "updated_at",
] as const;
type NewPayoutRow = Record<typeof NEW_PAYOUT_COLUMNS[number], string | number | null>;

const INSERT_PAYOUT_HEAD = `INSERT INTO payouts (${NEW_PAYOUT_COLUMNS.join(", ")})`;
const INSERT_PAYOUT = `${INSERT_PAYOUT_HEAD}
  VALUES (${NEW_PAYOUT_COLUMNS.map(() => "?").join(", ")})`;

/** The defaults of the columns a payout's row is read by (toPayout) that a create leaves out. */
const NEW_PAYOUT_DEFAULTS = {
  payor_fee_cents: 0,
  payee_fee_cents: 0,
  service_fee_cents: 0,
  payment_method_id: null,
  method_details: null,
  retry_count: 0,
  submission_count: 0,
  failure_reason: null,
  fell_back_at: null,
  offer_expired_at: null,
};

/** What a create reads before it writes: the company's fees, the line's accounts, its deadlines. */
export type CreateReads = readonly [FeeSchedule, LineAccounts, DeadlineSettings];

/** Reads what a create needs before it writes (to ride with the caller's own reads). */
export function readCreateReads(
  tx: WriteTx,
  companyId: string,
  lineId: string,
): Promise<CreateReads> {
  return Promise.all([
    readFeeSchedule(tx, companyId),
    readLineAccounts(tx, lineId),
    readObligationSettings(tx, companyId),
  ]);
}

/** What a caller of createDisbursement read already, and what it reads of the result. */
export interface CreateOptions<R> {
  /** readCreateReads, read with the caller's own reads. */
  readonly reads?: CreateReads;
  /**
   * Reads the created disbursement (the caller's answer). When nothing after the last payout's
   * events changes what it reads (no endorsement is requested), it rides with that payout's
   * reads instead of a round trip of its own.
   */
  readonly readBack?: (disbursementId: string) => Promise<R>;
}

/**
 * Whether a disbursement may be created against the line's accounts as read: refused when a
 * payout's amount does not cover a payee fee, or when available is short (unless it is large, and
 * then it waits in pending_funds with nothing held). Each payout's hold is its amount plus the
 * highest payor + service fee of its allowed methods.
 */
function decideCreate(
  input: NewDisbursement,
  schedule: FeeSchedule,
  accounts: LineAccounts,
): Result<
  { holds: number[]; totalHold: number; waits: boolean },
  "insufficient_funds" | "amount_below_payee_fee"
> {
  for (const [index, payout] of input.payouts.entries()) {
    const methodId = payout.allowedPaymentMethodIds.find((id) =>
      feesFor(schedule, id).payeeFeeCents >= payout.amountCents
    );
    if (methodId !== undefined) {
      return refuse(
        "amount_below_payee_fee",
        `payee ${payout.payeeUuid}: amount ${
          formatDollars(payout.amountCents)
        } does not cover the payee fee ${
          formatDollars(feesFor(schedule, methodId).payeeFeeCents)
        } of payment method ${methodId}`,
        { field: `payees.${index}.amount` },
      );
    }
  }
  const holds = input.payouts.map((p) =>
    holdFor(p.amountCents, p.allowedPaymentMethodIds, schedule)
  );
  const totalHold = holds.reduce((sum, hold) => sum + hold, 0);
  const available = accounts.balances.available;
  // A funding the bank took back after it cleared is owed first: new payouts wait until covered.
  const owed = -accounts.balances.funding_shortfall;
  if (owed > 0 && !input.largeDisbursement) {
    return refuse(
      "insufficient_funds",
      `the line owes ${
        formatDollars(owed)
      } of an ACH funding the bank returned after it cleared; new payouts wait until a credit of the line covers it`,
      { details: { available_cents: available, needed_cents: totalHold, owed_cents: owed } },
    );
  }
  const waits = owed > 0 || totalHold > available;
  if (waits && !input.largeDisbursement) {
    return refuse(
      "insufficient_funds",
      `available is ${formatDollars(available)}; this disbursement needs ${
        formatDollars(totalHold)
      } (short by ${formatDollars(totalHold - available)})`,
      {
        details: {
          available_cents: available,
          needed_cents: totalHold,
          shortfall_cents: totalHold - available,
        },
      },
    );
  }
  return ok({ holds, totalHold, waits });
}

const INSERT_DISBURSEMENT =
  `INSERT INTO disbursements (id, company_id, line_id, kind, external_uuid, claim_id,
    large_disbursement, payor_user_id, request_fingerprint, memo, metadata, created_at)`;

/**
 * What the inserts of disbursements and payouts give back: each row's rowid, its number in
 * Surface A payloads. Every insert of INSERT_DISBURSEMENT carries it (its texts are kept by that
 * head), so creates written together need no read of their numbers.
 */
const NUMBERED = " RETURNING id, rowid AS number";

/** A created payout's numbers, as its batch's NUMBERED inserts gave them back. */
function numberedOf(
  payout: PayoutRow,
  payoutNumbers: ReadonlyMap<string, number>,
  disbursementNumbers: ReadonlyMap<string, number>,
  documentsShown: number,
): CreatedPayoutNumbers {
  const payoutNumber = payoutNumbers.get(payout.id);
  const disbursementNumber = disbursementNumbers.get(payout.disbursementId);
  if (payoutNumber === undefined || disbursementNumber === undefined) {
    throw new Error(`payout ${payout.id}: its insert gave back no number`);
  }
  return { payoutNumber, disbursementNumber, documentsShown };
}

/** Collects the numbers a NUMBERED insert gave back, by row id. */
const numbersInto = (numbers: Map<string, number>) => (result: ResultSet) => {
  for (const row of result.rows) numbers.set(String(row.id), Number(row.number));
};

function newDisbursementRow(input: NewDisbursement, disbursementId: string): NewDisbursementRow {
  return {
    kind: input.kind,
    external_uuid: input.kind === "v1" ? disbursementId : input.externalUuid,
    claim_id: input.claimId ?? null,
    memo: input.memo ?? null,
  };
}

/** A new disbursement's values, as INSERT_DISBURSEMENT lists its columns. */
function disbursementValues(
  input: NewDisbursement,
  disbursementId: string,
  row: NewDisbursementRow,
  now: number,
): (string | number | null)[] {
  return [
    disbursementId,
    input.companyId,
    input.lineId,
    row.kind,
    row.external_uuid,
    row.claim_id,
    input.largeDisbursement ? 1 : 0,
    input.payorUserId ?? null,
    input.requestFingerprint,
    row.memo,
    JSON.stringify(input.metadata ?? {}),
    now,
  ];
}

/** A new payout's row, by column, as its create inserts it. */
function newPayoutRow(
  input: NewDisbursement,
  spec: NewPayout,
  at: {
    payoutId: string;
    disbursementId: string;
    status: PayoutStatus;
    heldCents: number;
    payBy: string | null;
    now: number;
  },
): NewPayoutRow {
  const payee = spec.payee ?? {};
  return {
    id: at.payoutId,
    disbursement_id: at.disbursementId,
    company_id: input.companyId,
    line_id: input.lineId,
    payee_uuid: spec.payeeUuid,
    payee_id: spec.payeeId ?? null,
    payee_type_id: payee.payee_type_id ?? null,
    first_name: payee.first_name ?? null,
    last_name: payee.last_name ?? null,
    email: payee.email ?? null,
    phone: payee.phone ?? null,
    address_one: payee.address_one ?? null,
    address_two: payee.address_two ?? null,
    city: payee.city ?? null,
    state: payee.state ?? null,
    zip_code: payee.zip_code ?? null,
    delivery_options: JSON.stringify(spec.deliveryOptions ?? { email: true, sms: false }),
    allowed_payment_method_ids: JSON.stringify(spec.allowedPaymentMethodIds),
    permission_required_from: JSON.stringify(spec.permissionRequiredFrom ?? []),
    field_values: JSON.stringify(spec.fieldValues ?? []),
    payment_method_settings: JSON.stringify(spec.paymentMethodSettings ?? {}),
    custom_document_uuids: JSON.stringify(spec.customDocumentUuids ?? []),
    amount_cents: spec.amountCents,
    held_cents: at.heldCents,
    status: at.status,
    pay_by: at.payBy,
    created_at: at.now,
    updated_at: at.now,
  };
}

/**
 * Creates a disbursement whose payouts are held all or none: each payout holds its amount plus the
 * highest payor + service fee of its allowed methods. When available is short, a large
 * disbursement waits in pending_funds (nothing held); any other is refused naming the shortfall.
 */
export async function createDisbursement<R = undefined>(
  tx: WriteTx,
  input: NewDisbursement,
  now: number,
  options: CreateOptions<R> = {},
): Promise<
  Result<
    { disbursementId: string; payouts: PayoutRow[]; readBack: R | undefined },
    "insufficient_funds" | "amount_below_payee_fee"
  >
> {
  // One round trip for both (the balance is read even when a fee refuses the create).
  const [schedule, accountsRead, deadlines] = options.reads ??
    await readCreateReads(tx, input.companyId, input.lineId);
  const payBy = payByFor(input.payBy, deadlines, now);
  let accounts: LineAccounts = accountsRead;
  const decided = decideCreate(input, schedule, accounts);
  if (!decided.ok) return decided;
  const { holds, waits } = decided.value;
  const disbursementId = newId(
    input.kind === "v1" ? "dsb" : input.kind === "simple_payment" ? "sp" : "dis",
  );
  const newDisbursement = newDisbursementRow(input, disbursementId);
  // The rows are read back only with the events' reads below: they ride with those.
  for (
    const statement of multiRowInserts(INSERT_DISBURSEMENT, [
      disbursementValues(input, disbursementId, newDisbursement, now),
    ], NUMBERED)
  ) tx.defer(statement);
  const created: PayoutRow[] = [];
  let readBack: R | undefined;
  let rules: readonly PaymentApprovalRule[] = [];
  for (const [index, spec] of input.payouts.entries()) {
    const payoutId = newId("po");
    const status: PayoutStatus = waits ? "pending_funds" : "created";
    // The row as inserted, by column: the payout is mapped from it (with the columns' defaults)
    // instead of being read back, which cost each create a statement.
    const row = newPayoutRow(input, spec, {
      payoutId,
      disbursementId,
      status,
      heldCents: waits ? 0 : holds[index],
      payBy,
      now,
    });
    tx.defer({
      sql: INSERT_PAYOUT,
      args: NEW_PAYOUT_COLUMNS.map((column) => row[column]),
    });
    const written = toPayout({ ...NEW_PAYOUT_DEFAULTS, ...row });
    if ((spec.customDocumentUuids ?? []).length > 0) {
      // A one-time document is this payee's from now on, signed or not: no later payee gets it.
      tx.defer({
        sql: `UPDATE documents SET used_by_payout_id = ?
                WHERE company_id = ? AND one_time_use = 1 AND used_by_payout_id IS NULL
                  AND id IN (SELECT value FROM json_each(?))`,
        args: [payoutId, input.companyId, JSON.stringify(spec.customDocumentUuids)],
      });
    }
    let holdTransactionId: string | null = null;
    if (!waits) {
      const posted = await postTransaction(tx, {
        companyId: input.companyId,
        lineId: input.lineId,
        kind: "payout.hold",
        payoutId,
        transfers: [{ from: "available", to: "reserved", amountCents: holds[index] }],
        postedAt: now,
      }, accounts.ids.size > 0 ? accounts : undefined);
      // The whole disbursement was checked against available above, in this same unit.
      if (!posted.ok) throw new Error(`a checked hold was refused: ${posted.message}`);
      holdTransactionId = posted.value.transactionId;
      accounts = posted.value.accounts;
    }
    recordTransition(tx, payoutId, null, status, null, now);
    const readBackNow = options.readBack !== undefined && index === input.payouts.length - 1 &&
      !input.payouts.some((p) => (p.permissionRequiredFrom ?? []).length > 0);
    // What its event is written from (with the company's approval rules, once), in one round trip.
    const [context, read, companyRules] = await Promise.all([
      readCreatedEventContext(
        tx,
        row,
        newDisbursement,
        [...created.map((p) => p.status), status],
        now,
      ),
      readBackNow ? options.readBack!(disbursementId) : undefined,
      index === 0 && !waits ? rulesOfCompany(tx, input.companyId) : undefined,
    ]);
    if (readBackNow) readBack = read;
    rules = companyRules ?? rules;
    const payout = written;
    await writeEvents(tx, payout, ["created"], null, now, holdTransactionId, context);
    const after = waits ? payout : await afterCreated(tx, payout, rules, now);
    // The read-back rode with the event's reads; a payout a rule held since is read again.
    if (after.status === "pending_approval") readBack = undefined;
    created.push(after);
  }
  if (options.readBack !== undefined && readBack === undefined) {
    readBack = await options.readBack(disbursementId);
  }
  return ok({ disbursementId, payouts: created, readBack });
}

/**
 * A payout that reached `created`: one a payment approval rule of its company holds waits in
 * pending_approval; any other goes on.
 */
async function afterCreated(
  tx: WriteTx,
  payout: PayoutRow,
  rules: readonly PaymentApprovalRule[],
  now: number,
): Promise<PayoutRow> {
  const holding = ruleHolding(rules, payout);
  if (holding === null) return await continueCreated(tx, payout, now);
  const held = await applyMove(tx, payout.id, { kind: "hold_for_approval" }, now, {
    detail: `over the approval threshold of ${holding.thresholdCents} cents`,
  });
  if (!held.ok) throw new Error(`hold_for_approval refused after create: ${held.message}`);
  return held.value;
}

/**
 * A created payout going on (at once, or once approved): endorsements are requested, or the payee
 * offer is scheduled.
 */
export async function continueCreated(
  tx: WriteTx,
  payout: PayoutRow,
  now: number,
): Promise<PayoutRow> {
  if (payout.permissionRequiredFrom.length > 0) {
    for (const partyUuid of payout.permissionRequiredFrom) {
      await tx.execute({
        sql: `INSERT OR IGNORE INTO endorsements (id, payout_id, party_uuid, status, created_at)
              VALUES (?, ?, ?, 'pending', ?)`,
        args: [newId("end"), payout.id, partyUuid, now],
      });
    }
    const moved = await applyMove(tx, payout.id, { kind: "request_endorsement" }, now);
    if (!moved.ok) throw new Error(`request_endorsement refused after create: ${moved.message}`);
    // The payee is told through a job because links and messages need the environment's settings.
    await scheduleJob(tx, {
      companyId: payout.companyId,
      kind: "payout.request_endorsement",
      subjectId: payout.id,
      dueAt: now,
    }, now);
    return moved.value;
  }
  await scheduleJob(tx, {
    companyId: payout.companyId,
    kind: "payout.offer",
    subjectId: payout.id,
    dueAt: now,
  }, now);
  return payout;
}

/**
 * Creates several disbursements of one line, as createDisbursement creates each in turn, with the
 * writing set-based: one statement per table for all of them, their holds posted together. Each is
 * decided on its own, in order, against available as those before it left it: one refused writes
 * nothing and its neighbours go on. One that needs more than a plain create (an endorsement, a
 * custom document, an approval rule that holds it, funds it would wait for) is left RUN_ALONE, for
 * createDisbursement. `reads` are readCreateReads of the line, read in this unit.
 */
export async function createDisbursements(
  tx: WriteTx,
  inputs: readonly NewDisbursement[],
  now: number,
  reads: CreateReads,
): Promise<
  (
    | Result<
      { disbursementId: string; payouts: PayoutRow[] },
      "insufficient_funds" | "amount_below_payee_fee"
    >
    | RunAlone
  )[]
> {
  if (inputs.length === 0) return [];
  const { companyId, lineId } = inputs[0];
  const [schedule, accountsRead, deadlines] = reads;
  const [rules, deliveries] = await Promise.all([
    rulesOfCompany(tx, companyId),
    readDeliveryContext(tx, companyId, lineId, now),
  ]);
  let accounts: LineAccounts = accountsRead;
  /** Each input's answer, or the index of its create among `created`. */
  const results: (Awaited<ReturnType<typeof createDisbursements>>[number] | number)[] = [];
  const created: {
    input: NewDisbursement;
    disbursementId: string;
    rows: NewPayoutRow[];
    /** Its payouts mapped from their rows, once: the rules read them, then the events. */
    payouts: PayoutRow[];
  }[] = [];
  for (const input of inputs) {
    const plain = input.companyId === companyId && input.lineId === lineId &&
      input.payouts.every((p) =>
        (p.permissionRequiredFrom ?? []).length === 0 && (p.customDocumentUuids ?? []).length === 0
      );
    const decided = plain ? decideCreate(input, schedule, accounts) : null;
    if (decided && !decided.ok) {
      results.push(decided);
      continue;
    }
    if (decided === null || decided.value.waits) {
      results.push(RUN_ALONE);
      continue;
    }
    const disbursementId = newId(
      input.kind === "v1" ? "dsb" : input.kind === "simple_payment" ? "sp" : "dis",
    );
    const payBy = payByFor(input.payBy, deadlines, now);
    const rows = input.payouts.map((spec, index) =>
      newPayoutRow(input, spec, {
        payoutId: newId("po"),
        disbursementId,
        status: "created",
        heldCents: decided.value.holds[index],
        payBy,
        now,
      })
    );
    const payouts = rows.map((row) => toPayout({ ...NEW_PAYOUT_DEFAULTS, ...row }));
    if (payouts.some((payout) => ruleHolding(rules, payout))) {
      results.push(RUN_ALONE);
      continue;
    }
    // Its holds, taken from available now, decide the creates after it.
    const balances = { ...accounts.balances };
    balances.available -= decided.value.totalHold;
    balances.reserved += decided.value.totalHold;
    accounts = { ids: accounts.ids, balances };
    results.push(created.length);
    created.push({ input, disbursementId, rows, payouts });
  }
  if (created.length === 0) return results as Awaited<ReturnType<typeof createDisbursements>>;
  const disbursementNumbers = new Map<string, number>();
  for (
    const statement of multiRowInserts(
      INSERT_DISBURSEMENT,
      created.map(({ input, disbursementId }) =>
        disbursementValues(input, disbursementId, newDisbursementRow(input, disbursementId), now)
      ),
      NUMBERED,
    )
  ) tx.defer(statement, numbersInto(disbursementNumbers));
  const rows = created.flatMap((c) => c.rows);
  const payoutNumbers = new Map<string, number>();
  for (
    const statement of multiRowInserts(
      INSERT_PAYOUT_HEAD,
      rows.map((row) => NEW_PAYOUT_COLUMNS.map((column) => row[column])),
      NUMBERED,
    )
  ) tx.defer(statement, numbersInto(payoutNumbers));
  const posted = await postTransactions(
    tx,
    rows.map((row) => ({
      companyId,
      lineId,
      kind: "payout.hold",
      payoutId: String(row.id),
      transfers: [{ from: "available", to: "reserved", amountCents: Number(row.held_cents) }],
      postedAt: now,
    })),
    accountsRead.ids.size > 0 ? new Map([[lineId, accountsRead]]) : undefined,
  );
  // Every hold was checked against available above, in this same unit.
  if (!posted.ok) throw new Error(`a checked hold was refused: ${posted.message}`);
  recordTransitions(tx, rows.map((row) => [String(row.id), null, "created", null, now]));
  // The one read of the batch: the rows above are written (and numbered) with it.
  const documentsShown = await readPlainNewPayoutDocumentsShown(tx, companyId);
  const payoutsOf = new Map<string, PayoutRow[]>();
  const createdOf = new Map(created.map((c) => [c.disbursementId, c]));
  const events: PayoutEvents[] = [];
  const written = created.flatMap((c) => c.payouts);
  rows.forEach((row, i) => {
    const payout = written[i];
    const siblings = payoutsOf.get(payout.disbursementId) ?? [];
    payoutsOf.set(payout.disbursementId, [...siblings, payout]);
    const { input, disbursementId } = createdOf.get(payout.disbursementId)!;
    events.push({
      payout,
      events: ["created"],
      reason: null,
      ledgerTransactionId: posted.value.transactionIds[i],
      context: createdEventContext(
        row,
        newDisbursementRow(input, disbursementId),
        [...siblings, payout].map((p) => p.status),
        numberedOf(payout, payoutNumbers, disbursementNumbers, documentsShown),
        deliveries,
      ),
    });
  });
  await writeEventsOf(tx, events, now);
  // Each payee is offered its payout by a job of its own, as continueCreated schedules it.
  scheduleJobs(
    tx,
    rows.map((row) => ({
      companyId,
      kind: "payout.offer",
      subjectId: String(row.id),
      dueAt: now,
    })),
    now,
  );
  return results.map((result) => {
    if (typeof result !== "number") return result;
    const { disbursementId } = created[result];
    return ok({ disbursementId, payouts: payoutsOf.get(disbursementId)! });
  });
}

/** A Surface A disbursement a funding may name, with what decides whether it may. */
export interface FundingTarget {
  readonly id: string;
  readonly lineId: string;
  readonly lineCode: string;
  /** True when a payee of it waits in pending_funds. */
  readonly waiting: boolean;
  /** Its payees' Surface A statuses, for the refusal's sentence. */
  readonly payeeStatuses: readonly string[];
}

const toFundingTarget = rowMapper({
  id: disbursement.id,
  lineId: disbursement.lineId,
  lineCode: text("business_lines", "code"),
  statuses: json<PayoutStatus[]>(text("payouts", "statuses"), "array"),
});

/** The company's Surface A disbursement with this disbursement_uuid, read in the unit. */
export async function findDisbursementForFunding(
  tx: WriteTx,
  companyId: string,
  disbursementUuid: string,
): Promise<FundingTarget | null> {
  const { rows } = await tx.execute({
    sql: `SELECT d.id, d.line_id, l.code,
            (SELECT json_group_array(DISTINCT p.status) FROM payouts p WHERE p.disbursement_id = d.id)
              AS statuses
          FROM disbursements d JOIN business_lines l ON l.id = d.line_id
          WHERE d.company_id = ? AND d.kind = 'disbursement' AND d.external_uuid = ?`,
    args: [companyId, disbursementUuid],
  });
  if (!rows[0]) return null;
  const target = toFundingTarget(rows[0]);
  return {
    id: target.id,
    lineId: target.lineId,
    lineCode: target.lineCode,
    waiting: target.statuses.includes("pending_funds"),
    payeeStatuses: target.statuses.map((status) => surfaceAStatus[status].name).sort(),
  };
}

/**
 * After available grew: each failed payout of the line that waits to be offered again (no retry
 * or re-offer pending: its re-offer found available short, and its failure is not final) gets a
 * re-offer job, oldest first.
 * The job checks the funds again when it runs.
 */
export async function scheduleReoffersAwaitingFunds(
  tx: WriteTx,
  companyId: string,
  lineId: string,
  now: number,
): Promise<number> {
  const failed = await tx.execute({
    // A payout whose retry holds its money on a rail waits for that entry's outcome, not for funds.
    sql: `SELECT p.id, p.failure_reason FROM payouts p
          WHERE p.company_id = ? AND p.status = 'failed' AND p.line_id = ?
            AND NOT EXISTS (SELECT 1 FROM rail_batch_entries e
              WHERE e.reference = p.id || '-' || p.submission_count
                AND e.status IN ('queued', 'batched', 'sent'))
          ORDER BY p.created_at, p.rowid`,
    args: [companyId, lineId],
  });
  if (failed.rows.length === 0) return 0;
  // One read of the company's pending retries and re-offers (scheduled_jobs has no subject index).
  const pending = await tx.execute({
    sql: `SELECT subject_id FROM scheduled_jobs
          WHERE company_id = ? AND done_at IS NULL
            AND kind IN ('payout.retry', 'payout.reoffer', 'payout.submit')`,
    args: [companyId],
  });
  const taken = new Set(pending.rows.map((row) => toSubjectId(row).subjectId));
  // A final failure (a sanctions rejection) is never offered again.
  const waiting = failed.rows.filter((row) => mayTryAgainAfter(toFailedPayout(row).failureReason))
    .map((row) => toFailedPayout(row).id).filter((id) => !taken.has(id));
  for (const subjectId of waiting) {
    await scheduleJob(tx, { companyId, kind: "payout.reoffer", subjectId, dueAt: now }, now);
  }
  return waiting.length;
}

/** A funding's credit: which funding, and the disbursement it names (released first). */
export interface FundingCredit {
  readonly fundingId: string;
  readonly disbursementId: string | null;
}

/**
 * After a funding's credit grew available: waiting disbursements of the line move to created, the
 * one the funding names first, then the others oldest first, each only when available covers all
 * its payouts; the first that does not fit stops the queue, so money a funding names is not spent
 * on others. Each released disbursement records the funding and the time.
 */
export async function releasePendingFunds(
  tx: WriteTx,
  companyId: string,
  lineId: string,
  now: number,
  credit: FundingCredit,
): Promise<number> {
  const { rows } = await tx.execute({
    // rowid breaks ties of the same millisecond in creation order.
    sql: `SELECT d.id FROM disbursements d
          WHERE d.line_id = ? AND EXISTS
            (SELECT 1 FROM payouts p WHERE p.disbursement_id = d.id AND p.status = 'pending_funds')
          ORDER BY coalesce(d.id = ?, 0) DESC, d.created_at, d.rowid`,
    args: [lineId, credit.disbursementId],
  });
  const schedule = await readFeeSchedule(tx, companyId);
  let released = 0;
  for (const row of rows) {
    const waiting = (await tx.execute({
      sql:
        `SELECT ${PAYOUT_COLUMNS} FROM payouts WHERE disbursement_id = ? AND status = 'pending_funds' ORDER BY rowid`,
      args: [toDisbursementId(row).id],
    })).rows.map(toPayout);
    const holds = waiting.map((p) => holdFor(p.amountCents, p.allowedPaymentMethodIds, schedule));
    const available = (await readLineBalances(tx, lineId)).available;
    if (holds.reduce((sum, hold) => sum + hold, 0) > available) break;
    for (const [index, payout] of waiting.entries()) {
      const moved = await applyMove(tx, payout.id, {
        kind: "release_funds",
        holdCents: holds[index],
      }, now);
      if (!moved.ok) throw new Error(`release_funds refused after the check: ${moved.message}`);
      await afterCreated(tx, moved.value, await rulesOfCompany(tx, moved.value.companyId), now);
    }
    await tx.execute({
      sql: "UPDATE disbursements SET released_by_funding_id = ?, released_at = ? WHERE id = ?",
      args: [credit.fundingId, now, toDisbursementId(row).id],
    });
    released++;
  }
  return released;
}
