/**
 * Surface A checks (issue 19): GET /api/checks (status, number, issue-date range, pages by check
 * number), GET /api/checks/{number}, POST /api/checks/{number}/void {reason}, GET /api/check-files
 * and GET /api/check-files/{id}, of the caller company in the token's environment. Never an
 * account number: files give their metadata only. Any user of the company may void its checks
 * (Surface A users have no roles); each void is audited with the user. A paid check cannot be
 * voided: 400 naming `number`, nothing written. Another company's check or file is a 404.
 */
import { Hono } from "hono";
import * as v from "valibot";
import {
  CHECK_LIST_LIMIT_MAX,
  CHECK_STATUSES,
  type CheckRecord,
  findCheckByNumber,
  listChecks,
} from "../../lib/checks/register.ts";
import {
  CHECK_FILES_PAGE_SIZE_DEFAULT,
  CHECK_FILES_PAGE_SIZE_MAX,
  checkFileKinds,
  checkFileStatuses,
  type CheckFileSummary,
  findCheckFile,
  listCheckFiles,
} from "../../lib/checks/views.ts";
import { voidCheckAudited } from "../../lib/checks/voids.ts";
import type { Environment } from "../../lib/platform/config.ts";
import { centsToDollars } from "../../lib/platform/money.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { errorResponse } from "../errors.ts";
import { refusalOutcome, respondIdempotently } from "../idempotency.ts";
import { invalidInput, isCalendarDate, parseJsonBody, parseQuery } from "../validation.ts";
import { companyTarget } from "./request.ts";
import { apiSchemas } from "./schemas.ts";

/** Checks of one page of a listing, by default and at most. */
export const CHECKS_PAGE_SIZE_DEFAULT = 10;
export const CHECKS_PAGE_SIZE_MAX = CHECK_LIST_LIMIT_MAX;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const CHECK_NUMBER = /^[1-9]\d{0,8}$/;

const calendarDate = (name: string) =>
  v.optional(v.pipe(
    v.string(),
    v.check(isCalendarDate, `${name} must be a calendar date YYYY-MM-DD (the check's issue date)`),
  ));

const wholeNumber = (name: string) =>
  v.pipe(
    v.string(),
    v.regex(CHECK_NUMBER, `${name} must be a check number: a whole number from 1 to 999999999`),
    v.transform(Number),
  );

const listChecksQuery = v.pipe(
  v.object({
    status: v.optional(
      v.picklist(CHECK_STATUSES, `status must be one of ${CHECK_STATUSES.join(", ")}`),
    ),
    number: v.optional(wholeNumber("number")),
    from: calendarDate("from"),
    to: calendarDate("to"),
    limit: v.optional(
      v.pipe(
        v.string(),
        v.regex(/^\d+$/, "limit must be a whole number"),
        v.transform(Number),
        v.minValue(1, "limit must be at least 1"),
        v.maxValue(CHECKS_PAGE_SIZE_MAX, `limit must be at most ${CHECKS_PAGE_SIZE_MAX}`),
      ),
      String(CHECKS_PAGE_SIZE_DEFAULT),
    ),
    starting_after: v.optional(wholeNumber("starting_after")),
  }),
  v.forward(
    v.check(
      (q) => q.from === undefined || q.to === undefined || q.from <= q.to,
      "to must not be before from",
    ),
    ["to"],
  ),
);

const listFilesQuery = v.object({
  kind: v.optional(
    v.picklist(checkFileKinds, `kind must be one of ${checkFileKinds.join(", ")}`),
  ),
  status: v.optional(
    v.picklist(checkFileStatuses, `status must be one of ${checkFileStatuses.join(", ")}`),
  ),
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d+$/, "limit must be a whole number"),
      v.transform(Number),
      v.minValue(1, "limit must be at least 1"),
      v.maxValue(CHECK_FILES_PAGE_SIZE_MAX, `limit must be at most ${CHECK_FILES_PAGE_SIZE_MAX}`),
    ),
    String(CHECK_FILES_PAGE_SIZE_DEFAULT),
  ),
  starting_after: v.optional(v.pipe(v.string(), v.minLength(1, "starting_after is empty"))),
});

/** A check as the company sees it: never the account it is drawn on. */
export const checkView = (check: CheckRecord, environment: Environment) => ({
  object: "check" as const,
  number: check.checkNumber,
  environment,
  kind: check.kind,
  amount: centsToDollars(check.amountCents),
  status: check.status,
  payout_id: check.payoutId,
  payee_name: check.payeeName,
  memo: check.memo,
  postage_code: check.postageCode,
  issue_date: check.issueDate,
  paid_date: check.paidDate,
  paid_amount: check.paidAmountCents === null ? null : centsToDollars(check.paidAmountCents),
  voided_at: iso(check.voidedAt),
  void_reason: check.voidReason,
  stale_at: iso(check.staleAt),
});

const fileView = (file: CheckFileSummary, environment: Environment) => ({
  object: "check_file" as const,
  id: file.id,
  environment,
  kind: file.kind,
  status: file.status,
  created_at: iso(file.createdAt)!,
  positive_pay_file_id: file.positivePayFileId,
  issue_count: file.issueCount,
  void_count: file.voidCount,
  total: centsToDollars(file.totalCents),
  byte_size: file.byteSize,
  sha256: file.sha256,
  transmitted_at: iso(file.transmittedAt),
});

export function checkRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const { voidCheck: voidBody } = apiSchemas(deps.config);

  const notFound = (c: Parameters<typeof errorResponse>[0], what: string, environment: string) =>
    errorResponse(c, {
      status: 404,
      code: "not_found",
      message: `no ${what} for this company in ${environment}`,
    });

  app.get("/checks", async (c) => {
    const principal = c.get("apiPrincipal");
    const query = parseQuery(c, listChecksQuery);
    if (!query.ok) return query.response;
    const q = query.value;
    const reader = principal.database.readClient;
    const filters = {
      ...(q.status === undefined ? {} : { status: q.status }),
      ...(q.number === undefined ? {} : { checkNumber: q.number }),
      ...(q.from === undefined ? {} : { issuedFrom: q.from }),
      ...(q.to === undefined ? {} : { issuedTo: q.to }),
    };
    if (q.starting_after !== undefined) {
      const cursor = await findCheckByNumber(reader, principal.companyId, q.starting_after);
      if (!cursor) {
        return invalidInput(
          c,
          "starting_after",
          "query",
          `no check ${q.starting_after} to start after`,
        );
      }
    }
    const data = await listChecks(reader, principal.companyId, {
      ...filters,
      ...(q.starting_after === undefined ? {} : { afterNumber: q.starting_after }),
      limit: q.limit,
    });
    // A full page looks one check further to say whether another page follows.
    const hasMore = data.length === q.limit &&
      (await listChecks(reader, principal.companyId, {
          ...filters,
          afterNumber: data[data.length - 1].checkNumber,
          limit: 1,
        })).length > 0;
    return c.json({
      object: "list",
      data: data.map((check) => checkView(check, principal.environment)),
      has_more: hasMore,
    });
  });

  app.get("/checks/:number", async (c) => {
    const principal = c.get("apiPrincipal");
    const number = c.req.param("number");
    if (!CHECK_NUMBER.test(number)) {
      return invalidInput(
        c,
        "number",
        "path",
        `number ${JSON.stringify(number)} is not a check number`,
      );
    }
    const check = await findCheckByNumber(
      principal.database.readClient,
      principal.companyId,
      Number(number),
    );
    if (!check) return notFound(c, `check ${number}`, principal.environment);
    return c.json(checkView(check, principal.environment));
  });

  app.post("/checks/:number/void", async (c) => {
    const principal = c.get("apiPrincipal");
    const number = c.req.param("number");
    if (!CHECK_NUMBER.test(number)) {
      return invalidInput(
        c,
        "number",
        "path",
        `number ${JSON.stringify(number)} is not a check number`,
      );
    }
    const body = await parseJsonBody(c, voidBody);
    if (!body.ok) return body.response;
    return await respondIdempotently(
      c,
      deps,
      companyTarget(c),
      (tx) =>
        voidCheckAudited(
          tx,
          principal.environment,
          { operator: null, origin: `api user ${principal.userId}` },
          {
            companyId: principal.companyId,
            checkNumber: Number(number),
            reason: body.value.reason,
            voidedBy: `api user ${principal.userId}`,
          },
          deps.clock.now(),
        ),
      (voided) => {
        if (voided.ok) return { status: 200, body: checkView(voided.value, principal.environment) };
        if (voided.code === "check_not_found") {
          return refusalOutcome(c, {
            status: 404,
            code: "not_found",
            message: `no check ${number} for this company in ${principal.environment}`,
          });
        }
        const field = voided.code === "check_paid" ? "number" : "reason";
        return refusalOutcome(c, {
          status: 400,
          code: "validation_error",
          message: voided.message,
          issues: [{
            field,
            location: field === "number" ? "path" : "body",
            message: voided.message,
          }],
        });
      },
    );
  });

  app.get("/check-files", async (c) => {
    const principal = c.get("apiPrincipal");
    const query = parseQuery(c, listFilesQuery);
    if (!query.ok) return query.response;
    const page = await listCheckFiles(
      principal.database.readClient,
      {
        companyIds: [principal.companyId],
        kind: query.value.kind ?? null,
        status: query.value.status ?? null,
      },
      { limit: query.value.limit, startingAfter: query.value.starting_after ?? null },
    );
    if (!page) {
      const cursor = JSON.stringify(query.value.starting_after);
      return invalidInput(c, "starting_after", "query", `no check file ${cursor} to start after`);
    }
    return c.json({
      object: "list",
      data: page.data.map((file) => fileView(file, principal.environment)),
      has_more: page.hasMore,
    });
  });

  app.get("/check-files/:id", async (c) => {
    const principal = c.get("apiPrincipal");
    const id = c.req.param("id");
    const file = await findCheckFile(principal.database.readClient, id, principal.companyId);
    if (!file) return notFound(c, `check file ${JSON.stringify(id)}`, principal.environment);
    return c.json(fileView(file, principal.environment));
  });

  return app;
}
