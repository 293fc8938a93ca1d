/**
 * A live file imported by hand (an ACH return file, a check paid-items file, a bank statement)
 * waits for a second admin: it is staged sealed in an approval (lib/admin/command_kit.ts
 * stageHandImport) and imported in the approval's unit once approved, audited. Files fetched from
 * the bank's SFTP never come here: the bank is the other party. Each rail gives only its import
 * and what its report says; staging, opening, the source and the audit row are this one path.
 */
import type { WriteTx } from "../../db/writer.ts";
import { appendAudit } from "../audit/store.ts";
import type { RuntimeSettings } from "../payouts/settings.ts";
import { ok, type Result } from "../platform/result.ts";
import type { ActionContext, ApprovedAction } from "./approvals.ts";
import type { ApprovalRecord } from "./store.ts";

/** Where an operator imported a file by hand: the CLI (or the admin endpoint), or the console. */
export type HandImportSource = "cli" | "console";

/** The source of a hand import from its operator's audit origin (`console <address>`, `cli`, …). */
export function handImportSource(origin: string): HandImportSource {
  return origin === "console" || origin.startsWith("console ") ? "console" : "cli";
}

/** What a staged hand import's approval carries: the file sealed, its name, hash and source. */
export interface StagedHandImport {
  readonly file_name: string;
  readonly sha256: string;
  readonly content_sealed: string;
  /** Absent in approvals staged before the source was kept: those came from the CLI. */
  readonly source?: HandImportSource;
}

/** The file an approved hand import imports, opened from its approval. */
export interface HandImportFile {
  readonly content: Uint8Array;
  readonly fileName: string;
  readonly source: HandImportSource;
  readonly importedBy: string | null;
}

/** One rail's part of an approved hand import. */
export interface HandImportApply<Report extends { importId: string; duplicate: boolean }> {
  /** The audit action, which is also the command that stages it: `ach:import`. */
  readonly action: string;
  /** The audit rows' object type: `ach_import`. */
  readonly objectType: string;
  readonly importInUnit: (
    tx: WriteTx,
    approval: ApprovalRecord,
    context: ActionContext,
    file: HandImportFile,
  ) => Promise<Result<Report>>;
  /** What the audit row keeps of the report besides its import, file and duplicate. */
  readonly audited: (report: Report) => Record<string, unknown>;
  /** What the approval answers of the report besides its import and duplicate. */
  readonly answer: (report: Report) => Record<string, unknown>;
}

/** The runtime settings an approved import composes its rails with (the service always has them). */
export function approvedImportRuntime(context: ActionContext): RuntimeSettings {
  if (!context.deps.runtimeSettings) {
    throw new Error("a staged import is approved without runtime settings");
  }
  return context.deps.runtimeSettings;
}

/** The approved action of a rail's staged hand import. */
export function handImportApprovedAction<
  Report extends { importId: string; duplicate: boolean },
>(apply: HandImportApply<Report>): ApprovedAction {
  return async (tx, approval, context) => {
    const staged = approval.payload as unknown as StagedHandImport;
    const content = new TextEncoder().encode(
      await context.deps.secretBox.openText(staged.content_sealed),
    );
    const imported = await apply.importInUnit(tx, approval, context, {
      content,
      fileName: staged.file_name,
      source: staged.source ?? "cli",
      importedBy: approval.requestedBy,
    });
    if (!imported.ok) return imported;
    const report = imported.value;
    await appendAudit(tx, "live", context.actor, {
      at: context.now,
      action: apply.action,
      objectType: apply.objectType,
      objectId: staged.sha256,
      companyId: approval.companyId,
      before: null,
      after: {
        import_id: report.importId,
        file_name: staged.file_name,
        duplicate: report.duplicate,
        ...apply.audited(report),
        requested_by: approval.requestedBy,
        approval_id: approval.id,
      },
    });
    return ok({ import_id: report.importId, duplicate: report.duplicate, ...apply.answer(report) });
  };
}
