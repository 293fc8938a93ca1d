/**
 * PayPal settings as sealed settings (lib/operators/sealed_settings_approval.ts): a live change
 * is a `paypal_settings.change` approval, sealed since the settings hold the client secret; an
 * approver reads the API base URL.
 */
import type { ApprovalKind } from "../operators/rules.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import {
  sealedSettingsApprovedAction,
  type SealedSettingsRail,
} from "../operators/sealed_settings_approval.ts";
import { checkPaypalSettings, type PaypalSettings, paypalSettingsJson } from "./settings.ts";
import { paypalSettingsFingerprint, savePaypalSettings } from "./settings_store.ts";

/** What paypal:set and its approval do with PayPal settings. */
export const paypalSealedSettings: SealedSettingsRail<PaypalSettings> = {
  kind: "paypal_settings.change",
  action: "paypal:set",
  table: "paypal_settings",
  check: checkPaypalSettings,
  json: paypalSettingsJson,
  fingerprint: paypalSettingsFingerprint,
  save: savePaypalSettings,
  readable: (settings) => ({ base_url: settings.baseUrl }),
};

export const paypalSettingsApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "paypal_settings.change": sealedSettingsApprovedAction(paypalSealedSettings),
};
