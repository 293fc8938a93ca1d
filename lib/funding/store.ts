/**
 * Fundings of a business line (contract §5 and §6). An ACH funding sits in pending_funding while
 * its debit of the company's funding account goes to the bank in the next ACH file (lib/ach): it
 * becomes available when the debit's return window closes, or goes back to the bank when the
 * debit is returned. A wire is available when
 * received: at once in the sandbox, in live when an operator records it. Every credit to available
 * releases waiting large disbursements: first the one the funding names (`disbursement_uuid`),
 * then the others oldest first; each released disbursement records the funding that released it.
 */
import { columnsOf, integer, notNull, nullable, renamed, rowMapper, text } from "../../db/rows.ts";
import { disbursements, fundings } from "../../db/schema.ts";
import type { Environment } from "../platform/config.ts";
import { newId } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import type { LedgerTransactionKind } from "../ledger/postings.ts";
import type { Transfer } from "../ledger/types.ts";
import { postTransaction, readLineBalances } from "../ledger/store.ts";
import {
  findDisbursementForFunding,
  releasePendingFunds,
  scheduleReoffersAwaitingFunds,
} from "../payouts/store.ts";
import type { SqlExecutor } from "../ledger/store.ts";
import { hasAchRail } from "../ach/bank_store.ts";
import { type CutoffSchedule, expectedDebitClearsAt } from "../ach/cutoffs.ts";
import { queueAchEntry } from "../ach/files_store.ts";
import type { WriteTx } from "../../db/writer.ts";

export type FundingMethod = "ACH" | "WireTransfer";
export type FundingStatus = "Pending" | "Completed" | "Returned";

export interface FundingRecord {
  readonly id: string;
  readonly companyId: string;
  readonly lineId: string;
  /** The line's code, as the company names it. */
  readonly lineCode: string;
  readonly fundingUuid: string | null;
  readonly paymentMethod: FundingMethod;
  readonly amountCents: number;
  readonly description: string;
  readonly largeDisbursement: boolean;
  /** The large disbursement the funding is for: its credit releases that one first. */
  readonly disbursementId: string | null;
  /** That disbursement's disbursement_uuid, as the company named it. */
  readonly disbursementUuid: string | null;
  readonly status: FundingStatus;
  readonly expectedAvailableAt: number | null;
  readonly completedAt: number | null;
  readonly createdAt: number;
}

/** The kinds of ledger transaction a funding posts. */
export type FundingLedgerKind = Extract<LedgerTransactionKind, `funding.${string}`>;

const funding = columnsOf(fundings);
const disbursement = columnsOf(disbursements);
const toFunding: (row: Readonly<Record<string, unknown>>) => FundingRecord = rowMapper({
  id: funding.id,
  companyId: funding.companyId,
  lineId: funding.lineId,
  lineCode: text("business_lines", "code"),
  fundingUuid: funding.fundingUuid,
  paymentMethod: funding.paymentMethod,
  amountCents: funding.amountCents,
  description: funding.description,
  largeDisbursement: funding.largeDisbursement,
  disbursementId: funding.disbursementId,
  disbursementUuid: nullable(renamed(disbursement.externalUuid, "disbursement_uuid")),
  status: funding.status,
  expectedAvailableAt: funding.expectedAvailableAt,
  completedAt: funding.completedAt,
  createdAt: funding.createdAt,
});
const toFingerprint = rowMapper({ requestFingerprint: funding.requestFingerprint });

/** A funding with its line's code and the disbursement_uuid of the disbursement it names. */
const FROM_FUNDINGS = `fundings f JOIN business_lines l ON l.id = f.line_id
  LEFT JOIN disbursements target ON target.id = f.disbursement_id`;
const COLUMNS = [
  "f.id, f.company_id, f.line_id, l.code, f.funding_uuid, f.payment_method, f.amount_cents",
  "f.description, f.large_disbursement, f.disbursement_id, f.status, f.request_fingerprint",
  "f.expected_available_at, f.completed_at, f.created_at, target.external_uuid AS disbursement_uuid",
].join(", ");

/** A funding by id, in a unit or (for an operator's checks before one) from the read client. */
export async function loadFunding(
  tx: Pick<WriteTx, "execute">,
  fundingId: string,
): Promise<FundingRecord | null> {
  const { rows } = await tx.execute({
    sql: `SELECT ${COLUMNS} FROM ${FROM_FUNDINGS} WHERE f.id = ?`,
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
  /** The disbursement_uuid of the large disbursement waiting in pending_funds this funding is for. */
  readonly disbursementUuid?: string | null;
  /** Fingerprint of the request, to tell a replayed funding_uuid from a conflicting one. */
  readonly requestFingerprint: string;
  /** The company's ACH cutoffs, read before the unit: an ACH funding's availability estimate. */
  readonly achSchedule?: CutoffSchedule | null;
}

export type AddFundsRefusal =
  | "funding_uuid_reused"
  | "ach_not_configured"
  | "disbursement_not_found"
  | "disbursement_other_line"
  | "disbursement_not_pending_funds";

/**
 * Records a funding; a repeated funding_uuid returns the first record or is refused. A funding
 * that names a disbursement is refused unless that disbursement of the company's, on the
 * funding's line, waits in pending_funds now (the replay of a funding_uuid is checked first). An
 * ACH funding queues its debit for the company's next ACH file, in this unit; in live that needs
 * the company's bank settings.
 */
export async function addFunds(
  tx: WriteTx,
  input: AddFundsInput,
  environment: Environment,
  now: number,
): Promise<Result<{ funding: FundingRecord; replayed: boolean }, AddFundsRefusal>> {
  if (input.fundingUuid) {
    const { rows } = await tx.execute({
      sql: `SELECT ${COLUMNS} FROM ${FROM_FUNDINGS} WHERE f.company_id = ? AND f.funding_uuid = ?`,
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
  const ach = input.paymentMethod === "ACH";
  if (ach && !await hasAchRail(tx, environment, input.companyId)) {
    return refuse(
      "ach_not_configured",
      `company ${input.companyId} has no bank settings in ${environment}, so no ACH debit can be sent; fund by wire, or have an operator set them (deno task admin bank:set)`,
      { field: "payment_method" },
    );
  }
  let disbursementId: string | null = null;
  if (input.disbursementUuid) {
    const target = await waitingTarget(tx, input.companyId, input.lineId, input.disbursementUuid);
    if (!target.ok) return target;
    disbursementId = target.value;
  }
  const id = newId("fund");
  const receivedNow = !ach && environment === "test";
  await tx.execute({
    sql:
      `INSERT INTO fundings (id, company_id, line_id, funding_uuid, payment_method, amount_cents, description,
            large_disbursement, disbursement_id, status, request_fingerprint, expected_available_at, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'Pending', ?, ?, ?)`,
    args: [
      id,
      input.companyId,
      input.lineId,
      input.fundingUuid ?? null,
      input.paymentMethod,
      input.amountCents,
      input.description,
      input.largeDisbursement ? 1 : 0,
      disbursementId,
      input.requestFingerprint,
      // An ACH funding's is estimated from the next cutoff, and set again when its file is built.
      receivedNow
        ? now
        : ach && input.achSchedule
        ? expectedDebitClearsAt(input.achSchedule, input.amountCents, now)
        : null,
      now,
    ],
  });
  const funding = (await loadFunding(tx, id))!;
  if (ach) {
    // Its money counts as on its way only once its debit goes to the bank (recordAchDebitSent).
    await queueAchEntry(tx, {
      companyId: input.companyId,
      payoutId: null,
      fundingId: id,
      direction: "debit",
      reference: `${id}-1`,
      amountCents: input.amountCents,
    }, now);
  } else if (receivedNow) {
    await creditAvailable(tx, funding, "funding.wire_received", "bank", now);
  }
  return ok({ funding: (await loadFunding(tx, id))!, replayed: false });
}

/** The id of the disbursement a new funding names, or why it cannot be named. */
async function waitingTarget(
  tx: WriteTx,
  companyId: string,
  lineId: string,
  disbursementUuid: string,
): Promise<
  Result<
    string,
    "disbursement_not_found" | "disbursement_other_line" | "disbursement_not_pending_funds"
  >
> {
  const field = { field: "disbursement_uuid" };
  const target = await findDisbursementForFunding(tx, companyId, disbursementUuid);
  if (!target) {
    return refuse(
      "disbursement_not_found",
      `disbursement_uuid ${disbursementUuid}: the company has no such disbursement`,
      field,
    );
  }
  if (target.lineId !== lineId) {
    return refuse(
      "disbursement_other_line",
      `disbursement_uuid ${disbursementUuid} is a disbursement of line ${target.lineCode}; this funding is for another line`,
      field,
    );
  }
  if (!target.waiting) {
    return refuse(
      "disbursement_not_pending_funds",
      `disbursement_uuid ${disbursementUuid} is not waiting for funds: its payees are ${
        target.payeeStatuses.join(", ")
      }`,
      field,
    );
  }
  return ok(target.id);
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
 * Money that became available releases waiting large disbursements (the one the funding names
 * first), then offers again the failed payouts whose re-offer found available short.
 */
async function creditAvailable(
  tx: WriteTx,
  funding: FundingRecord,
  kind: FundingLedgerKind,
  from: FundingMove["from"],
  now: number,
): Promise<void> {
  await moveFunding(tx, funding, { kind, from, to: "available", status: "Completed" }, now);
  await coverFundingShortfall(tx, funding, now);
  await releasePendingFunds(tx, funding.companyId, funding.lineId, now, {
    fundingId: funding.id,
    disbursementId: funding.disbursementId,
  });
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

/**
 * What the line's ACH fundings requested and not yet sent to the bank amount to: the company sees
 * them pending with the ones in flight, though the ledger counts them only once their debit goes.
 */
export async function achRequestedCents(reader: SqlExecutor, lineId: string): Promise<number> {
  const { rows } = await reader.execute({
    sql: `SELECT coalesce(sum(f.amount_cents), 0) AS cents FROM fundings f
          WHERE f.line_id = ? AND f.payment_method = 'ACH' AND f.status = 'Pending'
            AND NOT EXISTS (SELECT 1 FROM ledger_transactions t
              WHERE t.funding_id = f.id AND t.kind = 'funding.ach_initiated')`,
    args: [lineId],
  });
  return Number(rows[0].cents);
}

/** Whether the funding's debit went to the bank: its amount was posted to pending_funding. */
async function achDebitInitiated(tx: WriteTx, fundingId: string): Promise<boolean> {
  const { rows } = await tx.execute({
    sql: `SELECT 1 FROM ledger_transactions WHERE funding_id = ? AND kind = 'funding.ach_initiated'
          LIMIT 1`,
    args: [fundingId],
  });
  return rows.length > 0;
}

/**
 * An ACH funding's debit went to the bank (its file was transmitted): from now its amount is
 * funded and pending (bank → pending_funding), as the tie-out counts it. Once per funding.
 */
export async function recordAchDebitSent(
  tx: WriteTx,
  fundingId: string,
  now: number,
): Promise<void> {
  const funding = await loadFunding(tx, fundingId);
  if (funding?.status !== "Pending" || await achDebitInitiated(tx, fundingId)) return;
  await moveFunding(tx, funding, {
    kind: "funding.ach_initiated",
    from: "bank",
    to: "pending_funding",
  }, now);
}

/** An ACH funding whose debit's return window closed without a return: pending_funding → available. */
export async function clearAchFunding(
  tx: WriteTx,
  fundingId: string,
  now: number,
): Promise<Result<FundingRecord, TransitionRefusal>> {
  const funding = await pendingFunding(tx, fundingId, "ACH");
  if (!funding.ok) return funding;
  // A debit settles only after it was sent; this posts what its sending did not (never twice).
  await recordAchDebitSent(tx, fundingId, now);
  await creditAvailable(tx, funding.value, "funding.ach_cleared", "pending_funding", now);
  return ok((await loadFunding(tx, fundingId))!);
}

/**
 * An ACH funding whose debit the bank returned before it cleared: pending_funding → bank. One whose
 * debit never went to the bank (only queued) posted nothing: it is returned and its debit voided.
 */
export async function returnAchFunding(
  tx: WriteTx,
  fundingId: string,
  now: number,
): Promise<Result<FundingRecord, TransitionRefusal>> {
  const funding = await pendingFunding(tx, fundingId, "ACH");
  if (!funding.ok) return funding;
  if (await achDebitInitiated(tx, fundingId)) {
    const move = {
      kind: "funding.ach_returned",
      from: "pending_funding",
      to: "bank",
      status: "Returned",
    } as const;
    await moveFunding(tx, funding.value, move, now);
  } else {
    await tx.execute({
      sql: "UPDATE fundings SET status = 'Returned', completed_at = ? WHERE id = ?",
      args: [now, fundingId],
    });
    await tx.execute({
      sql: `UPDATE rail_batch_entries SET status = 'voided'
            WHERE funding_id = ? AND status = 'queued' AND batch_id IS NULL`,
      args: [fundingId],
    });
  }
  return ok((await loadFunding(tx, fundingId))!);
}

/**
 * An ACH funding whose debit the bank took back after it cleared (an unauthorized or revoked
 * debit: R05, R07, R10, R29 come up to 60 days later): its amount goes back to the bank from
 * available as far as available holds (it never goes below zero), and the rest is owed in
 * `funding_shortfall`, which the line's next credits cover first; until then its new payouts wait.
 * Answers the funding and what is owed of it.
 */
export async function returnClearedAchFunding(
  tx: WriteTx,
  fundingId: string,
  now: number,
): Promise<
  Result<
    { funding: FundingRecord; shortfallCents: number },
    "funding_not_found" | "funding_not_cleared"
  >
> {
  const funding = await loadFunding(tx, fundingId);
  if (!funding) return refuse("funding_not_found", `no funding ${fundingId}`);
  if (funding.paymentMethod !== "ACH" || funding.status !== "Completed") {
    return refuse(
      "funding_not_cleared",
      `funding ${fundingId} is a ${funding.paymentMethod} funding ${funding.status}: only a cleared ACH funding is returned after clearing`,
    );
  }
  const available = (await readLineBalances(tx, funding.lineId)).available;
  const fromAvailable = Math.min(available, funding.amountCents);
  const shortfallCents = funding.amountCents - fromAvailable;
  const transfers: Transfer[] = [];
  if (fromAvailable > 0) {
    transfers.push({ from: "available", to: "bank", amountCents: fromAvailable });
  }
  if (shortfallCents > 0) {
    transfers.push({ from: "funding_shortfall", to: "bank", amountCents: shortfallCents });
  }
  const posted = await postTransaction(tx, {
    companyId: funding.companyId,
    lineId: funding.lineId,
    kind: "funding.ach_returned_after_clear",
    fundingId: funding.id,
    transfers,
    postedAt: now,
  });
  // What available holds was read in this unit, and funding_shortfall may go below zero.
  if (!posted.ok) throw new Error(`funding ${funding.id} refused by the ledger: ${posted.message}`);
  await tx.execute({
    sql: "UPDATE fundings SET status = 'Returned' WHERE id = ?",
    args: [funding.id],
  });
  if (shortfallCents > 0) {
    console.error(JSON.stringify({
      level: "error",
      msg:
        "a cleared ACH funding was returned and available did not cover it: the line owes the rest, and its new payouts wait until a credit covers it",
      company_id: funding.companyId,
      line_id: funding.lineId,
      funding_id: funding.id,
      shortfall_cents: shortfallCents,
    }));
  }
  return ok({ funding: (await loadFunding(tx, fundingId))!, shortfallCents });
}

/** A credit of the line pays back what it owes in funding_shortfall first, as far as available goes. */
async function coverFundingShortfall(
  tx: WriteTx,
  line: Pick<FundingRecord, "companyId" | "lineId">,
  now: number,
): Promise<void> {
  const balances = await readLineBalances(tx, line.lineId);
  const covered = Math.min(-balances.funding_shortfall, balances.available);
  if (covered <= 0) return;
  const posted = await postTransaction(tx, {
    companyId: line.companyId,
    lineId: line.lineId,
    kind: "funding.shortfall_covered",
    transfers: [{ from: "available", to: "funding_shortfall", amountCents: covered }],
    postedAt: now,
  });
  if (!posted.ok) throw new Error(`shortfall cover refused by the ledger: ${posted.message}`);
}

/**
 * Why an operator may not record a funding's return by hand: its debit is in an ACH file, so the
 * bank's return file returns it (applied when imported). Null when nothing stands in the way.
 */
export async function manualReturnBlocker(
  reader: SqlExecutor,
  fundingId: string,
): Promise<string | null> {
  const { rows } = await reader.execute({
    sql: `SELECT e.status, e.batch_id, b.status AS batch_status FROM rail_batch_entries e
            LEFT JOIN rail_batches b ON b.id = e.batch_id
          WHERE e.funding_id = ? AND e.status IN ('batched', 'sent')
          ORDER BY e.created_at DESC LIMIT 1`,
    args: [fundingId],
  });
  if (!rows[0]) return null;
  return `funding ${fundingId}'s debit is in ACH file ${rows[0].batch_id} (${
    rows[0].batch_status
  }): a return of it comes in the bank's return file and is applied when imported; ${
    rows[0].status === "batched"
      ? "void the file first if the bank must not collect it"
      : "the file was sent, so the bank collects it unless it returns it"
  }`;
}

/** A disbursement a funding's credit released from pending_funds, and when. */
export interface ReleasedDisbursement {
  readonly disbursementUuid: string;
  readonly releasedAt: number;
}

const toReleased: (row: Readonly<Record<string, unknown>>) => ReleasedDisbursement = rowMapper({
  disbursementUuid: disbursement.externalUuid,
  releasedAt: notNull(disbursement.releasedAt),
});

/**
 * What the funding's credit released, in release order. The releases run in the unit of the credit,
 * at the funding's completed_at, so the line's ledger index by time finds their postings without
 * reading every disbursement of the company.
 */
export async function listReleasedBy(
  executor: SqlExecutor,
  funding: Pick<FundingRecord, "id" | "lineId" | "completedAt">,
): Promise<ReleasedDisbursement[]> {
  if (funding.completedAt === null) return [];
  const { rows } = await executor.execute({
    sql: `SELECT d.external_uuid, d.released_at FROM ledger_transactions t
            JOIN payouts p ON p.id = t.payout_id JOIN disbursements d ON d.id = p.disbursement_id
          WHERE t.line_id = ? AND t.posted_at = ? AND t.kind = 'payout.release_funds'
            AND d.released_by_funding_id = ?
          GROUP BY d.id ORDER BY min(t.rowid)`,
    args: [funding.lineId, funding.completedAt, funding.id],
  });
  return rows.map(toReleased);
}

/** A funding as the company's API reports it: the record and what its credit released. */
export interface FundingReport extends FundingRecord {
  readonly released: readonly ReleasedDisbursement[];
}

const toCursor = rowMapper({
  createdAt: funding.createdAt,
  seq: integer("fundings", "seq"),
});

/**
 * The company's fundings, newest first, of one line or all; `startingAfter` is the public id
 * (funding_uuid, else the fund_ id) of the last funding of the previous page. Null when no such
 * funding exists.
 */
export async function listFundings(
  executor: SqlExecutor,
  scope: { companyId: string; lineId: string | null },
  page: { limit: number; startingAfter: string | null },
): Promise<{ data: FundingReport[]; hasMore: boolean } | null> {
  let cursor: { createdAt: number; seq: number } | null = null;
  if (page.startingAfter !== null) {
    const { rows } = await executor.execute({
      sql: `SELECT created_at, rowid AS seq FROM fundings WHERE company_id = ?
              AND (funding_uuid = ? OR (funding_uuid IS NULL AND id = ?))`,
      args: [scope.companyId, page.startingAfter, page.startingAfter],
    });
    if (!rows[0]) return null;
    cursor = toCursor(rows[0]);
  }
  const { rows } = await executor.execute({
    sql: `SELECT ${COLUMNS} FROM ${FROM_FUNDINGS}
          WHERE f.company_id = ? AND (? IS NULL OR f.line_id = ?)
            ${cursor ? "AND (f.created_at < ? OR (f.created_at = ? AND f.rowid < ?))" : ""}
          ORDER BY f.created_at DESC, f.rowid DESC LIMIT ?`,
    args: [
      scope.companyId,
      scope.lineId,
      scope.lineId,
      ...(cursor ? [cursor.createdAt, cursor.createdAt, cursor.seq] : []),
      page.limit + 1,
    ],
  });
  const data: FundingReport[] = [];
  for (const row of rows.slice(0, page.limit)) {
    const record = toFunding(row);
    data.push({ ...record, released: await listReleasedBy(executor, record) });
  }
  return { data, hasMore: rows.length > page.limit };
}
