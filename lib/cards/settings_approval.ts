/**
 * Lithic settings as sealed settings (lib/operators/sealed_settings_approval.ts): a live change
 * is a `lithic_settings.change` approval, sealed since the settings hold the API key and the
 * webhook secret; an approver reads the API host, the card validity and the merchant categories.
 */
import type { ApprovalKind } from "../operators/rules.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import {
  sealedSettingsApprovedAction,
  type SealedSettingsRail,
} from "../operators/sealed_settings_approval.ts";
import { checkLithicSettings, type LithicSettings, lithicSettingsJson } from "./settings.ts";
import { lithicSettingsStore } from "./store.ts";

/** What lithic:set and its approval do with Lithic settings. */
export const lithicSealedSettings: SealedSettingsRail<LithicSettings> = {
  kind: "lithic_settings.change",
  action: "lithic:set",
  table: "lithic_settings",
  check: checkLithicSettings,
  json: lithicSettingsJson,
  fingerprint: lithicSettingsStore.fingerprint,
  save: lithicSettingsStore.save,
  readable: (settings) => ({
    base_url: settings.baseUrl,
    card_valid_days: settings.cardValidDays,
    allowed_mccs: settings.allowedMccs,
  }),
};

export const lithicSettingsApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "lithic_settings.change": sealedSettingsApprovedAction(lithicSealedSettings),
};
