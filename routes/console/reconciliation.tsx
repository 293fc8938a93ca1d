/** @jsxImportSource hono/jsx */
/**
 * Reconciliation: each account's day a bank statement reported (newest first), its bank movement
 * against what the service expected, its matched lines and its exceptions, with a badge; the open
 * exceptions below, each resolved by an admin with a note (and, when the ledger must follow the
 * bank, an adjusting entry to a line: in live a second admin approves it). These are the CLI's
 * recon:exceptions and recon:resolve; the days export as CSV.
 */
import { Hono } from "hono";
import {
  listReconExceptions,
  RECON_EXCEPTIONS_PAGE_MAX,
  type ReconException,
} from "../../lib/reconciliation/exceptions.ts";
import {
  dayBadge,
  listStatementDays,
  STATEMENT_DAYS_LISTED_MAX,
  type StatementDayView,
} from "../../lib/reconciliation/views.ts";
import type { AppDeps } from "../context.ts";
import { csvCell, type CsvColumn, csvExport, wholeList } from "./csv_export.ts";
import {
  ConsoleLayout,
  consoleUrl,
  CsrfField,
  type FieldProblem,
  FormProblems,
  Money,
  requireRole,
  When,
} from "./kit.tsx";
import { DoneNotice, doneRedirect, ExportLink, ListTable, rowCommand } from "./page_parts.tsx";
import { companiesInScope, type ConsoleContext, type ConsoleEnv, hasRole } from "./session.ts";

const NOTICES = {
  resolved: "The exception was resolved.",
  approval: "A second admin must approve the adjusting entry (Approvals).",
};

const BADGE_CLASS: Readonly<Record<string, string>> = {
  reconciled: "badge good",
  resolved: "badge",
  differences: "badge bad",
};

const DAY_COLUMNS: readonly CsvColumn<StatementDayView>[] = [
  ["date", (d) => csvCell.text(d.date)],
  ["company", (d) => csvCell.text(d.companyName)],
  ["account", (d) => csvCell.text(`****${d.accountLastFour}`)],
  ["role", (d) => csvCell.text(d.role)],
  ["opening", (d) => csvCell.money(d.openingCents)],
  ["closing", (d) => csvCell.money(d.closingCents)],
  ["bank_net", (d) => csvCell.money(d.bankNetCents)],
  ["expected_net", (d) => csvCell.money(d.expectedNetCents)],
  ["lines", (d) => csvCell.count(d.lines)],
  ["matched", (d) => csvCell.count(d.matched)],
  ["exceptions", (d) => csvCell.count(d.exceptions)],
  ["open_exceptions", (d) => csvCell.count(d.openExceptions)],
  ["status", (d) => csvCell.text(dayBadge(d))],
  ["file", (d) => csvCell.text(d.fileName)],
  ["source", (d) => csvCell.text(d.source)],
];

function ResolveForm(props: { c: ConsoleContext; x: ReconException }) {
  const { c, x } = props;
  return (
    <form method="post" action={`/console/reconciliation/${x.id}/resolve`} class="filters">
      <CsrfField c={c} />
      <div>
        <label for={`note-${x.id}`}>Note</label>
        <input id={`note-${x.id}`} name="note" required maxlength={500} />
      </div>
      <div>
        <label for={`line-${x.id}`}>
          Adjust line <span class="hint">optional: the ledger follows the bank</span>
        </label>
        <input id={`line-${x.id}`} name="adjust_line" maxlength={80} />
      </div>
      <div>
        <button type="submit" aria-label={`Resolve exception ${x.id}`}>Resolve</button>
      </div>
    </form>
  );
}

async function reconciliationPage(c: ConsoleContext, shown: { problems: readonly FieldProblem[] }) {
  const reader = c.get("database").readClient;
  const companyIds = companiesInScope(c);
  const days = await listStatementDays(reader, { companyIds, limit: STATEMENT_DAYS_LISTED_MAX });
  const open = await listReconExceptions(reader, {
    companyIds,
    status: "open",
    limit: RECON_EXCEPTIONS_PAGE_MAX,
  });
  const admin = hasRole(c, "admin");
  return (
    <ConsoleLayout c={c} title="Reconciliation" active="reconciliation">
      <DoneNotice c={c} notices={NOTICES} />
      <FormProblems problems={shown.problems} />
      <p>
        Each account's day as the bank's statement reported it, matched with what the service
        expected: ACH files by their totals, returns, checks paid, wires, the payment providers'
        settlements. {admin
          ? (
            <>
              An admin imports a statement (BAI2 or camt.053) on{" "}
              <a href={consoleUrl(c, "/console/bank-files/import")}>Import a file</a> or with{" "}
            </>
          )
          : "Import a statement with "}
        <code>recon:import</code>; the bank's SFTP statements arrive by themselves.
      </p>
      <ExportLink c={c} path="/console/reconciliation/export.csv" what="the days" />
      <ListTable
        label="Statement days"
        rows={days}
        empty={<>No bank statement imported yet.</>}
        head={
          <>
            <th scope="col">Day</th>
            <th scope="col">Company</th>
            <th scope="col">Account</th>
            <th scope="col">Closing balance</th>
            <th scope="col">Bank moved</th>
            <th scope="col">Expected</th>
            <th scope="col">Matched</th>
            <th scope="col">Exceptions</th>
            <th scope="col">Status</th>
          </>
        }
        row={(d) => (
          <tr>
            <td>{d.date}</td>
            <td>{d.companyName}</td>
            <td>
              ••••{d.accountLastFour}
              <span class="hint">{d.role}</span>
            </td>
            <td>{d.closingCents === null ? "—" : <Money cents={d.closingCents} />}</td>
            <td>
              <Money cents={d.bankNetCents} />
            </td>
            <td>
              <Money cents={d.expectedNetCents} />
            </td>
            <td>
              {d.matched} of {d.lines}
            </td>
            <td>
              {d.openExceptions} open of {d.exceptions}
            </td>
            <td>
              <span class={BADGE_CLASS[dayBadge(d)]}>{dayBadge(d)}</span>
            </td>
          </tr>
        )}
      />
      <h2>Open exceptions</h2>
      <ListTable
        label="Open exceptions"
        rows={open}
        empty={<>No open exception: every line matched.</>}
        head={
          <>
            <th scope="col">Day</th>
            <th scope="col">Account</th>
            <th scope="col">Side</th>
            <th scope="col">Amount</th>
            <th scope="col">Why</th>
            <th scope="col">Resolve</th>
          </>
        }
        row={(x) => (
          <tr>
            <td>
              {x.statementDate}
              <span class="hint">
                <When c={c} at={x.createdAt} />
              </span>
            </td>
            <td>••••{x.accountLastFour}</td>
            <td>{x.side === "bank" ? "the bank only" : "the service only"}</td>
            <td>
              <Money cents={x.amountCents} /> {x.direction}
            </td>
            <td>{x.reason}</td>
            <td class="actions">
              {admin ? <ResolveForm c={c} x={x} /> : "an admin resolves it"}
            </td>
          </tr>
        )}
      />
    </ConsoleLayout>
  );
}

export function reconciliationConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get("/reconciliation", async (c) => c.html(await reconciliationPage(c, { problems: [] })));
  app.get("/reconciliation/export.csv", async (c) => {
    const days = await listStatementDays(c.get("database").readClient, {
      companyIds: companiesInScope(c),
      limit: STATEMENT_DAYS_LISTED_MAX,
    });
    return csvExport(c, { name: "reconciliation", columns: DAY_COLUMNS, read: wholeList(days) });
  });
  app.post("/reconciliation/:id/resolve", requireRole("admin"), async (c) => {
    const form = await c.req.parseBody();
    const note = typeof form.note === "string" ? form.note : "";
    const line = typeof form.adjust_line === "string" ? form.adjust_line.trim() : "";
    return await rowCommand(c, deps, {
      what: "This reconciliation exception",
      command: "recon:resolve",
      flags: (id) => ({
        exception: id,
        note,
        ...(line === "" ? {} : { "adjust-line": line }),
        environment: c.get("environment"),
      }),
      done: (value) =>
        doneRedirect(
          c,
          "/console/reconciliation",
          value.approval_id === undefined ? "resolved" : "approval",
        ),
      page: (problems) => reconciliationPage(c, { problems }),
    });
  });
  return app;
}
