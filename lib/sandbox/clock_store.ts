/**
 * Domain time per environment: live runs on real time; the test environment runs on each
 * company's sandbox clock, real time plus an offset that only moves forward.
 */
import type { Client } from "@libsql/client";
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";

/**
 * The company's current domain time in this database's environment; `reader` is a write unit
 * when the read should ride with the unit's own (on a libSQL server, in the same round trip).
 */
export async function domainNow(
  database: Database,
  companyId: string,
  realNow: number,
  reader: Client | WriteTx = database.readClient,
): Promise<number> {
  if (database.environment === "live") return realNow;
  return realNow + await readOffset(reader, companyId);
}

/** The latest domain time of any company in this database: no company's clock is ahead of it. */
export async function latestDomainNow(database: Database, realNow: number): Promise<number> {
  if (database.environment === "live") return realNow;
  const { rows } = await database.readClient.execute(
    "SELECT coalesce(max(offset_ms), 0) AS offset_ms FROM sandbox_clocks",
  );
  return realNow + Math.max(0, Number(rows[0].offset_ms));
}

/**
 * The real time at which something the company's domain dates `domainNow` happens: its sandbox
 * clock's offset taken off, and never before the clock last moved (a job an advance runs at its
 * due time runs now, not in the past). Live, and a company whose clock never moved: `domainNow`.
 */
export async function realTimeOf(
  tx: WriteTx,
  companyId: string,
  domainNow: number,
): Promise<number> {
  const { rows } = await tx.execute({
    sql: "SELECT offset_ms, updated_at FROM sandbox_clocks WHERE company_id = ?",
    args: [companyId],
  });
  if (!rows[0]) return domainNow;
  return Math.max(domainNow - Number(rows[0].offset_ms), Number(rows[0].updated_at));
}

async function readOffset(client: Client | WriteTx, companyId: string): Promise<number> {
  const { rows } = await client.execute({
    sql: "SELECT offset_ms FROM sandbox_clocks WHERE company_id = ?",
    args: [companyId],
  });
  return rows[0] ? Number(rows[0].offset_ms) : 0;
}

/** Moves the company's sandbox clock forward; returns the new offset. */
export async function advanceOffset(
  tx: WriteTx,
  companyId: string,
  ms: number,
  realNow: number,
): Promise<number> {
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new Error(`a sandbox clock only moves forward, got ${ms} ms`);
  }
  const offset = await readOffset(tx, companyId) + ms;
  await tx.execute({
    sql: `INSERT INTO sandbox_clocks (company_id, offset_ms, updated_at) VALUES (?, ?, ?)
          ON CONFLICT (company_id) DO UPDATE SET offset_ms = excluded.offset_ms, updated_at = excluded.updated_at`,
    args: [companyId, offset, realNow],
  });
  return offset;
}
