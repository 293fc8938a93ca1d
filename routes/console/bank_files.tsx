/** @jsxImportSource hono/jsx */
/**
 * Bank files (issue 20): the ACH files of the operator's companies (metadata and totals, never
 * the content) and one file's entries by account last four; the imported return and
 * notice-of-change files with what they did not apply; the check register and its positive-pay
 * and print files; and the batches of every rail that need an operator (in doubt, or held), each
 * with its transmission attempts and their answers. An admin resolves an in-doubt batch here
 * (the CLI's rails:resolve: at once in test, a second admin in live); the other file actions stay
 * with the CLI's ach:* and checks:* commands.
 */
import { Hono } from "hono";
import {
  type AchFileRow,
  achFileSorts,
  achFileStatuses,
  type AchImportRow,
  achImportSorts,
  CHECK_STATES,
  type CheckFileRow,
  checkFileSorts,
  type CheckRow,
  checkSorts,
  findConsoleAchFile,
  listAchImports,
  listConsoleAchFiles,
  listConsoleCheckFiles,
  listConsoleChecks,
  listConsolePaypalBatches,
  type PaypalBatchRow,
  paypalBatchSorts,
} from "../../lib/console/bank_files.ts";
import { checkFileKindName, fileName, fileState } from "../../lib/console/file_words.ts";
import { unfinishedImportWords } from "../../lib/ach/import_rules.ts";
import {
  type Balanced,
  type FileBalance,
  fileBalances,
  withFileBalances,
} from "../../lib/console/file_balances.ts";
import { FILE_HELD_AFTER_MS } from "../../lib/console/needs_action.ts";
import {
  type AttemptView,
  findRailBatch,
  listBatchesNeedingAttention,
  RAIL_BATCHES_LISTED_MAX,
} from "../../lib/rails/batch_views.ts";
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
  notFoundPage,
  Pager,
  requireRole,
  SelectField,
  SortHeader,
  When,
} from "./kit.tsx";
import {
  ActionButton,
  DoneNotice,
  doneRedirect,
  ExportLink,
  FilterForm,
  findInScope,
  ListTable,
  queryChoice,
  rowCommand,
  Tabs,
} from "./page_parts.tsx";
import { companiesInScope, type ConsoleContext, type ConsoleEnv, hasRole } from "./session.ts";

type Tab = "ach" | "imports" | "checks" | "check-files" | "paypal" | "batches" | "import";

/** The tabs of the bank files pages; an admin also sees the page that imports a file. */
export function BankTabs(props: { c: ConsoleContext; current: Tab }) {
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
        tab("/console/bank-files/paypal", "PayPal batches", "paypal"),
        tab("/console/bank-files/batches", "In doubt or held", "batches"),
        ...(hasRole(props.c, "admin")
          ? [tab("/console/bank-files/import", "Import a file", "import")]
          : []),
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
        options={props.statuses.map((s) => ({ value: s, label: fileState(s) }))}
        values={{ status: props.chosen ?? "" }}
      />
    </FilterForm>
  );
}

/** Green when the file's totals agree with its entries and the ledger, red when they do not. */
function BalanceBadge(props: { balance: FileBalance | undefined }) {
  if (!props.balance) return <span>—</span>;
  return props.balance.balanced
    ? <span class="badge good">balanced</span>
    : (
      <span class="badge bad" title={props.balance.differences.join("; ")}>
        does not balance
      </span>
    );
}

/** A file's balance on its own page: the badge, and what disagrees. */
function BalanceFact(props: { balance: FileBalance | undefined }) {
  return (
    <>
      <dt>Balances</dt>
      <dd>
        <BalanceBadge balance={props.balance} />
        {props.balance && !props.balance.balanced
          ? <span class="hint">{props.balance.differences.join("; ")}</span>
          : null}
      </dd>
    </>
  );
}

/** A file's balance as an export's cell. */
const balanceCell = (balance: FileBalance | undefined) =>
  csvCell.text(
    balance === undefined
      ? ""
      : balance.balanced
      ? "balanced"
      : `does not balance: ${balance.differences.join("; ")}`,
  );

/** Every transmission attempt of a batch with the rail's answer (why it failed, or its reference). */
function AttemptsTable(props: { c: ConsoleContext; attempts: readonly AttemptView[] }) {
  return (
    <ListTable
      label="Transmission attempts"
      rows={props.attempts}
      empty="No transmission was attempted yet."
      head={
        <>
          <th scope="col" class="num">Attempt</th>
          <th scope="col">Started</th>
          <th scope="col">Answered</th>
          <th scope="col">Outcome</th>
          <th scope="col">Answer</th>
        </>
      }
      row={(attempt) => (
        <tr>
          <td class="num">{attempt.attempt}</td>
          <td>
            <When c={props.c} at={attempt.startedAt} />
          </td>
          <td>
            <When c={props.c} at={attempt.answeredAt} />
          </td>
          <td>
            <span class={toneOf(attempt.outcome ?? "")}>
              {(attempt.outcome ?? "running").replaceAll("_", " ")}
            </span>
          </td>
          <td>{attempt.detail ?? "—"}</td>
        </tr>
      )}
    />
  );
}

const BATCH_NOTICES = {
  resolved: "Resolved: the batch follows what the bank said.",
  approval_requested:
    "Requested: a second admin approves the resolution on the Approvals page before anything moves.",
};

/** The batches of every rail that need an operator: in doubt first, then held. */
async function batchesPage(c: ConsoleContext, now: number, problems: readonly FieldProblem[]) {
  const batches = await listBatchesNeedingAttention(
    c.get("database").readClient,
    { companyIds: companiesInScope(c), now, heldAfterMs: FILE_HELD_AFTER_MS },
    RAIL_BATCHES_LISTED_MAX,
  );
  const mayResolve = hasRole(c, "admin");
  return (
    <ConsoleLayout c={c} title="Bank files" active="bank-files">
      <BankTabs c={c} current="batches" />
      <DoneNotice c={c} notices={BATCH_NOTICES} />
      <FormProblems problems={problems} />
      <p class="hint">
        In doubt: a transmission started and its answer was never kept, or a downloaded file was
        voided before it was marked sent. Ask the bank (or PayPal) whether it has the batch, then
        resolve it. Held: built and not sent (no transport, a release waiting, or the rail refused
        it): its last answer says why.
      </p>
      <ListTable
        label="Batches that need an operator"
        rows={batches}
        empty="No batch is in doubt or held."
        head={
          <>
            <th scope="col">Batch</th>
            <th scope="col">Rail</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">Total</th>
            <th scope="col">Built</th>
            <th scope="col">Why</th>
            {mayResolve ? <th scope="col">Resolve</th> : null}
          </>
        }
        row={(batch) => (
          <tr>
            <td>
              <a href={consoleUrl(c, `/console/bank-files/batches/${batch.id}`)}>{batch.id}</a>
            </td>
            <td>{fileName(batch.rail)}</td>
            <td>
              <span class={toneOf(batch.status)}>{fileState(batch.status)}</span>
            </td>
            <td class="num">
              <Money cents={batch.totalCents} />
            </td>
            <td>
              <When c={c} at={batch.createdAt} />
            </td>
            <td>{batch.error ?? batch.attempts.at(-1)?.detail ?? "—"}</td>
            {mayResolve
              ? (
                <td>
                  {batch.status === "in_doubt" ? <ResolveButtons c={c} batchId={batch.id} /> : null}
                </td>
              )
              : null}
          </tr>
        )}
      />
    </ConsoleLayout>
  );
}

function ResolveButtons(props: { c: ConsoleContext; batchId: string }) {
  const { c, batchId } = props;
  return (
    <>
      <ActionButton
        action={`/console/bank-files/batches/${batchId}/transmitted`}
        label="Bank has it"
        ariaLabel={`Resolve batch ${batchId}: the bank has it`}
        confirm="The bank confirmed it has this batch: record it as transmitted?"
        csrf={<CsrfField c={c} />}
      />
      <ActionButton
        action={`/console/bank-files/batches/${batchId}/not-received`}
        label="Bank does not have it"
        ariaLabel={`Resolve batch ${batchId}: the bank does not have it`}
        confirm="The bank confirmed it does not have this batch: void it or send it again?"
        danger
        csrf={<CsrfField c={c} />}
      />
    </>
  );
}

export function bankFilesConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get("/bank-files/batches", async (c) => c.html(await batchesPage(c, deps.clock.now(), [])));

  app.get("/bank-files/batches/:id", async (c) => {
    const batch = await findInScope(c, c.req.param("id"), findRailBatch);
    if (!batch) return notFoundPage(c, "This batch");
    const balance = (await fileBalances(c.get("database").readClient, [batch.id])).get(batch.id);
    return c.html(
      <ConsoleLayout c={c} title={`Batch ${batch.id}`} active="bank-files">
        <BankTabs c={c} current="batches" />
        <section class="card" aria-label="Batch">
          <dl class="facts">
            <dt>Rail</dt>
            <dd>{fileName(batch.rail)}</dd>
            <dt>Status</dt>
            <dd>
              <span class={toneOf(batch.status)}>{fileState(batch.status)}</span>
            </dd>
            <dt>Reference</dt>
            <dd>{batch.railReference ?? "—"}</dd>
            <dt>Entries</dt>
            <dd>{batch.entryCount}</dd>
            <dt>Total</dt>
            <dd>
              <Money cents={batch.totalCents} />
            </dd>
            <BalanceFact balance={balance} />
            <dt>Built</dt>
            <dd>
              <When c={c} at={batch.createdAt} />
            </dd>
            <dt>Downloaded</dt>
            <dd>
              <When c={c} at={batch.downloadedAt} />
            </dd>
            <dt>Transmitted</dt>
            <dd>
              <When c={c} at={batch.transmittedAt} />
            </dd>
            <dt>Why it waits</dt>
            <dd>{batch.error ?? "—"}</dd>
          </dl>
          {batch.status === "in_doubt" && hasRole(c, "admin")
            ? <ResolveButtons c={c} batchId={batch.id} />
            : null}
        </section>
        <h2>Transmission attempts</h2>
        <AttemptsTable c={c} attempts={batch.attempts} />
      </ConsoleLayout>,
    );
  });

  for (const [path, as] of [["transmitted", "transmitted"], ["not-received", "not_received"]]) {
    app.post(`/bank-files/batches/:id/${path}`, requireRole("admin"), (c) =>
      rowCommand(c, deps, {
        what: "This batch",
        command: "rails:resolve",
        flags: (id) => ({ file: id, as, environment: c.get("environment") }),
        done: (resolved) =>
          doneRedirect(
            c,
            "/console/bank-files/batches",
            resolved.approval_id ? "approval_requested" : "resolved",
          ),
        page: (problems) => batchesPage(c, deps.clock.now(), problems),
      }));
  }

  app.get("/bank-files", async (c) => {
    const params = listParams(c, { sorts: Object.keys(achFileSorts), defaultSort: "created" });
    const status = queryChoice(c, "status", achFileStatuses);
    const page = await listConsoleAchFiles(
      c.get("database").readClient,
      { companyIds: companiesInScope(c), status },
      params,
    );
    const balances = await fileBalances(
      c.get("database").readClient,
      page.data.map((file) => file.id),
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
        {page.data.length > 0
          ? <ExportLink c={c} path="/console/bank-files/export.csv" what="these files" />
          : null}
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
              <th scope="col">Balances</th>
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
                <span class={toneOf(file.status)}>{fileState(file.status)}</span>
                {file.approvalId ? <span class="hint">waits for approval</span> : null}
              </td>
              <td>
                <BalanceBadge balance={balances.get(file.id)} />
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
    const balance = (await fileBalances(c.get("database").readClient, [file.id])).get(file.id);
    return c.html(
      <ConsoleLayout c={c} title={`ACH file ${file.fileName}`} active="bank-files">
        <BankTabs c={c} current="ach" />
        <section class="card" aria-label="File">
          <dl class="facts">
            <dt>Id</dt>
            <dd>{file.id}</dd>
            <dt>Status</dt>
            <dd>
              <span class={toneOf(file.status)}>{fileState(file.status)}</span>
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
            <BalanceFact balance={balance} />
            <dt>SHA-256</dt>
            <dd>
              <code class="break-all">{file.sha256}</code>
            </dd>
            <dt>Window ends</dt>
            <dd>
              <When c={c} at={file.windowEndsAt} />
            </dd>
            <dt>Transmitted</dt>
            <dd>
              <When c={c} at={file.transmittedAt} />
            </dd>
            <dt>Why it waits</dt>
            <dd>{file.error ?? "—"}</dd>
          </dl>
          {file.status === "in_doubt" && hasRole(c, "admin")
            ? <ResolveButtons c={c} batchId={file.id} />
            : null}
        </section>
        <h2>Transmission attempts</h2>
        <AttemptsTable c={c} attempts={file.attempts} />
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
        {page.data.length > 0
          ? <ExportLink c={c} path="/console/bank-files/imports/export.csv" what="these imports" />
          : null}
        <ListTable
          label="Returns imports"
          rows={page.data}
          empty={
            <>
              No return or notice-of-change files were imported. They arrive from the bank by SFTP,
              or an admin imports one on "Import a file" or with `deno task admin ach:import`.
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
              <th scope="col">Import</th>
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
                  <ul class="tight-list">
                    {imported.notApplied.map((entry) => (
                      <li>{entry.trace ?? "?"}: {entry.reason ?? ""}</li>
                    ))}
                  </ul>
                )}
              </td>
              <td>
                {imported.unfinished === null ? "complete" : (
                  <>
                    <span class={imported.unfinished.state === "resuming" ? "badge" : "badge bad"}>
                      {unfinishedImportWords(imported.unfinished)}
                    </span>
                    <span class="hint">
                      {imported.unfinished.state === "resuming"
                        ? "its resume job is applying the rest"
                        : imported.unfinished.resumesAt === null
                        ? "import the same file again, or retry its parked resume job (jobs:retry)"
                        : (
                          <>
                            taken up by itself <When c={c} at={imported.unfinished.resumesAt} />
                          </>
                        )}
                    </span>
                  </>
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
        {page.data.length > 0
          ? <ExportLink c={c} path="/console/bank-files/checks/export.csv" what="these checks" />
          : null}
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
    const balances = await fileBalances(
      c.get("database").readClient,
      page.data.map((file) => file.id),
    );
    return c.html(
      <ConsoleLayout c={c} title="Bank files" active="bank-files">
        <BankTabs c={c} current="check-files" />
        {page.data.length > 0
          ? (
            <ExportLink
              c={c}
              path="/console/bank-files/check-files/export.csv"
              what="these files"
            />
          )
          : null}
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
              <th scope="col">Balances</th>
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
              <td>{checkFileKindName(file.kind)}</td>
              <td class="num">{file.issueCount} / {file.voidCount}</td>
              <td class="num">
                <Money cents={file.totalCents} />
              </td>
              <td>
                <span class={toneOf(file.status)}>{fileState(file.status)}</span>
              </td>
              <td>
                <BalanceBadge balance={balances.get(file.id)} />
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

  app.get("/bank-files/paypal", async (c) => {
    const params = listParams(c, { sorts: Object.keys(paypalBatchSorts), defaultSort: "created" });
    const page = await listConsolePaypalBatches(
      c.get("database").readClient,
      companiesInScope(c),
      params,
    );
    const balances = await fileBalances(
      c.get("database").readClient,
      page.data.map((batch) => batch.id),
    );
    return c.html(
      <ConsoleLayout c={c} title="Bank files" active="bank-files">
        <BankTabs c={c} current="paypal" />
        {page.data.length > 0
          ? (
            <ExportLink
              c={c}
              path="/console/bank-files/paypal/export.csv"
              what="these batches"
            />
          )
          : null}
        <ListTable
          label="PayPal batches"
          rows={page.data}
          empty={
            <>
              No PayPal batches. The PayPal and Venmo payouts chosen by payees are sent together at
              each PayPal cutoff, as one batch.
            </>
          }
          head={
            <>
              <SortHeader c={c} params={params} column="created" label="Built" />
              <th scope="col">Batch</th>
              <th scope="col">Company</th>
              <th scope="col" class="num">Items</th>
              <SortHeader c={c} params={params} column="total" label="Total" numeric />
              <SortHeader c={c} params={params} column="status" label="Status" />
              <th scope="col">Balances</th>
              <th scope="col">Transmitted</th>
            </>
          }
          row={(batch) => (
            <tr>
              <td>
                <When c={c} at={batch.createdAt} />
              </td>
              <td>
                <a href={consoleUrl(c, `/console/bank-files/batches/${batch.id}`)}>
                  {batch.railReference ?? batch.id}
                </a>
              </td>
              <td>{batch.companyName}</td>
              <td class="num">{batch.entryCount}</td>
              <td class="num">
                <Money cents={batch.totalCents} />
              </td>
              <td>
                <span class={toneOf(batch.status)}>{fileState(batch.status)}</span>
              </td>
              <td>
                <BalanceBadge balance={balances.get(batch.id)} />
              </td>
              <td>
                <When c={c} at={batch.transmittedAt} />
              </td>
            </tr>
          )}
        />
        <Pager c={c} params={params} hasMore={page.hasMore} />
      </ConsoleLayout>,
    );
  });

  // The lists as CSV, each as filtered and sorted on its page.
  app.get("/bank-files/export.csv", (c) => {
    const params = listParams(c, { sorts: Object.keys(achFileSorts), defaultSort: "created" });
    const filter = {
      companyIds: companiesInScope(c),
      status: queryChoice(c, "status", achFileStatuses),
    };
    const client = c.get("database").readClient;
    return csvExport(c, {
      name: "ach-files",
      columns: ACH_FILE_COLUMNS,
      read: (window) =>
        withFileBalances(client, listConsoleAchFiles(client, filter, { ...params, ...window })),
    });
  });
  app.get("/bank-files/checks/export.csv", (c) => {
    const params = listParams(c, { sorts: Object.keys(checkSorts), defaultSort: "issued" });
    const filter = {
      companyIds: companiesInScope(c),
      status: queryChoice(c, "status", CHECK_STATES),
    };
    return csvExport(c, {
      name: "checks",
      columns: CHECK_COLUMNS,
      read: (window) =>
        listConsoleChecks(c.get("database").readClient, filter, { ...params, ...window }),
    });
  });
  app.get("/bank-files/imports/export.csv", (c) => {
    const params = listParams(c, { sorts: Object.keys(achImportSorts), defaultSort: "imported" });
    return csvExport(c, {
      name: "returns-imports",
      columns: ACH_IMPORT_COLUMNS,
      read: (window) =>
        listAchImports(c.get("database").readClient, companiesInScope(c), {
          ...params,
          ...window,
        }),
    });
  });
  app.get("/bank-files/check-files/export.csv", (c) => {
    const params = listParams(c, { sorts: Object.keys(checkFileSorts), defaultSort: "created" });
    const client = c.get("database").readClient;
    return csvExport(c, {
      name: "check-files",
      columns: CHECK_FILE_COLUMNS,
      read: (window) =>
        withFileBalances(
          client,
          listConsoleCheckFiles(client, companiesInScope(c), { ...params, ...window }),
        ),
    });
  });
  app.get("/bank-files/paypal/export.csv", (c) => {
    const params = listParams(c, { sorts: Object.keys(paypalBatchSorts), defaultSort: "created" });
    const client = c.get("database").readClient;
    return csvExport(c, {
      name: "paypal-batches",
      columns: PAYPAL_BATCH_COLUMNS,
      read: (window) =>
        withFileBalances(
          client,
          listConsolePaypalBatches(client, companiesInScope(c), { ...params, ...window }),
        ),
    });
  });
  return app;
}

const ACH_FILE_COLUMNS: readonly CsvColumn<Balanced<AchFileRow>>[] = [
  ["file_id", (f) => csvCell.text(f.id)],
  ["file_name", (f) => csvCell.text(f.fileName)],
  ["company", (f) => csvCell.text(f.companyName)],
  ["cutoff", (f) => csvCell.text(f.cutoffKind)],
  ["effective_date", (f) => csvCell.text(f.effectiveDate)],
  ["entries", (f) => csvCell.count(f.entryCount)],
  ["credits", (f) => csvCell.money(f.creditTotalCents)],
  ["debits", (f) => csvCell.money(f.debitTotalCents)],
  ["status", (f) => csvCell.text(f.status)],
  ["balances", (f) => balanceCell(f.balance)],
  ["built_at", (f) => csvCell.time(f.createdAt)],
  ["transmitted_at", (f) => csvCell.time(f.transmittedAt)],
];

const CHECK_COLUMNS: readonly CsvColumn<CheckRow>[] = [
  ["check_number", (k) => csvCell.count(k.checkNumber)],
  ["issue_date", (k) => csvCell.text(k.issueDate)],
  ["payee", (k) => csvCell.text(k.payeeName)],
  ["company", (k) => csvCell.text(k.companyName)],
  ["kind", (k) => csvCell.text(k.kind)],
  ["amount", (k) => csvCell.money(k.amountCents)],
  ["status", (k) => csvCell.text(k.status)],
  ["paid_date", (k) => csvCell.text(k.paidDate)],
  ["paid_amount", (k) => csvCell.money(k.paidAmountCents)],
  ["void_reason", (k) => csvCell.text(k.voidReason)],
  ["payout_id", (k) => csvCell.text(k.payoutId)],
];

const ACH_IMPORT_COLUMNS: readonly CsvColumn<AchImportRow>[] = [
  ["imported_at", (i) => csvCell.time(i.importedAt)],
  ["file_name", (i) => csvCell.text(i.fileName)],
  ["source", (i) => csvCell.text(i.source)],
  ["company", (i) => csvCell.text(i.companyName)],
  ["returns", (i) => csvCell.count(i.returnCount)],
  ["notices_of_change", (i) => csvCell.count(i.correctionCount)],
  ["applied", (i) => csvCell.count(i.appliedCount)],
  [
    "not_applied",
    (i) => csvCell.text(i.notApplied.map((e) => `${e.trace ?? "?"}: ${e.reason ?? ""}`).join("; ")),
  ],
  [
    "import",
    (i) => csvCell.text(i.unfinished === null ? "complete" : unfinishedImportWords(i.unfinished)),
  ],
];

const CHECK_FILE_COLUMNS: readonly CsvColumn<Balanced<CheckFileRow>>[] = [
  ["file_id", (f) => csvCell.text(f.id)],
  ["file_name", (f) => csvCell.text(f.fileName)],
  ["company", (f) => csvCell.text(f.companyName)],
  ["kind", (f) => csvCell.text(f.kind)],
  ["issues", (f) => csvCell.count(f.issueCount)],
  ["voids", (f) => csvCell.count(f.voidCount)],
  ["total", (f) => csvCell.money(f.totalCents)],
  ["status", (f) => csvCell.text(f.status)],
  ["balances", (f) => balanceCell(f.balance)],
  ["built_at", (f) => csvCell.time(f.createdAt)],
  ["transmitted_at", (f) => csvCell.time(f.transmittedAt)],
];

const PAYPAL_BATCH_COLUMNS: readonly CsvColumn<Balanced<PaypalBatchRow>>[] = [
  ["batch_id", (b) => csvCell.text(b.id)],
  ["reference", (b) => csvCell.text(b.railReference)],
  ["company", (b) => csvCell.text(b.companyName)],
  ["items", (b) => csvCell.count(b.entryCount)],
  ["total", (b) => csvCell.money(b.totalCents)],
  ["status", (b) => csvCell.text(b.status)],
  ["balances", (b) => balanceCell(b.balance)],
  ["built_at", (b) => csvCell.time(b.createdAt)],
  ["transmitted_at", (b) => csvCell.time(b.transmittedAt)],
];
