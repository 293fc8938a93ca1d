/** Business lines of a company, for Surface A, which names them by code or uses the first one. */
import type { SqlExecutor } from "../ledger/store.ts";

export interface LineRef {
  readonly id: string;
  readonly code: string;
}

/** The company's line with this code, or its first line when no code is given; null if none. */
export async function resolveLine(
  executor: SqlExecutor,
  companyId: string,
  code: string | null,
): Promise<LineRef | null> {
  const { rows } = await executor.execute(
    code === null
      ? {
        sql:
          "SELECT id, code FROM business_lines WHERE company_id = ? ORDER BY created_at, rowid LIMIT 1",
        args: [companyId],
      }
      : {
        sql: "SELECT id, code FROM business_lines WHERE company_id = ? AND code = ?",
        args: [companyId, code],
      },
  );
  return rows[0] ? { id: String(rows[0].id), code: String(rows[0].code) } : null;
}
