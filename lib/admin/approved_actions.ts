/**
 * The approvals registry: what each approval kind runs once a second admin approves, assembled
 * here from each capability's own actions, so that lib/operators (which decides approvals) imports
 * none of the capabilities whose actions it runs.
 */
import type { ApprovedActions } from "../operators/approvals.ts";
import { operatorApprovedActions } from "../operators/approvals.ts";
import { fundingApprovedActions } from "../funding/manual_approval.ts";
import { payoutApprovedActions } from "../payouts/approval_actions.ts";
import { bankSettingsApprovedActions } from "../ach/bank_settings_approval.ts";
import { achImportApprovedActions } from "../ach/import_approval.ts";
import { paidImportApprovedActions } from "../checks/import_approval.ts";
import { paypalSettingsApprovedActions } from "../paypal/settings_approval.ts";
import { lithicSettingsApprovedActions } from "../cards/settings_approval.ts";
import { lobSettingsApprovedActions } from "../lob/settings_approval.ts";
import { increaseSettingsApprovedActions } from "../instant/settings_approval.ts";
import { bankFileApprovedActions } from "../rails/batch_approvals.ts";
import { railExceptionResolved } from "../rails/exceptions.ts";
import { reconciliationApprovedActions } from "../reconciliation/approvals.ts";
import { unclaimedApprovedActions } from "../obligations/approvals.ts";
import { ok } from "../platform/result.ts";

/** Every approval kind's action. */
export const approvedActions: ApprovedActions = {
  ...operatorApprovedActions,
  ...fundingApprovedActions,
  ...payoutApprovedActions,
  ...bankSettingsApprovedActions,
  ...bankFileApprovedActions,
  ...paypalSettingsApprovedActions,
  ...lithicSettingsApprovedActions,
  ...lobSettingsApprovedActions,
  ...increaseSettingsApprovedActions,
  ...achImportApprovedActions,
  ...paidImportApprovedActions,
  ...reconciliationApprovedActions,
  ...unclaimedApprovedActions,
  "rail_exception.resolve": async (tx, approval, { actor, now }) => {
    const resolved = await railExceptionResolved(tx, actor, approval, now);
    return resolved.ok ? ok(resolved.value) : resolved;
  },
};
