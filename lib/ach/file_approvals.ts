/** What the `bank_file.release` and `bank_file.resolve` approvals run once a second admin approves. */
import type { ApprovalKind } from "../operators/rules.ts";
import type { ApprovedAction } from "../operators/approvals.ts";

export const bankFileApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {};
