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
 * Payouts indexed per write unit: about 15 ms of the writer's time each (a trigram row of a name
 * and an e-mail costs about 30 µs), short enough for requests to go between units.
 */
export const PAYEE_INDEX_ROWS_PER_UNIT = 500;

/** Units one sweep runs at most (100,000 payouts), so a large backlog shares the sweep with jobs. */
export const PAYEE_INDEX_UNITS_PER_SWEEP_MAX = 200;

/** Indexes the next payouts past the progress mark, in one write unit; how many it indexed. */
export async function indexNextPayees(tx: WriteTx, rowsMax: number): Promise<number> {
  const { rows } = await tx.execute({
    sql: `SELECT p.rowid AS payout_rowid,
            coalesce(p.first_name, '') || ' ' || coalesce(p.last_name, '') AS name, p.email
          FROM payouts p
          WHERE p.rowid > (SELECT indexed_rowid FROM payee_search_progress WHERE id = 1)
          ORDER BY p.rowid LIMIT ?`,
    args: [rowsMax],
  });
  if (rows.length === 0) return 0;
  for (const row of rows) {
    await tx.execute({
      sql: "INSERT INTO payee_search (rowid, name, email) VALUES (?, ?, ?)",
      args: [row.payout_rowid, row.name, row.email],
    });
  }
  await tx.execute({
    sql: "UPDATE payee_search_progress SET indexed_rowid = ? WHERE id = 1",
    args: [rows[rows.length - 1].payout_rowid],
  });
  return rows.length;
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
