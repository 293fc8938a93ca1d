/**
 * The resume job of an unfinished ACH import (`ach.resume_import`, subject: the import's id), due
 * when the import's claim lapses: an import stopped between units (a crash, a restart) whose file
 * no one imports again (the inbound directory no longer has it, an operator's import is not
 * repeated) is taken up from the content its row keeps, sealed, with the scope it was claimed
 * with. A complete import's job has nothing to do.
 */
import { externalJob, type JobHandler } from "../../db/scheduler.ts";
import { releaseHeldSettlements } from "../rails/outcome_fence.ts";
import { type AchImportDeps, resumeAchImport } from "./imports.ts";
import { ACH_RETURNS_IMPORT_LEASE_MS } from "./import_rules.ts";

export function importResumeJob(deps: AchImportDeps): JobHandler {
  return externalJob<string, void>({
    leaseMs: ACH_RETURNS_IMPORT_LEASE_MS,
    async prepare(tx, job) {
      const { rows } = await tx.execute({
        sql: "SELECT 1 FROM ach_imports WHERE id = ? AND progress IS NOT NULL",
        args: [job.subjectId],
      });
      return rows.length === 1 ? job.subjectId : null;
    },
    async call(importId, job) {
      await resumeAchImport(deps, importId, job.dueAt);
    },
    async record(tx, job) {
      // The returns are in: a settlement held behind this import may run.
      await releaseHeldSettlements(tx, job.companyId, job.id);
    },
  }) as JobHandler;
}
