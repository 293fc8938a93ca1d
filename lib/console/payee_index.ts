/**
 * The console's payee index: `payee_search`, an FTS5 trigram table of each payout's full name and
 * e-mail keyed by the payout's rowid, filled in batches by an upkeep step of the scheduler's sweep
 * rather than by a trigger, so a create never pays for it (measured: a trigger cost every create
 * about 70 µs of CPU). Payouts are only ever inserted and their names and e-mails never change, so
 * the index is complete up to its progress mark; the search scans the payouts past the mark.
 */
import type { Database } from "../../db/client.ts";
import { yieldToEventLoop } from "../../db/scheduler.ts";
import type { WriteTx } from "../../db/writer.ts";

/**
 * Payouts indexed per write unit: about 2 ms of the writer's time each (a trigram row of a name
 * and an e-mail cost about 3 µs, timed per statement under the create bench), short enough for
 * requests to go between units.
 */
export const PAYEE_INDEX_ROWS_PER_UNIT = 500;

/** Units one sweep runs at most (100,000 payouts), so a large backlog shares the sweep with jobs. */
export const PAYEE_INDEX_UNITS_PER_SWEEP_MAX = 200;

/**
 * Indexes the next payouts past the progress mark, in one write unit, in three statements
 * whatever their number (a statement per payout cost the sweep about 2.7 µs each, a create's
 * share under API traffic); how many it indexed.
 */
export async function indexNextPayees(tx: WriteTx, rowsMax: number): Promise<number> {
  const { rows: [page] } = await tx.execute({
    sql: `SELECT count(*) AS n, max(payout_rowid) AS last FROM (
            SELECT p.rowid AS payout_rowid FROM payouts p
            WHERE p.rowid > (SELECT indexed_rowid FROM payee_search_progress WHERE id = 1)
            ORDER BY p.rowid LIMIT ?)`,
    args: [rowsMax],
  });
  const indexed = Number(page.n);
  if (indexed === 0) return 0;
  await tx.execute({
    sql: `INSERT INTO payee_search (rowid, name, email)
          SELECT p.rowid, coalesce(p.first_name, '') || ' ' || coalesce(p.last_name, ''), p.email
          FROM payouts p
          WHERE p.rowid > (SELECT indexed_rowid FROM payee_search_progress WHERE id = 1)
            AND p.rowid <= ?`,
    args: [page.last],
  });
  await tx.execute({
    sql: "UPDATE payee_search_progress SET indexed_rowid = ? WHERE id = 1",
    args: [page.last],
  });
  return indexed;
}

/** How many payouts wait past the index's progress mark (the search scans them). */
export async function payeesNotIndexed(database: Database): Promise<number> {
  const { rows } = await database.readClient.execute(
    `SELECT count(*) AS n FROM payouts
      WHERE rowid > (SELECT indexed_rowid FROM payee_search_progress WHERE id = 1)`,
  );
  return Number(rows[0].n);
}

/**
 * Brings the payee index up to the newest payout, a unit at a time with requests let through in
 * between, at most PAYEE_INDEX_UNITS_PER_SWEEP_MAX units; how many payouts it indexed. A sweep
 * with nothing to index reads one row and writes nothing.
 */
export async function catchUpPayeeIndex(database: Database): Promise<number> {
  const { rows } = await database.readClient.execute(
    `SELECT EXISTS (SELECT 1 FROM payouts
      WHERE rowid > (SELECT indexed_rowid FROM payee_search_progress WHERE id = 1)) AS behind`,
  );
  if (Number(rows[0].behind) === 0) return 0;
  let indexed = 0;
  for (let unit = 0; unit < PAYEE_INDEX_UNITS_PER_SWEEP_MAX; unit++) {
    const done = await database.writer.write((tx) =>
      indexNextPayees(tx, PAYEE_INDEX_ROWS_PER_UNIT)
    );
    indexed += done;
    if (done < PAYEE_INDEX_ROWS_PER_UNIT) break;
    await yieldToEventLoop();
  }
  return indexed;
}
