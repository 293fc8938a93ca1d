/** @jsxImportSource hono/jsx */
/**
 * Webhooks (issue 20): endpoints per company and line, an endpoint's delivery log with status
 * codes, latency and the start of each response, and replays: one delivery, or every failed
 * delivery of an endpoint since a time. Replays are the CLI's webhooks:replay (clerk and up),
 * audited. An endpoint's signing secret is never read.
 */
import { Hono } from "hono";
import * as v from "valibot";
import {
  DELIVERY_STATUSES,
  type DeliveryRow,
  deliverySorts,
  type EndpointRow,
  findDeliveryEndpoint,
  findEndpointInScope,
  listEndpointDeliveries,
  listEndpointsInScope,
} from "../../lib/console/webhooks.ts";
import type { AppDeps } from "../context.ts";
import { csvCell, type CsvColumn, csvExport, wholeList } from "./csv_export.ts";
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
  ActionButton,
  checkedForm,
  DoneNotice,
  doneRedirect,
  ExportLink,
  FilterForm,
  findInScope,
  ID_PATTERN,
  ListTable,
  queryChoice,
  refusalProblems,
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
  replayed: "The delivery was queued again: it is attempted once, in a few seconds.",
  replayed_all: "The failed deliveries were queued again: each is attempted once.",
  replayed_none: "No failed delivery since that time is waiting for a replay.",
};

/** `datetime-local` text, read as UTC as its label says. */
const sinceField = v.pipe(
  v.string("Failed since is required"),
  v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/, "Failed since: a date and time, in UTC"),
  v.check((text) => !Number.isNaN(Date.parse(`${text}Z`)), "Failed since: not a real date"),
);
const replayAllForm = v.object({ since: sinceField });

function endpointState(endpoint: EndpointRow) {
  if (endpoint.disabledAt !== null) {
    return (
      <span class="badge bad">
        disabled{endpoint.disabledReason ? `: ${endpoint.disabledReason}` : ""}
      </span>
    );
  }
  if (endpoint.failingSince !== null) return <span class="badge bad">failing</span>;
  return <span class="badge good">active</span>;
}

const receives = (endpoint: EndpointRow) =>
  endpoint.surface === "v1" ? `line ${endpoint.lineCode}` : "company (Surface A)";

async function endpointList(c: ConsoleContext) {
  const endpoints = await listEndpointsInScope(c.get("database").readClient, companiesInScope(c));
  return (
    <ConsoleLayout c={c} title="Webhooks" active="webhooks">
      {endpoints.length > 0
        ? <ExportLink c={c} path="/console/webhooks/export.csv" what="these endpoints" />
        : null}
      <ListTable
        label="Webhook endpoints"
        rows={endpoints}
        empty={
          <>
            No webhook endpoints in this environment. A company registers one with POST
            /api/webhooks or POST /v1/webhooks; its deliveries then show here.
          </>
        }
        caption="Endpoints per company and line"
        head={
          <>
            <th scope="col">Company</th>
            <th scope="col">Receives</th>
            <th scope="col">URL</th>
            <th scope="col">State</th>
            <th scope="col" class="num">Failed deliveries</th>
            <th scope="col">Created</th>
          </>
        }
        row={(endpoint) => (
          <tr>
            <td>{endpoint.companyName}</td>
            <td>{receives(endpoint)}</td>
            <td>
              <a href={consoleUrl(c, `/console/webhooks/${endpoint.id}`)}>{endpoint.url}</a>
            </td>
            <td>{endpointState(endpoint)}</td>
            <td class="num">{endpoint.failedCount}</td>
            <td>
              <When c={c} at={endpoint.createdAt} />
            </td>
          </tr>
        )}
      />
    </ConsoleLayout>
  );
}

const SORTS = Object.keys(deliverySorts);

const ENDPOINT_COLUMNS: readonly CsvColumn<EndpointRow>[] = [
  ["endpoint_id", (e) => csvCell.text(e.id)],
  ["company", (e) => csvCell.text(e.companyName)],
  ["receives", (e) => csvCell.text(receives(e))],
  ["url", (e) => csvCell.text(e.url)],
  ["description", (e) => csvCell.text(e.description)],
  [
    "state",
    (e) =>
      csvCell.text(
        e.disabledAt !== null ? "disabled" : e.failingSince !== null ? "failing" : "active",
      ),
  ],
  ["disabled_reason", (e) => csvCell.text(e.disabledReason)],
  ["failing_since", (e) => csvCell.time(e.failingSince)],
  ["failed_deliveries", (e) => csvCell.count(e.failedCount)],
  ["created_at", (e) => csvCell.time(e.createdAt)],
];

const DELIVERY_COLUMNS: readonly CsvColumn<DeliveryRow>[] = [
  ["delivery_id", (d) => csvCell.text(d.id)],
  ["event_id", (d) => csvCell.text(d.eventId)],
  ["event", (d) => csvCell.text(d.eventType)],
  ["status", (d) => csvCell.text(d.status)],
  ["manual", (d) => d.manual ? "yes" : "no"],
  ["attempts", (d) => csvCell.count(d.attemptCount)],
  ["last_http_status", (d) => csvCell.count(d.lastStatusCode)],
  ["last_duration_ms", (d) => csvCell.count(d.lastDurationMs)],
  ["last_error", (d) => csvCell.text(d.lastError)],
  ["next_attempt_at", (d) => csvCell.time(d.nextAttemptAt)],
  ["created_at", (d) => csvCell.time(d.createdAt)],
  ["completed_at", (d) => csvCell.time(d.completedAt)],
];

async function endpointPage(
  c: ConsoleContext,
  deps: AppDeps,
  endpoint: EndpointRow,
  form: { problems: readonly FieldProblem[]; values: FormValues },
) {
  const params = listParams(c, { sorts: SORTS, defaultSort: "created" });
  const status = queryChoice(c, "status", DELIVERY_STATUSES);
  const page = await listEndpointDeliveries(
    c.get("database").readClient,
    { endpointId: endpoint.id, status },
    params,
  );
  const mayReplay = hasRole(c, "clerk") && endpoint.disabledAt === null;
  const exportPath = `/console/webhooks/${endpoint.id}/deliveries.csv`;
  const defaultSince = new Date(deps.clock.now() - 86_400_000).toISOString().slice(0, 16);
  return (
    <ConsoleLayout c={c} title={`Webhook endpoint ${endpoint.url}`} active="webhooks">
      <DoneNotice c={c} notices={NOTICES} />
      <FormProblems problems={form.problems} />
      <section class="card" aria-label="Endpoint">
        <dl class="facts">
          <dt>Id</dt>
          <dd>{endpoint.id}</dd>
          <dt>Company</dt>
          <dd>{endpoint.companyName}</dd>
          <dt>Receives</dt>
          <dd>{receives(endpoint)}</dd>
          <dt>State</dt>
          <dd>{endpointState(endpoint)}</dd>
          <dt>Failing since</dt>
          <dd>
            <When c={c} at={endpoint.failingSince} />
          </dd>
          <dt>Description</dt>
          <dd>{endpoint.description ?? "—"}</dd>
        </dl>
      </section>
      {mayReplay
        ? (
          <form
            method="post"
            action={`/console/webhooks/${endpoint.id}/replay-failed`}
            class="card actions"
          >
            <CsrfField c={c} />
            <Field
              name="since"
              label="Failed since (UTC)"
              type="datetime-local"
              hint="Every event whose delivery failed at or after this time is sent again, once."
              values={{ since: defaultSince, ...form.values }}
              problems={form.problems}
              required
            />
            <button type="submit">Replay failed deliveries</button>
          </form>
        )
        : null}
      <h2>Deliveries</h2>
      <FilterForm c={c} action={`/console/webhooks/${endpoint.id}`}>
        <SelectField
          name="status"
          label="Status"
          any="Any status"
          options={DELIVERY_STATUSES.map((s) => ({ value: s, label: s }))}
          values={{ status: status ?? "" }}
        />
      </FilterForm>
      {page.data.length > 0 ? <ExportLink c={c} path={exportPath} what="these deliveries" /> : null}
      <ListTable
        label="Deliveries"
        rows={page.data}
        empty={
          <>
            No {status ?? ""}{" "}
            deliveries to this endpoint{params.page > 1 ? " on this page" : ""}. Deliveries appear
            when the company's payouts change state; choose "Any status" to see them all.
          </>
        }
        head={
          <>
            <SortHeader c={c} params={params} column="created" label="Created" />
            <th scope="col">Event</th>
            <SortHeader c={c} params={params} column="status" label="Status" />
            <SortHeader c={c} params={params} column="attempts" label="Attempts" numeric />
            <th scope="col" class="num">HTTP status</th>
            <th scope="col" class="num">Latency</th>
            <th scope="col">Response</th>
            <th scope="col">Next attempt</th>
            {mayReplay ? <th scope="col">Action</th> : null}
          </>
        }
        row={(delivery) => (
          <tr>
            <td>
              <When c={c} at={delivery.createdAt} />
              {delivery.manual ? <span class="badge">replay</span> : null}
            </td>
            <td>
              {delivery.eventType}
              <span class="hint">{delivery.eventId}</span>
            </td>
            <td>
              <span
                class={delivery.status === "failed"
                  ? "badge bad"
                  : delivery.status === "succeeded"
                  ? "badge good"
                  : "badge"}
              >
                {delivery.status}
              </span>
            </td>
            <td class="num">{delivery.attemptCount}</td>
            <td class="num">{delivery.lastStatusCode ?? "—"}</td>
            <td class="num">
              {delivery.lastDurationMs === null ? "—" : `${delivery.lastDurationMs} ms`}
            </td>
            <td>
              <code>{delivery.lastResponseExcerpt ?? delivery.lastError ?? ""}</code>
            </td>
            <td>
              <When
                c={c}
                at={delivery.status === "pending" ? delivery.nextAttemptAt : null}
              />
            </td>
            {mayReplay
              ? (
                <td>
                  {delivery.status === "failed"
                    ? (
                      <ActionButton
                        action={`/console/webhooks/deliveries/${delivery.id}/replay`}
                        label="Replay"
                        ariaLabel={`Replay delivery ${delivery.id}`}
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

export function webhooksConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const endpointOf = (c: ConsoleContext, id: string) => findInScope(c, id, findEndpointInScope);

  app.get("/webhooks", async (c) => c.html(await endpointList(c)));
  app.get("/webhooks/export.csv", async (c) => {
    const endpoints = await listEndpointsInScope(
      c.get("database").readClient,
      companiesInScope(c),
    );
    return csvExport(c, {
      name: "webhook-endpoints",
      columns: ENDPOINT_COLUMNS,
      read: wholeList(endpoints),
    });
  });
  app.get("/webhooks/:id/deliveries.csv", async (c) => {
    const endpoint = await endpointOf(c, c.req.param("id"));
    if (!endpoint) return notFoundPage(c, "This webhook endpoint");
    const params = listParams(c, { sorts: SORTS, defaultSort: "created" });
    const status = queryChoice(c, "status", DELIVERY_STATUSES);
    return csvExport(c, {
      name: `webhook-deliveries-${endpoint.id}`,
      columns: DELIVERY_COLUMNS,
      read: (window) =>
        listEndpointDeliveries(
          c.get("database").readClient,
          { endpointId: endpoint.id, status },
          { ...params, ...window },
        ),
    });
  });

  app.get("/webhooks/:id", async (c) => {
    const endpoint = await endpointOf(c, c.req.param("id"));
    if (!endpoint) return notFoundPage(c, "This webhook endpoint");
    return c.html(await endpointPage(c, deps, endpoint, { problems: [], values: {} }));
  });

  app.post("/webhooks/deliveries/:id/replay", requireRole("clerk"), async (c) => {
    const id = c.req.param("id");
    if (!ID_PATTERN.test(id)) return notFoundPage(c, "This delivery");
    const replayed = await runConsoleCommand(deps, c, "webhooks:replay", {
      delivery: id,
      environment: c.get("environment"),
    });
    if (replayed.ok) {
      return doneRedirect(c, `/console/webhooks/${replayed.value.endpoint_id}`, "replayed");
    }
    if (statusOf(replayed) === 404) return notFoundPage(c, "This delivery");
    // The endpoint it belongs to shows the refusal (its company is in scope: the command said so).
    const endpointId = await findDeliveryEndpoint(c.get("database").readClient, id);
    const endpoint = endpointId ? await endpointOf(c, endpointId) : null;
    if (!endpoint) return notFoundPage(c, "This delivery");
    return c.html(
      await endpointPage(c, deps, endpoint, { problems: refusalProblems(replayed), values: {} }),
      statusOf(replayed),
    );
  });

  app.post("/webhooks/:id/replay-failed", requireRole("clerk"), async (c) => {
    const endpoint = await endpointOf(c, c.req.param("id"));
    if (!endpoint) return notFoundPage(c, "This webhook endpoint");
    const form = await checkedForm(c, replayAllForm);
    if (!form.ok) return c.html(await endpointPage(c, deps, endpoint, form), 400);
    const replayed = await runConsoleCommand(deps, c, "webhooks:replay", {
      endpoint: endpoint.id,
      since: `${form.value.since}Z`,
      environment: c.get("environment"),
    });
    if (!replayed.ok) {
      return c.html(
        await endpointPage(c, deps, endpoint, {
          problems: refusalProblems(replayed, ["since"]),
          values: form.values,
        }),
        statusOf(replayed),
      );
    }
    const count = (replayed.value.replay_ids as string[]).length;
    return doneRedirect(
      c,
      `/console/webhooks/${endpoint.id}`,
      count === 0 ? "replayed_none" : "replayed_all",
    );
  });

  return app;
}
