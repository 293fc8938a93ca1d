/** @jsxImportSource hono/jsx */
/**
 * Funding (issue 20): the fundings of the operator's companies, and an admin's record of what the
 * bank did with a pending one: a wire that arrived, or an ACH funding the bank returned. These are
 * the CLI's wire:receive and funding:return: in test they happen at once, in live they wait for a
 * second admin (dual control); either way audited.
 */
import { Hono } from "hono";
import {
  FUNDING_STATUSES,
  type FundingRow,
  fundingSorts,
  listConsoleFundings,
} from "../../lib/console/funding.ts";
import { overviewNow } from "../../lib/console/overview.ts";
import {
  ARRIVED_SHOWN_MS,
  type ExpectedPayment,
  expectedPayments,
} from "../../lib/console/reconciliation.ts";
import type { AppDeps } from "../context.ts";
import { csvCell, type CsvColumn, csvExport } from "./csv_export.ts";
import {
  ConsoleLayout,
  consoleUrl,
  CsrfField,
  type FieldProblem,
  FormProblems,
  listParams,
  Money,
  Pager,
  requireRole,
  SelectField,
  SortHeader,
  When,
} from "./kit.tsx";
import {
  ActionButton,
  companyFilter,
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
  "wire:receive": "Recorded: the wire arrived and its amount is available.",
  "funding:return": "Recorded: the bank returned the funding; it is no longer pending.",
  approval_requested:
    "Requested: a second admin approves it on the Approvals page before anything moves.",
};

/**
 * Money announced and not arrived (a wire awaited, an ACH funding in flight), with the large
 * disbursement it names and what of it waits; then what arrived lately, matched to its funding.
 */
function ExpectedPayments(props: { c: ConsoleContext; payments: readonly ExpectedPayment[] }) {
  const { c } = props;
  return (
    <section aria-labelledby="expected-title">
      <h2 id="expected-title">Expected payments</h2>
      <ListTable
        label="Expected payments"
        rows={props.payments}
        empty="No payment is expected: no wire is awaited and no ACH funding is in flight."
        caption={`Awaited first, soonest expected first; then what arrived in the last ${
          ARRIVED_SHOWN_MS / 86_400_000
        } days.`}
        head={
          <>
            <th scope="col">Funding</th>
            <th scope="col">Company · line</th>
            <th scope="col">Method</th>
            <th scope="col" class="num">Amount</th>
            <th scope="col">For</th>
            <th scope="col">Expected</th>
            <th scope="col">Arrived</th>
          </>
        }
        row={(payment) => (
          <tr>
            <td>
              {payment.fundingUuid ?? payment.fundingId}
              <span class="hint">
                announced <When c={c} at={payment.createdAt} />
              </span>
            </td>
            <td>{payment.companyName} · {payment.lineCode}</td>
            <td>{payment.method === "WireTransfer" ? "wire" : "ACH"}</td>
            <td class="num">
              <Money cents={payment.amountCents} />
            </td>
            <td>
              {payment.disbursement
                ? (
                  <>
                    <a href={consoleUrl(c, `/console/disbursements/${payment.disbursement.id}`)}>
                      {payment.disbursement.claimOrUuid}
                    </a>
                    {payment.disbursement.waitingCents > 0
                      ? (
                        <span class="hint">
                          <Money cents={payment.disbursement.waitingCents} /> waiting for funds
                        </span>
                      )
                      : null}
                  </>
                )
                : "the line's balance"}
            </td>
            <td>
              {payment.status === "Pending"
                ? (payment.expectedAt === null
                  ? <span class="badge">awaited</span>
                  : <When c={c} at={payment.expectedAt} />)
                : "—"}
            </td>
            <td>
              {payment.status === "Completed"
                ? (
                  <span class="badge good">
                    arrived <When c={c} at={payment.arrivedAt} />
                  </span>
                )
                : "—"}
            </td>
          </tr>
        )}
      />
    </section>
  );
}

async function fundingPage(
  c: ConsoleContext,
  problems: readonly FieldProblem[],
  realNow: number,
) {
  const database = c.get("database");
  const params = listParams(c, { sorts: Object.keys(fundingSorts), defaultSort: "created" });
  const status = queryChoice(c, "status", FUNDING_STATUSES);
  const { companies, companyId } = await companyFilter(c);
  const page = await listConsoleFundings(
    database.readClient,
    { companyIds: companiesInScope(c), companyId, status },
    params,
  );
  const mayRecord = hasRole(c, "admin");
  const expected = await expectedPayments(
    database.readClient,
    companiesInScope(c),
    await overviewNow(database, realNow),
  );
  return (
    <ConsoleLayout c={c} title="Funding" active="funding">
      <DoneNotice c={c} notices={NOTICES} />
      <FormProblems problems={problems} />
      <ExpectedPayments c={c} payments={expected} />
      <h2>Fundings</h2>
      <FilterForm c={c} action="/console/funding">
        <SelectField
          name="company"
          label="Company"
          any="Every company"
          options={companies.map((company) => ({ value: company.id, label: company.name }))}
          values={{ company: companyId ?? "" }}
        />
        <SelectField
          name="status"
          label="Status"
          any="Any status"
          options={FUNDING_STATUSES.map((s) => ({ value: s, label: s }))}
          values={{ status: status ?? "" }}
        />
      </FilterForm>
      {page.data.length > 0
        ? <ExportLink c={c} path="/console/funding/export.csv" what="these fundings" />
        : null}
      <ListTable
        label="Fundings"
        rows={page.data}
        empty={
          <>
            No fundings match. A company adds funds with POST /api/funds (ACH or wire); choose
            "Every company" and "Any status" to see them all.
          </>
        }
        head={
          <>
            <SortHeader c={c} params={params} column="created" label="Created" />
            <SortHeader c={c} params={params} column="company" label="Company" />
            <th scope="col">Line</th>
            <th scope="col">Method</th>
            <SortHeader c={c} params={params} column="amount" label="Amount" numeric />
            <SortHeader c={c} params={params} column="status" label="Status" />
            <th scope="col">Expected available</th>
            <th scope="col">Completed</th>
            {mayRecord ? <th scope="col">Action</th> : null}
          </>
        }
        row={(funding) => (
          <tr>
            <td>
              <When c={c} at={funding.createdAt} />
              <span class="hint">{funding.fundingUuid ?? funding.id}</span>
            </td>
            <td>{funding.companyName}</td>
            <td>{funding.lineCode}</td>
            <td>
              {funding.paymentMethod === "WireTransfer" ? "wire" : "ACH"}
              {funding.largeDisbursement ? <span class="badge">large disbursement</span> : null}
            </td>
            <td class="num">
              <Money cents={funding.amountCents} />
            </td>
            <td>
              <span
                class={funding.status === "Completed"
                  ? "badge good"
                  : funding.status === "Returned"
                  ? "badge bad"
                  : "badge"}
              >
                {funding.status}
              </span>
            </td>
            <td>
              <When c={c} at={funding.expectedAvailableAt} />
            </td>
            <td>
              <When c={c} at={funding.completedAt} />
            </td>
            {mayRecord
              ? (
                <td>
                  {funding.status === "Pending" && funding.paymentMethod === "WireTransfer"
                    ? (
                      <ActionButton
                        action={`/console/funding/${funding.id}/receive-wire`}
                        label="Record wire received"
                        ariaLabel={`Record wire ${funding.id} received`}
                        confirm="Record that this wire arrived at the bank?"
                        csrf={<CsrfField c={c} />}
                      />
                    )
                    : null}
                  {funding.status === "Pending" && funding.paymentMethod === "ACH"
                    ? (
                      <ActionButton
                        action={`/console/funding/${funding.id}/return`}
                        label="Record returned funding"
                        ariaLabel={`Record ACH funding ${funding.id} returned`}
                        confirm="Record that the bank returned this ACH funding?"
                        danger
                        csrf={<CsrfField c={c} />}
                      />
                    )
                    : null}
                </td>
              )
              : null}
          </tr>
        )}
      />
      <Pager c={c} params={params} hasMore={page.hasMore} />
    </ConsoleLayout>
  );
}

const FUNDING_COLUMNS: readonly CsvColumn<FundingRow>[] = [
  ["funding_id", (f) => csvCell.text(f.id)],
  ["funding_uuid", (f) => csvCell.text(f.fundingUuid)],
  ["company", (f) => csvCell.text(f.companyName)],
  ["line", (f) => csvCell.text(f.lineCode)],
  ["method", (f) => csvCell.text(f.paymentMethod)],
  ["amount", (f) => csvCell.money(f.amountCents)],
  ["status", (f) => csvCell.text(f.status)],
  ["large_disbursement", (f) => f.largeDisbursement ? "true" : "false"],
  ["expected_available_at", (f) => csvCell.time(f.expectedAvailableAt)],
  ["completed_at", (f) => csvCell.time(f.completedAt)],
  ["created_at", (f) => csvCell.time(f.createdAt)],
];

export function fundingConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get("/funding/export.csv", async (c) => {
    const params = listParams(c, { sorts: Object.keys(fundingSorts), defaultSort: "created" });
    const { companyId } = await companyFilter(c);
    const filter = {
      companyIds: companiesInScope(c),
      companyId,
      status: queryChoice(c, "status", FUNDING_STATUSES),
    };
    return csvExport(c, {
      name: "fundings",
      columns: FUNDING_COLUMNS,
      read: (window) =>
        listConsoleFundings(c.get("database").readClient, filter, { ...params, ...window }),
    });
  });
  app.get("/funding", async (c) => c.html(await fundingPage(c, [], deps.clock.now())));

  for (const [path, command] of [["receive-wire", "wire:receive"], ["return", "funding:return"]]) {
    app.post(`/funding/:id/${path}`, requireRole("admin"), (c) =>
      rowCommand(c, deps, {
        what: "This funding",
        command,
        flags: (id) => ({ funding: id, environment: c.get("environment") }),
        done: (recorded) =>
          doneRedirect(
            c,
            "/console/funding",
            "approval_id" in recorded ? "approval_requested" : command,
          ),
        page: (problems) => fundingPage(c, problems, deps.clock.now()),
      }));
  }
  return app;
}
