/** @jsxImportSource hono/jsx */
/**
 * Overview (issue 20): what needs attention first, then per company and line the balances, the
 * payouts that changed state today, and a 30-day chart of the amount sent and the payout count.
 */
import { Hono } from "hono";
import {
  type ChartDay,
  type Overview,
  overviewNow,
  readOverview,
} from "../../lib/console/overview.ts";
import { payoutStatuses } from "../../lib/payouts/states.ts";
import { dayIn, formatDate, startOfDayIn } from "../../lib/platform/format.ts";
import { formatDollars } from "../../lib/platform/money.ts";
import type { AppDeps } from "../context.ts";
import { ConsoleLayout, consoleUrl, EmptyState, Money } from "./kit.tsx";
import { moneyItems, summaryItems } from "./needs_action.tsx";
import { STATUS_LABELS } from "./payouts.tsx";
import { companiesInScope, type ConsoleContext, type ConsoleEnv } from "./session.ts";

const CHART_WIDTH = 600;
const CHART_HEIGHT = 160;
const CHART_PAD_BOTTOM = 20;

/** Bars of the amount sent per day, with dots for the payout count, readable as a table too. */
function SentChart(props: { c: ConsoleContext; days: readonly ChartDay[] }) {
  const { days } = props;
  const zone = props.c.get("timeZone");
  const maxCents = Math.max(1, ...days.map((d) => d.sentCents));
  const maxCount = Math.max(1, ...days.map((d) => d.payouts));
  const slot = CHART_WIDTH / days.length;
  const plot = CHART_HEIGHT - CHART_PAD_BOTTOM;
  const totalCents = days.reduce((sum, d) => sum + d.sentCents, 0);
  const totalPayouts = days.reduce((sum, d) => sum + d.payouts, 0);
  const summary = `${
    formatDollars(totalCents)
  } sent in ${totalPayouts} payouts over ${days.length} days`;
  return (
    <figure class="card spaced">
      <figcaption>
        <strong>Sent per day, last {days.length} days:</strong>{" "}
        {summary}. Bars: amount; dots: count.
      </figcaption>
      <svg
        class="chart"
        viewBox={`0 0 ${CHART_WIDTH} ${CHART_HEIGHT}`}
        width={CHART_WIDTH}
        height={CHART_HEIGHT}
        role="img"
        aria-label={summary}
      >
        <line x1="0" y1={plot} x2={CHART_WIDTH} y2={plot} stroke="#9aa3b2" />
        {days.map((d, i) => {
          const height = Math.round((d.sentCents / maxCents) * (plot - 10));
          const x = i * slot;
          return (
            <g>
              <title>
                {`${formatDate(d.start, zone)}: ${
                  formatDollars(d.sentCents)
                }, ${d.payouts} payouts`}
              </title>
              <rect x={x + 2} y={plot - height} width={slot - 4} height={height} fill="#0a4aa8" />
              {d.payouts > 0
                ? (
                  <circle
                    cx={x + slot / 2}
                    cy={plot - Math.round((d.payouts / maxCount) * (plot - 10))}
                    r="3"
                    fill="#b35900"
                  />
                )
                : null}
            </g>
          );
        })}
        <text x="0" y={CHART_HEIGHT - 4} font-size="11" fill="#333">
          {formatDate(days[0].start, zone)}
        </text>
        <text x={CHART_WIDTH} y={CHART_HEIGHT - 4} font-size="11" fill="#333" text-anchor="end">
          {formatDate(days[days.length - 1].start, zone)}
        </text>
      </svg>
      <details>
        <summary>The chart as a table</summary>
        <div class="table-wrap" tabindex={0} role="region" aria-label="Sent per day">
          <table>
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col" class="num">Sent</th>
                <th scope="col" class="num">Payouts</th>
              </tr>
            </thead>
            <tbody>
              {days.filter((d) => d.payouts > 0).map((d) => (
                <tr>
                  <td>{formatDate(d.start, zone)}</td>
                  <td class="num">
                    <Money cents={d.sentCents} />
                  </td>
                  <td class="num">{d.payouts}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}

const counted = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function AttentionList(props: { c: ConsoleContext; overview: Overview }) {
  const { c } = props;
  const a = props.overview.attention;
  const items = [
    ...summaryItems(c, a.needsAction),
    a.fundingWaiting > 0
      ? {
        href: consoleUrl(c, "/console/funding", { status: "Pending" }),
        text: counted(a.fundingWaiting, "funding waiting to arrive", "fundings waiting to arrive"),
      }
      : null,
    a.largeDisbursementsWaiting > 0
      ? {
        href: consoleUrl(c, "/console/payouts", { status: "pending_funds" }),
        text: counted(
          a.largeDisbursementsWaiting,
          "large disbursement waiting for a wire",
          "large disbursements waiting for a wire",
        ),
      }
      : null,
    ...moneyItems(c, a.needsAction),
  ].filter((item) => item !== null);
  if (items.length === 0) {
    return (
      <EmptyState>
        Nothing needs attention: nothing in the Needs action queue, no funding or large disbursement
        waiting, and every tie-out is zero.
      </EmptyState>
    );
  }
  return (
    <div class="notice attention" role="region" aria-label="Needs attention">
      <ul>
        {items.map((item) => (
          <li>
            <a href={item.href}>{item.text}</a>
          </li>
        ))}
      </ul>
      {a.needsAction.total > 0
        ? (
          <p>
            <a href={consoleUrl(c, "/console/needs-action")}>
              The Needs action queue, item by item
            </a>
          </p>
        )
        : null}
    </div>
  );
}

export function overviewConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.get("/", async (c) => {
    const realNow = deps.clock.now();
    // "Today" and the chart follow the sandbox clock in test (the furthest a company's runs ahead).
    const now = await overviewNow(c.get("database"), realNow);
    const zone = c.get("timeZone");
    const todayStart = startOfDayIn(dayIn(now, zone), zone)!;
    const overview = await readOverview(c.get("database"), companiesInScope(c), {
      todayStart,
      realNow,
      live: deps.databases.live.readClient,
    });
    const changedToday = payoutStatuses.filter((s) => overview.statusToday[s]);
    return c.html(
      <ConsoleLayout c={c} title="Overview" active="overview">
        <h2>Needs attention</h2>
        <AttentionList c={c} overview={overview} />
        <h2>Balances by company and line</h2>
        {overview.lines.length === 0
          ? (
            <EmptyState>
              No company in your scope has a business line yet. An admin creates companies and lines
              with <code>deno task admin company:create</code> and <code>line:create</code>.
            </EmptyState>
          )
          : (
            <div
              class="table-wrap"
              tabindex={0}
              role="region"
              aria-label="Balances by company and line"
            >
              <table>
                <thead>
                  <tr>
                    <th scope="col">Company</th>
                    <th scope="col">Line</th>
                    <th scope="col" class="num">Available</th>
                    <th scope="col" class="num">Reserved</th>
                    <th scope="col" class="num">In transit</th>
                    <th scope="col" class="num">Pending funding</th>
                  </tr>
                </thead>
                <tbody>
                  {overview.lines.map((line) => (
                    <tr>
                      <td>{line.companyName}</td>
                      <td>{line.lineCode}</td>
                      <td class="num">
                        <Money cents={line.balances.available} />
                      </td>
                      <td class="num">
                        <Money cents={line.balances.reserved} />
                      </td>
                      <td class="num">
                        <Money cents={line.balances.in_transit} />
                      </td>
                      <td class="num">
                        <Money cents={line.balances.pending_funding} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        <h2>Payouts that changed today</h2>
        {changedToday.length === 0
          ? <EmptyState>No payout changed state today ({formatDate(now, zone)}).</EmptyState>
          : (
            <ul class="actions plain-list" aria-label="Payouts by status today">
              {changedToday.map((status) => (
                <li>
                  <a
                    class="badge"
                    href={consoleUrl(c, "/console/payouts", { status, sort: "updated" })}
                  >
                    {STATUS_LABELS[status]}: {overview.statusToday[status]}
                  </a>
                </li>
              ))}
            </ul>
          )}
        <h2>Last 30 days</h2>
        <SentChart c={c} days={overview.chart} />
      </ConsoleLayout>,
    );
  });
  return app;
}
