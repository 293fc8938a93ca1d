/**
 * Sanctions lists and reviews on the database: the list in force (one per database), its
 * entries, and the reviews of payouts held for a potential match.
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import type { NameMatch, SanctionsEntry } from "./rules.ts";

/** Rows of one multi-row INSERT when a list loads (6 values each, well under SQLite's limit). */
const ENTRY_INSERT_ROWS_MAX = 500;

export interface SanctionsListRow {
  readonly id: string;
  readonly sha256: string;
  readonly entryCount: number;
  readonly fileName: string;
  readonly loadedBy: string | null;
  readonly loadedAt: number;
}

const toList = (row: Record<string, unknown>): SanctionsListRow => ({
  id: String(row.id),
  sha256: String(row.sha256),
  entryCount: Number(row.entry_count),
  fileName: String(row.file_name),
  loadedBy: row.loaded_by === null ? null : String(row.loaded_by),
  loadedAt: Number(row.loaded_at),
});

/** The list in force in this database, or null when none was ever loaded. */
export async function listInForce(reader: SqlReader): Promise<SanctionsListRow | null> {
  const { rows } = await reader.execute(
    `SELECT id, sha256, entry_count, file_name, loaded_by, loaded_at FROM sanctions_lists
      WHERE replaced_at IS NULL ORDER BY loaded_at DESC, rowid DESC LIMIT 1`,
  );
  return rows[0] ? toList(rows[0]) : null;
}

/** A list's entries as the matcher indexes them. */
export async function readListEntries(
  reader: SqlReader,
  listId: string,
): Promise<SanctionsEntry[]> {
  const { rows } = await reader.execute({
    sql: `SELECT entry_number, name, normalized_name, sdn_type, program FROM sanctions_entries
           WHERE list_id = ?`,
    args: [listId],
  });
  return rows.map((row) => ({
    entryNumber: Number(row.entry_number),
    name: String(row.name),
    normalizedName: String(row.normalized_name),
    sdnType: String(row.sdn_type),
    program: String(row.program),
  }));
}

/**
 * Puts a new list in force in the unit: the one before is marked replaced, and the entries are
 * written in multi-row inserts.
 */
export async function insertList(
  tx: WriteTx,
  list: SanctionsListRow,
  entries: readonly SanctionsEntry[],
): Promise<{ replaced: string[] }> {
  const { rows } = await tx.execute({
    sql: "UPDATE sanctions_lists SET replaced_at = ? WHERE replaced_at IS NULL RETURNING id",
    args: [list.loadedAt],
  });
  await tx.execute({
    sql: `INSERT INTO sanctions_lists (id, sha256, entry_count, file_name, loaded_by, loaded_at)
          VALUES (?, ?, ?, ?, ?, ?)`,
    args: [list.id, list.sha256, list.entryCount, list.fileName, list.loadedBy, list.loadedAt],
  });
  for (let start = 0; start < entries.length; start += ENTRY_INSERT_ROWS_MAX) {
    const chunk = entries.slice(start, start + ENTRY_INSERT_ROWS_MAX);
    await tx.execute({
      sql: `INSERT OR IGNORE INTO sanctions_entries
              (list_id, entry_number, name, normalized_name, sdn_type, program)
            VALUES ${chunk.map(() => "(?, ?, ?, ?, ?, ?)").join(", ")}`,
      args: chunk.flatMap((e) => [
        list.id,
        e.entryNumber,
        e.name,
        e.normalizedName,
        e.sdnType,
        e.program,
      ]),
    });
  }
  return { replaced: rows.map((row) => String(row.id)) };
}

/** Open: waiting for an operator; canceled: the company canceled the payout meanwhile. */
export type ReviewStatus = "open" | "cleared" | "rejected" | "canceled";
export const REVIEW_STATUSES: readonly ReviewStatus[] = ["open", "cleared", "rejected", "canceled"];

export interface SanctionsReview {
  readonly id: string;
  readonly companyId: string;
  readonly payoutId: string;
  readonly matches: NameMatch[];
  readonly listId: string;
  readonly status: ReviewStatus;
  readonly decidedBy: string | null;
  readonly decidedAt: number | null;
  readonly reason: string | null;
  readonly createdAt: number;
}

const REVIEW_COLUMNS =
  "id, company_id, payout_id, matches, list_id, status, decided_by, decided_at, reason, created_at";

function toReview(row: Record<string, unknown>): SanctionsReview {
  const status = String(row.status);
  if (!(REVIEW_STATUSES as readonly string[]).includes(status)) {
    throw new Error(`sanctions_reviews ${row.id}: unknown status ${JSON.stringify(status)}`);
  }
  return {
    id: String(row.id),
    companyId: String(row.company_id),
    payoutId: String(row.payout_id),
    matches: JSON.parse(String(row.matches)) as NameMatch[],
    listId: String(row.list_id),
    status: status as ReviewStatus,
    decidedBy: row.decided_by === null ? null : String(row.decided_by),
    decidedAt: row.decided_at === null ? null : Number(row.decided_at),
    reason: row.reason === null ? null : String(row.reason),
    createdAt: Number(row.created_at),
  };
}

export async function insertReview(
  tx: WriteTx,
  review: Pick<
    SanctionsReview,
    "id" | "companyId" | "payoutId" | "matches" | "listId" | "createdAt"
  >,
): Promise<void> {
  await tx.execute({
    sql:
      `INSERT INTO sanctions_reviews (id, company_id, payout_id, matches, list_id, status, created_at)
          VALUES (?, ?, ?, ?, ?, 'open', ?)`,
    args: [
      review.id,
      review.companyId,
      review.payoutId,
      JSON.stringify(review.matches),
      review.listId,
      review.createdAt,
    ],
  });
}

export async function findReview(reader: SqlReader, id: string): Promise<SanctionsReview | null> {
  const { rows } = await reader.execute({
    sql: `SELECT ${REVIEW_COLUMNS} FROM sanctions_reviews WHERE id = ?`,
    args: [id],
  });
  return rows[0] ? toReview(rows[0]) : null;
}

/** Reviews listed at most, newest first. */
export const REVIEWS_LISTED_MAX = 100;

export async function listReviews(
  reader: SqlReader,
  filter: { status: ReviewStatus | null; companyIds: readonly string[] | null },
): Promise<{ reviews: SanctionsReview[]; hasMore: boolean }> {
  const where: string[] = [];
  const args: string[] = [];
  if (filter.status !== null) {
    where.push("status = ?");
    args.push(filter.status);
  }
  if (filter.companyIds !== null) {
    where.push(`company_id IN (${filter.companyIds.map(() => "?").join(", ") || "NULL"})`);
    args.push(...filter.companyIds);
  }
  const { rows } = await reader.execute({
    sql: `SELECT ${REVIEW_COLUMNS} FROM sanctions_reviews
          ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
          ORDER BY created_at DESC, rowid DESC LIMIT ${REVIEWS_LISTED_MAX + 1}`,
    args,
  });
  const reviews = rows.map(toReview);
  return {
    reviews: reviews.slice(0, REVIEWS_LISTED_MAX),
    hasMore: reviews.length > REVIEWS_LISTED_MAX,
  };
}

/** Records an operator's decision on an open review; false when it is no longer open. */
export async function decideReview(
  tx: WriteTx,
  id: string,
  decision: { status: "cleared" | "rejected"; decidedBy: string | null; reason: string },
  now: number,
): Promise<boolean> {
  const { rowsAffected } = await tx.execute({
    sql: `UPDATE sanctions_reviews SET status = ?, decided_by = ?, decided_at = ?, reason = ?
          WHERE id = ? AND status = 'open'`,
    args: [decision.status, decision.decidedBy, now, decision.reason, id],
  });
  return rowsAffected === 1;
}

/** The cleared reviews of a payout against one list: what an operator already let through. */
export async function clearedReviews(
  reader: SqlReader,
  payoutId: string,
  listId: string,
): Promise<SanctionsReview[]> {
  const { rows } = await reader.execute({
    sql: `SELECT ${REVIEW_COLUMNS} FROM sanctions_reviews
          WHERE payout_id = ? AND list_id = ? AND status = 'cleared'`,
    args: [payoutId, listId],
  });
  return rows.map(toReview);
}

/** Closes the payout's open reviews when the company cancels it: nobody needs to decide. */
export async function closeReviewsOfCanceledPayout(
  tx: WriteTx,
  payoutId: string,
  now: number,
): Promise<number> {
  const { rowsAffected } = await tx.execute({
    sql: `UPDATE sanctions_reviews SET status = 'canceled', decided_at = ?,
            reason = 'the payout was canceled'
          WHERE payout_id = ? AND status = 'open'`,
    args: [now, payoutId],
  });
  return rowsAffected;
}
