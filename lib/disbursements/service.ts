/**
 * Disbursement use cases of both surfaces: Surface A disbursements, their payees and Simple
 * Payments (contract §6), and /v1 payees and disbursements (contract §7). Each write is one use
 * case run in the caller's write unit (the idempotency service opens it); a use case that refuses
 * aborts, so nothing it wrote before the refusal is kept. Reads of committed data are the query
 * functions at the end of each section.
 */
import type { Database } from "../../db/client.ts";
import { RUN_ALONE, type RunAlone, type WriteTx } from "../../db/writer.ts";
import type { UseCaseBatch } from "../idempotency/service.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { claimResend, notifyPayee } from "../notify/store.ts";
import { type PayoutRuntime, sendFirstNotice } from "../payouts/jobs.ts";
import {
  applyMove,
  createDisbursement,
  createDisbursements,
  type NewDisbursement,
  type NewPayout,
  type PayoutRow,
  readCreateReads,
} from "../payouts/store.ts";
import {
  modalityOf,
  resendableStatuses,
  surfaceAStatus,
  surfaceBStatus,
} from "../payouts/states.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { unmailablePostage, unpayableCreate } from "../payouts/payable.ts";
import { payByProblem } from "../obligations/deadline.ts";
import {
  type ApiDisbursement,
  type ApiPayoutRow,
  CUSTOM_DOCUMENT_TYPE,
  findApiPayout,
  findDocument,
  insertParties,
  listSignedDocuments,
  loadApiDisbursement,
  loadPayoutTransaction,
  loadSimplePayment,
  type PartyInput,
  type PayoutTransaction,
  type SignedDocumentRow,
  type SimplePaymentRow,
} from "./api_store.ts";
import {
  findPayee,
  listV1Disbursements,
  loadV1Disbursement,
  type PayeeFields,
  type PayeeRecord,
  readV1Disbursement,
  upsertPayee,
  type V1Disbursement,
} from "./v1_store.ts";
import { loadApiPayoutAsV1 } from "./v1_api_payout.ts";
/** The company's `check_postage_type` of a payout's settings, or null. */
const postageOf = (settings: unknown): string | null => {
  const value = (settings as { check_postage_type?: unknown } | null | undefined)
    ?.check_postage_type;
  return typeof value === "string" ? value : null;
};

export type {
  ApiDisbursement,
  ApiPayoutRow,
  PayeeRecord,
  PayoutTransaction,
  SignedDocumentRow,
  SimplePaymentRow,
  V1Disbursement,
};

type CreateRefusal =
  | "invalid_pay_by"
  | "insufficient_funds"
  | "amount_below_payee_fee"
  | "rail_not_configured"
  | "sanctions_list_missing";

/** A requested pay_by that is not after today (domain time) or too far ahead, or null. */
function payByRefusal(payBy: string | null | undefined, now: number) {
  const problem = payBy ? payByProblem(payBy, now) : null;
  return problem === null ? null : refuse("invalid_pay_by", problem, { field: "pay_by" });
}

// --- Surface A disbursements -------------------------------------------------------------------

export interface ApiDisbursementRequest {
  readonly companyId: string;
  readonly lineId: string;
  readonly payorUserId: string;
  /** The request's fingerprint: the natural key replays only the same request. */
  readonly fingerprint: string;
  readonly disbursementUuid: string;
  readonly largeDisbursement: boolean;
  /** The date every payee must be paid by (extension); absent, the company's default. */
  readonly payBy?: string | null;
  readonly payouts: readonly NewPayout[];
  readonly parties: readonly PartyInput[];
}

/**
 * Creates a Surface A disbursement. The natural key: the same disbursement_uuid with the same
 * request is the same disbursement (answered again, `created` false); with another request it is
 * refused. Each payee's custom documents must be the company's custom documents, and a one-time
 * one nobody has signed yet.
 */
export async function createApiDisbursement(
  tx: WriteTx,
  database: Database,
  request: ApiDisbursementRequest,
  realNow: number,
  micrFont: Uint8Array | null,
): Promise<
  Result<
    { disbursement: ApiDisbursement; created: boolean },
    | "duplicate_disbursement"
    | "document_not_found"
    | "document_not_custom"
    | "document_already_used"
    | CreateRefusal
  >
> {
  const { companyId, disbursementUuid } = request;
  // Everything the create reads before it writes, in one round trip on a libSQL server.
  const [existing, now, reads] = await Promise.all([
    loadApiDisbursement(tx, companyId, disbursementUuid),
    domainNow(database, companyId, realNow, tx),
    readCreateReads(tx, companyId, request.lineId),
  ]);
  if (existing) {
    if (existing.requestFingerprint === request.fingerprint) {
      return ok({ disbursement: existing, created: false });
    }
    return tx.abort(refuse(
      "duplicate_disbursement",
      `disbursement_uuid ${disbursementUuid} already exists with a different request`,
      { field: "disbursement_uuid" },
    ));
  }
  const lateDate = payByRefusal(request.payBy, now);
  if (lateDate) return tx.abort(lateDate);
  const unpayable = await unpayableCreate(
    tx,
    database.environment,
    companyId,
    request.payouts.map((payout, i) => ({
      methodIds: payout.allowedPaymentMethodIds,
      field: `payees.${i}.allowed_payment_method_ids`,
    })),
    micrFont,
  );
  if (unpayable) return tx.abort(unpayable);
  const unmailable = await unmailablePostage(
    tx,
    companyId,
    request.payouts.map((payout, i) => ({
      methodIds: payout.allowedPaymentMethodIds,
      postage: postageOf(payout.paymentMethodSettings),
      field: `payees.${i}.payment_method_settings.check_postage_type`,
    })),
  );
  if (unmailable) return tx.abort(unmailable);
  const documents = await customDocumentRefusal(tx, companyId, request.payouts);
  if (documents) return tx.abort(documents);
  const created = await createDisbursement(
    tx,
    {
      companyId,
      lineId: request.lineId,
      kind: "disbursement",
      externalUuid: disbursementUuid,
      requestFingerprint: request.fingerprint,
      largeDisbursement: request.largeDisbursement,
      payorUserId: request.payorUserId,
      payBy: request.payBy,
      payouts: request.payouts,
    },
    now,
    {
      reads,
      // The parties are written with the answer's reads, which ride with the create's last reads.
      readBack: (disbursementId) => {
        insertParties(tx, disbursementId, request.parties);
        return loadApiDisbursement(tx, companyId, disbursementUuid);
      },
    },
  );
  if (!created.ok) return tx.abort(created);
  return ok({ disbursement: created.value.readBack!, created: true });
}

/**
 * Why the payees' custom documents cannot be given, naming the field at fault, or null. A
 * one-time document is for one payee (contract §6): given to two payees of the request,
 * the second is named; given to a payee before (the payout that holds it), any new one is named,
 * whether or not it needs a signature.
 */
async function customDocumentRefusal(
  tx: WriteTx,
  companyId: string,
  payouts: readonly NewPayout[],
) {
  /** One-time documents of this request and the payee each went to. */
  const oneTimeHolders = new Map<string, string>();
  for (const [i, payout] of payouts.entries()) {
    for (const [j, uuid] of (payout.customDocumentUuids ?? []).entries()) {
      const field = `payees.${i}.custom_document_uuids.${j}`;
      const document = await findDocument(tx, companyId, uuid);
      if (!document) {
        return refuse(
          "document_not_found",
          `no document ${uuid}: upload it with POST /api/documents first`,
          { field },
        );
      }
      if (document.docTypeId !== CUSTOM_DOCUMENT_TYPE) {
        return refuse(
          "document_not_custom",
          `document ${uuid} is of doc_type_id ${document.docTypeId}; custom documents are type ${CUSTOM_DOCUMENT_TYPE}`,
          { field },
        );
      }
      if (document.oneTimeUse && document.usedByPayoutId !== null) {
        return refuse(
          "document_already_used",
          `one-time document ${uuid} is for one payee and was already given to another payee`,
          { field },
        );
      }
      if (!document.oneTimeUse) continue;
      const holder = oneTimeHolders.get(uuid);
      if (holder !== undefined && holder !== payout.payeeUuid) {
        return refuse(
          "document_already_used",
          `one-time document ${uuid} is for one payee and is already given to payee ${holder} in this request; payee ${payout.payeeUuid} cannot have it too`,
          { field },
        );
      }
      oneTimeHolders.set(uuid, payout.payeeUuid);
    }
  }
  return null;
}

/** A payee of a Surface A disbursement, named by the company's uuids. */
export interface ApiPayeeRef {
  readonly companyId: string;
  readonly disbursementUuid: string;
  readonly payeeUuid: string;
}

const payeeNotFound = (ref: ApiPayeeRef) =>
  refuse(
    "not_found",
    `no payee ${JSON.stringify(ref.payeeUuid)} in disbursement ${
      JSON.stringify(ref.disbursementUuid)
    } for this company`,
  );

/** Cancels one payee: only before a method is selected, or after a failure. */
export async function cancelApiPayee(
  tx: WriteTx,
  database: Database,
  ref: ApiPayeeRef,
  realNow: number,
): Promise<Result<ApiPayoutRow, "not_found" | "not_cancelable" | "payout_in_flight">> {
  const payout = await findApiPayout(tx, ref.companyId, ref.disbursementUuid, ref.payeeUuid);
  if (!payout) {
    return tx.abort(refuse(
      "not_found",
      `no payee ${JSON.stringify(ref.payeeUuid)} in this disbursement for this company`,
    ));
  }
  const now = await domainNow(database, ref.companyId, realNow);
  const canceled = await applyMove(tx, payout.id, { kind: "cancel" }, now, {
    detail: "canceled by the company",
  });
  if (!canceled.ok && canceled.code === "payout_in_flight") {
    return tx.abort(refuse("payout_in_flight", `payee ${ref.payeeUuid}: ${canceled.message}`));
  }
  if (!canceled.ok) {
    return tx.abort(refuse(
      "not_cancelable",
      `payee ${ref.payeeUuid} is ${
        surfaceAStatus[payout.status].name
      }: a payee can be canceled only before a payment method is selected, or after a failure`,
    ));
  }
  const after = await loadApiDisbursement(
    tx,
    ref.companyId,
    ref.disbursementUuid,
    ref.payeeUuid,
  );
  return ok(after!.payouts[0]);
}

/**
 * Sends the payee's notification again (contract §11): only while there is one to act on, and at
 * most `resendsPerHourMax` per payee in any hour (real time, like every rate limit). A payee not
 * told yet (its first notice is a job the create scheduled) gets that first notice now, once, and
 * nothing more: the job then finds it sent.
 */
export async function resendPayeeNotification(
  tx: WriteTx,
  database: Database,
  runtime: PayoutRuntime,
  ref: ApiPayeeRef,
  realNow: number,
): Promise<
  Result<
    { channels: ("email" | "sms")[]; sentAt: number },
    "not_found" | "not_resendable" | "rate_limited"
  >
> {
  const payout = await findApiPayout(tx, ref.companyId, ref.disbursementUuid, ref.payeeUuid);
  if (!payout) return tx.abort(payeeNotFound(ref));
  if (!resendableStatuses.has(payout.status) && payout.status !== "created") {
    return tx.abort(refuse(
      "not_resendable",
      `payee ${ref.payeeUuid} is ${
        surfaceAStatus[payout.status].name
      }: there is no notification to resend`,
    ));
  }
  const { notifications } = runtime;
  const { resendsPerHourMax } = notifications;
  const allowance = await claimResend(tx, payout.id, { realNow, resendsPerHourMax });
  if (!allowance.ok) {
    return tx.abort(refuse(
      "rate_limited",
      `at most ${resendsPerHourMax} notifications per payee per hour; retry in ${allowance.retryAfterSeconds} s`,
      { details: { retry_after_seconds: allowance.retryAfterSeconds } },
    ));
  }
  const now = await domainNow(database, ref.companyId, realNow);
  const notice = await sendFirstNotice(tx, runtime, payout.id, now) ??
    await notifyPayee(tx, notifications, payout.id, "resend", now);
  return ok({ channels: notice.channels, sentAt: now });
}

/** A Surface A disbursement as committed (with `payeeUuid`, that payee only), or null. */
export function findApiDisbursement(
  database: Database,
  companyId: string,
  disbursementUuid: string,
  payeeUuid?: string,
): Promise<ApiDisbursement | null> {
  return loadApiDisbursement(database.readClient, companyId, disbursementUuid, payeeUuid);
}

/** The payee's money and timeline, or a not_found refusal. */
export async function payeeTransaction(
  database: Database,
  ref: ApiPayeeRef,
): Promise<Result<PayoutTransaction, "not_found">> {
  const payout = await findApiPayout(
    database.readClient,
    ref.companyId,
    ref.disbursementUuid,
    ref.payeeUuid,
  );
  if (!payout) return payeeNotFound(ref);
  return ok(await loadPayoutTransaction(database.readClient, payout.id));
}

/** The documents the payee (or its parties) signed, oldest first, or a not_found refusal. */
export async function payeeSignedDocuments(
  database: Database,
  ref: ApiPayeeRef,
): Promise<Result<SignedDocumentRow[], "not_found">> {
  const payout = await findApiPayout(
    database.readClient,
    ref.companyId,
    ref.disbursementUuid,
    ref.payeeUuid,
  );
  if (!payout) return payeeNotFound(ref);
  return ok(await listSignedDocuments(database.readClient, payout.id));
}

// --- Simple Payments ---------------------------------------------------------------------------

export interface SimplePaymentRequest {
  readonly companyId: string;
  readonly lineId: string;
  readonly payorUserId: string;
  readonly fingerprint: string;
  readonly simplePaymentUuid: string;
  readonly memo: string | null;
  /** The date it must be paid by (extension); absent, the company's default. */
  readonly payBy?: string | null;
  readonly payout: Omit<NewPayout, "payeeUuid">;
}

/**
 * Creates a Simple Payment: a disbursement of one payee with a memo, under the same natural key
 * as a disbursement. Refusals of the amount name the `amount` field.
 */
export async function createSimplePayment(
  tx: WriteTx,
  database: Database,
  request: SimplePaymentRequest,
  realNow: number,
  micrFont: Uint8Array | null,
): Promise<
  Result<
    { payment: SimplePaymentRow; created: boolean; now: number },
    "duplicate_simple_payment" | CreateRefusal
  >
> {
  const uuid = request.simplePaymentUuid;
  const now = await domainNow(database, request.companyId, realNow);
  const existing = await loadSimplePayment(tx, request.companyId, uuid);
  if (existing) {
    if (existing.requestFingerprint === request.fingerprint) {
      return ok({ payment: existing, created: false, now });
    }
    return tx.abort(refuse(
      "duplicate_simple_payment",
      `simple_payment_uuid ${uuid} already exists with a different request`,
      { field: "simple_payment_uuid" },
    ));
  }
  const lateDate = payByRefusal(request.payBy, now);
  if (lateDate) return tx.abort(lateDate);
  const unpayable = await unpayableCreate(tx, database.environment, request.companyId, [{
    methodIds: request.payout.allowedPaymentMethodIds,
    field: "allowed_payment_method_ids",
  }], micrFont);
  if (unpayable) return tx.abort(unpayable);
  const created = await createDisbursement(tx, {
    companyId: request.companyId,
    lineId: request.lineId,
    kind: "simple_payment",
    externalUuid: uuid,
    requestFingerprint: request.fingerprint,
    largeDisbursement: false,
    payorUserId: request.payorUserId,
    memo: request.memo,
    payBy: request.payBy,
    payouts: [{ ...request.payout, payeeUuid: uuid }],
  }, now);
  if (!created.ok) return tx.abort({ ...created, field: "amount" });
  const payment = await loadSimplePayment(tx, request.companyId, uuid);
  return ok({ payment: payment!, created: true, now });
}

/** A company's Simple Payment as committed, with the company's domain time, or null. */
export async function findSimplePayment(
  database: Database,
  companyId: string,
  uuid: string,
  realNow: number,
): Promise<{ payment: SimplePaymentRow; now: number } | null> {
  const payment = await loadSimplePayment(database.readClient, companyId, uuid);
  if (!payment) return null;
  return { payment, now: await domainNow(database, companyId, realNow) };
}

// --- /v1 payees and disbursements --------------------------------------------------------------

/** A /v1 caller's line. */
export interface LineScope {
  readonly companyId: string;
  readonly lineId: string;
}

/**
 * Creates or updates a payee by the company's own id; a payee must be reachable on the channel
 * it asked for, or nothing is written.
 */
export async function upsertV1Payee(
  tx: WriteTx,
  database: Database,
  scope: LineScope & { externalId: string },
  patch: Partial<PayeeFields>,
  realNow: number,
): Promise<Result<{ payee: PayeeRecord; created: boolean }, "contact_missing">> {
  const now = await domainNow(database, scope.companyId, realNow);
  const { payee, created } = await upsertPayee(tx, scope, patch, now);
  const missing = payee.contactChannel === "sms"
    ? (payee.phone ? null : "phone")
    : payee.email
    ? null
    : "email";
  if (missing) {
    return tx.abort(refuse(
      "contact_missing",
      `contact_channel ${payee.contactChannel} needs ${missing}`,
      { field: missing, details: { contact_channel: payee.contactChannel } },
    ));
  }
  return ok({ payee, created });
}

/** A payee of the line as committed, or null. */
export function findV1Payee(
  database: Database,
  scope: LineScope,
  externalId: string,
): Promise<PayeeRecord | null> {
  return findPayee(database.readClient, scope.companyId, scope.lineId, externalId);
}

export interface V1DisbursementRequest {
  readonly payeeExternalId: string;
  readonly amountCents: number;
  /** Left out: the payee's `modality_defaults`. */
  readonly modalities?: readonly string[];
  readonly claimId: string | null;
  readonly metadata: Record<string, string>;
  /** The date it must be paid by (extension); absent, the company's default. */
  readonly payBy?: string | null;
}

/**
 * Creates a /v1 disbursement of one payee of the line, offering the modalities the request names
 * or, when it names none, the payee's `modality_defaults`.
 */
export async function createV1Disbursement(
  tx: WriteTx,
  database: Database,
  scope: LineScope,
  request: V1DisbursementRequest,
  realNow: number,
  micrFont: Uint8Array | null,
): Promise<V1CreateResult> {
  // Everything the create reads before it writes, in one round trip on a libSQL server.
  const [now, payee, reads] = await Promise.all([
    domainNow(database, scope.companyId, realNow, tx),
    findPayee(tx, scope.companyId, scope.lineId, request.payeeExternalId),
    readCreateReads(tx, scope.companyId, scope.lineId),
  ]);
  const planned = await planV1Disbursement(tx, database, scope, request, payee, now, micrFont);
  if (!planned.ok) return tx.abort(planned);
  const created = await createDisbursement(tx, planned.value, now, { reads });
  if (!created.ok) return tx.abort(v1CreateRefusal(created));
  const { disbursementId, payouts: [payout] } = created.value;
  return ok(
    createdV1Disbursement(request, disbursementId, payout, now) ??
      (await loadV1Disbursement(tx, scope, disbursementId))!,
  );
}

type V1CreateRefusal = "payee_not_found" | "modalities_missing" | CreateRefusal;
type V1CreateResult = Result<V1Disbursement, V1CreateRefusal>;

/** A /v1 create's input, as the route gives it to be run with others queued at once. */
export interface V1CreateInput {
  readonly database: Database;
  readonly scope: LineScope;
  readonly request: V1DisbursementRequest;
  readonly realNow: number;
  readonly micrFont: Uint8Array | null;
}

/**
 * /v1 creates: one alone (createV1Disbursement), or those of one line queued at the same moment
 * set-based (createV1Disbursements).
 */
export const v1Creates: UseCaseBatch<V1CreateInput, V1CreateResult> = {
  one: (input) => (tx) =>
    createV1Disbursement(
      tx,
      input.database,
      input.scope,
      input.request,
      input.realNow,
      input.micrFont,
    ),
  many: (tx, inputs) => createV1Disbursements(tx, inputs),
};

/**
 * Creates /v1 disbursements of one line, as createV1Disbursement creates each in turn (each
 * refused or created on its own, in order, against what those before it held), with the reads of
 * the line made once and the writing set-based (createDisbursements). Dated at the latest of
 * their requests' times. An input of another line, or one createDisbursements leaves, is RUN_ALONE.
 */
export async function createV1Disbursements(
  tx: WriteTx,
  inputs: readonly V1CreateInput[],
): Promise<(V1CreateResult | RunAlone)[]> {
  const { database, scope } = inputs[0];
  const sameLine = inputs.map((input) =>
    input.database === database && input.scope.companyId === scope.companyId &&
    input.scope.lineId === scope.lineId
  );
  const realNow = Math.max(...inputs.filter((_, i) => sameLine[i]).map((input) => input.realNow));
  const payeeIds = [
    ...new Set(inputs.filter((_, i) => sameLine[i]).map((input) => input.request.payeeExternalId)),
  ];
  const [now, payees, reads] = await Promise.all([
    domainNow(database, scope.companyId, realNow, tx),
    Promise.all(payeeIds.map((id) => findPayee(tx, scope.companyId, scope.lineId, id))),
    readCreateReads(tx, scope.companyId, scope.lineId),
  ]);
  const payeeOf = new Map(payeeIds.map((id, i) => [id, payees[i]]));
  const results: (V1CreateResult | RunAlone | number)[] = [];
  const planned: NewDisbursement[] = [];
  for (const [i, input] of inputs.entries()) {
    const { request } = input;
    // Without a claim_id it is answered from what it reads back: it runs alone.
    if (!sameLine[i] || request.claimId === null) {
      results.push(RUN_ALONE);
      continue;
    }
    const plan = await planV1Disbursement(
      tx,
      database,
      scope,
      request,
      payeeOf.get(request.payeeExternalId)!,
      now,
      input.micrFont,
    );
    if (!plan.ok) {
      results.push(plan);
      continue;
    }
    results.push(planned.length);
    planned.push(plan.value);
  }
  const created = await createDisbursements(tx, planned, now, reads);
  return results.map((result, i) => {
    if (typeof result !== "number") return result;
    const outcome = created[result];
    if (outcome === RUN_ALONE || !outcome.ok) {
      return outcome === RUN_ALONE ? outcome : v1CreateRefusal(outcome);
    }
    const { disbursementId, payouts: [payout] } = outcome.value;
    const answer = createdV1Disbursement(inputs[i].request, disbursementId, payout, now);
    // Written plain (no rule held it) with a claim_id: it is answered as written.
    if (answer === null) {
      throw new Error(`created disbursement ${disbursementId} must be read back`);
    }
    return ok(answer);
  });
}

/**
 * What a /v1 create writes, or why it is refused before anything is written: the payee must be
 * the line's, pay_by ahead, the modalities (the request's or the payee's defaults) payable.
 */
async function planV1Disbursement(
  tx: WriteTx,
  database: Database,
  scope: LineScope,
  request: V1DisbursementRequest,
  payee: PayeeRecord | null,
  now: number,
  micrFont: Uint8Array | null,
): Promise<Result<NewDisbursement, V1CreateRefusal>> {
  if (!payee) {
    return refuse(
      "payee_not_found",
      `no payee ${
        JSON.stringify(request.payeeExternalId)
      } on this line: create it with POST /v1/payees first`,
      { field: "payee.id" },
    );
  }
  const lateDate = payByRefusal(request.payBy, now);
  if (lateDate) return lateDate;
  const modalities = [...new Set(request.modalities ?? payee.modalityDefaults)];
  if (modalities.length === 0) {
    return refuse(
      "modalities_missing",
      `modalities is required: payee ${payee.externalId} has no modality_defaults`,
      { field: "modalities" },
    );
  }
  const allowedPaymentMethodIds = modalities.map((code) => modalityOf(code)!.id);
  const unpayable = await unpayableCreate(tx, database.environment, scope.companyId, [{
    methodIds: allowedPaymentMethodIds,
    field: "modalities",
  }], micrFont);
  if (unpayable) return unpayable;
  return ok({
    ...scope,
    kind: "v1",
    externalUuid: "",
    requestFingerprint: "",
    largeDisbursement: false,
    claimId: request.claimId,
    metadata: request.metadata,
    payBy: request.payBy,
    payouts: [{
      payeeUuid: payee.externalId,
      payeeId: payee.id,
      amountCents: request.amountCents,
      allowedPaymentMethodIds,
      payee: { email: payee.email, phone: payee.phone, first_name: payee.name },
      deliveryOptions: {
        email: payee.contactChannel === "email",
        sms: payee.contactChannel === "sms",
      },
    }],
  });
}

/** Only an amount below the payee fee is the amount's fault; a short balance is not. */
function v1CreateRefusal<R extends { ok: false; code: string }>(refusal: R): R {
  return refusal.code === "amount_below_payee_fee" ? { ...refusal, field: "amount" } : refusal;
}

/**
 * A created /v1 disbursement as written, or null when it must be read back. A payout that stayed
 * created is answered as written: reading it back (a JSON query over the disbursement, payout and
 * timeline) cost each create about as much as two of its inserts. One a rule held or an
 * endorsement moved since is read.
 */
function createdV1Disbursement(
  request: V1DisbursementRequest,
  disbursementId: string,
  payout: PayoutRow,
  now: number,
): V1Disbursement | null {
  if (payout.status !== "created" || request.claimId === null) return null;
  return {
    id: disbursementId,
    claimId: request.claimId,
    metadata: request.metadata,
    createdAt: now,
    payoutId: payout.id,
    status: payout.status,
    amountCents: payout.amountCents,
    allowedPaymentMethodIds: payout.allowedPaymentMethodIds,
    paymentMethodId: payout.paymentMethodId,
    payeeExternalId: payout.payeeUuid,
    payBy: payout.payBy,
    network: null,
    timeline: [{ status: "created", at: now, detail: null }],
  };
}

/** Cancels a /v1 disbursement: only before a modality is selected, or after a failure. */
export async function cancelV1Disbursement(
  tx: WriteTx,
  database: Database,
  scope: LineScope,
  id: string,
  realNow: number,
): Promise<Result<V1Disbursement, "not_found" | "not_cancelable" | "payout_in_flight">> {
  const found = await loadV1Disbursement(tx, scope, id);
  if (!found) return tx.abort(v1NotFound(id));
  const now = await domainNow(database, scope.companyId, realNow);
  const canceled = await applyMove(tx, found.payoutId, { kind: "cancel" }, now, {
    detail: "canceled by the company",
  });
  if (!canceled.ok && canceled.code === "payout_in_flight") {
    return tx.abort(refuse("payout_in_flight", `disbursement ${id}: ${canceled.message}`));
  }
  if (!canceled.ok) {
    return tx.abort(refuse(
      "not_cancelable",
      `disbursement ${id} is ${
        surfaceBStatus[found.status]
      }: it can be canceled only before a modality is selected, or after a failure`,
    ));
  }
  return ok((await loadV1Disbursement(tx, scope, id))!);
}

const v1NotFound = (id: string) =>
  refuse("not_found", `no disbursement ${JSON.stringify(id)} for this key`);

/** A /v1 disbursement of the line as committed (through the read cache), or not_found. */
export async function findV1Disbursement(
  database: Database,
  scope: LineScope,
  id: string,
): Promise<Result<V1Disbursement, "not_found">> {
  // A Surface A payout of this line reads by the id its /v1 events carry.
  const found = await readV1Disbursement(database, scope, id) ??
    await loadApiPayoutAsV1(database.readClient, scope, id);
  return found ? ok(found) : v1NotFound(id);
}

/** A page of the line's disbursements, newest first; null when `startingAfter` is unknown. */
export function listLineDisbursements(
  database: Database,
  scope: LineScope,
  page: { limit: number; startingAfter: string | null },
): Promise<{ data: V1Disbursement[]; hasMore: boolean } | null> {
  return listV1Disbursements(database.readClient, scope, page);
}
