/**
 * The console's "Needs action" work queue: everything an operator has to look at, by kind, each
 * item naming where it is resolved. The Overview shows the counts, /console/needs-action the
 * items, and /metrics the counts per environment so that teams can alert on them. Every query is
 * bounded by an index on a status or by the items it returns.
 */
import type { Client, InValue } from "@libsql/client";
import type { Database } from "../../db/client.ts";
import { isLedgerTransactionKind } from "../ledger/postings.ts";
import { computeTieOut, type DayMovement, heldAccounts } from "../ledger/tieout.ts";
import type { LedgerAccountCode } from "../ledger/types.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { reconNeedsActionSource } from "../reconciliation/needs_action_source.ts";
import { deadlineNoFallbackSource } from "../obligations/needs_action_source.ts";
import { balancesPerLine, type LineBalanceRow } from "./ledger.ts";
import { fileName } from "./file_words.ts";
import { ACH_BATCH_JOBS } from "../ach/files_store.ts";
import { CHECK_BATCH_JOBS } from "../checks/schedule.ts";
import { PAYPAL_BATCH_JOBS } from "../paypal/store.ts";
import { scopeCondition } from "./paging.ts";

const DAY_MS = 86_400_000;
/** A built file not sent this long after its cutoff is held (for a release, a download, the bank). */
export const FILE_HELD_AFTER_MS = 30 * 60_000;
/** A file voided because its window closed stays in the queue this long after it was built. */
export const FILE_PAST_WINDOW_SHOWN_MS = 7 * DAY_MS;
/** Items listed per kind on the queue's page; the counts cover them all. */
export const NEEDS_ACTION_ITEMS_MAX = 50;

export const needsActionKinds = [
  "failed_payouts",
  "payments_awaiting_approval",
  "payees_waiting",
  "endorsements",
  "failing_endpoints",
  "files_in_doubt",
  "files_held",
  "files_past_window",
  "parked_jobs",
  "failed_notifications",
  "sanctions_reviews",
  "check_exceptions",
  "rail_exceptions",
  "approvals",
  "funding_shortfalls",
  "tie_out_differences",
  "recon_exceptions",
  "deadlines_not_fallen_back",
] as const;

export type NeedsActionKind = (typeof needsActionKinds)[number];

/** One thing to act on, and the console page (with its query) where it is resolved. */
export interface NeedsActionItem {
  readonly companyName: string | null;
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  /** What it is (a payee, an endpoint's URL, a file's name). */
  readonly subject: string;
  /** Why it is here, in the queue's words. */
  readonly detail: string;
  /** A failure code the catalogue explains (lib/payouts/failure_reasons.ts). */
  readonly code?: string;
  readonly amountCents?: number;
  /** When it started needing action, when known. */
  readonly since: number | null;
}

export interface NeedsActionGroup {
  readonly kind: NeedsActionKind;
  readonly count: number;
  /** At most `itemsMax` of them, oldest or most urgent first (every line's, for the money kinds). */
  readonly items: NeedsActionItem[];
}

export interface NeedsAction {
  readonly groups: NeedsActionGroup[];
  readonly total: number;
}

/** A kind of the queue another capability keeps: it reads its count and oldest items in scope. */
export interface NeedsActionSource {
  readonly kind: NeedsActionKind;
  read(
    client: Client,
    companyIds: readonly string[] | null,
    itemsMax: number,
  ): Promise<NeedsActionGroup>;
}

/** The sources the queue reads beside its own kinds. */
const NEEDS_ACTION_SOURCES: readonly NeedsActionSource[] = [
  reconNeedsActionSource,
  deadlineNoFallbackSource,
];

interface Query {
  readonly sql: string;
  readonly args: InValue[];
}

const text = (value: unknown) => (value === null || value === undefined ? null : String(value));
const num = (value: unknown) => (value === null || value === undefined ? null : Number(value));
const nameOf = (first: unknown, last: unknown, fallback: unknown) =>
  [first, last].filter((part) => part !== null && part !== "").join(" ") || String(fallback);

/** The company's sandbox offset in SQL (0 in live, where the table stays empty). */
const offsetOf = (column: string) =>
  `coalesce((SELECT s.offset_ms FROM sandbox_clocks s WHERE s.company_id = ${column}), 0)`;

/**
 * The payouts of the queue as one condition on `payouts p` (the Payouts list's "needs action
 * now"): failed or re-offered after a failure, waiting for approval, or waiting for the payee or
 * an endorsement longer than the company allows.
 */
export function payoutNeedsActionCondition(realNow: number): Query {
  const waitedSince = `? + ${offsetOf("p.company_id")} - (SELECT w.payee_wait_days FROM companies w
    WHERE w.id = p.company_id) * ${DAY_MS}`;
  return {
    sql: `(p.status IN ('failed', 'pending_approval')
      OR (p.status = 'modality_offered'
        AND (p.failure_reason IS NOT NULL OR p.updated_at < ${waitedSince}))
      OR (p.status = 'awaiting_endorsement' AND EXISTS (SELECT 1 FROM endorsements e
        WHERE e.payout_id = p.id AND (e.status = 'declined'
          OR (e.status = 'pending' AND e.created_at < ${waitedSince})))))`,
    args: [realNow, realNow],
  };
}

/** The jobs that end a bank file's window, one per batch rail (a check print file has none). */
const WINDOW_CLOSE_JOBS = [ACH_BATCH_JOBS, CHECK_BATCH_JOBS, PAYPAL_BATCH_JOBS].map((jobs) =>
  jobs.windowClose
);

/**
 * The queue of the companies in scope (null: all) in this database's environment. `live` reads
 * the approvals, kept in the live database; `itemsMax` 0 reads counts only.
 */
export async function readNeedsAction(
  database: Database,
  companyIds: readonly string[] | null,
  options: { realNow: number; live: Client; itemsMax?: number },
): Promise<NeedsAction> {
  const client = database.readClient;
  const itemsMax = options.itemsMax ?? NEEDS_ACTION_ITEMS_MAX;
  const now = options.realNow;
  const group = async (
    kind: NeedsActionKind,
    reader: Client,
    count: Query,
    items: Query,
    toItem: (row: Record<string, unknown>) => NeedsActionItem,
  ): Promise<NeedsActionGroup> => {
    const counted = await reader.execute(count);
    const n = Number(counted.rows[0].n);
    if (n === 0 || itemsMax === 0) return { kind, count: n, items: [] };
    const { rows } = await reader.execute({
      sql: `${items.sql} LIMIT ?`,
      args: [...items.args, itemsMax],
    });
    return { kind, count: n, items: rows.map((row) => toItem(row as Record<string, unknown>)) };
  };
  const scoped = (column: string) => scopeCondition(column, companyIds);

  const payouts = scoped("p.company_id");
  const payoutColumns = `p.id, p.status, p.amount_cents, p.first_name, p.last_name, p.email,
    p.payee_uuid, p.failure_reason, p.updated_at, c.name AS company_name`;
  const payoutItem =
    (detail: (row: Record<string, unknown>) => string, code?: boolean) =>
    (row: Record<string, unknown>): NeedsActionItem => ({
      companyName: String(row.company_name),
      path: `/console/payouts/${row.id}`,
      subject: nameOf(row.first_name, row.last_name, row.email ?? row.payee_uuid),
      detail: detail(row),
      code: code ? text(row.failure_reason) ?? undefined : undefined,
      amountCents: Number(row.amount_cents),
      since: num(row.since) ?? num(row.updated_at),
    });

  // A re-offered payout keeps its failure reason and waits for the payee's new choice.
  const failedWhere = `(p.status = 'failed' OR (p.status = 'modality_offered'
    AND p.failure_reason IS NOT NULL)) AND ${payouts.sql}`;
  const waitingWhere = `p.status = 'modality_offered' AND p.failure_reason IS NULL
    AND p.updated_at < ? + ${offsetOf("p.company_id")} - c.payee_wait_days * ${DAY_MS}
    AND ${payouts.sql}`;
  const endorsementWhere = `p.status = 'awaiting_endorsement' AND (e.status = 'declined'
    OR (e.status = 'pending'
      AND e.created_at < ? + ${offsetOf("p.company_id")} - c.payee_wait_days * ${DAY_MS}))
    AND ${payouts.sql}`;
  const endpoints = scoped("w.company_id");
  const failingDeliveries = `SELECT d.endpoint_id, count(*) AS failing FROM webhook_deliveries d
    WHERE d.status = 'failed' OR (d.status = 'pending' AND d.attempt_count > 0)
    GROUP BY d.endpoint_id`;
  const endpointWhere = `w.deleted_at IS NULL AND (w.failing_since IS NOT NULL
    OR w.disabled_at IS NOT NULL OR f.failing > 0) AND ${endpoints.sql}`;
  const batches = scoped("b.company_id");
  const batchColumns = `b.id, b.rail, b.status, b.total_cents, b.entry_count, b.rail_reference,
    b.error, b.cutoff_at, b.downloaded_at, b.created_at, c.name AS company_name`;
  const batchItem =
    (detail: (row: Record<string, unknown>) => string) =>
    (row: Record<string, unknown>): NeedsActionItem => ({
      companyName: String(row.company_name),
      ...batchPage(String(row.rail), String(row.id)),
      subject: `${fileName(String(row.rail))} ${
        text(row.rail_reference) ?? row.id
      } (${row.entry_count} entries)`,
      detail: detail(row),
      amountCents: Number(row.total_cents),
      since: Number(row.cutoff_at),
    });
  const heldWhere = `b.status = 'built' AND b.cutoff_at < ? + ${
    offsetOf("b.company_id")
  } - ${FILE_HELD_AFTER_MS} AND ${batches.sql}`;
  const pastWindowWhere = `b.status = 'voided' AND b.error LIKE 'the transmission window closed%'
    AND b.created_at >= ? + ${offsetOf("b.company_id")} - ${FILE_PAST_WINDOW_SHOWN_MS}
    AND ${batches.sql}`;
  const jobs = scoped("j.company_id");
  const notifications = scoped("n.company_id");
  const reviews = scoped("r.company_id");
  const checkExceptions = scoped("x.company_id");
  const railExceptions = scoped("x.company_id");
  const approvals = scoped("a.company_id");
  const approvalsWhere = `a.status = 'pending_approval' AND a.expires_at > ? AND a.environment = ?
    AND ${approvals.sql}`;

  const groups = await Promise.all([
    group(
      "failed_payouts",
      client,
      {
        sql: `SELECT count(*) AS n FROM payouts p WHERE ${failedWhere}`,
        args: payouts.args,
      },
      {
        sql: `SELECT ${payoutColumns}, (SELECT max(t.at) FROM payout_transitions t
                WHERE t.payout_id = p.id AND t.to_status = 'failed') AS since
              FROM payouts p JOIN companies c ON c.id = p.company_id
              WHERE ${failedWhere} ORDER BY p.updated_at DESC, p.id`,
        args: payouts.args,
      },
      payoutItem(
        (row) => row.status === "failed" ? "failed" : "failed, offered again to the payee",
        true,
      ),
    ),
    group(
      "payments_awaiting_approval",
      client,
      {
        sql: `SELECT count(*) AS n FROM payouts p
              WHERE p.status = 'pending_approval' AND ${payouts.sql}`,
        args: payouts.args,
      },
      {
        sql: `SELECT ${payoutColumns} FROM payouts p JOIN companies c ON c.id = p.company_id
              WHERE p.status = 'pending_approval' AND ${payouts.sql} ORDER BY p.updated_at, p.id`,
        args: payouts.args,
      },
      payoutItem(() => "over the company's approval threshold: approve or reject it"),
    ),
    group(
      "payees_waiting",
      client,
      {
        sql: `SELECT count(*) AS n FROM payouts p JOIN companies c ON c.id = p.company_id
              WHERE ${waitingWhere}`,
        args: [now, ...payouts.args],
      },
      {
        sql: `SELECT ${payoutColumns}, c.payee_wait_days FROM payouts p
                JOIN companies c ON c.id = p.company_id
              WHERE ${waitingWhere} ORDER BY p.updated_at, p.id`,
        args: [now, ...payouts.args],
      },
      payoutItem((row) =>
        `offered and not chosen for more than ${row.payee_wait_days} days: remind the payee or resend the link`
      ),
    ),
    group(
      "endorsements",
      client,
      {
        sql: `SELECT count(*) AS n FROM endorsements e JOIN payouts p ON p.id = e.payout_id
                JOIN companies c ON c.id = p.company_id WHERE ${endorsementWhere}`,
        args: [now, ...payouts.args],
      },
      {
        sql: `SELECT ${payoutColumns}, e.status AS endorsement_status, e.party_uuid,
                e.created_at AS since, c.payee_wait_days
              FROM endorsements e JOIN payouts p ON p.id = e.payout_id
                JOIN companies c ON c.id = p.company_id
              WHERE ${endorsementWhere} ORDER BY e.created_at, e.id`,
        args: [now, ...payouts.args],
      },
      payoutItem((row) =>
        row.endorsement_status === "declined"
          ? `party ${row.party_uuid} declined to endorse: cancel the payment or replace the party`
          : `party ${row.party_uuid} has not endorsed for more than ${row.payee_wait_days} days`
      ),
    ),
    group(
      "failing_endpoints",
      client,
      {
        sql: `SELECT count(*) AS n FROM webhook_endpoints w
                LEFT JOIN (${failingDeliveries}) f ON f.endpoint_id = w.id WHERE ${endpointWhere}`,
        args: endpoints.args,
      },
      {
        sql: `SELECT w.id, w.url, w.failing_since, w.disabled_at, w.disabled_reason,
                coalesce(f.failing, 0) AS failing, c.name AS company_name
              FROM webhook_endpoints w JOIN companies c ON c.id = w.company_id
                LEFT JOIN (${failingDeliveries}) f ON f.endpoint_id = w.id
              WHERE ${endpointWhere} ORDER BY coalesce(w.failing_since, w.disabled_at), w.id`,
        args: endpoints.args,
      },
      (row) => ({
        companyName: String(row.company_name),
        path: `/console/webhooks/${row.id}`,
        subject: String(row.url),
        detail: [
          row.disabled_at !== null ? `disabled: ${row.disabled_reason ?? "by the breaker"}` : null,
          row.failing_since !== null ? "every attempt failing" : null,
          `${row.failing} ${
            Number(row.failing) === 1 ? "delivery" : "deliveries"
          } failed or retrying: fix the endpoint, then replay them`,
        ].filter((part) => part !== null).join("; "),
        since: num(row.failing_since) ?? num(row.disabled_at),
      }),
    ),
    group(
      "files_in_doubt",
      client,
      {
        sql:
          `SELECT count(*) AS n FROM rail_batches b WHERE b.status = 'in_doubt' AND ${batches.sql}`,
        args: batches.args,
      },
      {
        sql: `SELECT ${batchColumns} FROM rail_batches b JOIN companies c ON c.id = b.company_id
              WHERE b.status = 'in_doubt' AND ${batches.sql} ORDER BY b.cutoff_at, b.id`,
        args: batches.args,
      },
      batchItem((row) =>
        `in doubt (${
          text(row.error) ?? "nobody knows whether the bank took it"
        }): ask the bank, then resolve it`
      ),
    ),
    group(
      "files_held",
      client,
      {
        sql: `SELECT count(*) AS n FROM rail_batches b WHERE ${heldWhere}`,
        args: [now, ...batches.args],
      },
      {
        // A file whose last transmission was not taken says why: waiting for the bank would not
        // help a file whose kept content cannot be opened, or a bank that refuses it. Only a file
        // with a window (its window's job still to run) stops being tried at its end.
        sql: `SELECT ${batchColumns}, a.attempt AS last_attempt, a.detail AS last_refusal,
                EXISTS (SELECT 1 FROM scheduled_jobs w WHERE w.subject_id = b.id
                          AND w.kind IN (${WINDOW_CLOSE_JOBS.map(() => "?").join(", ")})
                          AND w.done_at IS NULL) AS windowed
              FROM rail_batches b JOIN companies c ON c.id = b.company_id
              LEFT JOIN rail_batch_attempts a ON a.batch_id = b.id AND a.outcome = 'not_transmitted'
                AND a.attempt = (SELECT max(attempt) FROM rail_batch_attempts WHERE batch_id = b.id)
              WHERE ${heldWhere} ORDER BY b.cutoff_at, b.id`,
        args: [...WINDOW_CLOSE_JOBS, now, ...batches.args],
      },
      batchItem((row) =>
        row.downloaded_at !== null
          ? "downloaded and not marked sent: mark it sent once the bank has it"
          : row.last_attempt !== null
          ? `built and not sent: its transmission ${row.last_attempt} was not taken (${
            text(row.last_refusal) ?? "no reason given"
          }); it is tried again until ${
            Number(row.windowed) === 1
              ? "an operator voids it or its window closes"
              : "an operator voids it"
          }`
          : "built and not sent: it waits for its release by a second admin, a download or the bank"
      ),
    ),
    group(
      "files_past_window",
      client,
      {
        sql: `SELECT count(*) AS n FROM rail_batches b WHERE ${pastWindowWhere}`,
        args: [now, ...batches.args],
      },
      {
        sql: `SELECT ${batchColumns} FROM rail_batches b JOIN companies c ON c.id = b.company_id
              WHERE ${pastWindowWhere} ORDER BY b.created_at DESC, b.id`,
        args: [now, ...batches.args],
      },
      batchItem((row) =>
        `${text(row.error)}; its entries wait for the next file: see why it was not sent`
      ),
    ),
    group(
      "parked_jobs",
      client,
      {
        sql: `SELECT count(*) AS n FROM scheduled_jobs j
              WHERE j.done_at IS NOT NULL AND j.error IS NOT NULL AND ${jobs.sql}`,
        args: jobs.args,
      },
      {
        sql: `SELECT j.id, j.kind, j.subject_id, j.error, j.done_at, c.name AS company_name
              FROM scheduled_jobs j JOIN companies c ON c.id = j.company_id
              WHERE j.done_at IS NOT NULL AND j.error IS NOT NULL AND ${jobs.sql}
              ORDER BY j.done_at, j.id`,
        args: jobs.args,
      },
      (row) => ({
        companyName: String(row.company_name),
        path: "/console/jobs",
        subject: `${row.kind} of ${row.subject_id}`,
        detail: `parked: ${row.error}`,
        since: num(row.done_at),
      }),
    ),
    group(
      "failed_notifications",
      client,
      {
        sql:
          `SELECT count(*) AS n FROM notifications n WHERE n.status = 'failed' AND ${notifications.sql}`,
        args: notifications.args,
      },
      {
        sql:
          `SELECT n.id, n.channel, n.recipient, n.last_error, n.created_at, c.name AS company_name
              FROM notifications n JOIN companies c ON c.id = n.company_id
              WHERE n.status = 'failed' AND ${notifications.sql} ORDER BY n.created_at, n.id`,
        args: notifications.args,
      },
      (row) => ({
        companyName: String(row.company_name),
        path: "/console/jobs/notifications",
        subject: `${row.channel} to ${row.recipient}`,
        detail: `not delivered: ${row.last_error ?? "no answer"}`,
        since: num(row.created_at),
      }),
    ),
    group(
      "sanctions_reviews",
      client,
      {
        sql:
          `SELECT count(*) AS n FROM sanctions_reviews r WHERE r.status = 'open' AND ${reviews.sql}`,
        args: reviews.args,
      },
      {
        sql: `SELECT r.id, r.created_at, p.first_name, p.last_name, p.email, p.payee_uuid,
                p.amount_cents, c.name AS company_name
              FROM sanctions_reviews r JOIN payouts p ON p.id = r.payout_id
                JOIN companies c ON c.id = r.company_id
              WHERE r.status = 'open' AND ${reviews.sql} ORDER BY r.created_at, r.id`,
        args: reviews.args,
      },
      (row) => ({
        companyName: String(row.company_name),
        path: `/console/reviews/${row.id}`,
        subject: nameOf(row.first_name, row.last_name, row.email ?? row.payee_uuid),
        detail: "held: a name matched a sanctions list; clear or reject it",
        amountCents: Number(row.amount_cents),
        since: num(row.created_at),
      }),
    ),
    group(
      "check_exceptions",
      client,
      {
        sql: `SELECT count(*) AS n FROM check_exceptions x
              WHERE x.status = 'open' AND ${checkExceptions.sql}`,
        args: checkExceptions.args,
      },
      {
        sql: `SELECT x.id, x.kind, x.check_number, x.paid_amount_cents, x.created_at,
                c.name AS company_name
              FROM check_exceptions x JOIN companies c ON c.id = x.company_id
              WHERE x.status = 'open' AND ${checkExceptions.sql} ORDER BY x.created_at, x.id`,
        args: checkExceptions.args,
      },
      (row) => ({
        companyName: String(row.company_name),
        path: `/console/reviews/checks/${row.id}`,
        subject: `check ${row.check_number}`,
        detail: `paid item does not match its check (${
          String(row.kind).replaceAll("_", " ")
        }): resolve it`,
        amountCents: Number(row.paid_amount_cents),
        since: num(row.created_at),
      }),
    ),
    group(
      "rail_exceptions",
      client,
      {
        sql: `SELECT count(*) AS n FROM rail_exceptions x
              WHERE x.status = 'open' AND ${railExceptions.sql}`,
        args: railExceptions.args,
      },
      {
        sql: `SELECT x.id, x.rail, x.outcome, x.return_code, x.amount_cents, x.reason,
                x.created_at, c.name AS company_name
              FROM rail_exceptions x JOIN companies c ON c.id = x.company_id
              WHERE x.status = 'open' AND ${railExceptions.sql} ORDER BY x.created_at, x.id`,
        args: railExceptions.args,
      },
      (row) => ({
        companyName: String(row.company_name),
        path: "/console/rail-exceptions",
        subject: `${fileName(String(row.rail))} ${
          row.outcome === "completed" ? "payment" : "return"
        }${row.return_code ? ` ${row.return_code}` : ""}`,
        detail: `its payout could not take it (${row.reason}): resolve it`,
        code: text(row.return_code) ?? undefined,
        amountCents: Number(row.amount_cents),
        since: num(row.created_at),
      }),
    ),
    group(
      "approvals",
      options.live,
      {
        sql: `SELECT count(*) AS n FROM approvals a WHERE ${approvalsWhere}`,
        args: [now, database.environment, ...approvals.args],
      },
      {
        sql: `SELECT a.id, a.kind, a.summary, a.requested_at FROM approvals a
              WHERE ${approvalsWhere} ORDER BY a.expires_at, a.id`,
        args: [now, database.environment, ...approvals.args],
      },
      (row) => ({
        companyName: null,
        path: `/console/approvals/${row.id}`,
        subject: String(row.kind),
        detail: `waits for a second admin: ${row.summary}`,
        since: num(row.requested_at),
      }),
    ),
    (async (): Promise<NeedsActionGroup[]> => {
      const lines = await balancesPerLine(client, companyIds);
      const shortfalls = lines.filter((line) => line.balances.funding_shortfall < 0).map((
        line,
      ): NeedsActionItem => ({
        companyName: line.companyName,
        path: "/console/ledger",
        query: { line: line.lineId },
        subject: line.lineCode,
        detail:
          "owes a returned ACH funding: its new payouts wait until a credit covers it; fund the line",
        amountCents: -line.balances.funding_shortfall,
        since: null,
      }));
      const differences = (await tieOutDifferencesOf(database, lines, now)).map((
        d,
      ): NeedsActionItem => ({
        companyName: d.companyName,
        path: "/console/ledger",
        query: { line: d.lineId, date: d.date },
        subject: `${d.lineCode} on ${d.date}`,
        detail: "the tie-out is not zero: find the movement that does not match",
        amountCents: d.differenceCents,
        since: null,
      }));
      // At most one or two per line, always listed: the Overview names each.
      return [
        { kind: "funding_shortfalls", count: shortfalls.length, items: shortfalls },
        { kind: "tie_out_differences", count: differences.length, items: differences },
      ];
    })(),
    ...NEEDS_ACTION_SOURCES.map((source) => source.read(client, companyIds, itemsMax)),
  ]);
  const all = groups.flat();
  return { groups: all, total: all.reduce((sum, g) => sum + g.count, 0) };
}

/** The console page that shows a file or batch of this rail. */
export function batchPage(
  rail: string,
  id: string,
): { path: string; query?: Record<string, string> } {
  if (rail === "ach") return { path: `/console/bank-files/ach/${id}` };
  // Any other rail's batch: its page shows its attempts, and resolves it when in doubt.
  return { path: `/console/bank-files/batches/${id}` };
}

export interface TieOutDifference {
  readonly companyName: string;
  readonly lineId: string;
  readonly lineCode: string;
  /** The UTC day (YYYY-MM-DD). */
  readonly date: string;
  readonly differenceCents: number;
}

/** Differences of finished days, per database, by line and date; at most this many kept. */
const FINISHED_TIE_OUTS_MAX = 10_000;
const finishedTieOuts = new WeakMap<Database, Map<string, number>>();

/**
 * A line's tie-out difference of one UTC day. It depends only on that day's movements (closing −
 * opening is the sum of its held entries), so only the day's entries are read, through the
 * line's posted_at index.
 */
async function dayDifference(database: Database, lineId: string, start: number): Promise<number> {
  const { rows } = await database.readClient.execute({
    sql: `SELECT t.kind, a.code, sum(e.amount_cents) AS cents
          FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
            JOIN ledger_accounts a ON a.id = e.account_id
          WHERE t.line_id = ? AND t.posted_at >= ? AND t.posted_at < ?
          GROUP BY t.kind, a.code`,
    args: [lineId, start, start + DAY_MS],
  });
  const movements: DayMovement[] = rows
    .filter((row) => isLedgerTransactionKind(String(row.kind)))
    .map((row) => ({
      kind: String(row.kind) as DayMovement["kind"],
      account: String(row.code) as LedgerAccountCode,
      cents: Number(row.cents),
    }));
  const heldChange = movements.filter((m) => heldAccounts.includes(m.account))
    .reduce((sum, m) => sum + m.cents, 0);
  return computeTieOut(new Date(start).toISOString().slice(0, 10), 0, heldChange, movements)
    .difference;
}

/**
 * Lines whose tie-out of yesterday or today (UTC days on each company's clock: the sandbox clock
 * in test) is not zero. Yesterday is read once and kept: entries are posted at the time they
 * happen on a clock that only moves forward, so no later entry lands on a finished day.
 */
async function tieOutDifferencesOf(
  database: Database,
  lines: readonly LineBalanceRow[],
  realNow: number,
): Promise<TieOutDifference[]> {
  let finished = finishedTieOuts.get(database);
  if (!finished) {
    finished = new Map();
    finishedTieOuts.set(database, finished);
  }
  const kept = finished;
  const perLine = await Promise.all(lines.map(async (line) => {
    const now = await domainNow(database, line.companyId, realNow);
    const todayStart = Math.floor(now / DAY_MS) * DAY_MS;
    const yesterdayStart = todayStart - DAY_MS;
    const yesterdayKey = `${line.lineId}|${yesterdayStart}`;
    let yesterday = kept.get(yesterdayKey);
    if (yesterday === undefined) {
      yesterday = await dayDifference(database, line.lineId, yesterdayStart);
      if (kept.size >= FINISHED_TIE_OUTS_MAX) kept.delete(kept.keys().next().value!);
      kept.set(yesterdayKey, yesterday);
    }
    const today = await dayDifference(database, line.lineId, todayStart);
    return ([[yesterdayStart, yesterday], [todayStart, today]] as const)
      .filter(([, difference]) => difference !== 0)
      .map(([start, difference]) => ({
        companyName: line.companyName,
        lineId: line.lineId,
        lineCode: line.lineCode,
        date: new Date(start).toISOString().slice(0, 10),
        differenceCents: difference,
      }));
  }));
  return perLine.flat();
}

/** The queue's counts of every company, per environment and kind, for /metrics. */
export async function needsActionGauges(
  databases: { readonly live: Database; readonly test: Database },
  realNow: number,
): Promise<{ environment: string; kind: NeedsActionKind; count: number }[]> {
  const gauges = [];
  for (const database of [databases.live, databases.test]) {
    try {
      const queue = await readNeedsAction(database, null, {
        realNow,
        live: databases.live.readClient,
        itemsMax: 0,
      });
      for (const g of queue.groups) {
        gauges.push({ environment: database.environment, kind: g.kind, count: g.count });
      }
    } catch {
      // Readiness reports an unreachable database; the other gauges still render.
    }
  }
  return gauges;
}
