/**
 * Notices of change kept per company: the corrected details for a (routing, account), applied to
 * later entries to the same account. A row is found by the original routing number and an HMAC of
 * the original account number (never the number itself); the corrected details are sealed.
 */
import { achCorrections } from "../../db/schema.ts";
import type { SqlReader, WriteTx } from "../../db/writer.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { Correction } from "./nacha.ts";
import type { PayoutRow } from "../payouts/store.ts";
import { type NotificationSettings, payoutContact, queueMessages } from "../notify/store.ts";
import { renderMessage } from "../notify/messages.ts";

export interface AccountDetails {
  readonly routingNumber: string;
  readonly accountNumber: string;
  readonly accountType: "checking" | "savings";
}

/** The HMAC purpose of correction rows' account keys: no other MAC of the service shares it. */
const ACCOUNT_KEY_PURPOSE = "ach-correction-account";

/** The key a correction row of `accountNumber` is found by. */
function accountKeyOf(secretBox: SecretBox, accountNumber: string): Promise<string> {
  return secretBox.mac(ACCOUNT_KEY_PURPOSE, accountNumber);
}

/** The details to use for an entry to `details`: corrected by a notice of change, or as given. */
export async function correctedAccount(
  reader: SqlReader,
  secretBox: SecretBox,
  companyId: string,
  details: AccountDetails,
): Promise<AccountDetails> {
  const { rows } = await reader.execute({
    sql: `SELECT corrected_sealed FROM ach_corrections
          WHERE company_id = ? AND routing_number = ? AND account_key = ?`,
    args: [companyId, details.routingNumber, await accountKeyOf(secretBox, details.accountNumber)],
  });
  if (!rows[0]) return details;
  return JSON.parse(await secretBox.openText(String(rows[0].corrected_sealed))) as AccountDetails;
}

/**
 * The bank account a payout's payee chose (routing, account and type from its method details),
 * or null when its method is not ACH.
 */
export async function payoutAccount(
  secretBox: SecretBox,
  payout: Pick<PayoutRow, "methodDetails">,
): Promise<AccountDetails | null> {
  const details = payout.methodDetails;
  if (typeof details.routing_number !== "string" || typeof details.account_sealed !== "string") {
    return null;
  }
  return {
    routingNumber: details.routing_number,
    accountNumber: await secretBox.openText(details.account_sealed),
    accountType: details.account_type === "savings" ? "savings" : "checking",
  };
}

/**
 * Records a notice of change of the entries to `original`: what the bank corrected is laid over
 * the details those entries were sent to (an earlier correction included), and later entries to
 * `original` use the result. Null when the notice corrects nothing that is not on record already
 * (the same notice in a second file): nothing is written.
 */
export async function recordCorrection(
  tx: WriteTx,
  secretBox: SecretBox,
  notice: {
    readonly companyId: string;
    readonly original: AccountDetails;
    readonly changeCode: string;
    readonly correction: Correction;
    readonly importId: string;
  },
  now: number,
): Promise<AccountDetails | null> {
  const sentTo = await correctedAccount(tx, secretBox, notice.companyId, notice.original);
  const corrected: AccountDetails = {
    routingNumber: notice.correction.routingNumber ?? sentTo.routingNumber,
    accountNumber: notice.correction.accountNumber ?? sentTo.accountNumber,
    accountType: notice.correction.accountType ?? sentTo.accountType,
  };
  const onRecord = sentTo !== notice.original;
  if (
    onRecord && corrected.routingNumber === sentTo.routingNumber &&
    corrected.accountNumber === sentTo.accountNumber &&
    corrected.accountType === sentTo.accountType
  ) return null;
  const row = {
    changeCode: notice.changeCode,
    correctedSealed: await secretBox.sealText(JSON.stringify(corrected)),
    importId: notice.importId,
    createdAt: now,
  };
  await tx.db.insert(achCorrections).values({
    companyId: notice.companyId,
    routingNumber: notice.original.routingNumber,
    accountKey: await accountKeyOf(secretBox, notice.original.accountNumber),
    ...row,
  }).onConflictDoUpdate({
    target: [achCorrections.companyId, achCorrections.routingNumber, achCorrections.accountKey],
    set: row,
  });
  return corrected;
}

/** Tells a payout's payee that their bank details were updated by their bank. */
export async function tellPayeeDetailsUpdated(
  tx: WriteTx,
  settings: NotificationSettings,
  payoutId: string,
  now: number,
): Promise<void> {
  const contact = await payoutContact(tx, payoutId);
  await queueMessages(tx, settings.environment, {
    companyId: contact.companyId,
    payoutId,
    recipient: contact.recipient,
    rendered: renderMessage("details_updated", contact.language, contact),
    links: [],
  }, now);
}
