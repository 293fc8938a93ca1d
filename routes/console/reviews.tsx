/** @jsxImportSource hono/jsx */
/**
 * Review queues (issue 20): payouts held for sanctions (OFAC) review, which an admin clears (not
 * the listed party: submitted again) or rejects (the match stands: the payout fails), and the
 * check register's paid-item exceptions, which an admin resolves. Each decision names a reason for
 * the audit log and runs as the CLI's sanctions:clear, sanctions:reject or
 * checks:resolve-exception. ACH return files' unmatched entries are on the Bank files page.
 */
import { Hono } from "hono";
import * as v from "valibot";
import {
  type CheckExceptionSummary,
  findCheckExceptionInScope,
  findSanctionsReview,
  listCheckExceptionsInScope,
  listSanctionsReviews,
  REVIEW_STATES,
  type ReviewRow,
  reviewSorts,
  type ReviewState,
} from "../../lib/console/reviews.ts";
import type { AppDeps } from "../context.ts";
import {
  ConsoleLayout,
  consoleUrl,
  CsrfField,
  Field,
  type FieldProblem,
  FormProblems,
  type FormValues,
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
  CSV_EXPORT_ROWS_MAX,
  csvCell,
  type CsvColumn,
  csvExport,
  wholeList,
} from "./csv_export.ts";
import { listCheckExceptions } from "../../lib/checks/views.ts";
import {
  checkedForm,
  DoneNotice,
  doneRedirect,
  ExportLink,
  FilterForm,
  findInScope,
  ListTable,
  queryChoice,
  refusalProblems,
  requiredText,
  statusOf,
  TableWrap,
  Tabs,
} from "./page_parts.tsx";
import {
  companiesInScope,
  type ConsoleContext,
  type ConsoleEnv,
  hasRole,
  runConsoleCommand,
} from "./session.ts";

const NOTICES = {
  cleared: "Cleared: the payout is submitted again.",
  rejected: "Rejected: the payout failed with sanctions_review.",
  resolved: "Resolved: the exception is closed.",
};

/** A decision's reason, for the audit log (the CLI's limit). */
const REASON_LENGTH_MAX = 500;
const decisionForm = v.object({ reason: requiredText("Reason", REASON_LENGTH_MAX) });
const RESOLUTIONS = {
  payment_stands: "The payment stands: the ledger records the bank's payment",
  bank_reversed: "The bank reversed it: nothing is posted",
} as const;
const resolutionForm = v.object({
  resolution: v.picklist(
    Object.keys(RESOLUTIONS) as (keyof typeof RESOLUTIONS)[],
    "Resolution: choose what the bank says happened",
  ),
  note: requiredText("Note", REASON_LENGTH_MAX),
});

function ReviewTabs(props: { c: ConsoleContext; current: "sanctions" | "checks" }) {
  return (
    <Tabs
      c={props.c}
      label="Review queues"
      tabs={[
        {
          href: "/console/reviews",
          label: "Sanctions holds",
          current: props.current === "sanctions",
        },
        {
          href: "/console/reviews/checks",
          label: "Check exceptions",
          current: props.current === "checks",
        },
      ]}
    />
  );
}

const toneOf = (status: string) =>
  status === "open"
    ? "badge"
    : status === "cleared" || status === "resolved"
    ? "badge good"
    : "badge bad";

/** The sanctions reviews' status the page filters on (null: all). */
const reviewStatusOf = (c: ConsoleContext): ReviewState | null =>
  c.req.query("status") === "all" ? null : queryChoice(c, "status", REVIEW_STATES) ?? "open";

const REVIEW_COLUMNS: readonly CsvColumn<ReviewRow>[] = [
  ["held_at", (r) => csvCell.time(r.createdAt)],
  ["payout", (r) => csvCell.text(r.payoutId)],
  ["payee", (r) => csvCell.text(r.payeeName)],
  ["company", (r) => csvCell.text(r.companyName)],
  ["amount", (r) => csvCell.money(r.amountCents)],
  ["matched", (r) => csvCell.text(r.matches.map((m) => `${m.listName} (${m.program})`).join("; "))],
  ["status", (r) => csvCell.text(r.status)],
  ["decided_by", (r) => csvCell.text(r.decidedBy)],
  ["decided_at", (r) => csvCell.time(r.decidedAt)],
  ["reason", (r) => csvCell.text(r.reason)],
];

/** The check exceptions' status the page filters on (null: all). */
const checkExceptionStatusOf = (c: ConsoleContext): "open" | "resolved" | null => {
  const asked = c.req.query("status");
  return asked === "resolved" ? "resolved" : asked === "all" ? null : "open";
};

const CHECK_EXCEPTION_COLUMNS: readonly CsvColumn<CheckExceptionSummary>[] = [
  ["reported_at", (x) => csvCell.time(x.createdAt)],
  ["check_number", (x) => csvCell.count(x.checkNumber)],
  ["exception", (x) => csvCell.text(x.kind)],
  ["issued", (x) => csvCell.money(x.issuedAmountCents)],
  ["paid", (x) => csvCell.money(x.paidAmountCents)],
  ["paid_on", (x) => csvCell.text(x.paidDate)],
  ["payout", (x) => csvCell.text(x.payoutId)],
  ["file", (x) => csvCell.text(x.importFileName)],
  ["status", (x) => csvCell.text(x.status)],
  ["resolution", (x) => csvCell.text(x.resolution)],
];

async function sanctionsList(c: ConsoleContext) {
  const params = listParams(c, { sorts: Object.keys(reviewSorts), defaultSort: "created" });
  const status = reviewStatusOf(c);
  const page = await listSanctionsReviews(
    c.get("database").readClient,
    { companyIds: companiesInScope(c), status },
    params,
  );
  return (
    <ConsoleLayout c={c} title="Review queues" active="reviews">
      <ReviewTabs c={c} current="sanctions" />
      <DoneNotice c={c} notices={NOTICES} />
      <FilterForm c={c} action="/console/reviews">
        <SelectField
          name="status"
          label="Status"
          options={[
            ...REVIEW_STATES.map((s) => ({ value: s, label: s })),
            { value: "all", label: "all" },
          ]}
          values={{ status: status ?? "all" }}
        />
      </FilterForm>
      {page.data.length > 0
        ? <ExportLink c={c} path="/console/reviews/export.csv" what="these reviews" />
        : null}
      <ListTable
        label="Sanctions reviews"
        rows={page.data}
        empty={
          <>
            {status === "open"
              ? "No payout is held for sanctions review. A payout whose payee's name matches the OFAC list is held here before it is sent."
              : "No reviews with this status. Choose another status above."}
          </>
        }
        head={
          <>
            <SortHeader c={c} params={params} column="created" label="Held" />
            <th scope="col">Payee</th>
            <SortHeader c={c} params={params} column="company" label="Company" />
            <SortHeader c={c} params={params} column="amount" label="Amount" numeric />
            <th scope="col">Matched</th>
            <th scope="col">Status</th>
          </>
        }
        row={(review) => (
          <tr>
            <td>
              <When c={c} at={review.createdAt} />
            </td>
            <td>
              <a href={consoleUrl(c, `/console/reviews/${review.id}`)}>
                {review.payeeName}
              </a>
              <span class="hint">{review.payoutId}</span>
            </td>
            <td>{review.companyName}</td>
            <td class="num">
              <Money cents={review.amountCents} />
            </td>
            <td>
              {review.matches.map((m) => `${m.listName} (${m.program})`).join("; ")}
            </td>
            <td>
              <span class={toneOf(review.status)}>{review.status}</span>
            </td>
          </tr>
        )}
      />
      <Pager c={c} params={params} hasMore={page.hasMore} />
    </ConsoleLayout>
  );
}

function sanctionsReviewPage(
  c: ConsoleContext,
  review: ReviewRow,
  form: { problems: readonly FieldProblem[]; values: FormValues },
) {
  const mayDecide = hasRole(c, "admin") && review.status === "open";
  return (
    <ConsoleLayout c={c} title={`Sanctions review of ${review.payeeName}`} active="reviews">
      <FormProblems problems={form.problems} />
      <section class="card" aria-label="Held payout">
        <dl class="facts">
          <dt>Payout</dt>
          <dd>
            <a href={consoleUrl(c, `/console/payouts/${review.payoutId}`)}>{review.payoutId}</a>
            {" "}
            ({review.payoutStatus.replaceAll("_", " ")})
          </dd>
          <dt>Company</dt>
          <dd>{review.companyName}</dd>
          <dt>Amount</dt>
          <dd>
            <Money cents={review.amountCents} />
          </dd>
          <dt>Held</dt>
          <dd>
            <When c={c} at={review.createdAt} />
          </dd>
          <dt>Status</dt>
          <dd>
            <span class={toneOf(review.status)}>{review.status}</span>
            {review.decidedBy ? ` by ${review.decidedBy}` : ""}
            {review.decidedAt
              ? (
                <>
                  , <When c={c} at={review.decidedAt} />
                </>
              )
              : null}
          </dd>
          {review.reason ? <dt>Reason</dt> : null}
          {review.reason ? <dd>{review.reason}</dd> : null}
        </dl>
      </section>
      <h2>Names that matched</h2>
      <TableWrap label="Matched names">
        <table>
          <thead>
            <tr>
              <th scope="col">Screened name</th>
              <th scope="col">List name</th>
              <th scope="col">Entry</th>
              <th scope="col">Program</th>
              <th scope="col" class="num">Score</th>
            </tr>
          </thead>
          <tbody>
            {review.matches.map((m) => (
              <tr>
                <td>{m.screenedName}</td>
                <td>{m.listName}</td>
                <td>{m.entryNumber}</td>
                <td>{m.program}</td>
                <td class="num">{m.score.toFixed(3)} ({m.rule})</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {mayDecide
        ? (
          <form method="post" action={`/console/reviews/${review.id}/decide`} class="card">
            <CsrfField c={c} />
            <Field
              name="reason"
              label="Reason"
              hint="Why the payee is or is not the listed party; kept in the audit log."
              values={form.values}
              problems={form.problems}
              required
            />
            <div class="actions">
              <button type="submit" name="decision" value="clear">Clear</button>
              <button type="submit" name="decision" value="reject" class="danger">Reject</button>
            </div>
          </form>
        )
        : null}
    </ConsoleLayout>
  );
}

async function checkExceptionsList(c: ConsoleContext) {
  const status = checkExceptionStatusOf(c);
  const listed = await listCheckExceptionsInScope(c.get("database").readClient, {
    companyIds: companiesInScope(c),
    status,
  });
  return (
    <ConsoleLayout c={c} title="Review queues" active="reviews">
      <ReviewTabs c={c} current="checks" />
      <DoneNotice c={c} notices={NOTICES} />
      <FilterForm c={c} action="/console/reviews/checks">
        <SelectField
          name="status"
          label="Status"
          options={[
            { value: "open", label: "open" },
            { value: "resolved", label: "resolved" },
            { value: "all", label: "all" },
          ]}
          values={{ status: status ?? "all" }}
        />
      </FilterForm>
      {listed.data.length > 0
        ? <ExportLink c={c} path="/console/reviews/checks/export.csv" what="these exceptions" />
        : null}
      <ListTable
        label="Check exceptions"
        rows={listed.data}
        empty={
          <>
            No {status ?? ""}{" "}
            check exceptions. A paid-items file from the bank that reports a check paid for another
            amount, twice, after a void or not issued opens one here.
          </>
        }
        caption={
          <>
            Oldest first{listed.hasMore ? "; resolve these to see the next ones" : ""}
          </>
        }
        head={
          <>
            <th scope="col">Check</th>
            <th scope="col">Exception</th>
            <th scope="col" class="num">Issued</th>
            <th scope="col" class="num">Paid</th>
            <th scope="col">Paid on</th>
            <th scope="col">Status</th>
          </>
        }
        row={(x) => (
          <tr>
            <td>
              <a href={consoleUrl(c, `/console/reviews/checks/${x.id}`)}>
                No. {x.checkNumber}
              </a>
              <span class="hint">{x.importFileName}</span>
            </td>
            <td>{x.kind.replaceAll("_", " ")}</td>
            <td class="num">
              {x.issuedAmountCents === null ? "—" : <Money cents={x.issuedAmountCents} />}
            </td>
            <td class="num">
              <Money cents={x.paidAmountCents} />
            </td>
            <td>{x.paidDate}</td>
            <td>
              <span class={toneOf(x.status)}>{x.resolution ?? x.status}</span>
            </td>
          </tr>
        )}
      />
    </ConsoleLayout>
  );
}

function checkExceptionPage(
  c: ConsoleContext,
  x: CheckExceptionSummary,
  form: { problems: readonly FieldProblem[]; values: FormValues },
) {
  const mayResolve = hasRole(c, "admin") && x.status === "open";
  return (
    <ConsoleLayout c={c} title={`Check exception, check No. ${x.checkNumber}`} active="reviews">
      <FormProblems problems={form.problems} />
      <section class="card" aria-label="Exception">
        <dl class="facts">
          <dt>Exception</dt>
          <dd>{x.kind.replaceAll("_", " ")}</dd>
          <dt>Check</dt>
          <dd>No. {x.checkNumber} ({x.checkStatus ?? "not in the register"})</dd>
          <dt>Issued for</dt>
          <dd>{x.issuedAmountCents === null ? "—" : <Money cents={x.issuedAmountCents} />}</dd>
          <dt>Paid</dt>
          <dd>
            <Money cents={x.paidAmountCents} /> on {x.paidDate}
          </dd>
          <dt>Payout</dt>
          <dd>
            {x.payoutId
              ? <a href={consoleUrl(c, `/console/payouts/${x.payoutId}`)}>{x.payoutId}</a>
              : "—"}
          </dd>
          <dt>Reported in</dt>
          <dd>{x.importFileName}</dd>
          <dt>Status</dt>
          <dd>
            {x.status}
            {x.resolution ? ` (${x.resolution.replaceAll("_", " ")})` : ""}
            {x.resolvedAt
              ? (
                <>
                  , <When c={c} at={x.resolvedAt} />
                </>
              )
              : null}
          </dd>
          {x.ledgerEffect
            ? (
              <>
                <dt>If the payment stands</dt>
                <dd>
                  <Money cents={x.ledgerEffect.amountCents} /> from {x.ledgerEffect.from} to{" "}
                  {x.ledgerEffect.to} ({x.ledgerEffect.kind})
                </dd>
              </>
            )
            : null}
        </dl>
      </section>
      {mayResolve
        ? (
          <form method="post" action={`/console/reviews/checks/${x.id}/resolve`} class="card">
            <CsrfField c={c} />
            <SelectField
              name="resolution"
              label="What the bank says happened"
              options={Object.entries(RESOLUTIONS).map(([value, label]) => ({ value, label }))}
              values={form.values}
              problems={form.problems}
            />
            <Field
              name="note"
              label="Note"
              hint="Kept in the audit log."
              values={form.values}
              problems={form.problems}
              required
            />
            <button type="submit">Resolve</button>
          </form>
        )
        : null}
    </ConsoleLayout>
  );
}

export function reviewsConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const reviewOf = (c: ConsoleContext, id: string) => findInScope(c, id, findSanctionsReview);
  const exceptionOf = (c: ConsoleContext, id: string) =>
    findInScope(c, id, findCheckExceptionInScope);

  app.get("/reviews", async (c) => c.html(await sanctionsList(c)));
  app.get("/reviews/checks", async (c) => c.html(await checkExceptionsList(c)));
  app.get("/reviews/export.csv", (c) => {
    const params = listParams(c, { sorts: Object.keys(reviewSorts), defaultSort: "created" });
    return csvExport(c, {
      name: "sanctions-reviews",
      columns: REVIEW_COLUMNS,
      read: (window) =>
        listSanctionsReviews(
          c.get("database").readClient,
          { companyIds: companiesInScope(c), status: reviewStatusOf(c) },
          { ...params, ...window },
        ),
    });
  });
  app.get("/reviews/checks/export.csv", async (c) =>
    csvExport(c, {
      name: "check-exceptions",
      columns: CHECK_EXCEPTION_COLUMNS,
      read: wholeList(
        await listCheckExceptions(c.get("database").readClient, {
          companyIds: companiesInScope(c),
          status: checkExceptionStatusOf(c),
        }, CSV_EXPORT_ROWS_MAX),
      ),
    }));

  app.get("/reviews/checks/:id", async (c) => {
    const x = await exceptionOf(c, c.req.param("id"));
    if (!x) return notFoundPage(c, "This check exception");
    return c.html(checkExceptionPage(c, x, { problems: [], values: {} }));
  });

  app.post("/reviews/checks/:id/resolve", requireRole("admin"), async (c) => {
    const x = await exceptionOf(c, c.req.param("id"));
    if (!x) return notFoundPage(c, "This check exception");
    const form = await checkedForm(c, resolutionForm);
    if (!form.ok) return c.html(checkExceptionPage(c, x, form), 400);
    const resolved = await runConsoleCommand(deps, c, "checks:resolve-exception", {
      exception: x.id,
      resolution: form.value.resolution,
      note: form.value.note,
      environment: c.get("environment"),
    });
    if (resolved.ok) return doneRedirect(c, "/console/reviews/checks", "resolved");
    const now = (await exceptionOf(c, x.id)) ?? x;
    return c.html(
      checkExceptionPage(c, now, {
        problems: refusalProblems(resolved, ["resolution", "note"]),
        values: form.values,
      }),
      statusOf(resolved),
    );
  });

  app.get("/reviews/:id", async (c) => {
    const review = await reviewOf(c, c.req.param("id"));
    if (!review) return notFoundPage(c, "This sanctions review");
    return c.html(sanctionsReviewPage(c, review, { problems: [], values: {} }));
  });

  app.post("/reviews/:id/decide", requireRole("admin"), async (c) => {
    const review = await reviewOf(c, c.req.param("id"));
    if (!review) return notFoundPage(c, "This sanctions review");
    const form = await checkedForm(c, decisionForm);
    if (!form.ok) return c.html(sanctionsReviewPage(c, review, form), 400);
    const decision = form.values.decision === "reject" ? "reject" : "clear";
    const decided = await runConsoleCommand(deps, c, `sanctions:${decision}`, {
      review: review.id,
      reason: form.value.reason,
      environment: c.get("environment"),
    });
    if (decided.ok) {
      return doneRedirect(c, "/console/reviews", decision === "clear" ? "cleared" : "rejected");
    }
    const now = (await reviewOf(c, review.id)) ?? review;
    return c.html(
      sanctionsReviewPage(c, now, {
        problems: refusalProblems(decided, ["reason"]),
        values: form.values,
      }),
      statusOf(decided),
    );
  });
  return app;
}
