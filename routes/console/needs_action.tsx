/** @jsxImportSource hono/jsx */
/**
 * Needs action: the work queue of what is stuck and needs an operator, by kind, each item linking
 * to the page where it is resolved. The Overview shows its counts (NeedsActionSummary).
 */
import { Hono } from "hono";
import {
  type NeedsAction,
  type NeedsActionItem,
  type NeedsActionKind,
  readNeedsAction,
} from "../../lib/console/needs_action.ts";
import { explainFailure } from "../../lib/payouts/failure_reasons.ts";
import { formatDollars } from "../../lib/platform/money.ts";
import type { AppDeps } from "../context.ts";
import {
  CSV_EXPORT_ROWS_MAX,
  csvCell,
  type CsvColumn,
  csvExport,
  wholeList,
} from "./csv_export.ts";
import { ExportLink } from "./page_parts.tsx";
import { ConsoleLayout, consoleUrl, EmptyState, Money, When } from "./kit.tsx";
import { companiesInScope, type ConsoleContext, type ConsoleEnv } from "./session.ts";

interface KindLabel {
  readonly one: string;
  readonly many: string;
  /** Where the whole kind is worked on; null: the queue's own section. */
  readonly page: string | null;
}

/** Each kind as the payments team says it, one and many. */
export const NEEDS_ACTION_LABELS: Readonly<Record<NeedsActionKind, KindLabel>> = {
  failed_payouts: {
    one: "payout failed or returned",
    many: "payouts failed or returned",
    page: null,
  },
  payments_awaiting_approval: {
    one: "payment waiting for approval",
    many: "payments waiting for approval",
    page: null,
  },
  payees_waiting: {
    one: "payee waiting too long to choose",
    many: "payees waiting too long to choose",
    page: null,
  },
  endorsements: {
    one: "endorsement declined or not answered",
    many: "endorsements declined or not answered",
    page: null,
  },
  failing_endpoints: {
    one: "webhook endpoint failing",
    many: "webhook endpoints failing",
    page: null,
  },
  files_in_doubt: { one: "bank file in doubt", many: "bank files in doubt", page: null },
  files_held: { one: "bank file held, not sent", many: "bank files held, not sent", page: null },
  files_past_window: {
    one: "bank file voided past its window",
    many: "bank files voided past their window",
    page: null,
  },
  parked_jobs: { one: "parked job", many: "parked jobs", page: "/console/jobs" },
  failed_notifications: {
    one: "failed notification",
    many: "failed notifications",
    page: "/console/jobs/notifications",
  },
  sanctions_reviews: {
    one: "sanctions review open",
    many: "sanctions reviews open",
    page: "/console/reviews",
  },
  check_exceptions: {
    one: "check exception open",
    many: "check exceptions open",
    page: "/console/reviews/checks",
  },
  rail_exceptions: {
    one: "rail outcome its payout could not take",
    many: "rail outcomes their payouts could not take",
    page: "/console/rail-exceptions",
  },
  approvals: {
    one: "change waiting for a second admin",
    many: "changes waiting for a second admin",
    page: "/console/approvals",
  },
  funding_shortfalls: {
    one: "line owing a returned ACH funding",
    many: "lines owing a returned ACH funding",
    page: null,
  },
  tie_out_differences: {
    one: "tie-out not zero",
    many: "tie-outs not zero",
    page: null,
  },
  recon_exceptions: {
    one: "bank statement difference open",
    many: "bank statement differences open",
    page: "/console/reconciliation",
  },
  deadlines_not_fallen_back: {
    one: "payment past its pay_by with no fallback check",
    many: "payments past their pay_by with no fallback check",
    page: null,
  },
};

const counted = (n: number, label: KindLabel) => `${n} ${n === 1 ? label.one : label.many}`;

/** The address of the queue's section of a kind. */
const sectionUrl = (c: ConsoleContext, kind: NeedsActionKind) =>
  `${consoleUrl(c, "/console/needs-action")}#${kind}`;

/** Kinds the Overview names line by line (MoneyItems) rather than counts. */
const MONEY_KINDS: ReadonlySet<NeedsActionKind> = new Set([
  "funding_shortfalls",
  "tie_out_differences",
]);

/** The funding owed and the tie-outs off, one line of the Overview each. */
export function moneyItems(
  c: ConsoleContext,
  needsAction: NeedsAction,
): { href: string; text: string }[] {
  return needsAction.groups.flatMap((g) =>
    g.items.map((item) => {
      const href = consoleUrl(c, item.path, item.query ?? {});
      const cents = formatDollars(item.amountCents ?? 0);
      if (g.kind === "funding_shortfalls") {
        return {
          href,
          text:
            `${item.companyName} · ${item.subject} owes ${cents} of a returned ACH funding: its new payouts wait until a credit covers it`,
        };
      }
      return g.kind === "tie_out_differences"
        ? { href, text: `Tie-out of ${item.companyName} · ${item.subject} is off by ${cents}` }
        : null;
    }).filter((line) => line !== null)
  );
}

/** The Overview's lines: a count per kind with something to do, linked to where it is worked on. */
export function summaryItems(
  c: ConsoleContext,
  needsAction: NeedsAction,
): { href: string; text: string }[] {
  return needsAction.groups.filter((g) => g.count > 0 && !MONEY_KINDS.has(g.kind)).map((g) => {
    const label = NEEDS_ACTION_LABELS[g.kind];
    return {
      href: label.page === null ? sectionUrl(c, g.kind) : consoleUrl(c, label.page),
      text: counted(g.count, label),
    };
  });
}

function ItemRow(props: { c: ConsoleContext; item: NeedsActionItem }) {
  const { c, item } = props;
  const reason = item.code ? explainFailure(item.code) : null;
  return (
    <tr>
      <td>{item.companyName ?? "—"}</td>
      <td>
        <a href={consoleUrl(c, item.path, item.query ?? {})}>{item.subject}</a>
      </td>
      <td>
        {item.detail}
        {reason
          ? (
            <span class="reason">
              <strong>{item.code}</strong>: {reason.meaning}{" "}
              <span class="next-step">Next step: {reason.nextStep}</span>
            </span>
          )
          : null}
      </td>
      <td class="num">
        {item.amountCents === undefined ? "—" : <Money cents={item.amountCents} />}
      </td>
      <td>
        <When c={c} at={item.since} />
      </td>
    </tr>
  );
}

/** One item of the queue with its kind, as the export lists it. */
interface KindItem {
  readonly kind: NeedsActionKind;
  readonly item: NeedsActionItem;
}

const reasonOf = (item: NeedsActionItem) => item.code ? explainFailure(item.code) : null;

const ITEM_COLUMNS: readonly CsvColumn<KindItem>[] = [
  ["kind", ({ kind }) => csvCell.text(NEEDS_ACTION_LABELS[kind].one)],
  ["company", ({ item }) => csvCell.text(item.companyName)],
  ["what", ({ item }) => csvCell.text(item.subject)],
  ["why", ({ item }) => csvCell.text(item.detail)],
  ["code", ({ item }) => csvCell.text(item.code)],
  ["meaning", ({ item }) => csvCell.text(reasonOf(item)?.meaning)],
  ["next_step", ({ item }) => csvCell.text(reasonOf(item)?.nextStep)],
  ["amount", ({ item }) => csvCell.money(item.amountCents)],
  ["since", ({ item }) => csvCell.time(item.since)],
  [
    "where",
    ({ item }) => {
      const query = new URLSearchParams(item.query ?? {}).toString();
      return csvCell.text(query ? `${item.path}?${query}` : item.path);
    },
  ],
];

export function needsActionConsoleRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  // Every item of every kind, not the page's first of each.
  app.get("/needs-action/export.csv", async (c) => {
    const queue = await readNeedsAction(c.get("database"), companiesInScope(c), {
      realNow: deps.clock.now(),
      live: deps.databases.live.readClient,
      itemsMax: CSV_EXPORT_ROWS_MAX,
    });
    const rows = queue.groups.flatMap((g) => g.items.map((item) => ({ kind: g.kind, item })));
    return csvExport(c, {
      name: "needs-action",
      columns: ITEM_COLUMNS,
      read: wholeList(rows),
    });
  });
  app.get("/needs-action", async (c) => {
    const queue = await readNeedsAction(c.get("database"), companiesInScope(c), {
      realNow: deps.clock.now(),
      live: deps.databases.live.readClient,
    });
    const open = queue.groups.filter((g) => g.count > 0);
    return c.html(
      <ConsoleLayout c={c} title="Needs action" active="needs-action">
        {open.length === 0
          ? (
            <EmptyState>
              Nothing needs action: no failed or returned payout, no payment waiting for approval,
              no payee or endorsement waiting too long, no failing endpoint, no bank file in doubt,
              held or past its window, no parked job, failed notification, review, exception or
              approval, no funding owed, and every tie-out is zero.
            </EmptyState>
          )
          : (
            <>
              <p>
                {queue.total} {queue.total === 1 ? "thing needs" : "things need"}{" "}
                action. Each links to where it is resolved.
              </p>
              <ExportLink c={c} path="/console/needs-action/export.csv" what="every item" />
              <ul class="actions chips" aria-label="Kinds">
                {open.map((g) => (
                  <li>
                    <a class="badge" href={`#${g.kind}`}>
                      {counted(g.count, NEEDS_ACTION_LABELS[g.kind])}
                    </a>
                  </li>
                ))}
              </ul>
              {open.map((g) => {
                const label = NEEDS_ACTION_LABELS[g.kind];
                return (
                  <section id={g.kind} aria-labelledby={`${g.kind}-title`}>
                    <h2 id={`${g.kind}-title`}>{counted(g.count, label)}</h2>
                    {label.page === null ? null : (
                      <p>
                        <a href={consoleUrl(c, label.page)}>Work on them</a>
                      </p>
                    )}
                    <div
                      class="table-wrap"
                      tabindex={0}
                      role="region"
                      aria-label={label.many}
                    >
                      <table>
                        <thead>
                          <tr>
                            <th scope="col">Company</th>
                            <th scope="col">What</th>
                            <th scope="col">Why, and the next step</th>
                            <th scope="col" class="num">Amount</th>
                            <th scope="col">Since</th>
                          </tr>
                        </thead>
                        <tbody>
                          {g.items.map((item) => ItemRow({ c, item }))}
                        </tbody>
                      </table>
                    </div>
                    {g.count > g.items.length
                      ? (
                        <p class="hint">
                          The {g.items.length} first of {g.count} are shown.
                        </p>
                      )
                      : null}
                  </section>
                );
              })}
            </>
          )}
      </ConsoleLayout>,
    );
  });
  return app;
}
