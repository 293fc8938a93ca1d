/**
 * The company settings of what an insurer owes, on the database: the deadline settings (offer
 * expiry action, default pay_by days) and the unclaimed-property ones (holder state, the
 * sandbox's shortened dormancy).
 */
import type { WriteTx } from "../../db/writer.ts";
import type { DeadlineSettings, OfferExpiryAction } from "./deadline.ts";

/** A company's obligation settings. */
export interface ObligationSettings extends DeadlineSettings {
  /** The holder's state of incorporation (two letters), or null when not set. */
  readonly holderState: string | null;
  /** Test only: every dormancy period is this many days instead, or null. */
  readonly sandboxDormancyDays: number | null;
}

/** The company's obligation settings, read in the caller's unit (or from a read client). */
export async function readObligationSettings(
  tx: Pick<WriteTx, "execute">,
  companyId: string,
): Promise<ObligationSettings> {
  const { rows } = await tx.execute({
    sql: `SELECT offer_expiry_action, pay_by_days, holder_state, sandbox_dormancy_days
            FROM companies WHERE id = ?`,
    args: [companyId],
  });
  const row = rows[0];
  if (!row) throw new Error(`readObligationSettings: no company ${companyId}`);
  return {
    offerExpiryAction: String(row.offer_expiry_action) as OfferExpiryAction,
    payByDays: row.pay_by_days === null ? null : Number(row.pay_by_days),
    holderState: row.holder_state === null ? null : String(row.holder_state),
    sandboxDormancyDays: row.sandbox_dormancy_days === null
      ? null
      : Number(row.sandbox_dormancy_days),
  };
}

/** A payee's mailing address as a check and a state report need it. */
export interface AddressOnFile {
  readonly address_one: string;
  readonly address_two?: string;
  readonly city: string;
  readonly state: string;
  readonly zip_code: string;
}

const filled = (value: unknown): string | null =>
  typeof value === "string" && value.trim() !== "" ? value.trim() : null;

/**
 * The mailing address on file of a payout row (with its /v1 payee's `payee_address`): the one the
 * payee entered with a check, else the payout's own (a Surface A payee's), else its /v1 payee's;
 * null when none is whole.
 */
export function addressFrom(row: Readonly<Record<string, unknown>>): AddressOnFile | null {
  const details = JSON.parse(String(row.method_details ?? "{}")) as Record<string, unknown>;
  const payee = JSON.parse(String(row.payee_address ?? "null")) as Record<string, unknown> | null;
  const candidates = [
    [details.address_one, details.address_two, details.city, details.state, details.zip_code],
    [row.address_one, row.address_two, row.city, row.state, row.zip_code],
    [payee?.line1, payee?.line2, payee?.city, payee?.state, payee?.postal_code],
  ];
  for (const [one, two, city, state, zip] of candidates) {
    const whole = [filled(one), filled(city), filled(state), filled(zip)];
    if (whole.every((part) => part !== null)) {
      const line2 = filled(two);
      return {
        address_one: whole[0]!,
        ...(line2 ? { address_two: line2 } : {}),
        city: whole[1]!,
        state: whole[2]!.toUpperCase(),
        zip_code: whole[3]!,
      };
    }
  }
  return null;
}

/** The payout's mailing address on file, or null. */
export async function addressOnFile(
  tx: Pick<WriteTx, "execute">,
  payoutId: string,
): Promise<AddressOnFile | null> {
  const { rows } = await tx.execute({
    sql: `SELECT p.address_one, p.address_two, p.city, p.state, p.zip_code, p.method_details,
            y.address AS payee_address
          FROM payouts p LEFT JOIN payees y ON y.id = p.payee_id WHERE p.id = ?`,
    args: [payoutId],
  });
  return rows[0] ? addressFrom(rows[0]) : null;
}
/** Writes the settings a change names (the others keep their value), in the caller's unit. */
export async function updateObligationSettings(
  tx: WriteTx,
  companyId: string,
  change: {
    readonly offerExpiryAction?: OfferExpiryAction;
    readonly payByDays?: number | null;
    readonly holderState?: string;
    readonly sandboxDormancyDays?: number | null;
  },
): Promise<void> {
  const columns: [string, string | number | null][] = [];
  if (change.offerExpiryAction !== undefined) {
    columns.push(["offer_expiry_action", change.offerExpiryAction]);
  }
  if (change.payByDays !== undefined) columns.push(["pay_by_days", change.payByDays]);
  if (change.holderState !== undefined) columns.push(["holder_state", change.holderState]);
  if (change.sandboxDormancyDays !== undefined) {
    columns.push(["sandbox_dormancy_days", change.sandboxDormancyDays]);
  }
  if (columns.length === 0) return;
  await tx.execute({
    sql: `UPDATE companies SET ${columns.map(([name]) => `${name} = ?`).join(", ")} WHERE id = ?`,
    args: [...columns.map(([, value]) => value), companyId],
  });
}
