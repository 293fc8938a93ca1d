/**
 * What a `bank_settings.change` approval runs once a second admin approves it: the settings the
 * requester gave (sealed in the approval's payload, since they hold account numbers and SFTP
 * secrets) are checked again and saved, sealed, in the live database; with an SFTP target the
 * company's inbound polling is scheduled. The audit row names fingerprints, never the settings.
 */
import type { ApprovalKind } from "../operators/rules.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { appendAudit } from "../audit/store.ts";
import { ok } from "../platform/result.ts";
import { type BankSettings, bankSettingsJson, checkBankSettings } from "./bank_settings.ts";
import { bankSettingsFingerprint, saveBankSettings } from "./bank_store.ts";
import { ensureInboundPolling } from "./inbound.ts";

/** The payload of a `bank_settings.change` approval: what an approver may read, and the rest sealed. */
export interface BankSettingsChangePayload {
  readonly company_name: string;
  readonly tin: string;
  readonly fingerprint: string;
  readonly sftp: boolean;
  readonly settings_sealed: string;
}

/** Seals settings into an approval's payload. */
export async function bankSettingsChangePayload(
  secretBox: SecretBox,
  company: { name: string; tin: string },
  settings: BankSettings,
): Promise<Record<string, unknown>> {
  const payload: BankSettingsChangePayload = {
    company_name: company.name,
    tin: company.tin,
    fingerprint: await bankSettingsFingerprint(settings),
    sftp: settings.sftp !== null,
    settings_sealed: await secretBox.sealText(JSON.stringify(bankSettingsJson(settings))),
  };
  return { ...payload };
}

/** Live bank settings saved once a second admin approves them. */
const changeBankSettings: ApprovedAction = async (tx, approval, { deps, actor, now }) => {
  const payload = approval.payload as unknown as BankSettingsChangePayload;
  const companyId = approval.companyId;
  if (companyId === null) throw new Error(`approval ${approval.id} names no company`);
  const json = JSON.parse(await deps.secretBox.openText(payload.settings_sealed));
  const checked = checkBankSettings(json, "live");
  if (!checked.ok) return checked;
  const saved = await saveBankSettings(
    tx,
    deps.secretBox,
    companyId,
    checked.value,
    approval.requestedBy,
    now,
  );
  if (checked.value.sftp !== null) await ensureInboundPolling(tx, companyId, now);
  await appendAudit(tx, "live", actor, {
    at: now,
    action: "bank:set",
    objectType: "bank_settings",
    objectId: companyId,
    companyId,
    before: saved.previousFingerprint === null ? null : { fingerprint: saved.previousFingerprint },
    after: {
      fingerprint: saved.fingerprint,
      sftp: checked.value.sftp !== null,
      requested_by: approval.requestedBy,
      approval_id: approval.id,
    },
  });
  return ok({
    environment: "live",
    company_id: companyId,
    tin: payload.tin,
    fingerprint: saved.fingerprint,
    previous_fingerprint: saved.previousFingerprint,
  });
};

export const bankSettingsApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "bank_settings.change": changeBankSettings,
};
