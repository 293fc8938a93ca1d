/**
 * Read models of the batches of every rail for operators (CLI and console): a batch's state, why
 * it waits, and every transmission attempt with its answer; and what needs an operator (in-doubt
 * batches, and built ones held past FILE_HELD_AFTER_MS, as the console's Needs action queue counts
 * them). Reads of committed data; nothing here writes.
 */
import type { SqlReader } from "../../db/writer.ts";

/** Batches one listing shows at most. */
export const RAIL_BATCHES_LISTED_MAX = 100;

/** One transmission attempt of a batch as kept. */
export interface AttemptView {
  readonly attempt: number;
  readonly startedAt: number;
  readonly answeredAt: number | null;
  /** transmitted, not_transmitted, in_doubt, or null while it runs. */
  readonly outcome: string | null;
  /** The rail's reference, or the reason it was not transmitted or nobody knows. */
  readonly detail: string | null;
}

/** One batch of any rail as operators see it. */
export interface RailBatchView {
  readonly id: string;
  readonly companyId: string;
  readonly companyTin: string;
  readonly rail: string;
  readonly status: string;
  readonly entryCount: number;
  readonly totalCents: number;
  readonly cutoffAt: number;
  readonly createdAt: number;
  readonly railReference: string | null;
  readonly transmittedAt: number | null;
  readonly downloadedAt: number | null;
  /** Why it waits or was voided (the rail's last answer, the check that held it). */
  readonly error: string | null;
  readonly attempts: readonly AttemptView[];
}

const toAttempt = (row: Record<string, unknown>): AttemptView => ({
  attempt: Number(row.attempt),
  startedAt: Number(row.started_at),
  answeredAt: row.answered_at === null ? null : Number(row.answered_at),
  outcome: row.outcome === null ? null : String(row.outcome),
  detail: row.detail === null ? null : String(row.detail),
});

/** Every transmission attempt of the batches named, by batch, first first. */
export async function attemptsOf(
  reader: SqlReader,
  batchIds: readonly string[],
): Promise<Map<string, AttemptView[]>> {
  const byBatch = new Map<string, AttemptView[]>(batchIds.map((id) => [id, []]));
  if (batchIds.length === 0) return byBatch;
  const { rows } = await reader.execute({
    sql: `SELECT batch_id, attempt, started_at, answered_at, outcome, detail
          FROM rail_batch_attempts WHERE batch_id IN (SELECT value FROM json_each(?))
          ORDER BY batch_id, attempt`,
    args: [JSON.stringify(batchIds)],
  });
  for (const row of rows) byBatch.get(String(row.batch_id))?.push(toAttempt(row));
  return byBatch;
}

const BATCH_COLUMNS = `b.id, b.company_id, c.tin, b.rail, b.status, b.entry_count, b.total_cents,
  b.cutoff_at, b.created_at, b.rail_reference, b.transmitted_at, b.downloaded_at, b.error`;

function toBatch(row: Record<string, unknown>, attempts: readonly AttemptView[]): RailBatchView {
  return {
    id: String(row.id),
    companyId: String(row.company_id),
    companyTin: String(row.tin),
    rail: String(row.rail),
    status: String(row.status),
    entryCount: Number(row.entry_count),
    totalCents: Number(row.total_cents),
    cutoffAt: Number(row.cutoff_at),
    createdAt: Number(row.created_at),
    railReference: row.rail_reference === null ? null : String(row.rail_reference),
    transmittedAt: row.transmitted_at === null ? null : Number(row.transmitted_at),
    downloadedAt: row.downloaded_at === null ? null : Number(row.downloaded_at),
    error: row.error === null ? null : String(row.error),
    attempts,
  };
}

/** Batches of every rail, newest first, by status and within companies (null: all). */
export async function listRailBatches(
  reader: SqlReader,
  filter: { readonly status: string | null; readonly companyIds: readonly string[] | null },
  limit: number,
): Promise<RailBatchView[]> {
  const { rows } = await reader.execute({
    sql: `SELECT ${BATCH_COLUMNS} FROM rail_batches b JOIN companies c ON c.id = b.company_id
          WHERE (? IS NULL OR b.status = ?)
            AND (? IS NULL OR b.company_id IN (SELECT value FROM json_each(?)))
          ORDER BY b.created_at DESC, b.id DESC LIMIT ?`,
    args: [
      filter.status,
      filter.status,
      filter.companyIds === null ? null : 1,
      JSON.stringify(filter.companyIds ?? []),
      limit,
    ],
  });
  const attempts = await attemptsOf(reader, rows.map((row) => String(row.id)));
  return rows.map((row) => toBatch(row, attempts.get(String(row.id)) ?? []));
}

/** The batches that need an operator: in doubt, or built and not sent past `heldAfterMs`; in doubt first. */
export async function listBatchesNeedingAttention(
  reader: SqlReader,
  filter: {
    readonly companyIds: readonly string[] | null;
    readonly now: number;
    readonly heldAfterMs: number;
  },
  limit: number,
): Promise<RailBatchView[]> {
  const { companyIds } = filter;
  const { rows } = await reader.execute({
    sql: `SELECT ${BATCH_COLUMNS} FROM rail_batches b JOIN companies c ON c.id = b.company_id
          WHERE (b.status = 'in_doubt'
              OR (b.status = 'built' AND (b.error IS NOT NULL OR b.created_at <= ?)))
            AND (? IS NULL OR b.company_id IN (SELECT value FROM json_each(?)))
          ORDER BY b.status = 'in_doubt' DESC, b.created_at, b.id LIMIT ?`,
    args: [
      filter.now - filter.heldAfterMs,
      companyIds === null ? null : 1,
      JSON.stringify(companyIds ?? []),
      limit,
    ],
  });
  const attempts = await attemptsOf(reader, rows.map((row) => String(row.id)));
  return rows.map((row) => toBatch(row, attempts.get(String(row.id)) ?? []));
}

/** Why each named batch waits (its error) and its attempts, by id: what a rail's own listing adds. */
export async function transmissionsOf(
  reader: SqlReader,
  batchIds: readonly string[],
): Promise<Map<string, { error: string | null; attempts: AttemptView[] }>> {
  const attempts = await attemptsOf(reader, batchIds);
  const { rows } = await reader.execute({
    sql: `SELECT id, error FROM rail_batches WHERE id IN (SELECT value FROM json_each(?))`,
    args: [JSON.stringify(batchIds)],
  });
  return new Map(rows.map((row) => [String(row.id), {
    error: row.error === null ? null : String(row.error),
    attempts: attempts.get(String(row.id)) ?? [],
  }]));
}

/** One batch of any rail with its attempts, or null. */
export async function findRailBatch(
  reader: SqlReader,
  batchId: string,
  companyIds: readonly string[] | null = null,
): Promise<RailBatchView | null> {
  const { rows } = await reader.execute({
    sql: `SELECT ${BATCH_COLUMNS} FROM rail_batches b JOIN companies c ON c.id = b.company_id
          WHERE b.id = ? AND (? IS NULL OR b.company_id IN (SELECT value FROM json_each(?)))`,
    args: [batchId, companyIds === null ? null : 1, JSON.stringify(companyIds ?? [])],
  });
  if (!rows[0]) return null;
  const attempts = await attemptsOf(reader, [batchId]);
  return toBatch(rows[0], attempts.get(batchId) ?? []);
}
