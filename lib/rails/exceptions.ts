/**
 * The rail exceptions queue: a rail's outcome of an entry that its payout cannot take (the bank
 * paid the entry of a payout canceled meanwhile, a return for a payout offered again since). The
 * outcome is kept once per entry and outcome, the entry settles as the rail reported, and nothing
 * else waits: the rest of the file, import or settlement goes on. An operator resolves each one,
 * audited in the same unit:
 * - `payment_stands` (a paid entry only): the bank's payment is final and the ledger had released
 *   the money, so the paid amount goes from available to the bank (`rail.paid_exception`); when
 *   available cannot cover it nothing is written (fund the line first). In live a second admin
 *   approves it first.
 * - `no_ledger_effect`: nothing to post (the money came back, or the bank reversed its payment).
 */
import { and, eq } from "drizzle-orm";
import { columnsOf, rowMapper } from "../../db/rows.ts";
import { railExceptions } from "../../db/schema.ts";
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import { postTransaction } from "../ledger/store.ts";
import type { Environment } from "../platform/config.ts";
import { newId } from "../platform/keys.ts";
import { formatDollars } from "../platform/money.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { type BatchEntry, batchEntryOfRow, type EntryOutcome } from "./batch.ts";

export type RailExceptionRow = typeof railExceptions.$inferSelect;

/** How an operator closes a rail exception. */
export const railExceptionResolutions = ["payment_stands", "no_ledger_effect"] as const;
export type RailExceptionResolution = (typeof railExceptionResolutions)[number];

/** A resolution's note, kept in the audit log. */
export const RAIL_EXCEPTION_NOTE_LENGTH_MAX = 500;
/** A listing shows at most this many exceptions. */
export const RAIL_EXCEPTIONS_LISTED_MAX = 100;

/** What the pipeline knows of an outcome its payout could not take. */
export interface NewRailException {
  readonly entry: BatchEntry;
  readonly outcome: EntryOutcome;
  readonly batchId: string | null;
  readonly payoutStatus: string | null;
  readonly reason: string;
}

/**
 * Keeps the outcome in the queue in the caller's unit (once: the same outcome reported again
 * changes nothing) and logs it for the operators.
 */
export async function recordRailException(
  tx: WriteTx,
  exception: NewRailException,
  now: number,
): Promise<void> {
  const { entry, outcome } = exception;
  const inserted = await tx.db.insert(railExceptions).values({
    id: newId("rex"),
    companyId: entry.companyId,
    rail: entry.rail,
    entryId: entry.id,
    batchId: exception.batchId,
    payoutId: entry.payoutId,
    reference: entry.reference,
    outcome: outcome.kind,
    returnCode: outcome.kind === "failed" ? outcome.returnCode ?? null : null,
    amountCents: entry.amountCents,
    payoutStatus: exception.payoutStatus,
    reason: exception.reason,
    status: "open",
    createdAt: now,
  }).onConflictDoNothing({ target: [railExceptions.entryId, railExceptions.outcome] })
    .returning({ id: railExceptions.id });
  if (inserted.length === 0) return;
  console.error(JSON.stringify({
    level: "error",
    msg: "a rail outcome its payout cannot take went to the rail exceptions queue",
    exception_id: inserted[0].id,
    rail: entry.rail,
    reference: entry.reference,
    payout_id: entry.payoutId,
    outcome: outcome.kind,
    reason: exception.reason,
  }));
}

const exceptionColumns = columnsOf(railExceptions);
const toRailException = rowMapper(exceptionColumns);
const EXCEPTION_COLUMNS = toRailException.columns.join(", ");

/**
 * Keeps in the queue an outcome a rail reported of the entry `entryId` that nothing may apply (a
 * return naming an entry of a voided file, a refund of a payout that did not complete), with
 * the entry's batch and its payout's status as they are now.
 */
export async function recordEntryException(
  tx: WriteTx,
  entryId: string,
  outcome: EntryOutcome,
  reason: string,
  now: number,
): Promise<void> {
  const { rows } = await tx.execute({
    sql: `SELECT e.id, e.company_id, e.rail, e.batch_id, e.payout_id, e.funding_id, e.direction,
            e.reference, e.amount_cents, p.status AS payout_status
          FROM rail_batch_entries e LEFT JOIN payouts p ON p.id = e.payout_id WHERE e.id = ?`,
    args: [entryId],
  });
  const row = rows[0];
  if (!row) throw new Error(`recordEntryException: no batch entry ${entryId}`);
  await recordRailException(tx, {
    entry: batchEntryOfRow(row),
    outcome,
    batchId: row.batch_id === null ? null : String(row.batch_id),
    payoutStatus: row.payout_status === null ? null : String(row.payout_status),
    reason,
  }, now);
}

/** The exception with this id, or null. */
export async function findRailException(
  reader: SqlReader,
  id: string,
): Promise<RailExceptionRow | null> {
  const { rows } = await reader.execute({
    sql: `SELECT ${EXCEPTION_COLUMNS} FROM rail_exceptions WHERE id = ?`,
    args: [id],
  });
  return rows[0] ? toRailException(rows[0]) : null;
}

/** Exceptions oldest first, of `status` (null: any) and of these companies (null: every one). */
export async function listRailExceptions(
  reader: SqlReader,
  filter: { status: "open" | "resolved" | null; companyIds: readonly string[] | null },
  limit: number,
): Promise<RailExceptionRow[]> {
  const conditions = [];
  const args: (string | number)[] = [];
  if (filter.status !== null) {
    conditions.push("status = ?");
    args.push(filter.status);
  }
  if (filter.companyIds !== null) {
    conditions.push("company_id IN (SELECT value FROM json_each(?))");
    args.push(JSON.stringify(filter.companyIds));
  }
  const { rows } = await reader.execute({
    sql: `SELECT ${EXCEPTION_COLUMNS} FROM rail_exceptions ${
      conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : ""
    } ORDER BY created_at, rowid LIMIT ?`,
    args: [...args, Math.min(limit, RAIL_EXCEPTIONS_LISTED_MAX)],
  });
  return rows.map(toRailException);
}

export type RailExceptionRefusal =
  | "rail_exception_not_found"
  | "rail_exception_resolved"
  | "invalid_resolution"
  | "insufficient_funds";

export interface ResolveRailException {
  readonly exceptionId: string;
  readonly resolution: string;
  readonly note: string | null;
  /** The companies the operator may act on (null: every company); another's is not found. */
  readonly companyIds: readonly string[] | null;
}

/** Checks a resolution before any unit: its name, its note, and that it fits the outcome. */
export function checkResolution(
  exception: Pick<RailExceptionRow, "id" | "outcome">,
  input: Pick<ResolveRailException, "resolution" | "note">,
): Result<RailExceptionResolution, "invalid_resolution"> {
  if (!(railExceptionResolutions as readonly string[]).includes(input.resolution)) {
    return refuse(
      "invalid_resolution",
      `resolution ${JSON.stringify(input.resolution)}: one of ${
        railExceptionResolutions.join(", ")
      }`,
      { field: "resolution" },
    );
  }
  if (input.note !== null && input.note.length > RAIL_EXCEPTION_NOTE_LENGTH_MAX) {
    return refuse(
      "invalid_resolution",
      `note: at most ${RAIL_EXCEPTION_NOTE_LENGTH_MAX} characters, got ${input.note.length}`,
      { field: "note" },
    );
  }
  if (input.resolution === "payment_stands" && exception.outcome !== "completed") {
    return refuse(
      "invalid_resolution",
      `rail exception ${exception.id} reports money that came back: nothing was paid to stand (no_ledger_effect)`,
      { field: "resolution" },
    );
  }
  return ok(input.resolution as RailExceptionResolution);
}

/** Whether resolving so posts money (then live needs a second admin). */
export const resolutionPostsMoney = (resolution: RailExceptionResolution): boolean =>
  resolution === "payment_stands";

/** Resolves an open exception in the caller's unit with its audit row; refuses with no effect. */
export async function resolveRailException(
  tx: WriteTx,
  environment: Environment,
  actor: AuditActor,
  input: ResolveRailException,
  now: number,
): Promise<Result<RailExceptionRow, RailExceptionRefusal>> {
  const exception = await findRailException(tx, input.exceptionId);
  if (!exception || (input.companyIds && !input.companyIds.includes(exception.companyId))) {
    return refuse("rail_exception_not_found", `no rail exception ${input.exceptionId}`, {
      field: "exception",
    });
  }
  if (exception.status !== "open") {
    return refuse(
      "rail_exception_resolved",
      `rail exception ${exception.id} was resolved (${exception.resolution}) already`,
      { field: "exception" },
    );
  }
  const resolution = checkResolution(exception, input);
  if (!resolution.ok) return resolution;
  let ledgerTransactionId: string | null = null;
  if (resolutionPostsMoney(resolution.value)) {
    const posted = await postTransaction(tx, {
      companyId: exception.companyId,
      lineId: await lineOf(tx, exception),
      kind: "rail.paid_exception",
      transfers: [{ from: "available", to: "bank", amountCents: exception.amountCents }],
      ...(exception.payoutId ? { payoutId: exception.payoutId } : {}),
      postedAt: now,
    });
    if (!posted.ok) {
      return refuse(
        "insufficient_funds",
        `the bank's payment of ${
          formatDollars(exception.amountCents)
        } (entry ${exception.reference}) is more than available holds: fund the line, then resolve the exception`,
        { field: "exception", details: posted.details },
      );
    }
    ledgerTransactionId = posted.value.transactionId;
  }
  const resolved: RailExceptionRow = {
    ...exception,
    status: "resolved",
    resolution: resolution.value,
    ledgerTransactionId,
    resolvedBy: actor.operator?.id ?? null,
    resolvedAt: now,
  };
  await tx.db.update(railExceptions).set({
    status: "resolved",
    resolution: resolution.value,
    ledgerTransactionId,
    resolvedBy: resolved.resolvedBy,
    resolvedAt: now,
  }).where(and(eq(railExceptions.id, exception.id), eq(railExceptions.status, "open")));
  await appendAudit(tx, environment, actor, {
    at: now,
    action: "rails:resolve-exception",
    objectType: "rail_exception",
    objectId: exception.id,
    companyId: exception.companyId,
    before: railExceptionView(exception),
    after: { ...railExceptionView(resolved), note: input.note },
  });
  return ok(resolved);
}

async function lineOf(tx: WriteTx, exception: RailExceptionRow): Promise<string> {
  const { rows } = await tx.execute({
    sql: `SELECT coalesce(
            (SELECT line_id FROM payouts WHERE id = ?),
            (SELECT line_id FROM fundings WHERE id = (SELECT funding_id FROM rail_batch_entries WHERE id = ?))
          ) AS line_id`,
    args: [exception.payoutId, exception.entryId],
  });
  if (rows[0]?.line_id == null) throw new Error(`rail exception ${exception.id} has no line`);
  return String(rows[0].line_id);
}

/** An exception as operators and the audit log see it. */
export function railExceptionView(row: RailExceptionRow) {
  return {
    id: row.id,
    company_id: row.companyId,
    rail: row.rail,
    batch_id: row.batchId,
    payout_id: row.payoutId,
    reference: row.reference,
    outcome: row.outcome,
    return_code: row.returnCode,
    amount_cents: row.amountCents,
    payout_status: row.payoutStatus,
    reason: row.reason,
    status: row.status,
    resolution: row.resolution,
    ledger_transaction_id: row.ledgerTransactionId,
    created_at: new Date(row.createdAt).toISOString(),
    resolved_at: row.resolvedAt === null ? null : new Date(row.resolvedAt).toISOString(),
  };
}

/** Open exceptions per company, for the console's attention list and the metric. */
export async function openRailExceptionCount(
  reader: SqlReader,
  companyIds: readonly string[] | null,
): Promise<number> {
  const { rows } = await reader.execute({
    sql: `SELECT count(*) AS n FROM rail_exceptions WHERE status = 'open'
            AND (? IS NULL OR company_id IN (SELECT value FROM json_each(?)))`,
    args: [
      companyIds === null ? null : "scoped",
      companyIds === null ? "[]" : JSON.stringify(companyIds),
    ],
  });
  return Number(rows[0].n);
}

/** The approved `rail_exception.resolve` (live): resolves as the request said, in the approval's unit. */
export async function railExceptionResolved(
  tx: WriteTx,
  actor: AuditActor,
  approval: { readonly objectId: string; readonly payload: Record<string, unknown> },
  now: number,
): Promise<Result<Record<string, unknown>, RailExceptionRefusal>> {
  const resolved = await resolveRailException(tx, "live", actor, {
    exceptionId: approval.objectId,
    resolution: String(approval.payload.resolution),
    note: typeof approval.payload.note === "string" ? approval.payload.note : null,
    companyIds: null,
  }, now);
  return resolved.ok ? ok(railExceptionView(resolved.value)) : resolved;
}
