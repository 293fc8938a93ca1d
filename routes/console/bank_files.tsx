/** @jsxImportSource hono/jsx */
/**
 * Bank files (issue 20): the ACH files of the operator's companies (metadata and totals, never
 * the content) and one file's entries by account last four; the imported return and
 * notice-of-change files with what they did not apply; the check register and its positive-pay
 * and print files. Reads only: file actions stay with the CLI's ach:* and checks:* commands.
 */
import { Hono } from "hono";
import {
  achFileSorts,
  achFileStatuses,
  achImportSorts,
  CHECK_STATES,
  checkFileSorts,
  checkSorts,
  findConsoleAchFile,
  listAchImports,
  listConsoleAchFiles,
  listConsoleCheckFiles,
  listConsoleChecks,
} from "../../lib/console/bank_files.ts";
import type { AppDeps } from "../context.ts";
import {
  ConsoleLayout,
  consoleUrl,
  listParams,
  Money,
  notFoundPage,
  Pager,
  SelectField,
  SortHeader,
  When,
} from "./kit.tsx";
import { FilterForm, findInScope, ListTable, queryChoice, Tabs } from "./page_parts.tsx";
import { companiesInScope, type ConsoleContext, type ConsoleEnv } from "./session.ts";

type Tab = "ach" | "imports" | "checks" | "check-files";

function BankTabs(props: { c: ConsoleContext; current: Tab }) {
  const tab = (href: string, label: string, key: Tab) => ({
    href,
    label,
    current: props.current === key,
  });
  return (
    <Tabs
      c={props.c}
      label="Bank files"
      tabs={[
        tab("/console/bank-files", "ACH files", "ach"),
        tab("/console/bank-files/imports", "Returns imports", "imports"),
        tab("/console/bank-files/checks", "Checks", "checks"),
        tab("/console/bank-files/check-files", "Check files", "check-files"),
      ]}
    />
  );
}

const toneOf = (status: string) =>
  status === "transmitted" || status === "paid" || status === "completed"
    ? "badge good"
    : status === "in_doubt" || status === "voided" || status === "failed" || status === "stale"
    ? "badge bad"
    : "badge";

function StatusFilter(props: {
  c: ConsoleContext;
  action: string;
  statuses: readonly string[];
  chosen: string | undefined;
}) {
  return (
    <FilterForm c={props.c} action={props.action}>
      <SelectField
        name="status"
        label="Status"
        any="Any status"
        options={props.statuses.map((s) => ({ value: s, label: s.replaceAll("_", " ") }))}
        values={{ status: props.chosen ?? "" }}
      />
    </FilterForm>
  );
}

export function bankFilesConsoleRoutes(_deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get("/bank-files", async (c) => {
    const params = listParams(c, { sorts: Object.keys(achFileSorts), defaultSort: "created" });
    const status = queryChoice(c, "status", achFileStatuses);
    const page = await listConsoleAchFiles(
      c.get("database").readClient,
      { companyIds: companiesInScope(c), status },
      params,
    );
    return c.html(
      <ConsoleLayout c={c} title="Bank files" active="bank-files">
        <BankTabs c={c} current="ach" />
        <StatusFilter
          c={c}
          action="/console/bank-files"
          statuses={achFileStatuses}
          chosen={status}
        />
        <ListTable
          label="ACH files"
          rows={page.data}
          empty={
            <>
              No ACH files. A file is built at each cutoff from the ACH payouts and fundings queued
              for it; choose "Any status" to see every file.
            </>
          }
          head={
            <>
              <SortHeader c={c} params={params} column="created" label="Built" />
              <th scope="col">File</th>
              <th scope="col">Company</th>
              <SortHeader c={c} params={params} column="effective" label="Effective" />
              <th scope="col" class="num">Entries</th>
              <SortHeader
                c={c}
                params={params}
                column="total"
                label="Credits / debits"
                numeric
              />
              <SortHeader c={c} params={params} column="status" label="Status" />
              <th scope="col">Transmitted</th>
            </>
          }
          row={(file) => (
            <tr>
              <td>
                <When c={c} at={file.createdAt} />
              </td>
              <td>
                <a href={consoleUrl(c, `/console/bank-files/ach/${file.id}`)}>
                  {file.fileName}
                </a>
                <span class="hint">{file.cutoffKind.replace("_", " ")}</span>
              </td>
              <td>{file.companyName}</td>
              <td>{file.effectiveDate}</td>
              <td class="num">{file.entryCount}</td>
              <td class="num">
                <Money cents={file.creditTotalCents} /> / <Money cents={file.debitTotalCents} />
              </td>
              <td>
                <span class={toneOf(file.status)}>{file.status.replace("_", " ")}</span>
                {file.approvalId ? <span class="hint">waits for approval</span> : null}
              </td>
              <td>
                <When c={c} at={file.transmittedAt} />
              </td>
            </tr>
          )}
        />
        <Pager c={c} params={params} hasMore={page.hasMore} />
      </ConsoleLayout>,
    );
  });

  app.get("/bank-files/ach/:id", async (c) => {
    const file = await findInScope(c, c.req.param("id"), findConsoleAchFile);
    if (!file) return notFoundPage(c, "This ACH file");
    return c.html(
      <ConsoleLayout c={c} title={`ACH file ${file.fileName}`} active="bank-files">
        <BankTabs c={c} current="ach" />
        <section class="card" aria-label="File">
          <dl class="facts">
            <dt>Id</dt>
            <dd>{file.id}</dd>
            <dt>Status</dt>
            <dd>
              <span class={toneOf(file.status)}>{file.status.replace("_", " ")}</span>
            </dd>
            <dt>Effective date</dt>
            <dd>{file.effectiveDate} ({file.cutoffKind.replace("_", " ")})</dd>
            <dt>Credits</dt>
            <dd>
              <Money cents={file.creditTotalCents} />
            </dd>
            <dt>Debits</dt>
            <dd>
              <Money cents={file.debitTotalCents} />
            </dd>
            <dt>SHA-256</dt>
            <dd>
              <code style="word-break:break-all">{file.sha256}</code>
            </dd>
            <dt>Window ends</dt>
            <dd>
              <When c={c} at={file.windowEndsAt} />
            </dd>
            <dt>Transmitted</dt>
            <dd>
              <When c={c} at={file.transmittedAt} />
            </dd>
          </dl>
        </section>
        <h2>Entries</h2>
        <ListTable
          label="File entries"
          rows={file.entries}
          empty="This file has no entries."
          head={
            <>
              <th scope="col">Trace</th>
              <th scope="col">Direction</th>
              <th scope="col" class="num">Amount</th>
              <th scope="col">For</th>
              <th scope="col">Account</th>
              <th scope="col">Status</th>
            </>
          }
          row={(entry) => (
            <tr>
              <td>{entry.traceNumber ?? "—"}</td>
              <td>{entry.direction}</td>
              <td class="num">
                <Money cents={entry.amountCents} />
              </td>
              <td>
                {entry.payoutId
                  ? (
                    <a href={consoleUrl(c, `/console/payouts/${entry.payoutId}`)}>
                      {entry.payoutId}
                    </a>
                  )
                  : entry.fundingUuid ?? "—"}
              </td>
              <td>{entry.accountLastFour ? `ending ${entry.accountLastFour}` : "—"}</td>
              <td>
                <span class={toneOf(entry.status)}>{entry.status}</span>
                {entry.returnCode ? <span class="hint">{entry.returnCode}</span> : null}
              </td>
            </tr>
          )}
        />
      </ConsoleLayout>,
    );
  });

  app.get("/bank-files/imports", async (c) => {
    const params = listParams(c, { sorts: Object.keys(achImportSorts), defaultSort: "imported" });
    const page = await listAchImports(c.get("database").readClient, companiesInScope(c), params);
    return c.html(
      <ConsoleLayout c={c} title="Bank files" active="bank-files">
        <BankTabs c={c} current="imports" />
        <ListTable
          label="Returns imports"
          rows={page.data}
          empty={
            <>
              No return or notice-of-change files were imported. They arrive from the bank by SFTP,
              or an admin imports one with `deno task admin ach:import`.
            </>
          }
          head={
            <>
              <SortHeader c={c} params={params} column="imported" label="Imported" />
              <th scope="col">File</th>
              <th scope="col">Company</th>
              <SortHeader c={c} params={params} column="returns" label="Returns" numeric />
              <th scope="col" class="num">Notices of change</th>
              <th scope="col" class="num">Applied</th>
              <th scope="col">Not applied</th>
            </>
          }
          row={(imported) => (
            <tr>
              <td>
                <When c={c} at={imported.importedAt} />
              </td>
              <td>
                {imported.fileName}
                <span class="hint">{imported.source}</span>
              </td>
              <td>{imported.companyName ?? "no known company"}</td>
              <td class="num">{imported.returnCount}</td>
              <td class="num">{imported.correctionCount}</td>
              <td class="num">{imported.appliedCount}</td>
              <td>
                {imported.notApplied.length === 0 ? "—" : (
                  <ul style="margin:0;padding-left:1rem">
                    {imported.notApplied.map((entry) => (
                      <li>{entry.trace ?? "?"}: {entry.reason ?? ""}</li>
                    ))}
                  </ul>
                )}
              </td>
            </tr>
          )}
        />
        <Pager c={c} params={params} hasMore={page.hasMore} />
      </ConsoleLayout>,
    );
  });

  app.get("/bank-files/checks", async (c) => {
    const params = listParams(c, { sorts: Object.keys(checkSorts), defaultSort: "issued" });
    const status = queryChoice(c, "status", CHECK_STATES);
    const page = await listConsoleChecks(
      c.get("database").readClient,
      { companyIds: companiesInScope(c), status },
      params,
    );
    return c.html(
      <ConsoleLayout c={c} title="Bank files" active="bank-files">
        <BankTabs c={c} current="checks" />
        <StatusFilter
          c={c}
          action="/console/bank-files/checks"
          statuses={CHECK_STATES}
          chosen={status}
        />
        <ListTable
          label="Checks"
          rows={page.data}
          empty={
            <>
              No checks in the register. A payout paid by check takes the next number when it is
              submitted; choose "Any status" to see every check.
            </>
          }
          head={
            <>
              <SortHeader c={c} params={params} column="number" label="No." numeric />
              <SortHeader c={c} params={params} column="issued" label="Issued" />
              <th scope="col">Payee</th>
              <th scope="col">Company</th>
              <th scope="col">Kind</th>
              <SortHeader c={c} params={params} column="amount" label="Amount" numeric />
              <th scope="col">Status</th>
            </>
          }
          row={(check) => (
            <tr>
              <td class="num">{check.checkNumber}</td>
              <td>{check.issueDate}</td>
              <td>
                <a href={consoleUrl(c, `/console/payouts/${check.payoutId}`)}>
                  {check.payeeName}
                </a>
              </td>
              <td>{check.companyName}</td>
              <td>{check.kind}</td>
              <td class="num">
                <Money cents={check.amountCents} />
              </td>
              <td>
                <span class={toneOf(check.status)}>{check.status}</span>
                {check.paidDate ? <span class="hint">paid {check.paidDate}</span> : null}
                {check.voidReason ? <span class="hint">{check.voidReason}</span> : null}
              </td>
            </tr>
          )}
        />
        <Pager c={c} params={params} hasMore={page.hasMore} />
      </ConsoleLayout>,
    );
  });

  app.get("/bank-files/check-files", async (c) => {
    const params = listParams(c, { sorts: Object.keys(checkFileSorts), defaultSort: "created" });
    const page = await listConsoleCheckFiles(
      c.get("database").readClient,
      companiesInScope(c),
      params,
    );
    return c.html(
      <ConsoleLayout c={c} title="Bank files" active="bank-files">
        <BankTabs c={c} current="check-files" />
        <ListTable
          label="Check files"
          rows={page.data}
          empty={
            <>
              No check files. A positive-pay file (and a print file for postal checks) is built at
              each check cutoff from the checks issued and voided since the last one.
            </>
          }
          head={
            <>
              <SortHeader c={c} params={params} column="created" label="Built" />
              <th scope="col">File</th>
              <th scope="col">Company</th>
              <th scope="col">Kind</th>
              <th scope="col" class="num">Issues / voids</th>
              <th scope="col" class="num">Total</th>
              <SortHeader c={c} params={params} column="status" label="Status" />
              <th scope="col">Transmitted</th>
            </>
          }
          row={(file) => (
            <tr>
              <td>
                <When c={c} at={file.createdAt} />
              </td>
              <td>{file.fileName}</td>
              <td>{file.companyName}</td>
              <td>{file.kind.replace("_", " ")}</td>
              <td class="num">{file.issueCount} / {file.voidCount}</td>
              <td class="num">
                <Money cents={file.totalCents} />
              </td>
              <td>
                <span class={toneOf(file.status)}>{file.status.replace("_", " ")}</span>
              </td>
              <td>
                <When c={c} at={file.transmittedAt} />
              </td>
            </tr>
          )}
        />
        <Pager c={c} params={params} hasMore={page.hasMore} />
      </ConsoleLayout>,
    );
  });
  return app;
}
