/**
 * A live hand import waits for a second admin: the file imported by hand (never one fetched from
 * the bank's SFTP, where the bank is the other party) is staged sealed in an approval, with a
 * preview of what it would apply; approving imports it in the approval's unit
 * (lib/operators/hand_import_approval.ts), the whole file at once, so that the import and its
 * audit row commit together (an import of the same file stopped midway is completed by it).
 */
import {
  approvedImportRuntime,
  handImportApprovedAction,
} from "../operators/hand_import_approval.ts";
import type { ApprovedAction } from "../operators/approvals.ts";
import type { ApprovalKind } from "../operators/rules.ts";
import { composeRails } from "../payouts/runtime.ts";
import { importAchFileInUnit } from "./imports.ts";

const applyStagedImport = handImportApprovedAction({
  action: "ach:import",
  objectType: "ach_import",
  importInUnit: (tx, _approval, context, file) => {
    const { deps, now } = context;
    const settings = approvedImportRuntime(context);
    const rails = composeRails("live", settings, deps.databases.live, deps.secretBox);
    return importAchFileInUnit(
      tx,
      {
        database: deps.databases.live,
        environment: "live",
        secretBox: deps.secretBox,
        runtime: rails.runtime,
        rails: rails.batch.rails,
      },
      file,
      now,
    );
  },
  audited: (report) => ({ applied: report.applied, not_applied: report.notApplied.length }),
  answer: (report) => ({
    returns: report.returns,
    corrections: report.corrections,
    applied: report.applied,
  }),
});

/** The approved action of a staged hand import, for the approvals registry. */
export const achImportApprovedActions: Partial<Record<ApprovalKind, ApprovedAction>> = {
  "ach_import.apply": applyStagedImport,
};
