/** @jsxImportSource hono/jsx */
/**
 * Payouts (issue 20): search by claim id, payee name or e-mail, disbursement, status, company,
 * line and creation date (days in the operator's time zone), sorted and paged on the server. Each
 * row links to the payout's detail.
 */
import { explainFailure } from "../../lib/payouts/failure_reasons.ts";
import { Hono } from "hono";
import * as v from "valibot";
import { scopedCompanies } from "../../lib/console/companies.ts";
import {
  isPayoutStatus,
  type PayoutFilter,
  type PayoutListRow,
  payoutSorts,
  searchPayouts,
} from "../../lib/console/payouts.ts";
import { type PayoutStatus, payoutStatuses } from "../../lib/payouts/states.ts";
import { startOfDayIn } from "../../lib/platform/format.ts";
import type { AppDeps } from "../context.ts";
import { csvCell, type CsvColumn, csvExport, csvExportUrl } from "./csv_export.ts";
import {
  ConsoleLayout,
  consoleUrl,
  EmptyState,
  Field,
  type FieldProblem,
  FormProblems,
  type FormValues,
  listParams,
  METHOD_LABELS,
  methodLabel,
  Money,
  Pager,
  SelectField,
  SortHeader,
  When,
} from "./kit.tsx";
import { companiesInScope, type ConsoleContext, type ConsoleEnv } from "./session.ts";

const DAY_MS = 86_400_000;
/** Typed search text longer than this is refused rather than scanned for. */
const SEARCH_TEXT_LENGTH_MAX = 200;

const searchText = v.optional(v.pipe(
  v.string(),
  v.trim(),
  v.maxLength(SEARCH_TEXT_LENGTH_MAX, `at most ${SEARCH_TEXT_LENGTH_MAX} characters`),
));
const day = v.optional(v.union([
  v.literal(""),
  v.pipe(v.string(), v.regex(/^\d{4}-\d{2}-\d{2}$/, "a date as YYYY-MM-DD")),
]));
const searchSchema = v.object({
  q: searchText,
  claim: searchText,
  payee: searchText,
  disbursement: searchText,
  status: v.optional(v.union([v.literal(""), v.picklist(payoutStatuses, "not a payout status")])),
  attention: v.optional(
    v.union([v.literal(""), v.picklist(["failed", "now"], "failed or now")]),
  ),
  company: searchText,
  line: searchText,
  from: day,
  to: day,
});

/** Labels of the states as the payments team says them (every state has one: the compiler checks). */
export const STATUS_LABELS: Readonly<Record<PayoutStatus, string>> = {
  pending_funds: "Pending funds",
  created: "Created",
  pending_approval: "Pending approval",
  awaiting_endorsement: "Awaiting endorsement",
  modality_offered: "Waiting for the payee's choice",
  modality_selected: "Method selected",
  in_review: "In review",
  funds_sent: "Funds sent",
  completed: "Completed",
  failed: "Failed",
  canceled: "Canceled",
  escheated: "Remitted to a state",
};

export function StatusBadge(props: { status: string }) {
  const tone = props.status === "failed"
    ? "badge bad"
    : props.status === "completed"
    ? "badge good"
    : "badge";
  return (
    <span class={tone}>
      {isPayoutStatus(props.status) ? STATUS_LABELS[props.status] : props.status}
    </span>
  );
}

/** The filter of a search's query, or the problems of its fields. */
function readFilter(
  c: ConsoleContext,
  realNow: number,
): { filter: PayoutFilter; values: FormValues; problems: FieldProblem[] } {
  const query = c.req.query();
  const values: Record<string, string> = {};
  for (const name of Object.keys(searchSchema.entries)) {
    if (typeof query[name] === "string") values[name] = query[name];
  }
  const parsed = v.safeParse(searchSchema, values);
  if (!parsed.success) {
    return {
      filter: {},
      values,
      problems: parsed.issues.map((issue) => ({
        field: v.getDotPath(issue) ?? "form",
        message: `${labelOf(v.getDotPath(issue))}: ${issue.message}`,
      })),
    };
  }
  const input = parsed.output;
  const zone = c.get("timeZone");
  const from = input.from ? startOfDayIn(input.from, zone) : null;
  const to = input.to ? startOfDayIn(input.to, zone) : null;
  const problems: FieldProblem[] = [];
  if (input.from && from === null) problems.push({ field: "from", message: "From: no such day" });
  if (input.to && to === null) problems.push({ field: "to", message: "To: no such day" });
  const status = input.status && isPayoutStatus(input.status) ? input.status : undefined;
  return {
    filter: {
      text: input.q || undefined,
      claimId: input.claim || undefined,
      payee: input.payee || undefined,
      disbursement: input.disbursement || undefined,
      status,
      failedAnyTime: input.attention === "failed" || undefined,
      needsActionAt: input.attention === "now" ? realNow : undefined,
      companyId: input.company || undefined,
      lineId: input.line || undefined,
      // "To" includes its whole day.
      createdFrom: from ?? undefined,
      createdBefore: to === null ? undefined : to + DAY_MS,
    },
    values,
    problems,
  };
}

const FIELD_LABELS: Readonly<Record<string, string>> = {
  q: "Search",
  claim: "Claim id",
  payee: "Payee name or e-mail",
  disbursement: "Disbursement or payout id",
  status: "Status",
  attention: "Needing us",
  company: "Company",
  line: "Line",
  from: "Created from",
  to: "Created to",
};
const labelOf = (field: string | null) => (field ? FIELD_LABELS[field] ?? field : "Search");

/** The choices of the "Needing us" filter. */
const ATTENTION_OPTIONS = [
  { value: "failed", label: "Failed or returned, any time" },
  { value: "now", label: "Needs action now" },
];

/** The columns of the Payouts export, in the order of the list's table. */
const EXPORT_COLUMNS: readonly CsvColumn<PayoutListRow>[] = [
  ["payout_id", (row) => csvCell.text(row.id)],
  ["status", (row) => csvCell.text(row.status)],
  ["amount", (row) => csvCell.money(row.amountCents)],
  ["payee", (row) => csvCell.text(row.payeeName)],
  ["email", (row) => csvCell.text(row.email)],
  [
    "method",
    (row) =>
      row.methodId === null
        ? ""
        : csvCell.text(METHOD_LABELS[row.methodId] ?? String(row.methodId)),
  ],
  ["last_four", (row) => csvCell.text(row.methodLastFour)],
  ["claim_or_uuid", (row) => csvCell.text(row.claimId ?? row.disbursementUuid)],
  ["disbursement_id", (row) => csvCell.text(row.disbursementId)],
  ["company", (row) => csvCell.text(row.companyName)],
  ["line", (row) => csvCell.text(row.lineCode)],
  ["last_failure", (row) => csvCell.text(row.failureReason)],
  ["created_at", (row) => csvCell.time(row.createdAt)],
  ["updated_at", (row) => csvCell.time(row.updatedAt)],
];

export function payoutsConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  // The list's rows as CSV, in the list's order, read a page at a time while it streams.
  app.get("/export.csv", (c) => {
    const scope = companiesInScope(c);
    const params = listParams(c, { sorts: Object.keys(payoutSorts), defaultSort: "created" });
    const { filter, problems } = readFilter(c, deps.clock.now());
    if (problems.length > 0) {
      return c.text(problems.map((p) => p.message).join("\n") + "\n", 400);
    }
    return csvExport(c, {
      name: "payouts",
      columns: EXPORT_COLUMNS,
      read: (window) =>
        searchPayouts(c.get("database").readClient, scope, filter, { ...params, ...window }),
    });
  });
  app.get("/", async (c) => {
    const database = c.get("database");
    const scope = companiesInScope(c);
    const params = listParams(c, { sorts: Object.keys(payoutSorts), defaultSort: "created" });
    const { filter, values, problems } = readFilter(c, deps.clock.now());
    const companies = await scopedCompanies(database.readClient, scope);
    const page = problems.length === 0
      ? await searchPayouts(database.readClient, scope, filter, params)
      : { data: [], hasMore: false };
    const filtered = Object.values(values).some((value) => value !== "");
    return c.html(
      <ConsoleLayout c={c} title="Payouts" active="payouts">
        <form method="get" action="/console/payouts" class="filters" role="search">
          <input type="hidden" name="env" value={c.get("environment")} />
          <Field
            name="q"
            label={FIELD_LABELS.q}
            hint="name, e-mail, amount, last four, claim or uuid, id, check or trace number"
            type="search"
            values={values}
            problems={problems}
          />
          <Field name="claim" label={FIELD_LABELS.claim} values={values} problems={problems} />
          <Field
            name="payee"
            label={FIELD_LABELS.payee}
            type="search"
            values={values}
            problems={problems}
          />
          <Field
            name="disbursement"
            label={FIELD_LABELS.disbursement}
            values={values}
            problems={problems}
          />
          <SelectField
            name="status"
            label="Status"
            any="Any status"
            options={payoutStatuses.map((s) => ({ value: s, label: STATUS_LABELS[s] }))}
            values={values}
            problems={problems}
          />
          <SelectField
            name="attention"
            label={FIELD_LABELS.attention}
            any="Every payout"
            options={ATTENTION_OPTIONS}
            values={values}
            problems={problems}
          />
          <SelectField
            name="company"
            label="Company"
            any="Every company"
            options={companies.map((co) => ({ value: co.id, label: co.name }))}
            values={values}
            problems={problems}
          />
          <SelectField
            name="line"
            label="Line"
            any="Every line"
            options={companies.flatMap((co) =>
              co.lines.map((line) => ({ value: line.id, label: `${co.name} · ${line.code}` }))
            )}
            values={values}
            problems={problems}
          />
          <Field
            name="from"
            label={FIELD_LABELS.from}
            type="date"
            values={values}
            problems={problems}
          />
          <Field
            name="to"
            label={FIELD_LABELS.to}
            type="date"
            values={values}
            problems={problems}
          />
          <div class="actions">
            <button type="submit">Search</button>
            <a href={csvExportUrl(c, "/console/payouts/export.csv")} download>
              Export these payouts as CSV
            </a>
            {filtered ? <a href={consoleUrl(c, "/console/payouts")}>Clear</a> : null}
          </div>
        </form>
        <FormProblems problems={problems} />
        {page.data.length === 0
          ? (
            <EmptyState>
              {filtered
                ? "No payout matches this search. Check the claim id or payee spelling, widen the dates, or clear the filters."
                : `No payouts in the ${
                  c.get("environment")
                } environment yet. They appear here when a company creates a disbursement through the API.`}
            </EmptyState>
          )
          : (
            <>
              <div class="table-wrap" tabindex={0} role="region" aria-label="Payouts">
                <table>
                  <caption class="sr-only">Payouts matching the search</caption>
                  <thead>
                    <tr>
                      <th scope="col">Payee</th>
                      <th scope="col">Claim</th>
                      <th scope="col">Method</th>
                      <th scope="col">Company · line</th>
                      <SortHeader c={c} params={params} column="amount" label="Amount" numeric />
                      <SortHeader c={c} params={params} column="status" label="Status" />
                      <SortHeader c={c} params={params} column="created" label="Created" />
                      <SortHeader c={c} params={params} column="updated" label="Updated" />
                    </tr>
                  </thead>
                  <tbody>
                    {page.data.map((row) => (
                      <tr>
                        <td>
                          <a href={consoleUrl(c, `/console/payouts/${row.id}`)}>
                            {row.payeeName || row.email || row.id}
                          </a>
                          {row.email && row.payeeName
                            ? <span class="hint">{row.email}</span>
                            : null}
                        </td>
                        <td>{row.claimId ?? row.disbursementUuid}</td>
                        <td>{methodLabel(row.methodId, row.methodLastFour)}</td>
                        <td>{row.companyName} · {row.lineCode}</td>
                        <td class="num">
                          <Money cents={row.amountCents} />
                        </td>
                        <td>
                          <StatusBadge status={row.status} />
                          {row.failureReason
                            ? (
                              <span class="hint" title={explainFailure(row.failureReason).meaning}>
                                last failure {row.failureReason}
                              </span>
                            )
                            : null}
                        </td>
                        <td>
                          <When c={c} at={row.createdAt} />
                        </td>
                        <td>
                          <When c={c} at={row.updatedAt} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager c={c} params={params} hasMore={page.hasMore} />
            </>
          )}
      </ConsoleLayout>,
      problems.length === 0 ? 200 : 400,
    );
  });
  return app;
}
