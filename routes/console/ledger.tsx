/** @jsxImportSource hono/jsx */
/**
 * Ledger (issue 20): balances per line, transactions with their entries, and the daily tie-out
 * of a line with any difference highlighted and each day as CSV; `ledger:verify` runs on demand
 * (the CLI's command, for an operator of every company: it checks the whole environment).
 */
import { Hono } from "hono";
import { scopedCompanies, type ScopedCompany } from "../../lib/console/companies.ts";
import {
  balancesPerLine,
  type LedgerTransactionRow,
  listTransactions,
  TIE_OUT_DAYS_MAX,
  tieOutDates,
  tieOutRun,
  transactionSorts,
} from "../../lib/console/ledger.ts";
import { fileName, fileState } from "../../lib/console/file_words.ts";
import { dayReconciliation } from "../../lib/console/reconciliation.ts";
import { ledgerTransactionKinds } from "../../lib/ledger/postings.ts";
import { explainFailure } from "../../lib/payouts/failure_reasons.ts";
import { tieOutCsv } from "../../lib/ledger/tieout.ts";
import { companyNow } from "../../lib/sandbox/service.ts";
import type { AppDeps } from "../context.ts";
import { csvCell, type CsvColumn, csvExport } from "./csv_export.ts";
import {
  ConsoleLayout,
  consoleUrl,
  EmptyState,
  Field,
  FormProblems,
  listParams,
  Money,
  notFoundPage,
  Notice,
  Pager,
  SelectField,
  SortHeader,
  When,
} from "./kit.tsx";
import { ExportLink, FilterForm, ListTable, queryChoice, TableWrap, Tabs } from "./page_parts.tsx";
import {
  companiesInScope,
  type ConsoleContext,
  type ConsoleEnv,
  runConsoleCommand,
} from "./session.ts";

const ACCOUNT_LABELS = [
  ["available", "Available"],
  ["reserved", "Reserved"],
  ["in_transit", "In transit"],
  ["pending_funding", "Pending funding"],
] as const;

function LedgerTabs(props: { c: ConsoleContext; current: string }) {
  return (
    <Tabs
      c={props.c}
      label="Ledger"
      tabs={[
        { href: "/console/ledger", label: "Balances", current: props.current === "balances" },
        {
          href: "/console/ledger/transactions",
          label: "Transactions",
          current: props.current === "transactions",
        },
        { href: "/console/ledger/tie-out", label: "Tie-out", current: props.current === "tie-out" },
      ]}
    />
  );
}

const lineOptions = (companies: readonly ScopedCompany[]) =>
  companies.flatMap((company) =>
    company.lines.map((line) => ({ value: line.id, label: `${company.name} / ${line.code}` }))
  );

/** The line a query names, when it is one of the scope's. */
function chosenLine(companies: readonly ScopedCompany[], lineId: string | undefined) {
  for (const company of companies) {
    const line = company.lines.find((l) => l.id === lineId);
    if (line) return { company, line };
  }
  return null;
}

async function verification(c: ConsoleContext, deps: AppDeps) {
  const verified = await runConsoleCommand(deps, c, "ledger:verify", {
    environment: c.get("environment"),
  });
  if (verified.ok) {
    return (
      <Notice>
        Ledger verified: every transaction sums to zero and every balance equals its entries.
      </Notice>
    );
  }
  return (
    <Notice attention>
      <strong>Ledger differences found.</strong> {verified.message}
    </Notice>
  );
}

/** A transaction's entries in one cell: `account amount` pairs, as the list shows them. */
const TRANSACTION_COLUMNS: readonly CsvColumn<LedgerTransactionRow>[] = [
  ["transaction_id", (t) => csvCell.text(t.id)],
  ["posted_at", (t) => csvCell.time(t.postedAt)],
  ["kind", (t) => csvCell.text(t.kind)],
  ["company", (t) => csvCell.text(t.companyName)],
  ["line", (t) => csvCell.text(t.lineCode)],
  ["payout_id", (t) => csvCell.text(t.payoutId)],
  ["funding_id", (t) => csvCell.text(t.fundingId)],
  [
    "entries",
    (t) =>
      csvCell.text(
        t.entries.map((e) => `${e.account} ${csvCell.money(e.amountCents)}`).join("; "),
      ),
  ],
];

export function ledgerConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get("/ledger", async (c) => {
    const lines = await balancesPerLine(c.get("database").readClient, companiesInScope(c));
    const everyCompany = companiesInScope(c) === null;
    return c.html(
      <ConsoleLayout c={c} title="Ledger" active="ledger">
        <LedgerTabs c={c} current="balances" />
        {everyCompany && c.req.query("verify") === "1" ? await verification(c, deps) : null}
        {everyCompany
          ? (
            <p>
              <a href={consoleUrl(c, "/console/ledger", { verify: "1" })}>
                Verify the {c.get("environment")} ledger
              </a>{" "}
              <span class="hint">
                Recomputes every balance and transaction from the entries, as `deno task admin
                ledger:verify`.
              </span>
            </p>
          )
          : null}
        <ListTable
          label="Balances per line"
          rows={lines}
          empty={
            <>
              No business lines in your companies. An admin creates one with `deno task admin
              line:create`.
            </>
          }
          caption="Balances per line"
          head={
            <>
              <th scope="col">Company</th>
              <th scope="col">Line</th>
              {ACCOUNT_LABELS.map(([code, label]) => (
                <th scope="col" class="num" key={code}>{label}</th>
              ))}
            </>
          }
          row={(line) => (
            <tr>
              <td>{line.companyName}</td>
              <td>{line.lineCode}</td>
              {ACCOUNT_LABELS.map(([code]) => (
                <td class="num">
                  <Money cents={line.balances[code]} />
                </td>
              ))}
            </tr>
          )}
        />
      </ConsoleLayout>,
    );
  });

  app.get("/ledger/transactions/export.csv", async (c) => {
    const client = c.get("database").readClient;
    const companies = await scopedCompanies(client, companiesInScope(c));
    const line = chosenLine(companies, c.req.query("line"));
    const filter = {
      companyIds: companiesInScope(c),
      lineId: line?.line.id,
      kind: queryChoice(c, "kind", ledgerTransactionKinds),
    };
    const params = listParams(c, { sorts: Object.keys(transactionSorts), defaultSort: "posted" });
    return csvExport(c, {
      name: "ledger-transactions",
      columns: TRANSACTION_COLUMNS,
      read: (window) => listTransactions(client, filter, { ...params, ...window }),
    });
  });

  app.get("/ledger/transactions", async (c) => {
    const client = c.get("database").readClient;
    const companies = await scopedCompanies(client, companiesInScope(c));
    const line = chosenLine(companies, c.req.query("line"));
    const kind = queryChoice(c, "kind", ledgerTransactionKinds);
    const params = listParams(c, { sorts: Object.keys(transactionSorts), defaultSort: "posted" });
    const page = await listTransactions(
      client,
      { companyIds: companiesInScope(c), lineId: line?.line.id, kind },
      params,
    );
    return c.html(
      <ConsoleLayout c={c} title="Ledger transactions" active="ledger">
        <LedgerTabs c={c} current="transactions" />
        <FilterForm c={c} action="/console/ledger/transactions">
          <SelectField
            name="line"
            label="Line"
            any="Every line"
            options={lineOptions(companies)}
            values={{ line: line?.line.id ?? "" }}
          />
          <SelectField
            name="kind"
            label="Kind"
            any="Every kind"
            options={ledgerTransactionKinds.map((k) => ({ value: k, label: k }))}
            values={{ kind: kind ?? "" }}
          />
        </FilterForm>
        {page.data.length > 0
          ? (
            <ExportLink
              c={c}
              path="/console/ledger/transactions/export.csv"
              what="these transactions"
            />
          )
          : null}
        <ListTable
          label="Ledger transactions"
          rows={page.data}
          empty={
            <>
              No ledger transactions match. Every funding and payout posts one; choose "Every line"
              and "Every kind" to see them all.
            </>
          }
          head={
            <>
              <SortHeader c={c} params={params} column="posted" label="Posted" />
              <SortHeader c={c} params={params} column="kind" label="Kind" />
              <th scope="col">Line</th>
              <th scope="col">For</th>
              <th scope="col">Entries</th>
            </>
          }
          row={(transaction) => (
            <tr>
              <td>
                <When c={c} at={transaction.postedAt} />
              </td>
              <td>
                {transaction.kind}
                <span class="hint">{transaction.id}</span>
              </td>
              <td>{transaction.companyName} / {transaction.lineCode}</td>
              <td>
                {transaction.payoutId
                  ? (
                    <a href={consoleUrl(c, `/console/payouts/${transaction.payoutId}`)}>
                      {transaction.payoutId}
                    </a>
                  )
                  : transaction.fundingId ?? "—"}
              </td>
              <td>
                <ul class="tight-list">
                  {transaction.entries.map((entry) => (
                    <li>
                      {entry.account} <Money cents={entry.amountCents} />
                    </li>
                  ))}
                </ul>
              </td>
            </tr>
          )}
        />
        <Pager c={c} params={params} hasMore={page.hasMore} />
      </ConsoleLayout>,
    );
  });

  app.get("/ledger/tie-out", async (c) => {
    const database = c.get("database");
    const companies = await scopedCompanies(database.readClient, companiesInScope(c));
    const options = lineOptions(companies);
    const lineAsked = c.req.query("line");
    const chosen = chosenLine(companies, lineAsked ?? options[0]?.value);
    // Another company's line reads as a missing one.
    if (lineAsked !== undefined && !chosen) return notFoundPage(c, "This line");
    // Days are UTC days of the company's time: its sandbox clock in test.
    const today = chosen
      ? new Date(await companyNow(database, chosen.company.id, deps.clock.now())).toISOString()
        .slice(0, 10)
      : new Date(deps.clock.now()).toISOString().slice(0, 10);
    const dateAsked = c.req.query("date") ?? today;
    const validDate = /^\d{4}-\d{2}-\d{2}$/.test(dateAsked) &&
      !Number.isNaN(Date.parse(`${dateAsked}T00:00:00Z`));
    const daysAsked = Number(c.req.query("days") ?? "14");
    const days = Number.isInteger(daysAsked) && daysAsked >= 1 && daysAsked <= TIE_OUT_DAYS_MAX
      ? daysAsked
      : 14;
    const problems = validDate ? [] : [{ field: "date", message: "Last day: a date, YYYY-MM-DD" }];
    const run = chosen && validDate
      ? await tieOutRun(database.readClient, chosen.line.id, tieOutDates(dateAsked, days))
      : [];
    const differing = run.filter((day) => day.difference !== 0).length;
    return c.html(
      <ConsoleLayout c={c} title="Daily tie-out" active="ledger">
        <LedgerTabs c={c} current="tie-out" />
        <FormProblems problems={problems} />
        <FilterForm c={c} action="/console/ledger/tie-out">
          <SelectField
            name="line"
            label="Line"
            options={options}
            values={{ line: chosen?.line.id ?? "" }}
          />
          <Field
            name="date"
            label="Last day (UTC)"
            type="date"
            values={{ date: dateAsked }}
            problems={problems}
          />
        </FilterForm>
        {!chosen
          ? (
            <EmptyState>
              No business lines in your companies, so there is nothing to tie out.
            </EmptyState>
          )
          : run.length === 0
          ? (
            <EmptyState>
              Choose a valid last day to see the tie-out of the days before it.
            </EmptyState>
          )
          : (
            <>
              {differing > 0
                ? (
                  <Notice attention>
                    {differing}{" "}
                    of these days do not tie out: the difference must be $0.00. Run the ledger
                    verification and look at that day's transactions.
                  </Notice>
                )
                : null}
              <TableWrap label="Daily tie-out">
                <table>
                  <caption class="hint">
                    {chosen.company.name} /{" "}
                    {chosen.line.code}: closing = opening + funded − returned funding + returned −
                    disbursed − fees
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">Day (UTC)</th>
                      <th scope="col" class="num">Opening</th>
                      <th scope="col" class="num">Funded</th>
                      <th scope="col" class="num">Returned funding</th>
                      <th scope="col" class="num">Returned</th>
                      <th scope="col" class="num">Disbursed</th>
                      <th scope="col" class="num">Fees</th>
                      <th scope="col" class="num">Closing</th>
                      <th scope="col" class="num">Difference</th>
                      <th scope="col">CSV</th>
                    </tr>
                  </thead>
                  <tbody>
                    {run.map((day) => (
                      <tr class={day.difference !== 0 ? "attention" : undefined}>
                        <td>
                          <a
                            href={consoleUrl(c, "/console/ledger/day", {
                              line: chosen.line.id,
                              date: day.date,
                            })}
                          >
                            {day.date}
                          </a>
                        </td>
                        <td class="num">
                          <Money cents={day.opening} />
                        </td>
                        <td class="num">
                          <Money cents={day.funded} />
                        </td>
                        <td class="num">
                          <Money cents={day.returnedFunding} />
                        </td>
                        <td class="num">
                          <Money cents={day.returned} />
                        </td>
                        <td class="num">
                          <Money cents={day.disbursed} />
                        </td>
                        <td class="num">
                          <Money cents={day.fees} />
                        </td>
                        <td class="num">
                          <Money cents={day.closing} />
                        </td>
                        <td class="num">
                          {day.difference === 0 ? <Money cents={0} /> : (
                            <strong class="badge bad">
                              <Money cents={day.difference} /> does not tie out
                            </strong>
                          )}
                        </td>
                        <td>
                          <a
                            href={consoleUrl(c, "/console/ledger/tie-out.csv", {
                              line: chosen.line.id,
                              date: day.date,
                            })}
                            download
                          >
                            CSV<span class="sr-only">of {day.date}</span>
                          </a>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableWrap>
            </>
          )}
      </ConsoleLayout>,
      problems.length > 0 ? 400 : 200,
    );
  });

  // One line's day: its tie-out and payout lines, the files cut, the returns and the checks paid.
  app.get("/ledger/day", async (c) => {
    const database = c.get("database");
    const companies = await scopedCompanies(database.readClient, companiesInScope(c));
    const chosen = chosenLine(companies, c.req.query("line"));
    if (!chosen) return notFoundPage(c, "This line");
    const date = c.req.query("date") ?? "";
    const day = await dayReconciliation(
      database.readClient,
      { companyId: chosen.company.id, lineId: chosen.line.id },
      date,
    );
    if (!day) return notFoundPage(c, "A day with that date");
    const t = day.tieOut;
    return c.html(
      <ConsoleLayout
        c={c}
        title={`${chosen.company.name} / ${chosen.line.code} on ${date}`}
        active="ledger"
      >
        <LedgerTabs c={c} current="tie-out" />
        <p>
          <a href={consoleUrl(c, "/console/ledger/tie-out", { line: chosen.line.id, date })}>
            Tie-out of the days before
          </a>{" "}
          ·{" "}
          <a
            href={consoleUrl(c, "/console/ledger/tie-out.csv", { line: chosen.line.id, date })}
            download
          >
            This day as CSV (totals, fundings and payout lines)
          </a>
        </p>
        <section class="card" aria-label="Tie-out">
          <dl class="facts">
            <dt>Opening</dt>
            <dd>
              <Money cents={t.opening} />
            </dd>
            <dt>Funded</dt>
            <dd>
              <Money cents={t.funded} />
            </dd>
            <dt>Returned funding</dt>
            <dd>
              <Money cents={t.returnedFunding} />
            </dd>
            <dt>Returned</dt>
            <dd>
              <Money cents={t.returned} />
            </dd>
            <dt>Disbursed</dt>
            <dd>
              <Money cents={t.disbursed} />
            </dd>
            <dt>Fees</dt>
            <dd>
              <Money cents={t.fees} />
            </dd>
            <dt>Closing</dt>
            <dd>
              <Money cents={t.closing} />
            </dd>
            <dt>Difference</dt>
            <dd>
              {t.difference === 0
                ? <span class="badge good">ties out</span>
                : (
                  <strong class="badge bad">
                    <Money cents={t.difference} /> does not tie out
                  </strong>
                )}
            </dd>
          </dl>
        </section>
        <h2>Files and batches cut this day</h2>
        <ListTable
          label="Files and batches"
          rows={day.files}
          empty="No bank file or batch of the company was cut this day."
          caption="A file carries every line of the company."
          head={
            <>
              <th scope="col">Cutoff</th>
              <th scope="col">Rail</th>
              <th scope="col">File or batch</th>
              <th scope="col" class="num">Entries</th>
              <th scope="col" class="num">Total</th>
              <th scope="col">Status</th>
              <th scope="col">Balances</th>
            </>
          }
          row={(file) => (
            <tr>
              <td>
                <When c={c} at={file.cutoffAt} />
              </td>
              <td>{fileName(file.rail)}</td>
              <td>
                <a
                  href={consoleUrl(
                    c,
                    file.rail === "ach"
                      ? `/console/bank-files/ach/${file.id}`
                      : `/console/bank-files/batches/${file.id}`,
                  )}
                >
                  {file.reference ?? file.id}
                </a>
              </td>
              <td class="num">{file.entryCount}</td>
              <td class="num">
                <Money cents={file.totalCents} />
              </td>
              <td>{fileState(file.status)}</td>
              <td>
                {file.balance === undefined
                  ? "—"
                  : file.balance.balanced
                  ? <span class="badge good">balanced</span>
                  : (
                    <span class="badge bad" title={file.balance.differences.join("; ")}>
                      does not balance
                    </span>
                  )}
              </td>
            </tr>
          )}
        />
        <h2>Paid out and returned, payout by payout</h2>
        <ListTable
          label="Payout lines"
          rows={t.payouts}
          empty="Nothing was paid out or came back on this line this day."
          caption="These lines sum to the day's disbursed, fees and returned."
          head={
            <>
              <th scope="col">Posted</th>
              <th scope="col">Payout</th>
              <th scope="col">Claim or uuid</th>
              <th scope="col">Kind</th>
              <th scope="col" class="num">Disbursed</th>
              <th scope="col" class="num">Fees</th>
              <th scope="col" class="num">Returned</th>
            </>
          }
          row={(line) => (
            <tr>
              <td>
                <When c={c} at={line.postedAt} />
              </td>
              <td>
                {line.payoutId
                  ? (
                    <a href={consoleUrl(c, `/console/payouts/${line.payoutId}`)}>
                      {line.payoutId}
                    </a>
                  )
                  : "—"}
              </td>
              <td>{line.claimOrUuid ?? "—"}</td>
              <td>{line.kind}</td>
              <td class="num">
                <Money cents={line.disbursedCents} />
              </td>
              <td class="num">
                <Money cents={line.feesCents} />
              </td>
              <td class="num">
                <Money cents={line.returnedCents} />
              </td>
            </tr>
          )}
        />
        <h2>Failed or returned this day</h2>
        <ListTable
          label="Failed or returned"
          rows={day.returns}
          empty="No payout of this line failed or came back this day."
          head={
            <>
              <th scope="col">When</th>
              <th scope="col">Payee</th>
              <th scope="col" class="num">Amount</th>
              <th scope="col">Why</th>
            </>
          }
          row={(failed) => (
            <tr>
              <td>
                <When c={c} at={failed.at} />
              </td>
              <td>
                <a href={consoleUrl(c, `/console/payouts/${failed.payoutId}`)}>
                  {failed.payeeName}
                </a>
              </td>
              <td class="num">
                <Money cents={failed.amountCents} />
              </td>
              <td>
                {failed.code === null
                  ? "—"
                  : `${failed.code}: ${explainFailure(failed.code).meaning}`}
              </td>
            </tr>
          )}
        />
        <h2>Checks paid this day</h2>
        <ListTable
          label="Checks paid"
          rows={day.paidChecks}
          empty="No check of this line was paid this day."
          head={
            <>
              <th scope="col" class="num">No.</th>
              <th scope="col">Payee</th>
              <th scope="col" class="num">Amount</th>
              <th scope="col" class="num">Paid</th>
              <th scope="col">When</th>
            </>
          }
          row={(check) => (
            <tr>
              <td class="num">{check.checkNumber}</td>
              <td>
                <a href={consoleUrl(c, `/console/payouts/${check.payoutId}`)}>
                  {check.payeeName}
                </a>
              </td>
              <td class="num">
                <Money cents={check.amountCents} />
              </td>
              <td class="num">
                {check.paidAmountCents === null ? "—" : <Money cents={check.paidAmountCents} />}
              </td>
              <td>
                <When c={c} at={check.paidAt} />
              </td>
            </tr>
          )}
        />
      </ConsoleLayout>,
    );
  });

  app.get("/ledger/tie-out.csv", async (c) => {
    const database = c.get("database");
    const companies = await scopedCompanies(database.readClient, companiesInScope(c));
    const chosen = chosenLine(companies, c.req.query("line"));
    const date = c.req.query("date") ?? "";
    if (!chosen) return notFoundPage(c, "This line");
    const [tieOut] = /^\d{4}-\d{2}-\d{2}$/.test(date)
      ? await tieOutRun(database.readClient, chosen.line.id, [date])
      : [];
    if (!tieOut) return notFoundPage(c, "A tie-out of that day");
    c.header("Content-Type", "text/csv; charset=utf-8");
    c.header(
      "Content-Disposition",
      `attachment; filename="tieout-${
        chosen.line.code.replace(/[^A-Za-z0-9_-]/g, "_")
      }-${date}.csv"`,
    );
    return c.body(tieOutCsv(chosen.line.code, tieOut));
  });
  return app;
}
