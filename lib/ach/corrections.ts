/**
 * Notices of change kept per company: the corrected details for a (routing, account), applied to
 * later entries to the same account. CONTRACT STUB: owned by the imports helper.
 */
import type { WriteTx } from "../../db/writer.ts";
import type { SecretBox } from "../platform/crypto.ts";

export interface AccountDetails {
  readonly routingNumber: string;
  readonly accountNumber: string;
  readonly accountType: "checking" | "savings";
}

/** The details to use for an entry to `details`: corrected by a notice of change, or as given. */
export function correctedAccount(
  _tx: WriteTx,
  _secretBox: SecretBox,
  _companyId: string,
  _details: AccountDetails,
): Promise<AccountDetails> {
  throw new Error("not built yet");
}
