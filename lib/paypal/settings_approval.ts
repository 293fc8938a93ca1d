/**
 * What a `paypal_settings.change` approval runs once a second admin approves it: the settings the
 * requester gave (sealed in the approval's payload, since they hold the client secret) are checked
 * again and saved, sealed, in the live database. The audit row names fingerprints, never the secret.
 */
import type { ApprovalKind } from "../operators/rules.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { appendAudit } from "../audit/store.ts";
import { ok } from "../platform/result.ts";
import { checkPaypalSettings, type PaypalSettings, paypalSettingsJson } from "./settings.ts";
import { paypalSettingsFingerprint, savePaypalSettings } from "./settings_store.ts";

/** The payload of a `paypal_settings.change` approval: what an approver may read, and the rest sealed. */
interface PaypalSettingsChangePayload {
  readonly company_name: string;
  readonly tin: string;
  readonly fingerprint: string;
  readonly base_url: string;
  readonly settings_sealed: string;
}

/** Seals settings into an approval's payload. */
export async function paypalSettingsChangePayload(
  secretBox: SecretBox,
  company: { name: string; tin: string },
  settings: PaypalSettings,
): Promise<Record<string, unknown>> {
  const payload: PaypalSettingsChangePayload = {
    company_name: company.name,
    tin: company.tin,
    fingerprint: await paypalSettingsFingerprint(settings),
    base_url: settings.baseUrl,
    settings_sealed: await secretBox.sealText(JSON.stringify(paypalSettingsJson(settings))),
  };
  return { ...payload };
}

/** Live PayPal settings saved once a second admin approves them. */
const changePaypalSettings: ApprovedAction = async (tx, approval, { deps, actor, now }) => {
  const payload = approval.payload as unknown as PaypalSettingsChangePayload;
  const companyId = approval.companyId;
  if (companyId === null) throw new Error(`approval ${approval.id} names no company`);
  const json = JSON.parse(await deps.secretBox.openText(payload.settings_sealed));
  const checked = checkPaypalSettings(json, "live");
  if (!checked.ok) return checked;
  const saved = await savePaypalSettings(
    tx,
    deps.secretBox,
    companyId,
    checked.value,
    approval.requestedBy,
    now,
  );
  await appendAudit(tx, "live", actor, {
    at: now,
    action: "paypal:set",
    objectType: "paypal_settings",
    objectId: companyId,
    companyId,
    before: saved.previousFingerprint === null ? null : { fingerprint: saved.previousFingerprint },
    after: {
      fingerprint: saved.fingerprint,
      base_url: checked.value.baseUrl,
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

export const paypalSettingsApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "paypal_settings.change": changePaypalSettings,
};
