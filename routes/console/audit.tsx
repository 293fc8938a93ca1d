/** @jsxImportSource hono/jsx */
/**
 * The audit log (issue 20): one environment's rows, newest first, filtered as the CLI's audit:list
 * (operator, action, object, dates) and limited to the operator's companies; and the result of
 * verifying the hash chain, run as the CLI's audit:verify (for an operator of every company: the
 * chain is the installation's). Before and after are stored with secrets masked.
 */
import { Hono } from "hono";
import * as v from "valibot";
import {
  type AuditFilter,
  type AuditLine,
  auditSorts,
  listAuditLines,
} from "../../lib/console/audit.ts";
import type { AppDeps } from "../context.ts";
import { csvCell, type CsvColumn, csvExport } from "./csv_export.ts";
import { ExportLink, ListTable } from "./page_parts.tsx";
import {
  ConsoleLayout,
  consoleUrl,
  Field,
  type FieldProblem,
  FormProblems,
  type FormValues,
  listParams,
  Notice,
  Pager,
  SortHeader,
  When,
} from "./kit.tsx";
import { isCalendarDate, issuePath } from "../validation.ts";
import {
  companiesInScope,
  type ConsoleContext,
  type ConsoleEnv,
  runConsoleCommand,
} from "./session.ts";

const optionalText = (label: string) =>
  v.optional(
    v.pipe(v.string(), v.trim(), v.maxLength(200, `${label}: at most 200 characters`)),
    "",
  );
const optionalDate = (label: string) =>
  v.optional(
    v.union([
      v.literal(""),
      v.pipe(
        v.string(),
        v.regex(/^\d{4}-\d{2}-\d{2}$/, `${label}: a date, YYYY-MM-DD`),
        v.check(
          (text) => !/^\d{4}-\d{2}-\d{2}$/.test(text) || isCalendarDate(text),
          `${label}: not a real date`,
        ),
      ),
    ], `${label}: a date, YYYY-MM-DD`),
    "",
  );
const filterQuery = v.object({
  operator: optionalText("Operator"),
  action: optionalText("Action"),
  object: optionalText("Object"),
  since: optionalDate("From"),
  until: optionalDate("Until"),
});

/** The filter of the query string, or the problems of its fields (shown with what was typed). */
function filterOf(
  c: ConsoleContext,
): { filter: AuditFilter; problems: FieldProblem[]; values: FormValues } {
  const values: FormValues = {
    operator: c.req.query("operator") ?? "",
    action: c.req.query("action") ?? "",
    object: c.req.query("object") ?? "",
    since: c.req.query("since") ?? "",
    until: c.req.query("until") ?? "",
  };
  const parsed = v.safeParse(filterQuery, values);
  if (!parsed.success) {
    return {
      filter: { companyIds: companiesInScope(c) },
      problems: parsed.issues.map((issue) => ({ field: issuePath(issue), message: issue.message })),
      values,
    };
  }
  const q = parsed.output;
  return {
    filter: {
      companyIds: companiesInScope(c),
      operator: q.operator || undefined,
      action: q.action || undefined,
      objectId: q.object || undefined,
      since: q.since ? Date.parse(`${q.since}T00:00:00Z`) : undefined,
      // The whole day named: until the next midnight, UTC.
      until: q.until ? Date.parse(`${q.until}T00:00:00Z`) + 86_400_000 : undefined,
    },
    problems: [],
    values,
  };
}

async function verification(c: ConsoleContext, deps: AppDeps) {
  const verified = await runConsoleCommand(deps, c, "audit:verify", {
    environment: c.get("environment"),
  });
  if (verified.ok) {
    return <Notice>Chain verified: {String(verified.value[c.get("environment")])}.</Notice>;
  }
  return (
    <Notice attention>
      <strong>Chain check failed.</strong> {verified.message}
    </Notice>
  );
}

const AUDIT_COLUMNS: readonly CsvColumn<AuditLine>[] = [
  ["seq", (line) => csvCell.count(line.seq)],
  ["at", (line) => csvCell.time(line.at)],
  ["operator", (line) => csvCell.text(line.operator)],
  ["origin", (line) => csvCell.text(line.origin)],
  ["action", (line) => csvCell.text(line.action)],
  ["object_type", (line) => csvCell.text(line.objectType)],
  ["object_id", (line) => csvCell.text(line.objectId)],
  ["company_id", (line) => csvCell.text(line.companyId)],
  ["before", (line) => csvCell.text(line.before)],
  ["after", (line) => csvCell.text(line.after)],
];

export function auditConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get("/audit/export.csv", (c) => {
    const params = listParams(c, { sorts: Object.keys(auditSorts), defaultSort: "seq" });
    const { filter, problems } = filterOf(c);
    if (problems.length > 0) {
      return c.text(problems.map((p) => p.message).join("\n") + "\n", 400);
    }
    return csvExport(c, {
      name: "audit",
      columns: AUDIT_COLUMNS,
      read: (window) =>
        listAuditLines(c.get("database").readClient, filter, { ...params, ...window }),
    });
  });
  app.get("/audit", async (c) => {
    const params = listParams(c, { sorts: Object.keys(auditSorts), defaultSort: "seq" });
    const { filter, problems, values } = filterOf(c);
    const page = problems.length > 0
      ? { data: [], hasMore: false }
      : await listAuditLines(c.get("database").readClient, filter, params);
    const everyCompany = companiesInScope(c) === null;
    return c.html(
      <ConsoleLayout c={c} title="Audit log" active="audit">
        {everyCompany && c.req.query("verify") === "1" ? await verification(c, deps) : null}
        {everyCompany
          ? (
            <p>
              <a href={consoleUrl(c, "/console/audit", { verify: "1" })}>
                Verify the {c.get("environment")} chain
              </a>
            </p>
          )
          : null}
        <FormProblems problems={problems} />
        <form method="get" action="/console/audit" class="filters">
          <input type="hidden" name="env" value={c.get("environment")} />
          <Field
            name="operator"
            label="Operator"
            hint="E-mail or id"
            values={values}
            problems={problems}
          />
          <Field
            name="action"
            label="Action"
            hint="e.g. wire:receive"
            values={values}
            problems={problems}
          />
          <Field name="object" label="Object id" values={values} problems={problems} />
          <Field
            name="since"
            label="From (UTC day)"
            type="date"
            values={values}
            problems={problems}
          />
          <Field
            name="until"
            label="Until (UTC day)"
            type="date"
            values={values}
            problems={problems}
          />
          <div>
            <button type="submit" class="secondary">Filter</button>
          </div>
        </form>
        {page.data.length > 0
          ? <ExportLink c={c} path="/console/audit/export.csv" what="these audit rows" />
          : null}
        <ListTable
          label="Audit rows"
          rows={page.data}
          empty={
            <>
              No audit rows match. Every change an operator makes (in the console or the CLI) is
              recorded here; clear a filter to see more.
            </>
          }
          head={
            <>
              <SortHeader c={c} params={params} column="seq" label="#" numeric />
              <th scope="col">When</th>
              <th scope="col">Operator</th>
              <SortHeader c={c} params={params} column="action" label="Action" />
              <th scope="col">Object</th>
              <th scope="col">Before</th>
              <th scope="col">After</th>
            </>
          }
          row={(line) => (
            <tr>
              <td class="num">{line.seq}</td>
              <td>
                <When c={c} at={line.at} />
              </td>
              <td>
                {line.operator ?? "—"}
                <span class="hint">{line.origin}</span>
              </td>
              <td>{line.action}</td>
              <td>
                {line.objectType}
                <span class="hint">{line.objectId ?? ""}</span>
              </td>
              <td>
                <code class="break-all">{line.before ?? "—"}</code>
              </td>
              <td>
                <code class="break-all">{line.after ?? "—"}</code>
              </td>
            </tr>
          )}
        />
        <Pager c={c} params={params} hasMore={page.hasMore} />
      </ConsoleLayout>,
      problems.length > 0 ? 400 : 200,
    );
  });
  return app;
}
