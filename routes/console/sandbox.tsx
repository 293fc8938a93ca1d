/** @jsxImportSource hono/jsx */
/**
 * Sandbox (issue 20, test environment only; live answers 404): each company's sandbox clock with
 * an advance control, and the sandbox inbox of the messages it kept instead of sending. Advancing
 * runs everything that falls due, as POST /v1/sandbox/clock/advance does, and is audited.
 */
import { Hono } from "hono";
import * as v from "valibot";
import {
  advanceClockAsOperator,
  CLOCK_ADVANCE_SECONDS_MAX,
  companyClocks,
  inboxSorts,
  sandboxInboxPage,
} from "../../lib/console/sandbox.ts";
import { type AppDeps, railJobsOf } from "../context.ts";
import {
  ConsoleLayout,
  CsrfField,
  EmptyState,
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
import { checkedForm, DoneNotice, doneRedirect, ListTable, TableWrap } from "./page_parts.tsx";
import {
  assertCompanyInScope,
  companiesInScope,
  type ConsoleContext,
  type ConsoleEnv,
  consoleOrigin,
  hasRole,
} from "./session.ts";

const NOTICES = { advanced: "The clock moved forward and everything that fell due ran." };

const UNIT_SECONDS = { minutes: 60, hours: 3_600, days: 86_400 } as const;
type Unit = keyof typeof UNIT_SECONDS;

const advanceForm = v.pipe(
  v.object({
    company: v.pipe(v.string("Company is required"), v.nonEmpty("Company is required")),
    amount: v.pipe(
      v.string("Advance by is required"),
      v.regex(/^[1-9]\d{0,7}$/, "Advance by: a whole number of at least 1"),
      v.transform(Number),
    ),
    unit: v.picklist(Object.keys(UNIT_SECONDS) as Unit[], "Unit: minutes, hours or days"),
  }),
  v.forward(
    v.check(
      (form) => form.amount * UNIT_SECONDS[form.unit] <= CLOCK_ADVANCE_SECONDS_MAX,
      "Advance by: at most 365 days at once",
    ),
    ["amount"],
  ),
);

/** How far a clock runs ahead of real time, in words. */
function ahead(ms: number): string {
  if (ms <= 0) return "on real time";
  const days = Math.floor(ms / 86_400_000);
  const hours = Math.floor((ms % 86_400_000) / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  return [days && `${days} d`, hours && `${hours} h`, minutes && `${minutes} min`]
        .filter(Boolean).join(" ") + " ahead" || "less than a minute ahead";
}

async function sandboxPage(
  c: ConsoleContext,
  deps: AppDeps,
  form: { problems: readonly FieldProblem[]; values: FormValues },
) {
  const database = c.get("database");
  const clocks = await companyClocks(database, companiesInScope(c), deps.clock.now());
  const params = listParams(c, { sorts: Object.keys(inboxSorts), defaultSort: "sent" });
  const inbox = await sandboxInboxPage(database, companiesInScope(c), params);
  return (
    <ConsoleLayout c={c} title="Sandbox" active="sandbox">
      <DoneNotice c={c} notices={NOTICES} />
      <FormProblems problems={form.problems} />
      <h2>Clocks</h2>
      {clocks.length === 0
        ? (
          <EmptyState>
            No companies in your scope. An admin creates one with `deno task admin company:create`.
          </EmptyState>
        )
        : (
          <>
            <TableWrap label="Sandbox clocks">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Company</th>
                    <th scope="col">TIN</th>
                    <th scope="col">Sandbox time</th>
                    <th scope="col">Ahead of real time</th>
                  </tr>
                </thead>
                <tbody>
                  {clocks.map((clock) => (
                    <tr>
                      <td>{clock.companyName}</td>
                      <td>{clock.tin}</td>
                      <td>
                        <When c={c} at={clock.now} />
                      </td>
                      <td>{ahead(clock.aheadMs)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableWrap>
            {hasRole(c, "clerk")
              ? (
                <form method="post" action="/console/sandbox/advance" class="card filters">
                  <CsrfField c={c} />
                  <SelectField
                    name="company"
                    label="Company"
                    options={clocks.map((clock) => ({
                      value: clock.companyId,
                      label: clock.companyName,
                    }))}
                    values={form.values}
                    problems={form.problems}
                  />
                  <Field
                    name="amount"
                    label="Advance by"
                    inputmode="numeric"
                    values={{ amount: "1", ...form.values }}
                    problems={form.problems}
                    required
                  />
                  <SelectField
                    name="unit"
                    label="Unit"
                    options={[
                      { value: "days", label: "days" },
                      { value: "hours", label: "hours" },
                      { value: "minutes", label: "minutes" },
                    ]}
                    values={form.values}
                    problems={form.problems}
                  />
                  <div>
                    <button type="submit">Advance clock</button>
                  </div>
                </form>
              )
              : null}
          </>
        )}
      <h2>Inbox</h2>
      <ListTable
        label="Sandbox inbox"
        rows={inbox.data}
        empty={
          <>
            The sandbox has sent nothing yet. Create a disbursement with a test key: the payee's
            e-mail or SMS lands here with its link and code.
          </>
        }
        head={
          <>
            <SortHeader c={c} params={params} column="sent" label="Sent" />
            <SortHeader c={c} params={params} column="to" label="To" />
            <th scope="col">Company</th>
            <th scope="col">Message</th>
            <th scope="col">Links and code</th>
          </>
        }
        row={(message) => (
          <tr>
            <td>
              <When c={c} at={message.at} />
            </td>
            <td>
              {message.recipient}
              <span class="hint">{message.channel}</span>
            </td>
            <td>{message.companyName ?? "—"}</td>
            <td>
              {message.subject ? <strong>{message.subject}</strong> : null}
              <details>
                <summary>Body</summary>
                <pre class="pre-wrap">{message.body}</pre>
              </details>
            </td>
            <td>
              {message.links.map((link) => (
                <div>
                  <a href={link} rel="noreferrer">{link}</a>
                </div>
              ))}
              {message.code ? <div>Code: {message.code}</div> : null}
            </td>
          </tr>
        )}
      />
      <Pager c={c} params={params} hasMore={inbox.hasMore} />
    </ConsoleLayout>
  );
}

export function sandboxConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  // Live time is real time: the page and its control do not exist there.
  app.use("/sandbox/*", async (c, next) => {
    if (c.get("environment") !== "test") return notFoundPage(c, "The sandbox (test only)");
    await next();
  });
  app.use("/sandbox", async (c, next) => {
    if (c.get("environment") !== "test") return notFoundPage(c, "The sandbox (test only)");
    await next();
  });

  app.get(
    "/sandbox",
    async (c) => c.html(await sandboxPage(c, deps, { problems: [], values: {} })),
  );

  app.post("/sandbox/advance", requireRole("clerk"), async (c) => {
    const form = await checkedForm(c, advanceForm);
    if (!form.ok) return c.html(await sandboxPage(c, deps, form), 400);
    const companyId = form.value.company;
    const clocks = assertCompanyInScope(c, companyId)
      ? await companyClocks(c.get("database"), [companyId], deps.clock.now())
      : [];
    if (clocks.length === 0) {
      return c.html(
        await sandboxPage(c, deps, {
          problems: [{ field: "company", message: "Company: not one of your companies" }],
          values: form.values,
        }),
        404,
      );
    }
    await advanceClockAsOperator(
      c.get("database"),
      companyId,
      form.value.amount * UNIT_SECONDS[form.value.unit],
      {
        realNow: deps.clock.now(),
        handlers: (await railJobsOf(deps)).test,
        actor: {
          operator: { id: c.get("operator").id, email: c.get("operator").email },
          origin: consoleOrigin(c),
        },
      },
    );
    return doneRedirect(c, "/console/sandbox", "advanced");
  });
  return app;
}
