/** Surface A disbursements on the database: authorization parties and the record of seed 2.4/2.5. */
import { newId } from "../lib/keys.ts";
import type { PayoutStatus } from "../lib/payouts/states.ts";
import type { SqlExecutor } from "./ledger_store.ts";
import type { WriteTx } from "./writer.ts";

export interface PartyInput {
  readonly party_uuid: string;
  readonly party_type: string;
  readonly title: string | null;
  readonly Company_name: string | null;
  readonly email: string | null;
  readonly first_name: string | null;
  readonly last_name: string | null;
  readonly phone: string | null;
}

export async function insertParties(
  tx: WriteTx,
  disbursementId: string,
  parties: readonly PartyInput[],
): Promise<void> {
  for (const party of parties) {
    await tx.execute({
      sql:
        `INSERT INTO authorization_parties (id, disbursement_id, party_uuid, party_type, title, company_name, email,
              first_name, last_name, phone) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      args: [
        newId("party"),
        disbursementId,
        party.party_uuid,
        party.party_type,
        party.title,
        party.Company_name,
        party.email,
        party.first_name,
        party.last_name,
        party.phone,
      ],
    });
  }
}

export interface ApiPayoutRow {
  readonly id: string;
  readonly status: PayoutStatus;
  readonly paymentMethodId: number | null;
  readonly fields: Record<string, unknown>;
}

export interface ApiDisbursement {
  readonly id: string;
  readonly uuid: string;
  readonly lineId: string;
  readonly requestFingerprint: string;
  readonly payorEmail: string | null;
  readonly createdAt: number;
  readonly parties: Record<string, unknown>[];
  readonly payouts: ApiPayoutRow[];
}

/** A Surface A disbursement of the company by its disbursement_uuid, or null. */
export async function loadApiDisbursement(
  executor: SqlExecutor,
  companyId: string,
  uuid: string,
): Promise<ApiDisbursement | null> {
  const { rows } = await executor.execute({
    sql:
      `SELECT d.id, d.external_uuid, d.line_id, d.request_fingerprint, d.created_at, u.email AS payor_email
          FROM disbursements d LEFT JOIN users u ON u.id = d.payor_user_id
          WHERE d.company_id = ? AND d.kind = 'disbursement' AND d.external_uuid = ?`,
    args: [companyId, uuid],
  });
  const row = rows[0];
  if (!row) return null;
  const id = String(row.id);
  const parties = await executor.execute({
    sql: `SELECT party_uuid, title, email, first_name, last_name, phone FROM authorization_parties
          WHERE disbursement_id = ? ORDER BY rowid`,
    args: [id],
  });
  const payouts = await executor.execute({
    sql:
      `SELECT id, status, payment_method_id, payee_type_id, amount_cents, payee_uuid, email, first_name, last_name,
            address_one, address_two, city, state, zip_code, phone, delivery_options, allowed_payment_method_ids,
            permission_required_from, field_values
          FROM payouts WHERE disbursement_id = ? ORDER BY rowid`,
    args: [id],
  });
  return {
    id,
    uuid: String(row.external_uuid),
    lineId: String(row.line_id),
    requestFingerprint: String(row.request_fingerprint),
    payorEmail: row.payor_email === null ? null : String(row.payor_email),
    createdAt: Number(row.created_at),
    parties: parties.rows.map((p) => ({ ...p })),
    payouts: payouts.rows.map((p) => ({
      id: String(p.id),
      status: p.status as PayoutStatus,
      paymentMethodId: p.payment_method_id === null ? null : Number(p.payment_method_id),
      fields: { ...p },
    })),
  };
}
