/**
 * Reconciliation exceptions: listing them, and resolving one with a note, audited in the unit.
 * A resolution may post an adjusting entry to one of the company's lines through the ledger's one
 * posting function (lib/reconciliation/adjustment.ts decides it); in live that resolution waits
 * for a second admin (`recon_exception.adjust`), and is made in the approval's unit.
 */
import type { Database } from "../../db/client.ts";
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import { appendAudit, type AuditActor } from "../audit/store.ts";
import { resolveLine } from "../identity/line_store.ts";
import { postTransaction } from "../ledger/store.ts";
import type { Environment } from "../platform/config.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { type AdjustingEntry, adjustingEntryOf, RECON_NOTE_LENGTH_MAX } from "./adjustment.ts";

export interface ReconException {
  readonly id: string;
  readonly companyId: string;
  readonly statementDate: string;
  readonly accountLastFour: string;
  readonly side: "bank" | "service";
  readonly kind: string;
  readonly lineId: string | null;
  readonly subjectId: string | null;
  readonly direction: "credit" | "debit";
  readonly amountCents: number;
  readonly reason: string;
  readonly status: "open" | "resolved";
  readonly note: string | null;
  readonly ledgerTransactionId: string | null;
  readonly resolvedBy: string | null;
  readonly resolvedAt: number | null;
  readonly createdAt: number;
}

/** A listing returns at most this many exceptions. */
export const RECON_EXCEPTIONS_PAGE_MAX = 200;

const COLUMNS = `id, company_id, statement_date, account_last_four, side, kind, line_id, subject_id,
  direction, amount_cents, reason, status, note, ledger_transaction_id, resolved_by, resolved_at,
  created_at`;

const nullable = (v: unknown) => (v === null ? null : String(v));
const exceptionOf = (row: Record<string, unknown>): ReconException => ({
  id: String(row.id),
  companyId: String(row.company_id),
  statementDate: String(row.statement_date),
  accountLastFour: String(row.account_last_four),
  side: String(row.side) as ReconException["side"],
  kind: String(row.kind),
  lineId: nullable(row.line_id),
  subjectId: nullable(row.subject_id),
  direction: String(row.direction) as ReconException["direction"],
  amountCents: Number(row.amount_cents),
  reason: String(row.reason),
  status: String(row.status) as ReconException["status"],
  note: nullable(row.note),
  ledgerTransactionId: nullable(row.ledger_transaction_id),
  resolvedBy: nullable(row.resolved_by),
  resolvedAt: row.resolved_at === null ? null : Number(row.resolved_at),
  createdAt: Number(row.created_at),
});

/** One exception, or null. */
export async function findReconException(
  reader: SqlReader,
  id: string,
): Promise<ReconException | null> {
  const { rows } = await reader.execute({
    sql: `SELECT ${COLUMNS} FROM recon_exceptions WHERE id = ?`,
    args: [id],
  });
  return rows[0] ? exceptionOf(rows[0]) : null;
}

/** Exceptions oldest first, of some companies (null: every company), by status. */
export async function listReconExceptions(
  reader: SqlReader,
  filter: {
    companyIds: readonly string[] | null;
    status: "open" | "resolved" | "all";
    limit: number;
  },
): Promise<ReconException[]> {
  const where: string[] = [];
  const args: (string | number)[] = [];
  if (filter.status !== "all") {
    where.push("status = ?");
    args.push(filter.status);
  }
  if (filter.companyIds !== null) {
    if (filter.companyIds.length === 0) return [];
    where.push(`company_id IN (${filter.companyIds.map(() => "?").join(", ")})`);
    args.push(...filter.companyIds);
  }
  const { rows } = await reader.execute({
    sql: `SELECT ${COLUMNS} FROM recon_exceptions ${
      where.length ? `WHERE ${where.join(" AND ")}` : ""
    } ORDER BY created_at, rowid LIMIT ?`,
    args: [...args, filter.limit],
  });
  return rows.map(exceptionOf);
}

export type ReconResolveRefusal =
  | "exception_not_found"
  | "exception_resolved"
  | "invalid_input"
  | "line_not_found"
  | "insufficient_funds";

export interface ResolveReconInput {
  readonly exceptionId: string;
  readonly note: string;
  /** The code of the line an adjusting entry posts to; null resolves with the note alone. */
  readonly adjustLine: string | null;
  /** The companies the operator may act on (null: every company); another's is not found. */
  readonly companyIds: readonly string[] | null;
}

export interface ResolvedRecon {
  readonly exception: ReconException;
  readonly adjustment: (AdjustingEntry & { lineId: string; lineCode: string }) | null;
}

/** Checks a note: given, and at most RECON_NOTE_LENGTH_MAX characters. */
export function checkNote(note: string | undefined): Result<string, "invalid_input"> {
  const text = note?.trim() ?? "";
  if (text === "") {
    return refuse("invalid_input", "--note: say why (it is kept with the exception)", {
      field: "note",
    });
  }
  if (text.length > RECON_NOTE_LENGTH_MAX) {
    return refuse(
      "invalid_input",
      `--note: at most ${RECON_NOTE_LENGTH_MAX} characters, got ${text.length}`,
      {
        field: "note",
      },
    );
  }
  return ok(text);
}

/** The open exception an operator may act on, and the adjusting entry it would post. */
export async function adjustmentPreview(
  reader: SqlReader,
  input: ResolveReconInput,
): Promise<Result<ResolvedRecon, ReconResolveRefusal>> {
  const exception = await findReconException(reader, input.exceptionId);
  if (!exception || (input.companyIds && !input.companyIds.includes(exception.companyId))) {
    return refuse(
      "exception_not_found",
      `no reconciliation exception ${JSON.stringify(input.exceptionId)}`,
      {
        field: "exception",
      },
    );
  }
  if (exception.status !== "open") {
    return refuse(
      "exception_resolved",
      `reconciliation exception ${exception.id} was resolved already: ${exception.note}`,
      { field: "exception" },
    );
  }
  if (input.adjustLine === null) return ok({ exception, adjustment: null });
  const line = await resolveLine(reader, exception.companyId, input.adjustLine);
  if (!line) {
    return refuse("line_not_found", `the company has no line ${JSON.stringify(input.adjustLine)}`, {
      field: "adjust-line",
    });
  }
  return ok({
    exception,
    adjustment: { ...adjustingEntryOf(exception), lineId: line.id, lineCode: line.code },
  });
}

/** Resolves an open exception in the caller's unit, posting its adjusting entry when asked. */
export async function resolveReconExceptionInUnit(
  tx: WriteTx,
  environment: Environment,
  actor: AuditActor,
  input: ResolveReconInput,
  now: number,
): Promise<Result<ResolvedRecon, ReconResolveRefusal>> {
  const previewed = await adjustmentPreview(tx, input);
  if (!previewed.ok) return previewed;
  const { exception, adjustment } = previewed.value;
  let ledgerTransactionId: string | null = null;
  if (adjustment !== null) {
    const posted = await postTransaction(tx, {
      companyId: exception.companyId,
      lineId: adjustment.lineId,
      kind: adjustment.kind,
      transfers: [{
        from: adjustment.from,
        to: adjustment.to,
        amountCents: adjustment.amountCents,
      }],
      postedAt: now,
    });
    if (!posted.ok) {
      return refuse(
        "insufficient_funds",
        `line ${adjustment.lineCode}: ${posted.message}; fund the line first, nothing was posted`,
        { field: "adjust-line" },
      );
    }
    ledgerTransactionId = posted.value.transactionId;
  }
  const resolved: ReconException = {
    ...exception,
    status: "resolved",
    note: input.note,
    ledgerTransactionId,
    resolvedBy: actor.operator?.id ?? null,
    resolvedAt: now,
  };
  await tx.execute({
    sql: `UPDATE recon_exceptions SET status = 'resolved', note = ?, ledger_transaction_id = ?,
            resolved_by = ?, resolved_at = ? WHERE id = ? AND status = 'open'`,
    args: [input.note, ledgerTransactionId, resolved.resolvedBy, now, exception.id],
  });
  await appendAudit(tx, environment, actor, {
    at: now,
    action: "recon:resolve",
    objectType: "recon_exception",
    objectId: exception.id,
    companyId: exception.companyId,
    before: {
      status: exception.status,
      reason: exception.reason,
      amount_cents: exception.amountCents,
    },
    after: {
      status: "resolved",
      note: input.note,
      ledger_transaction_id: ledgerTransactionId,
      adjustment: adjustment === null ? null : {
        kind: adjustment.kind,
        line: adjustment.lineCode,
        from: adjustment.from,
        to: adjustment.to,
        amount_cents: adjustment.amountCents,
      },
    },
  });
  return ok({ exception: resolved, adjustment });
}

/** Resolves an exception in a unit of its own; a refusal writes nothing. */
export function resolveReconException(
  database: Database,
  environment: Environment,
  actor: AuditActor,
  input: ResolveReconInput,
  now: number,
): Promise<Result<ResolvedRecon, ReconResolveRefusal>> {
  return database.writer.write(async (tx): Promise<Result<ResolvedRecon, ReconResolveRefusal>> => {
    const resolved = await resolveReconExceptionInUnit(tx, environment, actor, input, now);
    return resolved.ok ? resolved : tx.abort(resolved);
  });
}
