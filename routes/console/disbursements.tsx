/** @jsxImportSource hono/jsx */
/**
 * Disbursements (issue 20): the disbursements of the operator's companies with their derived
 * status (contract §4: completed when every payee is, else the least advanced payee), and one
 * disbursement with each payee's status and method (by its last four only). Reads only: the
 * payee's actions are on its payout's page.
 */
import { Hono } from "hono";
import {
  disbursementIdsByOwnId,
  type DisbursementRow,
  disbursementSorts,
  findDisbursement,
  listDisbursements,
} from "../../lib/console/disbursements.ts";
import { modalityOf } from "../../lib/payouts/states.ts";
import type { AppDeps } from "../context.ts";
import { csvCell, type CsvColumn, csvExport } from "./csv_export.ts";
import {
  ConsoleLayout,
  consoleUrl,
  Field,
  listParams,
  Money,
  notFoundPage,
  Pager,
  SelectField,
  SortHeader,
  When,
} from "./kit.tsx";
import { companyFilter, ExportLink, findInScope, ListTable, TableWrap } from "./page_parts.tsx";
import { companiesInScope, type ConsoleEnv } from "./session.ts";

const KIND_LABELS = { disbursement: "disbursement", simple_payment: "simple payment", v1: "/v1" };

/** A status as people read it: `modality_offered` → "modality offered". */
const statusText = (status: string) => status.replaceAll("_", " ");

function StatusBadge(props: { status: string }) {
  const tone = props.status === "completed"
    ? "badge good"
    : props.status === "failed" || props.status === "canceled"
    ? "badge bad"
    : "badge";
  return <span class={tone}>{statusText(props.status)}</span>;
}

/** What a search box takes: an id, a uuid or a claim id, exactly. */
const SEARCH_LENGTH_MAX = 255;

const DISBURSEMENT_COLUMNS: readonly CsvColumn<DisbursementRow>[] = [
  ["disbursement_id", (d) => csvCell.text(d.id)],
  ["uuid", (d) => csvCell.text(d.externalUuid)],
  ["claim_id", (d) => csvCell.text(d.claimId)],
  ["kind", (d) => csvCell.text(d.kind)],
  ["company", (d) => csvCell.text(d.companyName)],
  ["line", (d) => csvCell.text(d.lineCode)],
  ["payees", (d) => csvCell.count(d.payeeCount)],
  ["total", (d) => csvCell.money(d.totalCents)],
  ["status", (d) => csvCell.text(d.status)],
  ["large_disbursement", (d) => d.largeDisbursement ? "true" : "false"],
  ["created_at", (d) => csvCell.time(d.createdAt)],
];

export function disbursementsConsoleRoutes(_deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get("/disbursements/export.csv", async (c) => {
    const client = c.get("database").readClient;
    const params = listParams(c, { sorts: Object.keys(disbursementSorts), defaultSort: "created" });
    const { companyId } = await companyFilter(c);
    const search = (c.req.query("q") ?? "").trim().slice(0, SEARCH_LENGTH_MAX);
    const filter = { companyIds: companiesInScope(c), companyId, search: search || undefined };
    return csvExport(c, {
      name: "disbursements",
      columns: DISBURSEMENT_COLUMNS,
      read: (window) => listDisbursements(client, filter, { ...params, ...window }),
    });
  });

  app.get("/disbursements", async (c) => {
    const client = c.get("database").readClient;
    const params = listParams(c, { sorts: Object.keys(disbursementSorts), defaultSort: "created" });
    const { companies, companyId } = await companyFilter(c);
    const search = (c.req.query("q") ?? "").trim().slice(0, SEARCH_LENGTH_MAX);
    const page = await listDisbursements(
      client,
      { companyIds: companiesInScope(c), companyId, search: search || undefined },
      params,
    );
    return c.html(
      <ConsoleLayout c={c} title="Disbursements" active="disbursements">
        <form method="get" action="/console/disbursements" class="filters" role="search">
          <input type="hidden" name="env" value={c.get("environment")} />
          <Field
            name="q"
            label="Disbursement"
            type="search"
            hint="Its id, uuid or claim id"
            values={{ q: search }}
          />
          <SelectField
            name="company"
            label="Company"
            any="Every company"
            options={companies.map((company) => ({ value: company.id, label: company.name }))}
            values={{ company: companyId ?? "" }}
          />
          <div>
            <button type="submit" class="secondary">Search</button>
          </div>
        </form>
        {page.data.length > 0
          ? <ExportLink c={c} path="/console/disbursements/export.csv" what="these disbursements" />
          : null}
        <ListTable
          label="Disbursements"
          rows={page.data}
          empty={
            <>
              {search
                ? `No disbursement has the id, uuid or claim id "${search}". Check it, or clear the search.`
                : "No disbursements yet. A company creates them with POST /api/disbursements, /api/simple-payments or /v1/disbursements."}
            </>
          }
          head={
            <>
              <SortHeader c={c} params={params} column="created" label="Created" />
              <th scope="col">Disbursement</th>
              <SortHeader c={c} params={params} column="company" label="Company" />
              <th scope="col">Line</th>
              <SortHeader c={c} params={params} column="payees" label="Payees" numeric />
              <SortHeader c={c} params={params} column="amount" label="Amount" numeric />
              <th scope="col">Status</th>
            </>
          }
          row={(row) => (
            <tr>
              <td>
                <When c={c} at={row.createdAt} />
              </td>
              <td>
                <a href={consoleUrl(c, `/console/disbursements/${row.id}`)}>
                  {row.claimId ?? row.externalUuid}
                </a>
                <span class="hint">{KIND_LABELS[row.kind]} {row.id}</span>
              </td>
              <td>{row.companyName}</td>
              <td>{row.lineCode}</td>
              <td class="num">{row.payeeCount}</td>
              <td class="num">
                <Money cents={row.totalCents} />
              </td>
              <td>
                <StatusBadge status={row.status} />
              </td>
            </tr>
          )}
        />
        <Pager c={c} params={params} hasMore={page.hasMore} />
      </ConsoleLayout>,
    );
  });

  app.get("/disbursements/:id", async (c) => {
    const found = await findInScope(c, c.req.param("id"), findDisbursement);
    if (!found) {
      // The company's own id (a claim id, a disbursement_uuid) leads to its page, or to the list
      // when several disbursements carry it.
      const own = await disbursementIdsByOwnId(
        c.get("database").readClient,
        c.req.param("id"),
        companiesInScope(c),
        2,
      );
      if (own.length === 1) return c.redirect(consoleUrl(c, `/console/disbursements/${own[0]}`));
      if (own.length > 1) {
        return c.redirect(consoleUrl(c, "/console/disbursements", { q: c.req.param("id") }));
      }
      return notFoundPage(c, "This disbursement");
    }
    const { disbursement, payees } = found;
    return c.html(
      <ConsoleLayout
        c={c}
        title={`Disbursement ${disbursement.claimId ?? disbursement.externalUuid}`}
        active="disbursements"
      >
        <section class="card" aria-label="Disbursement">
          <dl class="facts">
            <dt>Id</dt>
            <dd>{disbursement.id}</dd>
            <dt>Kind</dt>
            <dd>{KIND_LABELS[disbursement.kind]}</dd>
            <dt>{disbursement.kind === "v1" ? "Claim id" : "Uuid"}</dt>
            <dd>{disbursement.claimId ?? disbursement.externalUuid}</dd>
            <dt>Company</dt>
            <dd>{disbursement.companyName} / {disbursement.lineCode}</dd>
            <dt>Amount</dt>
            <dd>
              <Money cents={disbursement.totalCents} /> to {disbursement.payeeCount}{" "}
              {disbursement.payeeCount === 1 ? "payee" : "payees"}
            </dd>
            <dt>Status</dt>
            <dd>
              <StatusBadge status={disbursement.status} />
              {disbursement.largeDisbursement
                ? <span class="badge">large disbursement</span>
                : null}
            </dd>
            <dt>Created</dt>
            <dd>
              <When c={c} at={disbursement.createdAt} />
            </dd>
          </dl>
        </section>
        <h2>Payees</h2>
        <TableWrap label="Payees">
          <table>
            <thead>
              <tr>
                <th scope="col">Payee</th>
                <th scope="col">E-mail</th>
                <th scope="col" class="num">Amount</th>
                <th scope="col">Status</th>
                <th scope="col">Method</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {payees.map((payee) => (
                <tr>
                  <td>
                    <a href={consoleUrl(c, `/console/payouts/${payee.payoutId}`)}>{payee.name}</a>
                    <span class="hint">{payee.payeeUuid}</span>
                  </td>
                  <td>{payee.email ?? "—"}</td>
                  <td class="num">
                    <Money cents={payee.amountCents} />
                  </td>
                  <td>
                    <StatusBadge status={payee.status} />
                    {payee.failureReason ? <span class="hint">{payee.failureReason}</span> : null}
                  </td>
                  <td>
                    {payee.paymentMethodId === null
                      ? "not chosen yet"
                      : modalityOf(payee.paymentMethodId)?.name ??
                        `method ${payee.paymentMethodId}`}
                    {payee.methodLastFour ? ` ending ${payee.methodLastFour}` : ""}
                  </td>
                  <td>
                    <When c={c} at={payee.updatedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      </ConsoleLayout>,
    );
  });
  return app;
}
