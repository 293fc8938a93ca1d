/** @jsxImportSource hono/jsx */
/**
 * What the console's operations pages share beyond kit.tsx: a form body checked with valibot
 * (each issue named by its field), a refused command turned into the form's problems, the
 * redirect after a change with a fixed notice, tabs between a page's tables, id patterns, and the
 * list pages' frame: the filters read from the query and shown as a form, the table or its empty
 * state.
 */
import type { Child } from "hono/jsx";
import type { Database } from "../../db/client.ts";
import * as v from "valibot";
import { scopedCompanies, type ScopedCompany } from "../../lib/console/companies.ts";
import type { Flags } from "../../lib/admin/command_kit.ts";
import type { Refusal } from "../../lib/platform/result.ts";
import type { AppDeps } from "../context.ts";
import { companiesInScope, type ConsoleContext, runConsoleCommand } from "./session.ts";
import {
  consoleUrl,
  EmptyState,
  type FieldProblem,
  type FormValues,
  formValuesOf,
  notFoundPage,
  Notice,
  refusalStatus,
} from "./kit.tsx";
import { issuePath } from "../validation.ts";
import { csvExportUrl } from "./csv_export.ts";

/** An id of ours in a path (`wd_…`, `job_…`): letters, digits and _ only, bounded. */
export const ID_PATTERN = /^[A-Za-z0-9_]{1,80}$/;

/** A form, checked: its values (shown again on error) and either its output or its problems. */
export type CheckedForm<T> =
  | { ok: true; value: T; values: FormValues }
  | { ok: false; problems: FieldProblem[]; values: FormValues };

/** The request's form body checked against `schema`; the first issue of each field is kept. */
export async function checkedForm<S extends v.GenericSchema>(
  c: ConsoleContext,
  schema: S,
): Promise<CheckedForm<v.InferOutput<S>>> {
  const body = await c.req.parseBody();
  const values = formValuesOf(body);
  const parsed = v.safeParse(schema, values);
  if (parsed.success) return { ok: true, value: parsed.output, values };
  const seen = new Set<string>();
  const problems: FieldProblem[] = [];
  for (const issue of parsed.issues) {
    const field = issuePath(issue) || "form";
    if (seen.has(field)) continue;
    seen.add(field);
    problems.push({ field, message: issue.message });
  }
  return { ok: false, problems, values };
}

/** A refused command as the form's problem, on the field it names when the form has it. */
export function refusalProblems(
  refusal: Refusal,
  formFields: readonly string[] = [],
): FieldProblem[] {
  const field = refusal.field !== undefined && formFields.includes(refusal.field)
    ? refusal.field
    : "form";
  return [{ field, message: refusal.message }];
}

/** The HTTP status of a refused command, for the page that shows it. */
export const statusOf = (refusal: Refusal) => refusalStatus(refusal.code);

/**
 * After a change: back to `path` with a notice key the page words itself (never text from the
 * request), so a reload does not send the form again.
 */
export function doneRedirect(
  c: ConsoleContext,
  path: string,
  done: string,
  query: Readonly<Record<string, string | null>> = {},
): Response {
  return c.redirect(consoleUrl(c, path, { ...query, done }), 303);
}

/** The notice of a `done` key, when the page knows it. */
export function DoneNotice(
  props: { c: ConsoleContext; notices: Readonly<Record<string, string>> },
) {
  const done = props.c.req.query("done");
  const text = done === undefined ? undefined : props.notices[done];
  return text === undefined ? null : <Notice>{text}</Notice>;
}

/** Links between the tables of one page; the current one is marked for screen readers. */
export function Tabs(props: {
  c: ConsoleContext;
  label: string;
  tabs: readonly { href: string; label: string; current: boolean }[];
}) {
  return (
    <nav aria-label={props.label} class="actions spaced">
      {props.tabs.map((tab) => (
        <a
          href={consoleUrl(props.c, tab.href)}
          aria-current={tab.current ? "page" : undefined}
          class={tab.current ? "badge good" : "badge"}
        >
          {tab.label}
        </a>
      ))}
    </nav>
  );
}

/** A one-button form posting to `action` (with the CSRF token), optionally asking first. */
export function ActionButton(props: {
  action: string;
  label: string;
  /** What screen readers hear: the label with the object it acts on. */
  ariaLabel?: string;
  confirm?: string;
  danger?: boolean;
  children?: Child;
  csrf: Child;
}) {
  return (
    <form method="post" action={props.action} data-confirm={props.confirm}>
      {props.csrf}
      {props.children}
      <button
        type="submit"
        class={props.danger ? "danger" : undefined}
        aria-label={props.ariaLabel}
      >
        {props.label}
      </button>
    </form>
  );
}

/** A required single-line text field of a form, trimmed, at most `lengthMax` characters. */
export function requiredText(label: string, lengthMax: number) {
  return v.pipe(
    v.string(`${label} is required`),
    v.trim(),
    v.nonEmpty(`${label} is required`),
    v.maxLength(lengthMax, `${label} is at most ${lengthMax} characters`),
  );
}

/**
 * A table's scrolling frame, reachable by keyboard (a phone-width table scrolls sideways, and a
 * region without a focusable cell could not be scrolled without a mouse), named for screen readers.
 */
export function TableWrap(props: { label: string; children: Child }) {
  return (
    <div class="table-wrap" tabindex={0} role="region" aria-label={props.label}>
      {props.children}
    </div>
  );
}

/**
 * A list's filters: a GET form to `action` that keeps the chosen environment, with a Show button
 * after the fields.
 */
export function FilterForm(props: { c: ConsoleContext; action: string; children: Child }) {
  return (
    <form method="get" action={props.action} class="filters">
      <input type="hidden" name="env" value={props.c.get("environment")} />
      {props.children}
      <div>
        <button type="submit" class="secondary">Show</button>
      </div>
    </form>
  );
}

/** A link to the CSV of the list on this page as it is filtered and sorted, every page of it. */
export function ExportLink(props: { c: ConsoleContext; path: string; what: string }) {
  return (
    <p class="actions">
      <a href={csvExportUrl(props.c, props.path)} download>Export {props.what} as CSV</a>
    </p>
  );
}

/**
 * A list as a table in its scrolling frame, or the empty state that says why there is nothing and
 * what would fill it: one cell row of `head`, then `row` of each item.
 */
export function ListTable<T>(props: {
  label: string;
  rows: readonly T[];
  empty: Child;
  /** A line above the head, for what the table holds or how it is ordered. */
  caption?: Child;
  head: Child;
  row: (item: T) => Child;
}) {
  if (props.rows.length === 0) return <EmptyState>{props.empty}</EmptyState>;
  return (
    <TableWrap label={props.label}>
      <table>
        {props.caption === undefined ? null : (
          <caption class="hint">
            {props.caption}
          </caption>
        )}
        <thead>
          <tr>{props.head}</tr>
        </thead>
        <tbody>{props.rows.map(props.row)}</tbody>
      </table>
    </TableWrap>
  );
}

/** A query parameter when it is one of `choices`; anything else (absent, or edited) is none. */
export function queryChoice<T extends string>(
  c: ConsoleContext,
  name: string,
  choices: readonly T[],
): T | undefined {
  const asked = c.req.query(name);
  return (choices as readonly string[]).includes(asked ?? "") ? asked as T : undefined;
}

/** The companies of the operator's scope, and the one `?company=` chose among them. */
export async function companyFilter(
  c: ConsoleContext,
): Promise<{ companies: ScopedCompany[]; companyId: string | undefined }> {
  const companies = await scopedCompanies(c.get("database").readClient, companiesInScope(c));
  const asked = c.req.query("company");
  const companyId = companies.some((company) => company.id === asked) ? asked : undefined;
  return { companies, companyId };
}

/**
 * A button's command on the row the path's `:id` names (a job, a key, a funding): an id that cannot
 * be ours, or one the command does not find in scope, is `what`'s not-found page; a refusal shows
 * `page` again with it, at the refusal's status; a success answers `done`.
 */
export async function rowCommand(
  c: ConsoleContext,
  deps: AppDeps,
  row: {
    what: string;
    command: string;
    flags: (id: string) => Flags;
    done: (value: Record<string, unknown>) => Response;
    page: (problems: readonly FieldProblem[]) => Promise<string | Promise<string>>;
  },
): Promise<Response> {
  const id = c.req.param("id");
  if (id === undefined || !ID_PATTERN.test(id)) return notFoundPage(c, row.what);
  const ran = await runConsoleCommand(deps, c, row.command, row.flags(id));
  if (ran.ok) return row.done(ran.value);
  if (statusOf(ran) === 404) return notFoundPage(c, row.what);
  return c.html(await row.page(refusalProblems(ran)), statusOf(ran));
}

/** The row of `id` among the operator's companies, or null; a malformed id is not read. */
export function findInScope<T>(
  c: ConsoleContext,
  id: string,
  find: (
    client: Database["readClient"],
    id: string,
    companyIds: readonly string[] | null,
  ) => Promise<T | null>,
): Promise<T | null> {
  return ID_PATTERN.test(id)
    ? find(c.get("database").readClient, id, companiesInScope(c))
    : Promise.resolve(null);
}
