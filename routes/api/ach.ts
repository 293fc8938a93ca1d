/**
 * Surface A ACH files: GET /api/ach/files and GET /api/ach/files/{id}, the caller company's files
 * of the token's environment. Metadata and masked entries only: the content carries full account
 * numbers and is for admin operators (CLI). Another company's file is a 404 like a missing one.
 */
import { Hono } from "hono";
import * as v from "valibot";
import {
  ACH_FILES_PAGE_SIZE_DEFAULT,
  ACH_FILES_PAGE_SIZE_MAX,
  type AchFileDetail,
  type AchFileEntry,
  achFileStatuses,
  type AchFileSummary,
  entryOwnerIds,
  findAchFile,
  listAchFiles,
} from "../../lib/ach/views.ts";
import { centsToDollars } from "../../lib/platform/money.ts";
import type { Environment } from "../../lib/platform/config.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { errorResponse } from "../errors.ts";
import { invalidInput, isCalendarDate, parseQuery } from "../validation.ts";

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The query of GET /api/ach/files. */
const listAchFilesQuery = v.object({
  date: v.optional(
    v.pipe(
      v.string(),
      v.check(isCalendarDate, "date must be a calendar date YYYY-MM-DD (the effective entry date)"),
    ),
  ),
  status: v.optional(
    v.picklist(achFileStatuses, `status must be one of ${achFileStatuses.join(", ")}`),
  ),
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, "limit must be a whole number"),
      v.transform(Number),
      v.minValue(1, "limit must be at least 1"),
      v.maxValue(ACH_FILES_PAGE_SIZE_MAX, `limit must be at most ${ACH_FILES_PAGE_SIZE_MAX}`),
    ),
    String(ACH_FILES_PAGE_SIZE_DEFAULT),
  ),
  starting_after: v.optional(v.pipe(v.string(), v.minLength(1, "starting_after is empty"))),
});

const fileView = (file: AchFileSummary, environment: Environment) => ({
  object: "ach_file" as const,
  id: file.id,
  environment,
  created_at: iso(file.createdAt)!,
  effective_date: file.effectiveDate,
  entry_count: file.entryCount,
  credit_total: centsToDollars(file.creditTotalCents),
  debit_total: centsToDollars(file.debitTotalCents),
  status: file.status,
  sha256: file.sha256,
  transmitted_at: iso(file.transmittedAt),
});

const entryView = (entry: AchFileEntry) => ({
  trace: entry.traceNumber,
  direction: entry.direction,
  amount: centsToDollars(entry.amountCents),
  ...entryOwnerIds(entry),
  account_last_four: entry.accountLastFour,
  status: entry.status,
  return_code: entry.returnCode,
});

const detailView = (file: AchFileDetail, environment: Environment) => ({
  ...fileView(file, environment),
  entries: file.entries.map(entryView),
});

export function achFileRoutes(_deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/files", async (c) => {
    const principal = c.get("apiPrincipal");
    const query = parseQuery(c, listAchFilesQuery);
    if (!query.ok) return query.response;
    const page = await listAchFiles(
      principal.database.readClient,
      {
        companyIds: [principal.companyId],
        effectiveDate: query.value.date ?? null,
        status: query.value.status ?? null,
      },
      { limit: query.value.limit, startingAfter: query.value.starting_after ?? null },
    );
    if (!page) {
      const cursor = JSON.stringify(query.value.starting_after);
      return invalidInput(c, "starting_after", "query", `no ACH file ${cursor} to start after`);
    }
    return c.json({
      object: "list",
      data: page.data.map((file) => fileView(file, principal.environment)),
      has_more: page.hasMore,
    });
  });

  app.get("/files/:id", async (c) => {
    const principal = c.get("apiPrincipal");
    const id = c.req.param("id");
    const file = await findAchFile(principal.database.readClient, id, principal.companyId);
    if (!file) {
      return errorResponse(c, {
        status: 404,
        code: "not_found",
        message: `no ACH file ${JSON.stringify(id)} for this company in ${principal.environment}`,
      });
    }
    return c.json(detailView(file, principal.environment));
  });

  return app;
}
