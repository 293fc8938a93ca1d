/**
 * Lob settings as sealed settings (lib/operators/sealed_settings_approval.ts): a live change is a
 * `lob_settings.change` approval, sealed since the settings hold the API key and the webhook
 * secret; an approver reads the host, Lob's bank account and return address, and who mails.
 */
import type { ApprovalKind } from "../operators/rules.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import {
  sealedSettingsApprovedAction,
  type SealedSettingsRail,
} from "../operators/sealed_settings_approval.ts";
import { checkLobSettings, type LobSettings, lobSettingsJson } from "./settings.ts";
import { lobSettingsStore } from "./store.ts";

/** What lob:set and its approval do with Lob settings. */
export const lobSealedSettings: SealedSettingsRail<LobSettings> = {
  kind: "lob_settings.change",
  action: "lob:set",
  table: "lob_settings",
  check: checkLobSettings,
  json: lobSettingsJson,
  fingerprint: lobSettingsStore.fingerprint,
  save: lobSettingsStore.save,
  readable: (settings) => ({
    base_url: settings.baseUrl,
    bank_account: settings.bankAccount,
    from_address: settings.fromAddress,
    mailing: settings.mailing,
  }),
};

export const lobSettingsApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "lob_settings.change": sealedSettingsApprovedAction(lobSealedSettings),
};
