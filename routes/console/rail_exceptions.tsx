/** @jsxImportSource hono/jsx */
/**
 * Rail exceptions: rail outcomes a payout could not take (the bank paid the entry of a payout
 * canceled meanwhile, a return for a payout offered again), oldest first. An admin resolves one:
 * the bank's payment stands (posted from available to the bank; in live a second admin approves
 * it first) or there is nothing to post. These are the CLI's rails:exceptions and
 * rails:resolve-exception, audited.
 */
import { Hono } from "hono";
import {
  listRailExceptions,
  RAIL_EXCEPTIONS_LISTED_MAX,
  type RailExceptionRow,
} from "../../lib/rails/exceptions.ts";
import type { AppDeps } from "../context.ts";
import {
  ConsoleLayout,
  consoleUrl,
  CsrfField,
  type FieldProblem,
  FormProblems,
  Money,
  requireRole,
  SelectField,
  When,
} from "./kit.tsx";
import { csvCell, type CsvColumn, csvExport, wholeList } from "./csv_export.ts";
import {
  ActionButton,
  DoneNotice,
  doneRedirect,
  ExportLink,
  FilterForm,
  ListTable,
  queryChoice,
  rowCommand,
} from "./page_parts.tsx";
import { companiesInScope, type ConsoleContext, type ConsoleEnv, hasRole } from "./session.ts";

const NOTICES = {
  resolved: "The exception was resolved.",
  approval: "A second admin must approve the posting (Approvals).",
};
const STATUSES = ["open", "resolved"] as const;

/** The exceptions of the page's filter. */
function filteredExceptions(c: ConsoleContext): Promise<RailExceptionRow[]> {
  return listRailExceptions(
    c.get("database").readClient,
    { status: queryChoice(c, "status", STATUSES) ?? "open", companyIds: companiesInScope(c) },
    RAIL_EXCEPTIONS_LISTED_MAX,
  );
}

const outcomeOf = (x: RailExceptionRow) =>
  x.outcome === "completed" ? "paid" : `came back ${x.returnCode ?? ""}`.trim();

/** The export's columns: what the page shows, and the resolution of a closed one. */
const EXCEPTION_COLUMNS: readonly CsvColumn<RailExceptionRow>[] = [
  ["reported_at", (x) => csvCell.time(x.createdAt)],
  ["rail", (x) => csvCell.text(x.rail)],
  ["batch", (x) => csvCell.text(x.batchId)],
  ["reference", (x) => csvCell.text(x.reference)],
  ["payout", (x) => csvCell.text(x.payoutId)],
  ["outcome", (x) => csvCell.text(outcomeOf(x))],
  ["amount", (x) => csvCell.money(x.amountCents)],
  ["why", (x) => csvCell.text(x.reason)],
  ["status", (x) => csvCell.text(x.status)],
  ["resolution", (x) => csvCell.text(x.resolution)],
];

async function exceptionsPage(c: ConsoleContext, shown: { problems: readonly FieldProblem[] }) {
  const status = queryChoice(c, "status", STATUSES) ?? "open";
  const rows = await filteredExceptions(c);
  const admin = hasRole(c, "admin");
  return (
    <ConsoleLayout c={c} title="Rail exceptions" active="">
      <DoneNotice c={c} notices={NOTICES} />
      <FormProblems problems={shown.problems} />
      <p>
        Outcomes a bank or provider reported for an entry whose payout could no longer take them.
        Nothing else waited for them; each needs an operator's decision.
      </p>
      <FilterForm c={c} action="/console/rail-exceptions">
        <SelectField
          name="status"
          label="Status"
          options={STATUSES.map((s) => ({ value: s, label: s }))}
          values={{ status }}
        />
      </FilterForm>
      {rows.length > 0
        ? <ExportLink c={c} path="/console/rail-exceptions/export.csv" what="these exceptions" />
        : null}
      <ListTable
        label="Rail exceptions"
        rows={rows}
        empty={<>No {status} rail exceptions.</>}
        head={
          <>
            <th scope="col">Reported</th>
            <th scope="col">Rail</th>
            <th scope="col">Payout</th>
            <th scope="col">Outcome</th>
            <th scope="col">Amount</th>
            <th scope="col">Why</th>
            <th scope="col">{status === "open" ? "Resolve" : "Resolution"}</th>
          </>
        }
        row={(x) => (
          <tr>
            <td>
              <When c={c} at={x.createdAt} />
            </td>
            <td>
              {x.rail}
              <span class="hint">{x.batchId}</span>
            </td>
            <td>
              {x.payoutId
                ? <a href={consoleUrl(c, `/console/payouts/${x.payoutId}`)}>{x.payoutId}</a>
                : "—"}
            </td>
            <td>{outcomeOf(x)}</td>
            <td>
              <Money cents={x.amountCents} />
            </td>
            <td>{x.reason}</td>
            <td class="actions">
              {x.status === "resolved" ? x.resolution : admin
                ? (
                  <>
                    {x.outcome === "completed"
                      ? (
                        <ActionButton
                          action={`/console/rail-exceptions/${x.id}/payment_stands`}
                          label="Payment stands"
                          ariaLabel={`Let the payment of ${x.reference} stand`}
                          confirm="Post the paid amount from available to the bank?"
                          danger
                          csrf={<CsrfField c={c} />}
                        />
                      )
                      : null}
                    <ActionButton
                      action={`/console/rail-exceptions/${x.id}/no_ledger_effect`}
                      label="Nothing to post"
                      ariaLabel={`Resolve ${x.reference} with nothing posted`}
                      confirm="Close this exception without posting anything?"
                      csrf={<CsrfField c={c} />}
                    />
                  </>
                )
                : "an admin resolves it"}
            </td>
          </tr>
        )}
      />
    </ConsoleLayout>
  );
}

export function railExceptionsConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get("/rail-exceptions", async (c) => c.html(await exceptionsPage(c, { problems: [] })));
  app.get("/rail-exceptions/export.csv", async (c) =>
    csvExport(c, {
      name: "rail-exceptions",
      columns: EXCEPTION_COLUMNS,
      read: wholeList(await filteredExceptions(c)),
    }));
  for (const resolution of ["payment_stands", "no_ledger_effect"] as const) {
    app.post(
      `/rail-exceptions/:id/${resolution}`,
      requireRole("admin"),
      (c) =>
        rowCommand(c, deps, {
          what: "This rail exception",
          command: "rails:resolve-exception",
          flags: (id) => ({ exception: id, resolution, environment: c.get("environment") }),
          done: (value) =>
            doneRedirect(
              c,
              "/console/rail-exceptions",
              value.approval_id === undefined ? "resolved" : "approval",
            ),
          page: (problems) => exceptionsPage(c, { problems }),
        }),
    );
  }
  return app;
}
