/**
 * Server-side sorting and paging for the console's lists: the SQL pieces that apply a page's
 * order (a whitelisted column, never the query text itself), its window, and an operator's
 * company scope. The page asked for is read from the query string by routes/console/kit.tsx.
 */
import type { InValue } from "@libsql/client";

/** The order and window of one page. */
export interface PageWindow {
  /** A key of the list's Sortable. */
  readonly sort: string;
  readonly direction: "asc" | "desc";
  readonly limit: number;
  readonly offset: number;
}

export interface Page<T> {
  readonly data: T[];
  readonly hasMore: boolean;
}

/** A list's sortable columns: the query's name for each, mapped to its SQL expression. */
export type Sortable = Readonly<Record<string, string>>;

/** `ORDER BY … LIMIT … OFFSET …` of a page; `tieBreak` makes the order total. */
export function orderAndPage(window: PageWindow, sortable: Sortable, tieBreak: string): {
  sql: string;
  args: InValue[];
} {
  const column = sortable[window.sort];
  if (column === undefined) throw new Error(`not a sortable column: ${window.sort}`);
  const direction = window.direction === "asc" ? "ASC" : "DESC";
  return {
    sql: `ORDER BY ${column} ${direction}, ${tieBreak} ${direction} LIMIT ? OFFSET ?`,
    // One row more than the page tells whether another page follows.
    args: [window.limit + 1, window.offset],
  };
}

/** The page of rows read with `orderAndPage`. */
export function pageOf<T>(window: PageWindow, rows: T[]): Page<T> {
  return { data: rows.slice(0, window.limit), hasMore: rows.length > window.limit };
}

/** A condition limiting `column` to an operator's companies (null: every company). */
export function scopeCondition(
  column: string,
  companyIds: readonly string[] | null,
): { sql: string; args: InValue[] } {
  if (companyIds === null) return { sql: "1 = 1", args: [] };
  if (companyIds.length === 0) return { sql: "1 = 0", args: [] };
  return { sql: `${column} IN (${companyIds.map(() => "?").join(", ")})`, args: [...companyIds] };
}

/** Conditions joined with AND, and their arguments in order. */
export function allOf(
  conditions: readonly { sql: string; args: InValue[] }[],
): { sql: string; args: InValue[] } {
  return {
    sql: conditions.length === 0 ? "1 = 1" : conditions.map((c) => `(${c.sql})`).join(" AND "),
    args: conditions.flatMap((c) => c.args),
  };
}
