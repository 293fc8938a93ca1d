/** The companies and lines an operator may see, for the console's filters and per-line tables. */
import type { Client } from "@libsql/client";
import { scopeCondition } from "./paging.ts";

export interface ScopedLine {
  readonly id: string;
  readonly code: string;
}

export interface ScopedCompany {
  readonly id: string;
  readonly name: string;
  readonly tin: string;
  readonly lines: ScopedLine[];
}

/** The companies of the scope (null: all), by name, each with its lines by code. */
export async function scopedCompanies(
  client: Client,
  companyIds: readonly string[] | null,
): Promise<ScopedCompany[]> {
  const scope = scopeCondition("c.id", companyIds);
  const { rows } = await client.execute({
    sql: `SELECT c.id, c.name, c.tin, l.id AS line_id, l.code FROM companies c
            LEFT JOIN business_lines l ON l.company_id = c.id
          WHERE ${scope.sql} ORDER BY c.name, c.id, l.code`,
    args: scope.args,
  });
  const companies = new Map<string, ScopedCompany>();
  for (const row of rows) {
    const id = String(row.id);
    let company = companies.get(id);
    if (!company) {
      company = { id, name: String(row.name), tin: String(row.tin), lines: [] };
      companies.set(id, company);
    }
    if (row.line_id !== null) {
      company.lines.push({ id: String(row.line_id), code: String(row.code) });
    }
  }
  return [...companies.values()];
}
