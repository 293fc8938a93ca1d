/**
 * Bank settings as sealed settings (lib/operators/sealed_settings_approval.ts): a live change is
 * a `bank_settings.change` approval, sealed since the settings hold account numbers and SFTP
 * secrets; an approver reads whether there is an SFTP target, and once approved with one the
 * company's inbound polling is scheduled.
 */
import type { ApprovalKind } from "../operators/rules.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import {
  sealedSettingsApprovedAction,
  type SealedSettingsRail,
} from "../operators/sealed_settings_approval.ts";
import { type BankSettings, bankSettingsJson, checkBankSettings } from "./bank_settings.ts";
import { bankSettingsFingerprint, saveBankSettings } from "./bank_store.ts";
import { ensureInboundPolling } from "./inbound.ts";

/** What bank:set and its approval do with bank settings. */
export const bankSealedSettings: SealedSettingsRail<BankSettings> = {
  kind: "bank_settings.change",
  action: "bank:set",
  table: "bank_settings",
  check: checkBankSettings,
  json: bankSettingsJson,
  fingerprint: bankSettingsFingerprint,
  save: saveBankSettings,
  readable: (settings) => ({ sftp: settings.sftp !== null }),
  afterApprovedSave: async (tx, companyId, settings, now) => {
    if (settings.sftp !== null) await ensureInboundPolling(tx, companyId, now);
  },
};

export const bankSettingsApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "bank_settings.change": sealedSettingsApprovedAction(bankSealedSettings),
};
