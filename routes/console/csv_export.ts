/**
 * CSV exports of the console's lists: each list as it is filtered and sorted on its page, every
 * row (not one page), streamed a page of rows at a time. One set of cell rules for all of them:
 * RFC 4180 quoting, text kept from running as a spreadsheet formula, amounts in dollars without
 * symbol or separators, times in UTC ISO 8601, and an empty cell for nothing.
 */
import type { Page, PageWindow } from "../../lib/console/paging.ts";
import { csvDollars, csvText } from "../../lib/platform/csv.ts";
import type { ConsoleContext } from "./session.ts";

/** Rows read per query while an export streams, and the most one export carries. */
export const CSV_EXPORT_PAGE_ROWS = 500;
export const CSV_EXPORT_ROWS_MAX = 100_000;

/** A column of an export: its header and its cell, already a CSV cell (see `csvCell`). */
export type CsvColumn<T> = readonly [header: string, cell: (row: T) => string];

/** The cells of every export. */
export const csvCell = {
  text: (value: string | null | undefined): string => csvText(value ?? ""),
  money: (cents: number | null | undefined): string =>
    cents === null || cents === undefined ? "" : csvDollars(cents),
  time: (at: number | null | undefined): string =>
    at === null || at === undefined ? "" : new Date(at).toISOString(),
  count: (n: number | null | undefined): string => n === null || n === undefined ? "" : String(n),
};

/** The export's address for the list on this page: the same query, every page. */
export function csvExportUrl(c: ConsoleContext, path: string): string {
  const query = new URLSearchParams(c.req.query());
  query.delete("page");
  query.set("env", c.get("environment"));
  return `${path}?${query.toString()}`;
}

/**
 * The rows `read` gives, page after page from the first, as a streamed CSV named
 * `<name>-<environment>.csv`. `read` gets the window of each page; a list that is not paged
 * answers everything at once with `hasMore` false.
 */
export function csvExport<T>(
  c: ConsoleContext,
  options: {
    readonly name: string;
    readonly columns: readonly CsvColumn<T>[];
    readonly read: (window: Pick<PageWindow, "limit" | "offset">) => Promise<Page<T>>;
  },
): Response {
  const encoder = new TextEncoder();
  const line = (cells: string[]) => cells.join(",") + "\r\n";
  let offset = 0;
  let done = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(line(options.columns.map(([header]) => header))));
    },
    async pull(controller) {
      if (done) return controller.close();
      const page = await options.read({
        limit: Math.min(CSV_EXPORT_PAGE_ROWS, CSV_EXPORT_ROWS_MAX - offset),
        offset,
      });
      offset += page.data.length;
      done = !page.hasMore || offset >= CSV_EXPORT_ROWS_MAX;
      controller.enqueue(
        encoder.encode(
          page.data.map((row) => line(options.columns.map(([, cell]) => cell(row)))).join(""),
        ),
      );
    },
  });
  return c.body(body, 200, {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename="${options.name}-${c.get("environment")}.csv"`,
  });
}

/** A list read whole (not paged), handed to an export a page at a time. */
export function wholeList<T>(
  rows: readonly T[],
): (window: Pick<PageWindow, "limit" | "offset">) => Promise<Page<T>> {
  return (window) =>
    Promise.resolve({
      data: rows.slice(window.offset, window.offset + window.limit),
      hasMore: rows.length > window.offset + window.limit,
    });
}
