/** What a `bank_settings.change` approval runs once a second admin approves it. */
import type { ApprovalKind } from "../operators/rules.ts";
import type { ApprovedAction } from "../operators/approvals.ts";

export const bankSettingsApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {};
