/**
 * Unclaimed property on the database: the payouts still owed after their offer fell due unchosen,
 * with what the rules need of them (owner, address, last owner activity, check, parties), the
 * dormancy overrides, the due-diligence notices and the reports.
 */
import type { WriteTx } from "../../db/writer.ts";
import { newId } from "../platform/keys.ts";
import { addressFrom, type AddressOnFile } from "./store.ts";
import {
  cameBackAfterCompletion,
  offerKindOf,
  type OwedKind,
  type PropertyType,
  propertyTypeOf,
} from "./unclaimed_rules.ts";

type Reader = Pick<WriteTx, "execute">;

/** Owed payouts one read takes at most (a report of more is written in several). */
export const OWED_ITEMS_MAX = 5_000;

/** A payout still owed, as stored. */
export interface OwedPayout {
  readonly payoutId: string;
  /** What is owed: a whole offer, or money of a completed payout that came back. */
  readonly kind: OwedKind;
  readonly status: string;
  /** What is owed: the payout's amount, or what came back after its completion. */
  readonly amountCents: number;
  readonly createdAt: number;
  /** The last owner-generated activity (or what started the obligation). */
  readonly owedSince: number;
  readonly ownerFirst: string;
  readonly ownerLast: string;
  readonly email: string | null;
  readonly address: AddressOnFile | null;
  readonly propertyType: PropertyType;
  readonly claim: string | null;
  readonly checkNumber: number | null;
  readonly additionalOwners: readonly { last: string; first: string; relationship: string }[];
}

const text = (
  value: unknown,
): string => (value === null || value === undefined ? "" : String(value));

/**
 * The company's payouts still owed: offered and kept owed after their offer fell due (held, no
 * address for the fallback, a fallback check that came back and was offered again), or canceled
 * by their offer's expiry (the hold given back: `offer_expired_at` is the cancel's own time). A
 * payee who chose since is no longer here. The dormancy clock runs from the latest of the
 * payout's creation, the payee's last portal sign-in and the last check issued to them. Money of
 * a completed payout that came back (`returnedAfterCompletion`) is owed too, once each.
 */
export async function owedPayouts(reader: Reader, companyId: string): Promise<OwedPayout[]> {
  const { rows } = await reader.execute({
    sql: `SELECT ${OWED_COLUMNS}
          FROM payouts p JOIN disbursements d ON d.id = p.disbursement_id
            LEFT JOIN payees y ON y.id = p.payee_id
          WHERE p.company_id = ? AND p.offer_expired_at IS NOT NULL
            AND (p.status = 'modality_offered'
              OR (p.status = 'canceled' AND p.updated_at = p.offer_expired_at))
          ORDER BY p.created_at, p.id LIMIT ?`,
    args: [companyId, OWED_ITEMS_MAX],
  });
  const parties = await partiesOf(reader, companyId);
  const returned = await returnedAfterCompletion(reader, companyId);
  return [
    ...rows.map((row) =>
      owedOf(
        row,
        offerKindOf({
          status: String(row.status),
          checkStatus: row.check_status === null ? null : String(row.check_status),
          failureReason: row.failure_reason === null ? null : String(row.failure_reason),
        }),
        parties,
      )
    ),
    ...returned.map((row) =>
      owedOf(row, Number(row.card_balance) === 1 ? "card_balance" : "late_return", parties)
    ),
  ];
}

/**
 * Completed payouts of the company whose money came back and is not remitted yet: each late
 * return (a virtual card's unspent balance at its close, a late ACH return, a PayPal refund, one
 * recorded by hand) is posted once as `payout.late_return`, from the bank to available, and a
 * payout comes back at most once, so each is found once, from that posting. What is owed is what
 * the posting put in available, since the return. Nothing offers a completed payout again: its
 * money stays owed until it is remitted.
 */
async function returnedAfterCompletion(reader: Reader, companyId: string) {
  const { rows } = await reader.execute({
    sql: `SELECT ${OWED_COLUMNS}, t.posted_at AS returned_at,
            (SELECT sum(e.amount_cents) FROM ledger_entries e
              JOIN ledger_accounts a ON a.id = e.account_id
              WHERE e.transaction_id = t.id AND a.code = 'available') AS owed_cents,
            EXISTS (SELECT 1 FROM virtual_cards v
              WHERE v.payout_id = p.id AND v.reclaimed_cents > 0) AS card_balance
          FROM ledger_transactions t JOIN payouts p ON p.id = t.payout_id
            JOIN disbursements d ON d.id = p.disbursement_id
            LEFT JOIN payees y ON y.id = p.payee_id
          WHERE t.company_id = ? AND t.kind = 'payout.late_return' AND p.status = 'completed'
            AND p.escheated_at IS NULL
          ORDER BY t.posted_at, p.id LIMIT ?`,
    args: [companyId, OWED_ITEMS_MAX],
  });
  return rows;
}

function owedOf(
  row: Record<string, unknown>,
  kind: OwedKind,
  parties: Map<string, { uuid: string; last: string; first: string; relationship: string }[]>,
): OwedPayout {
  const [first, ...rest] = text(row.payee_name).split(" ");
  const ownerFirst = text(row.first_name) || (row.payee_name ? first : "");
  const ownerLast = text(row.last_name) || (row.payee_name ? rest.join(" ") : "") ||
    text(row.email ?? row.payee_uuid);
  const required = JSON.parse(text(row.permission_required_from) || "[]") as string[];
  return {
    payoutId: String(row.id),
    kind,
    status: String(row.status),
    amountCents: Number(cameBackAfterCompletion(kind) ? row.owed_cents : row.amount_cents),
    createdAt: Number(row.created_at),
    owedSince: Math.max(
      Number(row.created_at),
      Number(row.verified_at ?? 0),
      Number(row.check_issued_at ?? 0),
      Number(row.returned_at ?? 0),
    ),
    ownerFirst,
    ownerLast,
    email: row.email === null ? null : String(row.email),
    address: addressFrom(row),
    propertyType: propertyTypeOf(String(row.disbursement_kind) as "disbursement"),
    claim: row.claim === null ? null : String(row.claim),
    checkNumber: row.check_number === null ? null : Number(row.check_number),
    additionalOwners: (parties.get(String(row.disbursement_id)) ?? [])
      .filter((party) => required.includes(party.uuid)),
  };
}

/** What an owed item needs of its payout, its owner and its checks. */
const OWED_COLUMNS = `p.id, p.status, p.amount_cents, p.created_at, p.first_name, p.last_name,
  p.email, p.address_one, p.address_two, p.city, p.state, p.zip_code, p.method_details,
  p.failure_reason,
  p.permission_required_from, p.disbursement_id, y.name AS payee_name, y.address AS payee_address,
  d.kind AS disbursement_kind, coalesce(d.claim_id, d.external_uuid) AS claim,
  (SELECT max(l.verified_at) FROM portal_links l
    WHERE l.payout_id = p.id AND l.party_uuid IS NULL) AS verified_at,
  (SELECT max(c.issued_at) FROM checks c WHERE c.payout_id = p.id) AS check_issued_at,
  (SELECT c.check_number FROM checks c WHERE c.payout_id = p.id
    ORDER BY c.issued_at DESC LIMIT 1) AS check_number,
  (SELECT c.status FROM checks c WHERE c.payout_id = p.id
    ORDER BY c.issued_at DESC LIMIT 1) AS check_status`;

/** The authorization parties of the company's disbursements, by disbursement. */
async function partiesOf(reader: Reader, companyId: string) {
  const { rows } = await reader.execute({
    sql: `SELECT a.disbursement_id, a.party_uuid, a.first_name, a.last_name, a.title,
            a.company_name FROM authorization_parties a
            JOIN disbursements d ON d.id = a.disbursement_id
          WHERE d.company_id = ? ORDER BY a.rowid`,
    args: [companyId],
  });
  const byDisbursement = new Map<
    string,
    { uuid: string; last: string; first: string; relationship: string }[]
  >();
  for (const row of rows) {
    const list = byDisbursement.get(String(row.disbursement_id)) ?? [];
    list.push({
      uuid: String(row.party_uuid),
      last: text(row.last_name) || text(row.company_name) || String(row.party_uuid),
      first: text(row.first_name),
      relationship: text(row.title),
    });
    byDisbursement.set(String(row.disbursement_id), list);
  }
  return byDisbursement;
}

/** The company's dormancy overrides: days by `STATE/TYPE`. */
export async function dormancyOverrides(
  reader: Reader,
  companyId: string,
): Promise<Map<string, number>> {
  const { rows } = await reader.execute({
    sql: "SELECT state, property_type, days FROM unclaimed_dormancy WHERE company_id = ?",
    args: [companyId],
  });
  return new Map(rows.map((row) => [`${row.state}/${row.property_type}`, Number(row.days)]));
}

/** Sets a state's dormancy for a property type (an admin's, over the built-in table). */
export async function setDormancy(
  tx: WriteTx,
  companyId: string,
  entry: { state: string; propertyType: PropertyType; days: number },
  now: number,
): Promise<void> {
  await tx.execute({
    sql: `INSERT INTO unclaimed_dormancy (company_id, state, property_type, days, updated_at)
            VALUES (?, ?, ?, ?, ?)
          ON CONFLICT (company_id, state, property_type)
            DO UPDATE SET days = excluded.days, updated_at = excluded.updated_at`,
    args: [companyId, entry.state, entry.propertyType, entry.days, now],
  });
}

/** A due-diligence notice as recorded. */
export interface NoticeRow {
  readonly payoutId: string;
  readonly channel: "email" | "letter";
  readonly outcome: "sent" | "no_address" | "responded";
  readonly sentAt: number;
}

/** The company's due-diligence notices, oldest first. */
export async function noticesOf(reader: Reader, companyId: string): Promise<NoticeRow[]> {
  const { rows } = await reader.execute({
    sql: `SELECT payout_id, channel, outcome, sent_at FROM unclaimed_notices
          WHERE company_id = ? ORDER BY sent_at, channel, id`,
    args: [companyId],
  });
  return rows.map((row) => ({
    payoutId: String(row.payout_id),
    channel: String(row.channel) as NoticeRow["channel"],
    outcome: String(row.outcome) as NoticeRow["outcome"],
    sentAt: Number(row.sent_at),
  }));
}

/** Records a notice given to the owner of a payout. */
export async function recordNotice(
  tx: WriteTx,
  notice: {
    companyId: string;
    payoutId: string;
    channel: "email" | "letter";
    outcome: "sent" | "no_address";
  },
  now: number,
): Promise<void> {
  await tx.execute({
    sql: `INSERT INTO unclaimed_notices (id, company_id, payout_id, channel, outcome, sent_at)
          VALUES (?, ?, ?, ?, ?, ?)`,
    args: [newId("udn"), notice.companyId, notice.payoutId, notice.channel, notice.outcome, now],
  });
}

/** The owner answered (chose a method): the payout's notices say so. */
export async function recordResponse(tx: WriteTx, payoutId: string, now: number): Promise<void> {
  await tx.execute({
    sql: `UPDATE unclaimed_notices SET outcome = 'responded', responded_at = ?
          WHERE payout_id = ? AND outcome <> 'responded'`,
    args: [now, payoutId],
  });
}

/** A report as recorded. */
export interface ReportRow {
  readonly id: string;
  readonly companyId: string;
  readonly state: string;
  readonly reportYear: number;
  readonly payoutIds: string[];
  readonly totalCents: number;
  readonly sha256: string;
  readonly status: "written" | "remitted";
  readonly remittedAt: number | null;
}

const toReport = (row: Record<string, unknown>): ReportRow => ({
  id: String(row.id),
  companyId: String(row.company_id),
  state: String(row.state),
  reportYear: Number(row.report_year),
  payoutIds: JSON.parse(String(row.payout_ids)) as string[],
  totalCents: Number(row.total_cents),
  sha256: String(row.sha256),
  status: String(row.status) as ReportRow["status"],
  remittedAt: row.remitted_at === null ? null : Number(row.remitted_at),
});

/** Records a written report. */
export async function insertReport(
  tx: WriteTx,
  report: Omit<ReportRow, "id" | "status" | "remittedAt">,
  now: number,
): Promise<ReportRow> {
  const id = newId("ucr");
  await tx.execute({
    sql: `INSERT INTO unclaimed_reports (id, company_id, state, report_year, payout_ids,
            total_cents, sha256, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'written', ?)`,
    args: [
      id,
      report.companyId,
      report.state,
      report.reportYear,
      JSON.stringify(report.payoutIds),
      report.totalCents,
      report.sha256,
      now,
    ],
  });
  return { ...report, id, status: "written", remittedAt: null };
}

/** A report by id, or null. */
export async function loadReport(reader: Reader, reportId: string): Promise<ReportRow | null> {
  const { rows } = await reader.execute({
    sql: "SELECT * FROM unclaimed_reports WHERE id = ?",
    args: [reportId],
  });
  return rows[0] ? toReport(rows[0] as Record<string, unknown>) : null;
}

/** Marks a report remitted (only once: false when it was already). */
export async function markRemitted(tx: WriteTx, reportId: string, now: number): Promise<boolean> {
  const changed = await tx.execute({
    sql: `UPDATE unclaimed_reports SET status = 'remitted', remitted_at = ?
          WHERE id = ? AND status = 'written'`,
    args: [now, reportId],
  });
  return changed.rowsAffected === 1;
}

/** Records to which state a payout was remitted, with the escheat move's unit. */
export async function recordEscheated(
  tx: WriteTx,
  payoutId: string,
  state: string,
  now: number,
): Promise<void> {
  await tx.execute({
    sql: "UPDATE payouts SET escheated_state = ?, escheated_at = ? WHERE id = ?",
    args: [state, now, payoutId],
  });
}

/** Payouts of the company escheated already, to tell a report apart from an earlier one. */
export async function remittedPayoutIds(reader: Reader, companyId: string): Promise<Set<string>> {
  const { rows } = await reader.execute({
    sql: "SELECT id FROM payouts WHERE company_id = ? AND status = 'escheated'",
    args: [companyId],
  });
  return new Set(rows.map((row) => String(row.id)));
}
