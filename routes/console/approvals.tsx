/** @jsxImportSource hono/jsx */
/**
 * Approvals (issue 20): live actions waiting for a second admin, and decided ones. An admin
 * approves (the action runs now) or rejects with a reason, never their own request: the buttons
 * are not shown for it and the service refuses it. Decisions are the CLI's approvals:approve and
 * approvals:reject, which need a session signed in with TOTP and write their own audit rows.
 */
import { Hono } from "hono";
import * as v from "valibot";
import {
  APPROVAL_STATES,
  type ApprovalRow,
  approvalSorts,
  findConsoleApproval,
  listConsoleApprovals,
} from "../../lib/console/approvals.ts";
import type { ApprovalStatus } from "../../lib/operators/rules.ts";
import type { AppDeps } from "../context.ts";
import { csvCell, type CsvColumn, csvExport } from "./csv_export.ts";
import {
  ConsoleLayout,
  consoleUrl,
  CsrfField,
  Field,
  type FieldProblem,
  FormProblems,
  type FormValues,
  listParams,
  notFoundPage,
  Pager,
  requireRole,
  SelectField,
  SortHeader,
  When,
} from "./kit.tsx";
import {
  checkedForm,
  DoneNotice,
  doneRedirect,
  ExportLink,
  FilterForm,
  ID_PATTERN,
  ListTable,
  queryChoice,
  refusalProblems,
  requiredText,
  statusOf,
} from "./page_parts.tsx";
import {
  companiesInScope,
  type ConsoleContext,
  type ConsoleEnv,
  hasRole,
  runConsoleCommand,
} from "./session.ts";

const NOTICES = {
  approved: "Approved: the action ran.",
  rejected: "Rejected: nothing of the action happened.",
};

/** A rejection's reason, for the audit log. */
const REASON_LENGTH_MAX = 500;
const rejectForm = v.object({ reason: requiredText("Reason", REASON_LENGTH_MAX) });

const STATUS_LABELS: Readonly<Record<ApprovalStatus, string>> = {
  pending_approval: "pending",
  approved: "approved",
  rejected: "rejected",
  expired: "expired",
};

function StatusBadge(props: { status: ApprovalStatus }) {
  const tone = props.status === "approved"
    ? "badge good"
    : props.status === "pending_approval"
    ? "badge"
    : "badge bad";
  return <span class={tone}>{STATUS_LABELS[props.status]}</span>;
}

/** The status the list shows: the one asked for, every one for "all", or those waiting. */
const statusAsked = (c: ConsoleContext): ApprovalStatus | null =>
  c.req.query("status") === "all"
    ? null
    : queryChoice(c, "status", APPROVAL_STATES) ?? "pending_approval";

const APPROVAL_COLUMNS: readonly CsvColumn<ApprovalRow>[] = [
  ["approval_id", (a) => csvCell.text(a.id)],
  ["requested_at", (a) => csvCell.time(a.requestedAt)],
  ["kind", (a) => csvCell.text(a.kind)],
  ["environment", (a) => csvCell.text(a.environment)],
  ["what", (a) => csvCell.text(a.summary)],
  ["object_id", (a) => csvCell.text(a.objectId)],
  ["company", (a) => csvCell.text(a.companyName ?? "every company")],
  ["requested_by", (a) => csvCell.text(a.requestedBy)],
  ["status", (a) => csvCell.text(STATUS_LABELS[a.status])],
  ["expires_at", (a) => csvCell.time(a.expiresAt)],
  ["decided_by", (a) => csvCell.text(a.decidedBy)],
  ["decided_at", (a) => csvCell.time(a.decidedAt)],
  ["reason", (a) => csvCell.text(a.reason)],
];

async function approvalsList(c: ConsoleContext, deps: AppDeps) {
  const params = listParams(c, { sorts: Object.keys(approvalSorts), defaultSort: "requested" });
  const status = statusAsked(c);
  const page = await listConsoleApprovals(
    deps.databases.live.readClient,
    { companyIds: companiesInScope(c), status },
    params,
    deps.clock.now(),
  );
  return (
    <ConsoleLayout c={c} title="Approvals" active="approvals">
      <DoneNotice c={c} notices={NOTICES} />
      <p>
        Live changes that need a second admin wait here: manual fundings, late returns, bank
        settings, large bank files and new admins. An admin other than the requester decides.
      </p>
      <FilterForm c={c} action="/console/approvals">
        <SelectField
          name="status"
          label="Status"
          options={[
            ...APPROVAL_STATES.map((s) => ({ value: s, label: STATUS_LABELS[s] })),
            { value: "all", label: "all" },
          ]}
          values={{ status: status ?? "all" }}
        />
      </FilterForm>
      {page.data.length > 0
        ? <ExportLink c={c} path="/console/approvals/export.csv" what="these approvals" />
        : null}
      <ListTable
        label="Approvals"
        rows={page.data}
        empty={
          <>
            {status === "pending_approval"
              ? "Nothing waits for a second admin. Actions that need one appear here when an admin requests them."
              : "No approvals with this status. Choose another status above."}
          </>
        }
        head={
          <>
            <SortHeader c={c} params={params} column="requested" label="Requested" />
            <SortHeader c={c} params={params} column="kind" label="Kind" />
            <th scope="col">What</th>
            <th scope="col">Company</th>
            <th scope="col">Requested by</th>
            <th scope="col">Status</th>
            <SortHeader c={c} params={params} column="expires" label="Expires" />
          </>
        }
        row={(approval) => (
          <tr>
            <td>
              <When c={c} at={approval.requestedAt} />
            </td>
            <td>{approval.kind}</td>
            <td>
              <a href={consoleUrl(c, `/console/approvals/${approval.id}`)}>
                {approval.summary}
              </a>
            </td>
            <td>{approval.companyName ?? "every company"}</td>
            <td>{approval.requestedBy}</td>
            <td>
              <StatusBadge status={approval.status} />
            </td>
            <td>
              <When c={c} at={approval.expiresAt} />
            </td>
          </tr>
        )}
      />
      <Pager c={c} params={params} hasMore={page.hasMore} />
    </ConsoleLayout>
  );
}

/** One approval of the scope, whatever its status, or null. */
async function approvalOf(
  c: ConsoleContext,
  deps: AppDeps,
  id: string,
): Promise<ApprovalRow | null> {
  if (!ID_PATTERN.test(id)) return null;
  return await findConsoleApproval(
    deps.databases.live.readClient,
    id,
    companiesInScope(c),
    deps.clock.now(),
  );
}

function approvalPage(
  c: ConsoleContext,
  approval: ApprovalRow,
  form: { problems: readonly FieldProblem[]; values: FormValues },
) {
  const mayDecide = hasRole(c, "admin") && approval.status === "pending_approval" &&
    approval.requestedById !== c.get("operator").id;
  return (
    <ConsoleLayout c={c} title={`Approval ${approval.id}`} active="approvals">
      <FormProblems problems={form.problems} />
      <section class="card" aria-label="Approval">
        <dl class="facts">
          <dt>What</dt>
          <dd>{approval.summary}</dd>
          <dt>Kind</dt>
          <dd>{approval.kind}</dd>
          <dt>Environment</dt>
          <dd>{approval.environment}</dd>
          <dt>Company</dt>
          <dd>{approval.companyName ?? "every company"}</dd>
          <dt>Object</dt>
          <dd>{approval.objectId}</dd>
          <dt>Status</dt>
          <dd>
            <StatusBadge status={approval.status} />
          </dd>
          <dt>Requested by</dt>
          <dd>
            {approval.requestedBy}, <When c={c} at={approval.requestedAt} />
          </dd>
          <dt>Expires</dt>
          <dd>
            <When c={c} at={approval.expiresAt} />
          </dd>
          <dt>Decided by</dt>
          <dd>
            {approval.decidedBy ?? "—"}
            {approval.decidedAt
              ? (
                <>
                  , <When c={c} at={approval.decidedAt} />
                </>
              )
              : null}
          </dd>
          {approval.reason ? <dt>Reason</dt> : null}
          {approval.reason ? <dd>{approval.reason}</dd> : null}
        </dl>
      </section>
      {approval.status === "pending_approval" && approval.requestedById === c.get("operator").id
        ? <p class="notice">You requested this: another admin must decide it.</p>
        : null}
      {mayDecide
        ? (
          <div class="cards">
            <form
              method="post"
              action={`/console/approvals/${approval.id}/approve`}
              class="card"
              data-confirm="Approve? The action runs now."
            >
              <CsrfField c={c} />
              <p>Approving runs the action now, in your name beside the requester's.</p>
              <button type="submit">Approve</button>
            </form>
            <form method="post" action={`/console/approvals/${approval.id}/reject`} class="card">
              <CsrfField c={c} />
              <Field
                name="reason"
                label="Reason for rejecting"
                hint="Kept in the audit log."
                values={form.values}
                problems={form.problems}
                required
              />
              <button type="submit" class="danger">Reject</button>
            </form>
          </div>
        )
        : null}
      <p>
        <a href={consoleUrl(c, "/console/approvals")}>All pending approvals</a>
      </p>
    </ConsoleLayout>
  );
}

export function approvalsConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get("/approvals", async (c) => c.html(await approvalsList(c, deps)));
  app.get("/approvals/export.csv", (c) => {
    const params = listParams(c, { sorts: Object.keys(approvalSorts), defaultSort: "requested" });
    const filter = { companyIds: companiesInScope(c), status: statusAsked(c) };
    const now = deps.clock.now();
    return csvExport(c, {
      name: "approvals",
      columns: APPROVAL_COLUMNS,
      read: (window) =>
        listConsoleApprovals(deps.databases.live.readClient, filter, { ...params, ...window }, now),
    });
  });
  app.get("/approvals/:id", async (c) => {
    const approval = await approvalOf(c, deps, c.req.param("id"));
    if (!approval) return notFoundPage(c, "This approval");
    return c.html(approvalPage(c, approval, { problems: [], values: {} }));
  });

  app.post("/approvals/:id/approve", requireRole("admin"), async (c) => {
    const approval = await approvalOf(c, deps, c.req.param("id"));
    if (!approval) return notFoundPage(c, "This approval");
    const decided = await runConsoleCommand(deps, c, "approvals:approve", { id: approval.id });
    if (decided.ok) return doneRedirect(c, "/console/approvals", "approved");
    const now = (await approvalOf(c, deps, approval.id)) ?? approval;
    return c.html(
      approvalPage(c, now, { problems: refusalProblems(decided), values: {} }),
      statusOf(decided),
    );
  });

  app.post("/approvals/:id/reject", requireRole("admin"), async (c) => {
    const approval = await approvalOf(c, deps, c.req.param("id"));
    if (!approval) return notFoundPage(c, "This approval");
    const form = await checkedForm(c, rejectForm);
    if (!form.ok) return c.html(approvalPage(c, approval, form), 400);
    const decided = await runConsoleCommand(deps, c, "approvals:reject", {
      id: approval.id,
      reason: form.value.reason,
    });
    if (decided.ok) return doneRedirect(c, "/console/approvals", "rejected");
    const now = (await approvalOf(c, deps, approval.id)) ?? approval;
    return c.html(
      approvalPage(c, now, { problems: refusalProblems(decided), values: form.values }),
      statusOf(decided),
    );
  });
  return app;
}
