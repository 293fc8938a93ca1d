/**
 * Fundings of a business line (DESIGN 5, 6 and 14). ACH sits in pending_funding for three US
 * business days, then becomes available (or is returned to the bank). A wire is available when
 * received: at once in the sandbox, in live when an operator records it. Every credit to available
 * releases waiting large disbursements, oldest first.
 */
import { columnsOf, rowMapper } from "../../db/rows.ts";
import { fundings } from "../../db/schema.ts";
import { addBusinessDays } from "../platform/business_days.ts";
import type { Environment } from "../platform/config.ts";
import { newId } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { LedgerTransactionKind } from "../ledger/postings.ts";
import { postTransaction } from "../ledger/store.ts";
import { releasePendingFunds, scheduleReoffersAwaitingFunds } from "../payouts/store.ts";
import { scheduleJob } from "../../db/scheduler_store.ts";
import type { WriteTx } from "../../db/writer.ts";

export const ACH_FUNDING_BUSINESS_DAYS = 3;

export type FundingMethod = "ACH" | "WireTransfer";
export type FundingStatus = "Pending" | "Completed" | "Returned";

export interface FundingRecord {
  readonly id: string;
  readonly companyId: string;
  readonly lineId: string;
  readonly fundingUuid: string | null;
  readonly paymentMethod: FundingMethod;
  readonly amountCents: number;
  readonly description: string;
  readonly largeDisbursement: boolean;
  readonly status: FundingStatus;
  readonly expectedAvailableAt: number | null;
  readonly completedAt: number | null;
  readonly createdAt: number;
}

/** The kinds of ledger transaction a funding posts. */
export type FundingLedgerKind = Extract<LedgerTransactionKind, `funding.${string}`>;

const funding = columnsOf(fundings);
const toFunding: (row: Readonly<Record<string, unknown>>) => FundingRecord = rowMapper({
  id: funding.id,
  companyId: funding.companyId,
  lineId: funding.lineId,
  fundingUuid: funding.fundingUuid,
  paymentMethod: funding.paymentMethod,
  amountCents: funding.amountCents,
  description: funding.description,
  largeDisbursement: funding.largeDisbursement,
  status: funding.status,
  expectedAvailableAt: funding.expectedAvailableAt,
  completedAt: funding.completedAt,
  createdAt: funding.createdAt,
});
const toFingerprint = rowMapper({ requestFingerprint: funding.requestFingerprint });

const COLUMNS = [
  "id, company_id, line_id, funding_uuid, payment_method, amount_cents, description",
  "large_disbursement, status, request_fingerprint, expected_available_at, completed_at, created_at",
].join(", ");

/** A funding by id, in a unit or (for an operator's checks before one) from the read client. */
export async function loadFunding(
  tx: Pick<WriteTx, "execute">,
  fundingId: string,
): Promise<FundingRecord | null> {
  const { rows } = await tx.execute({
    sql: `SELECT ${COLUMNS} FROM fundings WHERE id = ?`,
    args: [fundingId],
  });
  return rows[0] ? toFunding(rows[0]) : null;
}

export interface AddFundsInput {
  readonly companyId: string;
  readonly lineId: string;
  readonly fundingUuid?: string | null;
  readonly paymentMethod: FundingMethod;
  readonly amountCents: number;
  readonly description: string;
  readonly largeDisbursement: boolean;
  /** Fingerprint of the request, to tell a replayed funding_uuid from a conflicting one. */
  readonly requestFingerprint: string;
}

/** Records a funding; a repeated funding_uuid returns the first record or is refused. */
export async function addFunds(
  tx: WriteTx,
  input: AddFundsInput,
  environment: Environment,
  now: number,
): Promise<Result<{ funding: FundingRecord; replayed: boolean }, "funding_uuid_reused">> {
  if (input.fundingUuid) {
    const { rows } = await tx.execute({
      sql: `SELECT ${COLUMNS} FROM fundings WHERE company_id = ? AND funding_uuid = ?`,
      args: [input.companyId, input.fundingUuid],
    });
    if (rows[0]) {
      if (toFingerprint(rows[0]).requestFingerprint !== input.requestFingerprint) {
        return refuse(
          "funding_uuid_reused",
          `funding_uuid ${input.fundingUuid} was used with a different request`,
          {
            field: "funding_uuid",
          },
        );
      }
      return ok({ funding: toFunding(rows[0]), replayed: true });
    }
  }
  const id = newId("fund");
  const ach = input.paymentMethod === "ACH";
  const receivedNow = !ach && environment === "test";
  await tx.execute({
    sql:
      `INSERT INTO fundings (id, company_id, line_id, funding_uuid, payment_method, amount_cents, description,
            large_disbursement, status, request_fingerprint, expected_available_at, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'Pending', ?, ?, ?)`,
    args: [
      id,
      input.companyId,
      input.lineId,
      input.fundingUuid ?? null,
      input.paymentMethod,
      input.amountCents,
      input.description,
      input.largeDisbursement ? 1 : 0,
      input.requestFingerprint,
      ach ? addBusinessDays(now, ACH_FUNDING_BUSINESS_DAYS) : receivedNow ? now : null,
      now,
    ],
  });
  const funding = (await loadFunding(tx, id))!;
  if (ach) {
    await moveFunding(tx, funding, {
      kind: "funding.ach_initiated",
      from: "bank",
      to: "pending_funding",
    }, now);
    await scheduleJob(tx, {
      companyId: input.companyId,
      kind: "funding.clear",
      subjectId: id,
      dueAt: addBusinessDays(now, ACH_FUNDING_BUSINESS_DAYS),
    }, now);
  } else if (receivedNow) {
    await creditAvailable(tx, funding, "funding.wire_received", "bank", now);
  }
  return ok({ funding: (await loadFunding(tx, id))!, replayed: false });
}

interface FundingMove {
  readonly kind: FundingLedgerKind;
  readonly from: "bank" | "pending_funding";
  readonly to: "available" | "pending_funding" | "bank";
  /** The funding's status after the move; unchanged when absent. */
  readonly status?: FundingStatus;
}

/** Posts a funding's movement and records its new status in the same unit. */
async function moveFunding(
  tx: WriteTx,
  funding: FundingRecord,
  move: FundingMove,
  now: number,
): Promise<void> {
  const posted = await postTransaction(tx, {
    companyId: funding.companyId,
    lineId: funding.lineId,
    kind: move.kind,
    fundingId: funding.id,
    transfers: [{ from: move.from, to: move.to, amountCents: funding.amountCents }],
    postedAt: now,
  });
  // Fundings never debit available or reserved, so the ledger has no reason to refuse them.
  if (!posted.ok) throw new Error(`funding ${funding.id} refused by the ledger: ${posted.message}`);
  if (move.status) {
    await tx.execute({
      sql: "UPDATE fundings SET status = ?, completed_at = ? WHERE id = ?",
      args: [move.status, now, funding.id],
    });
  }
}

/**
 * Money that became available releases waiting large disbursements, then offers again the failed
 * payouts whose re-offer found available short.
 */
async function creditAvailable(
  tx: WriteTx,
  funding: FundingRecord,
  kind: FundingLedgerKind,
  from: FundingMove["from"],
  now: number,
): Promise<void> {
  await moveFunding(tx, funding, { kind, from, to: "available", status: "Completed" }, now);
  await releasePendingFunds(tx, funding.companyId, funding.lineId, now);
  await scheduleReoffersAwaitingFunds(tx, funding.companyId, funding.lineId, now);
}

type TransitionRefusal = "funding_not_found" | "funding_not_pending" | "funding_wrong_method";

async function pendingFunding(
  tx: WriteTx,
  fundingId: string,
  method: FundingMethod,
): Promise<Result<FundingRecord, TransitionRefusal>> {
  const funding = await loadFunding(tx, fundingId);
  if (!funding) return refuse("funding_not_found", `no funding ${fundingId}`);
  if (funding.paymentMethod !== method) {
    return refuse(
      "funding_wrong_method",
      `funding ${fundingId} is ${funding.paymentMethod}, not ${method}`,
    );
  }
  if (funding.status !== "Pending") {
    return refuse("funding_not_pending", `funding ${fundingId} is ${funding.status}, not Pending`);
  }
  return ok(funding);
}

/** Live: the operator records that a pending wire arrived. */
export async function receiveWire(
  tx: WriteTx,
  fundingId: string,
  now: number,
): Promise<Result<FundingRecord, TransitionRefusal>> {
  const funding = await pendingFunding(tx, fundingId, "WireTransfer");
  if (!funding.ok) return funding;
  await creditAvailable(tx, funding.value, "funding.wire_received", "bank", now);
  return ok((await loadFunding(tx, fundingId))!);
}

/** ACH funding whose three business days passed: pending_funding → available. */
export async function clearAchFunding(
  tx: WriteTx,
  fundingId: string,
  now: number,
): Promise<Result<FundingRecord, TransitionRefusal>> {
  const funding = await pendingFunding(tx, fundingId, "ACH");
  if (!funding.ok) return funding;
  await creditAvailable(tx, funding.value, "funding.ach_cleared", "pending_funding", now);
  return ok((await loadFunding(tx, fundingId))!);
}

/** An ACH funding returned by the bank before clearing: pending_funding → bank. */
export async function returnAchFunding(
  tx: WriteTx,
  fundingId: string,
  now: number,
): Promise<Result<FundingRecord, TransitionRefusal>> {
  const funding = await pendingFunding(tx, fundingId, "ACH");
  if (!funding.ok) return funding;
  const move = {
    kind: "funding.ach_returned",
    from: "pending_funding",
    to: "bank",
    status: "Returned",
  } as const;
  await moveFunding(tx, funding.value, move, now);
  return ok((await loadFunding(tx, fundingId))!);
}
