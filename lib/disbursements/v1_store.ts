/**
 * Surface B resources on the database: payees upserted by the company's own id, and the read
 * side of disbursements (one payout with a claim id) with their timelines. Every lookup is
 * scoped to the caller's company and line; the environment is the database itself.
 */
import { columnsOf, integer, json, type RowMapper, rowMapper, text } from "../../db/rows.ts";
import { disbursements, payees } from "../../db/schema.ts";
import { newId } from "../platform/keys.ts";
import { eventCatalogue, type PayoutStatus } from "../payouts/states.ts";
import { recordEvent } from "../webhooks/event_store.ts";
import type { Database } from "../../db/client.ts";
import type { SqlExecutor } from "../ledger/store.ts";
import type { WriteTx } from "../../db/writer.ts";

export interface PayeeFields {
  readonly name: string | null;
  readonly email: string | null;
  readonly phone: string | null;
  readonly language: string;
  readonly contactChannel: "email" | "sms";
  readonly modalityDefaults: string[];
  readonly address: Record<string, string> | null;
  readonly type: "individual" | "business";
}

export interface PayeeRecord extends PayeeFields {
  readonly id: string;
  readonly externalId: string;
  readonly createdAt: number;
  readonly updatedAt: number;
}

const payee = columnsOf(payees);
const toPayee: RowMapper<PayeeRecord> = rowMapper({
  id: payee.id,
  externalId: payee.externalId,
  name: payee.name,
  email: payee.email,
  phone: payee.phone,
  language: payee.language,
  contactChannel: payee.contactChannel,
  modalityDefaults: json<string[]>(payee.modalityDefaults, "array"),
  address: json<Record<string, string>, string | null>(payee.address, "object"),
  type: payee.type,
  createdAt: payee.createdAt,
  updatedAt: payee.updatedAt,
});
const PAYEE_COLUMNS = toPayee.columns.join(", ");
/** A payee by the company's id for it: every create reads it (one text, built once). */
const FIND_PAYEE =
  `SELECT ${PAYEE_COLUMNS} FROM payees WHERE company_id = ? AND line_id = ? AND external_id = ?`;

export async function findPayee(
  executor: SqlExecutor,
  companyId: string,
  lineId: string,
  externalId: string,
): Promise<PayeeRecord | null> {
  const { rows } = await executor.execute({
    sql: FIND_PAYEE,
    args: [companyId, lineId, externalId],
  });
  return rows[0] ? toPayee(rows[0]) : null;
}

/**
 * Creates or updates a payee (fields left out keep their value); an update that changes anything writes a payee.updated event with
 * the changed field names, in the same unit.
 */
export async function upsertPayee(
  tx: WriteTx,
  scope: { companyId: string; lineId: string; externalId: string },
  patch: Partial<PayeeFields>,
  now: number,
): Promise<{ payee: PayeeRecord; created: boolean; changed: string[] }> {
  const existing = await findPayee(tx, scope.companyId, scope.lineId, scope.externalId);
  // Fields left out keep their value; on creation they take their defaults.
  const fields: PayeeFields = {
    name: null,
    email: null,
    phone: null,
    language: "en",
    contactChannel: "email",
    modalityDefaults: [],
    address: null,
    type: "individual",
    ...(existing ?? {}),
    ...Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined)),
  };
  const stored = [
    fields.name,
    fields.email,
    fields.phone,
    fields.language,
    fields.contactChannel,
    JSON.stringify(fields.modalityDefaults),
    fields.address === null ? null : JSON.stringify(fields.address),
    fields.type,
  ];
  if (!existing) {
    const id = newId("payee");
    await tx.execute({
      sql:
        `INSERT INTO payees (id, company_id, line_id, external_id, name, email, phone, language, contact_channel,
              modality_defaults, address, type, created_at, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      args: [id, scope.companyId, scope.lineId, scope.externalId, ...stored, now, now],
    });
    return {
      payee: (await findPayee(tx, scope.companyId, scope.lineId, scope.externalId))!,
      created: true,
      changed: [],
    };
  }
  const before: Record<string, unknown> = {
    name: existing.name,
    email: existing.email,
    phone: existing.phone,
    language: existing.language,
    contact_channel: existing.contactChannel,
    modality_defaults: JSON.stringify(existing.modalityDefaults),
    address: existing.address === null ? null : JSON.stringify(existing.address),
    type: existing.type,
  };
  const changed = Object.keys(before).filter((key, i) => before[key] !== stored[i]);
  if (changed.length === 0) return { payee: existing, created: false, changed };
  await tx.execute({
    sql:
      `UPDATE payees SET name = ?, email = ?, phone = ?, language = ?, contact_channel = ?, modality_defaults = ?,
            address = ?, type = ?, updated_at = ? WHERE id = ?`,
    args: [...stored, now, existing.id],
  });
  await recordEvent(tx, {
    companyId: scope.companyId,
    lineId: scope.lineId,
    key: "payee_updated",
    payeeId: existing.id,
    reason: `${eventCatalogue.payee_updated.name}: ${changed.join(", ")} changed`,
    data: { payee_id: scope.externalId, changed },
  }, now);
  return {
    payee: (await findPayee(tx, scope.companyId, scope.lineId, scope.externalId))!,
    created: false,
    changed,
  };
}

export interface V1Disbursement {
  readonly id: string;
  readonly claimId: string;
  readonly metadata: Record<string, string>;
  readonly createdAt: number;
  readonly payoutId: string;
  readonly status: PayoutStatus;
  readonly amountCents: number;
  readonly allowedPaymentMethodIds: number[];
  readonly paymentMethodId: number | null;
  /** Null for a payout made through Surface A: its payee is no /v1 payee. */
  readonly payeeExternalId: string | null;
  /** The date (YYYY-MM-DD) it must be paid by, or null. */
  readonly payBy: string | null;
  /** The network an instant deposit went over (a card route, or rtp), or null. */
  readonly network: string | null;
  readonly timeline: { status: PayoutStatus; at: number; detail: string | null }[];
}

/**
 * The disbursement, its payout and its timeline as one JSON column: the driver converts each
 * column of each row on its own, so one column reads about a third faster than twelve.
 */
const V1_JSON = `json_object(
    'id', d.id, 'claimId', d.claim_id, 'metadata', json(d.metadata), 'createdAt', d.created_at,
    'payoutId', p.id, 'status', p.status, 'amountCents', p.amount_cents,
    'allowedPaymentMethodIds', json(p.allowed_payment_method_ids),
    'paymentMethodId', p.payment_method_id, 'payeeExternalId', p.payee_uuid, 'payBy', p.pay_by,
    'network', json_extract(p.method_details, '$.network'),
    'timeline', (SELECT json_group_array(json_object('status', t.to_status, 'at', t.at, 'detail', t.detail))
      FROM (SELECT to_status, at, detail FROM payout_transitions WHERE payout_id = p.id ORDER BY id) t)
  ) AS disbursement`;

const toV1 = rowMapper({
  disbursement: json<V1Disbursement>(text("disbursements", "disbursement"), "object"),
});

const toCursor = rowMapper({
  createdAt: columnsOf(disbursements).createdAt,
  seq: integer("disbursements", "seq"),
});

/** A /v1 disbursement of the caller's line, or null (another line's or company's is absent). */
export async function loadV1Disbursement(
  executor: SqlExecutor,
  scope: { companyId: string; lineId: string },
  id: string,
): Promise<V1Disbursement | null> {
  const { rows } = await executor.execute({
    sql: `SELECT ${V1_JSON} FROM disbursements d JOIN payouts p ON p.disbursement_id = d.id
          WHERE d.id = ? AND d.company_id = ? AND d.line_id = ? AND d.kind = 'v1'`,
    args: [id, scope.companyId, scope.lineId],
  });
  return rows[0] ? toV1(rows[0]).disbursement : null;
}

/** A cached disbursement with the company and line it belongs to. */
export interface CachedV1Disbursement {
  readonly companyId: string;
  readonly lineId: string;
  readonly disbursement: V1Disbursement;
}

/**
 * `loadV1Disbursement` of committed data for a GET, through the database's read cache. Never for
 * a read that decides a write: that one belongs in the write unit.
 */
export async function readV1Disbursement(
  database: Database,
  scope: { companyId: string; lineId: string },
  id: string,
): Promise<V1Disbursement | null> {
  const cache = database.disbursementReads;
  const cached = cache.get(id);
  if (cached) {
    // Ids are unique across companies and lines: one of another scope is absent for this one.
    const ours = cached.companyId === scope.companyId && cached.lineId === scope.lineId;
    return ours ? cached.disbursement : null;
  }
  const generation = cache.generation();
  const found = await loadV1Disbursement(database.readClient, scope, id);
  if (found) {
    cache.put(
      id,
      { companyId: scope.companyId, lineId: scope.lineId, disbursement: found },
      generation,
    );
  }
  return found;
}

/** Newest first; `startingAfter` is the id of the last disbursement of the previous page. */
export async function listV1Disbursements(
  executor: SqlExecutor,
  scope: { companyId: string; lineId: string },
  page: { limit: number; startingAfter: string | null },
): Promise<{ data: V1Disbursement[]; hasMore: boolean } | null> {
  let cursor: { createdAt: number; seq: number } | null = null;
  if (page.startingAfter !== null) {
    const { rows } = await executor.execute({
      sql:
        `SELECT created_at, rowid AS seq FROM disbursements WHERE id = ? AND company_id = ? AND line_id = ? AND kind = 'v1'`,
      args: [page.startingAfter, scope.companyId, scope.lineId],
    });
    if (!rows[0]) return null;
    cursor = toCursor(rows[0]);
  }
  const { rows } = await executor.execute({
    sql: `SELECT ${V1_JSON} FROM disbursements d JOIN payouts p ON p.disbursement_id = d.id
          WHERE d.company_id = ? AND d.line_id = ? AND d.kind = 'v1'
            ${cursor ? "AND (d.created_at < ? OR (d.created_at = ? AND d.rowid < ?))" : ""}
          ORDER BY d.created_at DESC, d.rowid DESC LIMIT ?`,
    args: [
      scope.companyId,
      scope.lineId,
      ...(cursor ? [cursor.createdAt, cursor.createdAt, cursor.seq] : []),
      page.limit + 1,
    ],
  });
  return {
    data: rows.slice(0, page.limit).map((row) => toV1(row).disbursement),
    hasMore: rows.length > page.limit,
  };
}
