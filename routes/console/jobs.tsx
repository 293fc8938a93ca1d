/** @jsxImportSource hono/jsx */
/**
 * Jobs and notifications (issue 20): parked jobs (failed for good, waiting for an operator) with
 * retry, and failed notifications with retry. Retries are the CLI's jobs:retry and
 * notifications:retry (clerk and up), audited. A notification's body is never shown: it carries
 * the payee's secret portal link.
 */
import { Hono } from "hono";
import {
  type FailedNotificationRow,
  failedNotificationSorts,
  listFailedNotifications,
  listParkedJobs,
  type ParkedJobRow,
  parkedJobSorts,
} from "../../lib/console/jobs.ts";
import type { AppDeps } from "../context.ts";
import { csvCell, type CsvColumn, csvExport } from "./csv_export.ts";
import {
  ConsoleLayout,
  CsrfField,
  type FieldProblem,
  FormProblems,
  listParams,
  Pager,
  requireRole,
  SortHeader,
  When,
} from "./kit.tsx";
import {
  ActionButton,
  DoneNotice,
  doneRedirect,
  ExportLink,
  ListTable,
  refusalProblems,
  rowCommand,
  statusOf,
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
  job_retried: "The job is back in the queue, due now: the next sweep runs it.",
  all_retried: "Every parked job is back in the queue, due now.",
  notification_retried: "The notification is back in the outbox: it is sent again shortly.",
};

function JobTabs(props: { c: ConsoleContext; current: "jobs" | "notifications" }) {
  return (
    <Tabs
      c={props.c}
      label="Jobs and notifications"
      tabs={[
        { href: "/console/jobs", label: "Parked jobs", current: props.current === "jobs" },
        {
          href: "/console/jobs/notifications",
          label: "Failed notifications",
          current: props.current === "notifications",
        },
      ]}
    />
  );
}

async function parkedJobsPage(c: ConsoleContext, problems: readonly FieldProblem[]) {
  const params = listParams(c, { sorts: Object.keys(parkedJobSorts), defaultSort: "parked" });
  const page = await listParkedJobs(c.get("database").readClient, companiesInScope(c), params);
  const mayRetry = hasRole(c, "clerk");
  return (
    <ConsoleLayout c={c} title="Jobs and notifications" active="jobs">
      <JobTabs c={c} current="jobs" />
      <DoneNotice c={c} notices={NOTICES} />
      <FormProblems problems={problems} />
      {page.data.length > 0 && mayRetry && companiesInScope(c) === null
        ? (
          <div class="actions spaced">
            <ActionButton
              action="/console/jobs/retry-all"
              label="Retry every parked job"
              confirm="Put every parked job of this environment back in the queue?"
              csrf={<CsrfField c={c} />}
            />
          </div>
        )
        : null}
      {page.data.length > 0
        ? <ExportLink c={c} path="/console/jobs/export.csv" what="these jobs" />
        : null}
      <ListTable
        label="Parked jobs"
        rows={page.data}
        empty={
          <>
            No parked jobs. A job is parked when it fails on something a retry would not cure; fix
            the cause it names, then retry it here.
          </>
        }
        head={
          <>
            <SortHeader c={c} params={params} column="parked" label="Parked" />
            <SortHeader c={c} params={params} column="kind" label="Kind" />
            <th scope="col">Company</th>
            <th scope="col">Subject</th>
            <SortHeader c={c} params={params} column="due" label="Was due" />
            <th scope="col" class="num">Runs</th>
            <th scope="col">Error</th>
            {mayRetry ? <th scope="col">Action</th> : null}
          </>
        }
        row={(job) => (
          <tr>
            <td>
              <When c={c} at={job.parkedAt} />
            </td>
            <td>
              {job.kind}
              <span class="hint">{job.id}</span>
            </td>
            <td>{job.companyName}</td>
            <td>{job.subjectId}</td>
            <td>
              <When c={c} at={job.dueAt} />
            </td>
            <td class="num">{job.attempts}</td>
            <td>
              <code>{job.error}</code>
            </td>
            {mayRetry
              ? (
                <td>
                  <ActionButton
                    action={`/console/jobs/${job.id}/retry`}
                    label="Retry"
                    ariaLabel={`Retry job ${job.id}`}
                    csrf={<CsrfField c={c} />}
                  />
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

async function notificationsPage(c: ConsoleContext, problems: readonly FieldProblem[]) {
  const params = listParams(c, {
    sorts: Object.keys(failedNotificationSorts),
    defaultSort: "created",
  });
  const page = await listFailedNotifications(
    c.get("database").readClient,
    companiesInScope(c),
    params,
  );
  const mayRetry = hasRole(c, "clerk");
  return (
    <ConsoleLayout c={c} title="Jobs and notifications" active="jobs">
      <JobTabs c={c} current="notifications" />
      <DoneNotice c={c} notices={NOTICES} />
      <FormProblems problems={problems} />
      {page.data.length > 0
        ? (
          <ExportLink
            c={c}
            path="/console/jobs/notifications/export.csv"
            what="these notifications"
          />
        )
        : null}
      <ListTable
        label="Failed notifications"
        rows={page.data}
        empty={
          <>
            No failed notifications. A live e-mail or SMS fails when its provider refuses it or
            every attempt of its schedule failed; check the provider's settings, then retry it here.
            Test messages never fail: they go to the sandbox inbox.
          </>
        }
        head={
          <>
            <SortHeader c={c} params={params} column="created" label="Queued" />
            <SortHeader c={c} params={params} column="channel" label="Channel" />
            <th scope="col">To</th>
            <th scope="col">Subject</th>
            <th scope="col">Company</th>
            <SortHeader c={c} params={params} column="attempts" label="Attempts" numeric />
            <th scope="col">Last error</th>
            {mayRetry ? <th scope="col">Action</th> : null}
          </>
        }
        row={(notification) => (
          <tr>
            <td>
              <When c={c} at={notification.createdAt} />
            </td>
            <td>{notification.channel}</td>
            <td>{notification.recipient}</td>
            <td>{notification.subject ?? "—"}</td>
            <td>{notification.companyName ?? "—"}</td>
            <td class="num">{notification.attemptCount}</td>
            <td>
              <code>{notification.lastError ?? ""}</code>
            </td>
            {mayRetry
              ? (
                <td>
                  <ActionButton
                    action={`/console/notifications/${notification.id}/retry`}
                    label="Retry"
                    ariaLabel={`Retry notification ${notification.id}`}
                    csrf={<CsrfField c={c} />}
                  />
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

const PARKED_JOB_COLUMNS: readonly CsvColumn<ParkedJobRow>[] = [
  ["job_id", (j) => csvCell.text(j.id)],
  ["kind", (j) => csvCell.text(j.kind)],
  ["subject_id", (j) => csvCell.text(j.subjectId)],
  ["company", (j) => csvCell.text(j.companyName)],
  ["attempts", (j) => csvCell.count(j.attempts)],
  ["error", (j) => csvCell.text(j.error)],
  ["due_at", (j) => csvCell.time(j.dueAt)],
  ["parked_at", (j) => csvCell.time(j.parkedAt)],
];

/** Never a notification's body or link: they carry the payee's secret portal link. */
const NOTIFICATION_COLUMNS: readonly CsvColumn<FailedNotificationRow>[] = [
  ["notification_id", (n) => csvCell.text(n.id)],
  ["company", (n) => csvCell.text(n.companyName)],
  ["payout_id", (n) => csvCell.text(n.payoutId)],
  ["channel", (n) => csvCell.text(n.channel)],
  ["recipient", (n) => csvCell.text(n.recipient)],
  ["subject", (n) => csvCell.text(n.subject)],
  ["attempts", (n) => csvCell.count(n.attemptCount)],
  ["last_error", (n) => csvCell.text(n.lastError)],
  ["created_at", (n) => csvCell.time(n.createdAt)],
];

export function jobsConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get("/jobs", async (c) => c.html(await parkedJobsPage(c, [])));
  app.get("/jobs/export.csv", (c) => {
    const params = listParams(c, { sorts: Object.keys(parkedJobSorts), defaultSort: "parked" });
    return csvExport(c, {
      name: "parked-jobs",
      columns: PARKED_JOB_COLUMNS,
      read: (window) =>
        listParkedJobs(c.get("database").readClient, companiesInScope(c), {
          ...params,
          ...window,
        }),
    });
  });
  app.get("/jobs/notifications/export.csv", (c) => {
    const params = listParams(c, {
      sorts: Object.keys(failedNotificationSorts),
      defaultSort: "created",
    });
    return csvExport(c, {
      name: "failed-notifications",
      columns: NOTIFICATION_COLUMNS,
      read: (window) =>
        listFailedNotifications(c.get("database").readClient, companiesInScope(c), {
          ...params,
          ...window,
        }),
    });
  });
  app.get("/jobs/notifications", async (c) => c.html(await notificationsPage(c, [])));

  app.post("/jobs/retry-all", requireRole("clerk"), async (c) => {
    const retried = await runConsoleCommand(deps, c, "jobs:retry", {
      "all-parked": "true",
      environment: c.get("environment"),
    });
    if (retried.ok) return doneRedirect(c, "/console/jobs", "all_retried");
    return c.html(await parkedJobsPage(c, refusalProblems(retried)), statusOf(retried));
  });

  app.post("/jobs/:id/retry", requireRole("clerk"), (c) =>
    rowCommand(c, deps, {
      what: "This job",
      command: "jobs:retry",
      flags: (id) => ({ job: id, environment: c.get("environment") }),
      done: () => doneRedirect(c, "/console/jobs", "job_retried"),
      page: (problems) => parkedJobsPage(c, problems),
    }));

  app.post("/notifications/:id/retry", requireRole("clerk"), (c) =>
    rowCommand(c, deps, {
      what: "This notification",
      command: "notifications:retry",
      flags: (id) => ({ notification: id, environment: c.get("environment") }),
      done: () => doneRedirect(c, "/console/jobs/notifications", "notification_retried"),
      page: (problems) => notificationsPage(c, problems),
    }));
  return app;
}
