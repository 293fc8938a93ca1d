/**
 * Increase settings as sealed settings (lib/operators/sealed_settings_approval.ts): a live change
 * is an `increase_settings.change` approval, sealed since the settings hold the API key and the
 * webhook secret; an approver reads the API host, the account and the hosted card page.
 */
import type { ApprovalKind } from "../operators/rules.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import {
  sealedSettingsApprovedAction,
  type SealedSettingsRail,
} from "../operators/sealed_settings_approval.ts";
import { checkIncreaseSettings, type IncreaseSettings, increaseSettingsJson } from "./settings.ts";
import { increaseSettingsStore } from "./store.ts";

/** What increase:set and its approval do with Increase settings. */
export const increaseSealedSettings: SealedSettingsRail<IncreaseSettings> = {
  kind: "increase_settings.change",
  action: "increase:set",
  table: "increase_settings",
  check: checkIncreaseSettings,
  json: increaseSettingsJson,
  fingerprint: increaseSettingsStore.fingerprint,
  save: increaseSettingsStore.save,
  readable: (settings) => ({
    base_url: settings.baseUrl,
    account_id: settings.accountId,
    card_page_url: settings.cardPageUrl,
  }),
};

export const increaseSettingsApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "increase_settings.change": sealedSettingsApprovedAction(increaseSealedSettings),
};
