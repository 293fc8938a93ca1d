/**
 * The console's Payouts search and Payout detail (issue 20): reads only, limited to the operator's
 * companies. The search picks the page's payout ids first (from payouts alone when it can) and
 * joins names after, so a page of 50 costs the same with 100,000 payouts as with 100.
 */
import type { Client, InValue } from "@libsql/client";
import type { Database } from "../../db/client.ts";
import { inScope } from "../operators/rules.ts";
import { loadPayout, payoutMoneyInFlight } from "../payouts/store.ts";
import type { MoneyInFlight } from "../payouts/transition.ts";
import { submissionReference } from "../rails/seam.ts";
import { type VoidAwaitingPaidItems, voidAwaitingPaidItems } from "../checks/voids.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { payoutNeedsActionCondition } from "./needs_action.ts";
import { type PayoutStatus, payoutStatuses } from "../payouts/states.ts";
import {
  allOf,
  orderAndPage,
  type Page,
  pageOf,
  type PageWindow,
  scopeCondition,
} from "./paging.ts";

export const payoutSorts = {
  created: "p.created_at",
  updated: "p.updated_at",
  amount: "p.amount_cents",
  status: "p.status",
} as const;

/** What an operator searches payouts by; every field is optional. */
export interface PayoutFilter {
  /** A disbursement's claim id, exactly. */
  readonly claimId?: string;
  /** Part of the payee's name or e-mail, in any case. */
  readonly payee?: string;
  /** A disbursement id, its public uuid, or a payout id. */
  readonly disbursement?: string;
  readonly status?: PayoutStatus;
  readonly companyId?: string;
  readonly lineId?: string;
  /**
   * One search box: a name fragment or e-mail, an amount ($1,250.00), an account's last four, a
   * claim id or the company's disbursement uuid, a payout or disbursement id, a check number or
   * an ACH trace number; a payout matching any of them is found.
   */
  readonly text?: string;
  /** Only payouts that failed or came back at some time, re-offered or not since. */
  readonly failedAnyTime?: boolean;
  /** Only payouts of the Needs action queue at this real time (epoch ms). */
  readonly needsActionAt?: number;
  /** Created at or after / before (epoch ms). */
  readonly createdFrom?: number;
  readonly createdBefore?: number;
}

export function isPayoutStatus(value: string): value is PayoutStatus {
  return (payoutStatuses as readonly string[]).includes(value);
}

export interface PayoutListRow {
  readonly id: string;
  readonly status: PayoutStatus;
  readonly amountCents: number;
  readonly payeeName: string;
  readonly email: string | null;
  readonly companyId: string;
  readonly companyName: string;
  readonly lineCode: string;
  readonly disbursementId: string;
  readonly disbursementUuid: string;
  readonly claimId: string | null;
  /** The chosen method, or after a re-offer the one that failed last. */
  readonly methodId: number | null;
  readonly methodLastFour: string | null;
  readonly failureReason: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/** `%` and `_` typed by the operator match themselves, not any text. */
const likeText = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** An amount as typed: "1250", "1,250.00", "$12.5". */
const AMOUNT_TYPED = /^\$?(\d{1,3}(,\d{3})+|\d+)(\.\d{1,2})?$/;

function amountCentsOf(text: string): number | null {
  if (!AMOUNT_TYPED.test(text)) return null;
  const [whole, fraction = ""] = text.replace(/[$,]/g, "").split(".");
  const cents = Number(whole) * 100 + Number(fraction.padEnd(2, "0"));
  return Number.isSafeInteger(cents) ? cents : null;
}

/** The trigram index finds fragments of at least this many characters (code points). */
export const PAYEE_FRAGMENT_INDEXED_MIN = 3;

/**
 * Payouts matching a fragment that the search sorts itself (about 1 ms at 5,000). A fragment
 * matching more is common enough that walking payouts in the page's order fills a page sooner.
 */
export const PAYEE_MATCHES_SORTED_MAX = 5_000;

/**
 * Characters of a fragment the index is asked for at most. Each trigram of the phrase reads its
 * whole list of payouts, and the long ones typed are e-mails whose common parts (`@example.`)
 * every payout holds: asking for fewer, rarer ones finds a superset that LIKE then narrows.
 */
export const PAYEE_PHRASE_LENGTH_MAX = 8;

/**
 * The part of a fragment the index is asked for, as one FTS5 phrase (every character literal, a
 * `"` doubled): the end of what comes before an `@` (a name or an e-mail's own part), at most
 * PAYEE_PHRASE_LENGTH_MAX characters; the whole fragment when that part is too short.
 */
function payeePhrase(fragment: string): string {
  const at = fragment.indexOf("@");
  const own = [...(at < 0 ? fragment : fragment.slice(0, at))];
  const part = own.length >= PAYEE_FRAGMENT_INDEXED_MIN
    ? own.slice(-PAYEE_PHRASE_LENGTH_MAX).join("")
    : fragment;
  return `"${part.replaceAll('"', '""')}"`;
}

/**
 * Rowids of the payouts whose name or e-mail may hold the fragment: the index's matches and every
 * payout past its progress mark (not indexed yet, so never missing). The index folds case beyond
 * ASCII, so it may say more than LIKE: LIKE still decides.
 */
const fragmentRowids = (fragment: string) => ({
  sql: `SELECT rowid AS payout_rowid FROM payee_search WHERE payee_search MATCH ?
        UNION ALL SELECT rowid FROM payouts
          WHERE rowid > (SELECT indexed_rowid FROM payee_search_progress WHERE id = 1)`,
  args: [payeePhrase(fragment)] as InValue[],
});

/**
 * Whether the index can narrow a fragment to a few payouts: it has three characters or more and
 * at most PAYEE_MATCHES_SORTED_MAX payouts hold it (counting those not indexed yet).
 */
async function fragmentIsNarrow(client: Client, fragment: string): Promise<boolean> {
  if ([...fragment].length < PAYEE_FRAGMENT_INDEXED_MIN) return false;
  const rowids = fragmentRowids(fragment);
  const { rows } = await client.execute({
    sql: `SELECT count(*) AS n FROM (${rowids.sql} LIMIT ?)`,
    args: [...rowids.args, PAYEE_MATCHES_SORTED_MAX + 1],
  });
  return Number(rows[0].n) <= PAYEE_MATCHES_SORTED_MAX;
}

/** A payee fragment's condition: LIKE ignores ASCII case; the full name only when a space asks. */
function fragmentCondition(fragment: string): { sql: string; args: InValue[] } {
  const like = likeText(fragment);
  const parts = [
    "p.first_name LIKE ? ESCAPE '\\'",
    "p.last_name LIKE ? ESCAPE '\\'",
    "p.email LIKE ? ESCAPE '\\'",
  ];
  if (fragment.includes(" ")) {
    parts.push(
      "(coalesce(p.first_name, '') || ' ' || coalesce(p.last_name, '')) LIKE ? ESCAPE '\\'",
    );
  }
  return { sql: `(${parts.join(" OR ")})`, args: parts.map(() => like) };
}

/**
 * The one search box: its condition (any of the things a payout is known by), and the rowids of
 * the payouts that can meet it, each part found through an index.
 */
function searchText(text: string): {
  condition: { sql: string; args: InValue[] };
  candidates: { sql: string; args: InValue[] }[];
} {
  const byDisbursement = `SELECT d.id FROM disbursements d WHERE d.claim_id = ?
      OR (d.company_id IN (SELECT id FROM companies)
        AND d.kind IN ('disbursement', 'simple_payment', 'v1') AND d.external_uuid = ?)`;
  const fragment = fragmentCondition(text);
  const parts: string[] = [
    "p.id = ?",
    "p.disbursement_id = ?",
    `p.disbursement_id IN (${byDisbursement})`,
    fragment.sql,
  ];
  const args: InValue[] = [text, text, text, text, ...fragment.args];
  const candidates: { sql: string; args: InValue[] }[] = [
    { sql: "SELECT rowid AS payout_rowid FROM payouts WHERE id = ?", args: [text] },
    { sql: "SELECT rowid AS payout_rowid FROM payouts WHERE disbursement_id = ?", args: [text] },
    {
      sql: `SELECT rowid AS payout_rowid FROM payouts WHERE disbursement_id IN (${byDisbursement})`,
      args: [text, text],
    },
    fragmentRowids(text),
  ];
  const cents = amountCentsOf(text);
  if (cents !== null) {
    parts.push("p.amount_cents = ?");
    args.push(cents);
    candidates.push({
      sql: "SELECT rowid AS payout_rowid FROM payouts WHERE amount_cents = ?",
      args: [cents],
    });
  }
  if (/^\d{4}$/.test(text)) {
    parts.push("p.method_last_four = ?", "p.last_failure_last_four = ?");
    args.push(text, text);
    candidates.push(
      { sql: "SELECT rowid AS payout_rowid FROM payouts WHERE method_last_four = ?", args: [text] },
      {
        sql: "SELECT rowid AS payout_rowid FROM payouts WHERE last_failure_last_four = ?",
        args: [text],
      },
    );
  }
  if (/^\d{1,15}$/.test(text)) {
    const byCheck = `SELECT k.payout_id FROM checks k
        WHERE k.company_id IN (SELECT id FROM companies) AND k.check_number = ?`;
    const byTrace = "SELECT e.payout_id FROM rail_batch_entries e WHERE e.trace_number = ?";
    parts.push(`p.id IN (${byCheck})`, `p.id IN (${byTrace})`);
    args.push(Number(text), text);
    candidates.push(
      {
        sql: `SELECT rowid AS payout_rowid FROM payouts WHERE id IN (${byCheck})`,
        args: [Number(text)],
      },
      { sql: `SELECT rowid AS payout_rowid FROM payouts WHERE id IN (${byTrace})`, args: [text] },
    );
  }
  return { condition: { sql: `(${parts.join(" OR ")})`, args }, candidates };
}

/**
 * One page of payouts matching `filter` within the operator's companies. A search by text or payee
 * fragment first narrows the payouts to those its indexes find, and sorts only those; a fragment
 * too short or too common for that walks the payouts in the page's order, as every filter does.
 */
export async function searchPayouts(
  client: Client,
  companyIds: readonly string[] | null,
  filter: PayoutFilter,
  window: PageWindow,
): Promise<Page<PayoutListRow>> {
  const conditions: { sql: string; args: InValue[] }[] = [
    scopeCondition("p.company_id", companyIds),
  ];
  if (filter.companyId) conditions.push({ sql: "p.company_id = ?", args: [filter.companyId] });
  if (filter.lineId) conditions.push({ sql: "p.line_id = ?", args: [filter.lineId] });
  if (filter.status) conditions.push({ sql: "p.status = ?", args: [filter.status] });
  // Each narrowed search keeps only the payouts among its candidates.
  const narrowed: { sql: string; args: InValue[] }[] = [];
  if (filter.text) {
    const search = searchText(filter.text);
    conditions.push(search.condition);
    if (await fragmentIsNarrow(client, filter.text)) {
      narrowed.push({
        sql: search.candidates.map((c) => c.sql).join(" UNION ALL "),
        args: search.candidates.flatMap((c) => c.args),
      });
    }
  }
  if (filter.payee) {
    conditions.push(fragmentCondition(filter.payee));
    if (await fragmentIsNarrow(client, filter.payee)) narrowed.push(fragmentRowids(filter.payee));
  }
  // The first narrowed search drives the page (CROSS JOIN keeps its candidates first whatever
  // the planner would prefer); a second keeps only the payouts among its own.
  const source = narrowed.length === 0 ? { sql: "payouts p", args: [] as InValue[] } : {
    sql: `(SELECT payout_rowid FROM (${narrowed[0].sql}) GROUP BY payout_rowid) m
              CROSS JOIN payouts p ON p.rowid = m.payout_rowid`,
    args: narrowed[0].args,
  };
  for (const candidates of narrowed.slice(1)) {
    conditions.push({ sql: `p.rowid IN (${candidates.sql})`, args: candidates.args });
  }
  if (filter.failedAnyTime) conditions.push({ sql: "p.failure_reason IS NOT NULL", args: [] });
  if (filter.needsActionAt !== undefined) {
    conditions.push(payoutNeedsActionCondition(filter.needsActionAt));
  }
  if (filter.createdFrom !== undefined) {
    conditions.push({ sql: "p.created_at >= ?", args: [filter.createdFrom] });
  }
  if (filter.createdBefore !== undefined) {
    conditions.push({ sql: "p.created_at < ?", args: [filter.createdBefore] });
  }
  if (filter.claimId) {
    conditions.push({
      sql: "p.disbursement_id IN (SELECT id FROM disbursements WHERE claim_id = ?)",
      args: [filter.claimId],
    });
  }
  if (filter.disbursement) {
    conditions.push({
      // The public uuid is unique per company and kind: that index answers it, company by company.
      sql: `(p.disbursement_id = ? OR p.id = ? OR p.disbursement_id IN
              (SELECT id FROM disbursements WHERE company_id IN (SELECT id FROM companies)
                AND kind IN ('disbursement', 'simple_payment', 'v1') AND external_uuid = ?))`,
      args: [filter.disbursement, filter.disbursement, filter.disbursement],
    });
  }
  const where = allOf(conditions);
  const page = orderAndPage(window, payoutSorts, "p.id");
  const { rows } = await client.execute({
    sql: `SELECT p.id, p.status, p.amount_cents, p.first_name, p.last_name, p.email, p.company_id,
            c.name AS company_name, l.code AS line_code, p.disbursement_id,
            d.external_uuid, d.claim_id, p.created_at, p.updated_at,
            coalesce(p.payment_method_id, p.last_failure_method_id) AS method_id,
            CASE WHEN p.payment_method_id IS NULL THEN p.last_failure_last_four
              ELSE p.method_last_four END AS method_last_four, p.failure_reason
          FROM (SELECT p.* FROM ${source.sql} WHERE ${where.sql} ${page.sql}) p
            JOIN disbursements d ON d.id = p.disbursement_id
            JOIN companies c ON c.id = p.company_id
            JOIN business_lines l ON l.id = p.line_id
          ORDER BY ${payoutSorts[window.sort as keyof typeof payoutSorts]} ${
      window.direction === "asc" ? "ASC" : "DESC"
    }, p.id ${window.direction === "asc" ? "ASC" : "DESC"}`,
    args: [...source.args, ...where.args, ...page.args],
  });
  return pageOf(
    window,
    rows.map((row) => ({
      id: String(row.id),
      status: String(row.status) as PayoutStatus,
      amountCents: Number(row.amount_cents),
      payeeName: payeeNameOf(row.first_name, row.last_name),
      email: row.email === null ? null : String(row.email),
      companyId: String(row.company_id),
      companyName: String(row.company_name),
      lineCode: String(row.line_code),
      disbursementId: String(row.disbursement_id),
      disbursementUuid: String(row.external_uuid),
      claimId: row.claim_id === null ? null : String(row.claim_id),
      methodId: row.method_id === null ? null : Number(row.method_id),
      methodLastFour: row.method_last_four === null ? null : String(row.method_last_four),
      failureReason: row.failure_reason === null ? null : String(row.failure_reason),
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
    })),
  );
}

function payeeNameOf(first: unknown, last: unknown): string {
  return [first, last].filter((part) => part !== null && part !== "").join(" ");
}

/** A submission of the payout to a rail: the file or batch that carried it and what identifies it. */
export interface PaperLine {
  readonly rail: string;
  readonly reference: string;
  readonly status: string;
  readonly amountCents: number;
  readonly batchId: string | null;
  readonly batchReference: string | null;
  readonly batchStatus: string | null;
  readonly traceNumber: string | null;
  readonly accountLastFour: string | null;
  readonly returnCode: string | null;
  readonly effectiveDate: string | null;
  readonly checkNumber: number | null;
  readonly providerItemId: string | null;
}

/** One state the payout entered, when and why. */
export interface TimelineStep {
  readonly from: string | null;
  readonly to: string;
  readonly detail: string | null;
  readonly at: number;
}

export interface LedgerLine {
  readonly transactionId: string;
  readonly kind: string;
  readonly postedAt: number;
  readonly entries: { readonly account: string; readonly amountCents: number }[];
}

export interface EventLine {
  readonly id: string;
  readonly type: string | null;
  readonly eventTypeId: number;
  readonly createdAt: number;
  readonly deliveries: {
    readonly id: string;
    readonly url: string;
    readonly status: string;
    readonly attempts: number;
    readonly lastStatusCode: number | null;
  }[];
}

/** A notification as the console shows it: never its body, link or code, which are secrets. */
export interface NotificationLine {
  readonly id: string;
  readonly channel: string;
  readonly recipient: string;
  readonly subject: string | null;
  readonly status: string;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly createdAt: number;
  readonly sentAt: number | null;
}

export type PortalLinkState = "sent" | "opened" | "verified" | "expired" | "replaced";

export interface PortalLinkLine {
  readonly partyUuid: string | null;
  readonly state: PortalLinkState;
  readonly createdAt: number;
  readonly verifiedAt: number | null;
  readonly expiresAt: number;
}

/** A portal link's state: replaced and expired first, then how far the payee got. */
export function portalLinkState(
  link: {
    replacedAt: number | null;
    expiresAt: number;
    verifiedAt: number | null;
    codeSent: boolean;
  },
  now: number,
): PortalLinkState {
  if (link.replacedAt !== null) return "replaced";
  if (link.expiresAt <= now) return "expired";
  if (link.verifiedAt !== null) return "verified";
  return link.codeSent ? "opened" : "sent";
}

export interface PayoutDetail {
  readonly id: string;
  readonly status: PayoutStatus;
  readonly amountCents: number;
  readonly heldCents: number;
  readonly payorFeeCents: number;
  readonly payeeFeeCents: number;
  readonly serviceFeeCents: number;
  readonly payeeName: string;
  readonly payeeUuid: string;
  readonly email: string | null;
  readonly phone: string | null;
  readonly companyId: string;
  readonly companyName: string;
  readonly lineId: string;
  readonly lineCode: string;
  readonly disbursementId: string;
  readonly disbursementUuid: string;
  readonly disbursementKind: string;
  readonly claimId: string | null;
  readonly memo: string | null;
  readonly paymentMethodId: number | null;
  /** The last four of the chosen account or card: the console never shows more. */
  readonly methodLastFour: string | null;
  readonly allowedPaymentMethodIds: number[];
  readonly failureReason: string | null;
  /** The last failure, kept after a re-offer: when, and the method and account ending that failed. */
  readonly lastFailure: {
    readonly code: string;
    readonly at: number | null;
    readonly methodId: number | null;
    readonly lastFour: string | null;
  } | null;
  readonly retryCount: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** The provider's or bank's reference of the last submission. */
  readonly railReference: string | null;
  readonly mailingAddress: string | null;
  /** Each submission's place in a file or batch, and the check it printed. */
  readonly paper: PaperLine[];
  readonly timeline: TimelineStep[];
  /** What operators did to the payout (canceled, resent, approved, re-offered), from the audit log. */
  readonly operatorActions: {
    readonly at: number;
    readonly action: string;
    readonly operator: string;
    readonly origin: string;
  }[];
  readonly ledger: LedgerLine[];
  readonly events: EventLine[];
  readonly notifications: NotificationLine[];
  readonly portalLinks: PortalLinkLine[];
  readonly endorsements: {
    readonly partyUuid: string;
    readonly partyName: string;
    readonly status: string;
    readonly typedName: string | null;
    readonly decidedAt: number | null;
  }[];
  readonly signedDocuments: {
    readonly name: string;
    readonly signedBy: string;
    readonly signedAt: number;
    readonly sha256: string;
  }[];
  /** The rail entry holding the payout's money in flight, if any (cancel and re-offer wait on it). */
  readonly inFlight: MoneyInFlight | null;
  /** Its check was voided and the void sent: the payout waits for the bank's paid items. */
  readonly voidAwaitingPaidItems: VoidAwaitingPaidItems | null;
}

const text = (value: unknown) => (value === null || value === undefined ? null : String(value));
const num = (value: unknown) => (value === null || value === undefined ? null : Number(value));

/**
 * Everything the Payout detail page shows of one payout, or null when there is none or its
 * company is outside the operator's scope (the page answers both alike). Portal links expire on
 * the company's clock (the sandbox clock in test).
 */
export async function payoutDetail(
  database: Database,
  companyIds: readonly string[] | null,
  payoutId: string,
  realNow: number,
): Promise<PayoutDetail | null> {
  const client = database.readClient;
  const { rows } = await client.execute({
    sql:
      `SELECT p.*, c.name AS company_name, l.code AS line_code, d.external_uuid, d.kind AS d_kind,
            d.claim_id, d.memo FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id
            JOIN companies c ON c.id = p.company_id JOIN business_lines l ON l.id = p.line_id
          WHERE p.id = ?`,
    args: [payoutId],
  });
  const row = rows[0];
  if (!row || !inScope(companyIds, String(row.company_id))) return null;
  const now = await domainNow(database, String(row.company_id), realNow);
  const [
    transitions,
    ledger,
    events,
    notifications,
    links,
    endorsements,
    signed,
    inFlight,
    paper,
    audited,
  ] = await Promise.all([
    // The mail provider's tracking of its check (Lob) is shown among the payout's own steps.
    client.execute({
      sql: `SELECT from_status, to_status, detail, at FROM (
              SELECT from_status, to_status, detail, at, 0 AS source, id AS n
                FROM payout_transitions WHERE payout_id = ?
              UNION ALL
              SELECT NULL, 'mail', replace(substr(type, 7), '_', ' ') || ' (Lob ' || lob_check_id || ')',
                  at, 1, rowid
                FROM check_mail_events WHERE payout_id = ?)
            ORDER BY at, source, n`,
      args: [payoutId, payoutId],
    }),
    client.execute({
      sql: `SELECT t.id, t.kind, t.posted_at, a.code, e.amount_cents FROM ledger_transactions t
                JOIN ledger_entries e ON e.transaction_id = t.id
                JOIN ledger_accounts a ON a.id = e.account_id
              WHERE t.payout_id = ? AND t.line_id = ? ORDER BY t.posted_at, t.rowid, e.id`,
      args: [payoutId, String(row.line_id)],
    }),
    client.execute({
      sql: `SELECT ev.id, ev.type, ev.event_type_id, ev.created_at, d.id AS delivery_id,
                w.url, d.status, d.attempt_count,
                (SELECT a.status_code FROM delivery_attempts a WHERE a.delivery_id = d.id
                  ORDER BY a.id DESC LIMIT 1) AS last_status_code
              FROM events ev LEFT JOIN webhook_deliveries d ON d.event_id = ev.id
                LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id
              WHERE ev.payout_id = ? AND ev.company_id = ? ORDER BY ev.created_at, ev.id, d.id`,
      args: [payoutId, String(row.company_id)],
    }),
    client.execute({
      sql: `SELECT id, channel, recipient, subject, status, attempt_count, last_error, created_at,
                sent_at FROM notifications WHERE payout_id = ? ORDER BY created_at, id`,
      args: [payoutId],
    }),
    client.execute({
      sql: `SELECT party_uuid, code_hash IS NOT NULL AS code_sent, verified_at, expires_at,
                replaced_at, created_at FROM portal_links WHERE payout_id = ? ORDER BY created_at, id`,
      args: [payoutId],
    }),
    client.execute({
      sql: `SELECT e.party_uuid, e.status, e.typed_name, e.decided_at, a.first_name, a.last_name,
                a.company_name FROM endorsements e LEFT JOIN authorization_parties a
                ON a.disbursement_id = ? AND a.party_uuid = e.party_uuid
              WHERE e.payout_id = ? ORDER BY e.created_at, e.party_uuid`,
      args: [String(row.disbursement_id), payoutId],
    }),
    client.execute({
      sql: `SELECT d.name, s.signed_by, s.signed_at, s.original_sha256 FROM signed_documents s
                JOIN documents d ON d.id = s.document_id WHERE s.payout_id = ? ORDER BY s.signed_at`,
      args: [payoutId],
    }),
    loadPayout(client, payoutId).then(async (payout) =>
      payout === null ? [null, null] as const : [
        await payoutMoneyInFlight(client, payout),
        await voidAwaitingPaidItems(
          client,
          submissionReference(payout.id, payout.submissionCount),
        ),
      ] as const
    ),
    client.execute({
      sql: `SELECT e.rail, e.reference, e.status, e.amount_cents, e.batch_id, e.trace_number,
                e.account_last_four, e.return_code, e.effective_date,
                b.rail_reference AS batch_reference, b.status AS batch_status,
                k.check_number, i.payout_item_id
              FROM rail_batch_entries e LEFT JOIN rail_batches b ON b.id = e.batch_id
                LEFT JOIN checks k ON k.reference = e.reference
                LEFT JOIN paypal_items i ON i.entry_id = e.id
              WHERE e.payout_id = ? ORDER BY e.created_at, e.rowid`,
      args: [payoutId],
    }),
    client.execute({
      sql: `SELECT at, action, operator_email, operator_id, origin FROM audit_log
              WHERE object_id = ? AND object_type = 'payout' ORDER BY seq`,
      args: [payoutId],
    }),
  ]);
  const ledgerLines = new Map<string, LedgerLine>();
  for (const entry of ledger.rows) {
    const id = String(entry.id);
    let line = ledgerLines.get(id);
    if (!line) {
      line = {
        transactionId: id,
        kind: String(entry.kind),
        postedAt: Number(entry.posted_at),
        entries: [],
      };
      ledgerLines.set(id, line);
    }
    line.entries.push({ account: String(entry.code), amountCents: Number(entry.amount_cents) });
  }
  const eventLines = new Map<string, EventLine>();
  for (const event of events.rows) {
    const id = String(event.id);
    let line = eventLines.get(id);
    if (!line) {
      line = {
        id,
        type: text(event.type),
        eventTypeId: Number(event.event_type_id),
        createdAt: Number(event.created_at),
        deliveries: [],
      };
      eventLines.set(id, line);
    }
    if (event.delivery_id !== null) {
      line.deliveries.push({
        id: String(event.delivery_id),
        url: String(event.url),
        status: String(event.status),
        attempts: Number(event.attempt_count),
        lastStatusCode: num(event.last_status_code),
      });
    }
  }
  return {
    id: String(row.id),
    status: String(row.status) as PayoutStatus,
    amountCents: Number(row.amount_cents),
    heldCents: Number(row.held_cents),
    payorFeeCents: Number(row.payor_fee_cents),
    payeeFeeCents: Number(row.payee_fee_cents),
    serviceFeeCents: Number(row.service_fee_cents),
    payeeName: payeeNameOf(row.first_name, row.last_name),
    payeeUuid: String(row.payee_uuid),
    email: text(row.email),
    phone: text(row.phone),
    companyId: String(row.company_id),
    companyName: String(row.company_name),
    lineId: String(row.line_id),
    lineCode: String(row.line_code),
    disbursementId: String(row.disbursement_id),
    disbursementUuid: String(row.external_uuid),
    disbursementKind: String(row.d_kind),
    claimId: text(row.claim_id),
    memo: text(row.memo),
    paymentMethodId: num(row.payment_method_id),
    methodLastFour: text(row.method_last_four),
    allowedPaymentMethodIds: JSON.parse(String(row.allowed_payment_method_ids)) as number[],
    failureReason: text(row.failure_reason),
    lastFailure: row.failure_reason === null ? null : {
      code: String(row.failure_reason),
      at: num(row.last_failed_at),
      methodId: num(row.last_failure_method_id),
      lastFour: text(row.last_failure_last_four),
    },
    retryCount: Number(row.retry_count),
    railReference: text(row.rail_reference),
    mailingAddress: [row.address_one, row.address_two, row.city, row.state, row.zip_code]
      .filter((part) => part !== null && part !== "").join(", ") || null,
    paper: paper.rows.map((e) => ({
      rail: String(e.rail),
      reference: String(e.reference),
      status: String(e.status),
      amountCents: Number(e.amount_cents),
      batchId: text(e.batch_id),
      batchReference: text(e.batch_reference),
      batchStatus: text(e.batch_status),
      traceNumber: text(e.trace_number),
      accountLastFour: text(e.account_last_four),
      returnCode: text(e.return_code),
      effectiveDate: text(e.effective_date),
      checkNumber: num(e.check_number),
      providerItemId: text(e.payout_item_id),
    })),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    operatorActions: audited.rows.map((a) => ({
      at: Number(a.at),
      action: String(a.action),
      operator: String(a.operator_email ?? a.operator_id ?? "the service"),
      origin: String(a.origin),
    })),
    timeline: transitions.rows.map((t) => ({
      from: text(t.from_status),
      to: String(t.to_status),
      detail: text(t.detail),
      at: Number(t.at),
    })),
    ledger: [...ledgerLines.values()],
    events: [...eventLines.values()],
    notifications: notifications.rows.map((n) => ({
      id: String(n.id),
      channel: String(n.channel),
      recipient: String(n.recipient),
      subject: text(n.subject),
      status: String(n.status),
      attempts: Number(n.attempt_count),
      lastError: text(n.last_error),
      createdAt: Number(n.created_at),
      sentAt: num(n.sent_at),
    })),
    portalLinks: links.rows.map((l) => ({
      partyUuid: text(l.party_uuid),
      state: portalLinkState({
        replacedAt: num(l.replaced_at),
        expiresAt: Number(l.expires_at),
        verifiedAt: num(l.verified_at),
        codeSent: Number(l.code_sent) === 1,
      }, now),
      createdAt: Number(l.created_at),
      verifiedAt: num(l.verified_at),
      expiresAt: Number(l.expires_at),
    })),
    endorsements: endorsements.rows.map((e) => ({
      partyUuid: String(e.party_uuid),
      partyName: payeeNameOf(e.first_name, e.last_name) || String(e.company_name ?? e.party_uuid),
      status: String(e.status),
      typedName: text(e.typed_name),
      decidedAt: num(e.decided_at),
    })),
    signedDocuments: signed.rows.map((s) => ({
      name: String(s.name),
      signedBy: String(s.signed_by),
      signedAt: Number(s.signed_at),
      sha256: String(s.original_sha256),
    })),
    inFlight: inFlight[0],
    voidAwaitingPaidItems: inFlight[1],
  };
}
