/**
 * Polling the live SFTP inbound directory for return and notice-of-change files: a job per company
 * with an SFTP target, every ACH_INBOUND_POLL_MINUTES, that downloads new files, imports each
 * (lib/ach/imports.ts; a `.csv` file is the bank's paid checks, lib/checks/paid_import.ts; a
 * `.bai`, `.bai2` or `.xml` file its statement, lib/reconciliation) and moves it to `processed/`.
 *
 * A file imported, or imported before (a duplicate), is moved; so is a file the import refuses
 * whole (not NACHA, too large), after its refusal is logged, since reading it again cannot help:
 * an operator takes it from processed/. A file whose import failed (storage, or the service
 * stopped between its units) stays for the next poll, whose import of it goes on where the last
 * stopped. The server being unreachable is logged and the next poll tries again.
 */
import { findOpenJob, scheduleJob } from "../../db/scheduler_store.ts";
import { externalJob, type JobHandler } from "../../db/scheduler.ts";
import { releaseHeldSettlements } from "../rails/outcome_fence.ts";
import type { WriteTx } from "../../db/writer.ts";
import { ENVIRONMENT_BANKS, type SftpTarget } from "./bank_settings.ts";
import { readBankSettings } from "./bank_store.ts";
import { type AchImportDeps, importAchFile } from "./imports.ts";
import { fetchInboundFiles, markInboundFilesProcessed } from "./transport.ts";
import { importPaidItems, isPaidItemsFileName } from "../checks/paid_import.ts";
import { importStatement, isStatementFileName } from "../reconciliation/service.ts";

export const INBOUND_POLL_JOB = "ach.poll_inbound";

/** How often a company's inbound directory is read. */
export const ACH_INBOUND_POLL_MINUTES = 15;

/** A poll's claim: fetching (at most 2 min), importing and moving its files fit well inside. */
export const INBOUND_POLL_LEASE_MS = 10 * 60_000;

/** Schedules the company's inbound polling unless it is already scheduled (bank:set calls it). */
export async function ensureInboundPolling(
  tx: WriteTx,
  companyId: string,
  now: number,
): Promise<void> {
  await scheduleInboundPoll(tx, { companyId, dueAt: now }, now);
}

/**
 * The first poll slot after `now` on the poll's own 15-minute grid: a poll that ran late (the
 * service was down) covered everything waiting, so the slots it missed are not polled again.
 */
export function nextInboundPollAt(dueAt: number, now: number): number {
  if (now < dueAt) {
    throw new Error(`a poll due at ${dueAt} cannot run before it is due (now ${now})`);
  }
  const periodMs = ACH_INBOUND_POLL_MINUTES * 60_000;
  return dueAt + (Math.floor((now - dueAt) / periodMs) + 1) * periodMs;
}

/** A poll of the company's inbound directory, unless one is pending or parked: never two. */
async function scheduleInboundPoll(
  tx: WriteTx,
  poll: { companyId: string; dueAt: number },
  now: number,
): Promise<void> {
  const subject = { companyId: poll.companyId, kind: INBOUND_POLL_JOB, subjectId: poll.companyId };
  // A parked poll is an operator's to retry (jobs:retry), as every parked job.
  if (await findOpenJob(tx, subject) !== null) return;
  await scheduleJob(tx, { ...subject, dueAt: poll.dueAt }, now);
}

/** The handler of `ach.poll_inbound` (subject: the company id); it schedules the next poll. */
export function inboundPollJob(deps: AchImportDeps): JobHandler {
  return externalJob<SftpTarget, void>({
    leaseMs: INBOUND_POLL_LEASE_MS,
    async prepare(tx, job) {
      // The sandbox bank's files never leave the machine, whatever is configured.
      if (!ENVIRONMENT_BANKS[deps.environment].filesLeaveMachine) return null;
      const settings = await readBankSettings(tx, deps.secretBox, deps.environment, job.companyId);
      // No SFTP target (any more): polling stops until bank:set configures one.
      return settings?.sftp ?? null;
    },
    call: (target, job) => pollInbound(deps, target, job.companyId, job.dueAt),
    async record(tx, job) {
      // What the bank had is imported: a settlement held behind this poll may run.
      await releaseHeldSettlements(tx, job.companyId, job.id);
      await scheduleInboundPoll(tx, {
        companyId: job.companyId,
        dueAt: nextInboundPollAt(job.dueAt, job.runUntil),
      }, job.runUntil);
    },
  });
}

function log(level: "info" | "error", msg: string, facts: Record<string, unknown>): void {
  const line = JSON.stringify({ level, msg, ...facts });
  if (level === "error") console.error(line);
  else console.log(line);
}

const messageOf = (error: unknown) => error instanceof Error ? error.message : String(error);

/** Reads the inbound directory once: imports each file, then moves the ones done to processed/. */
export async function pollInbound(
  deps: AchImportDeps,
  target: SftpTarget,
  companyId: string,
  now: number,
): Promise<void> {
  const where = { company_id: companyId, host: target.host, inbound_dir: target.inboundDir };
  let files;
  try {
    files = await fetchInboundFiles(target);
  } catch (error) {
    log("error", "could not read the bank's inbound directory", {
      ...where,
      error: messageOf(error),
    });
    return;
  }
  const done: string[] = [];
  for (const file of files) {
    const facts = { ...where, file: file.name };
    try {
      // The bank's paid-items files (checks) come as CSV beside its NACHA return files.
      if (isPaidItemsFileName(file.name)) {
        const paid = await importPaidItems(deps, {
          companyId,
          content: file.content,
          fileName: file.name,
          source: "sftp",
          importedBy: null,
        }, now);
        if (paid.ok) {
          log(
            "info",
            paid.value.duplicate ? "paid-items file imported before" : "paid-items file imported",
            {
              ...facts,
              import_id: paid.value.importId,
              sha256: paid.value.sha256,
              items: paid.value.items,
              matched: paid.value.matched,
              exceptions: paid.value.exceptions,
            },
          );
        } else {
          log("error", "an inbound paid-items file was refused whole and is moved to processed/", {
            ...facts,
            code: paid.code,
            detail: paid.message,
          });
        }
        done.push(file.name);
        continue;
      }
      // The bank's prior-day statements (BAI2, camt.053) come beside them too.
      if (isStatementFileName(file.name)) {
        const statement = await importStatement(deps, {
          companyId,
          content: file.content,
          fileName: file.name,
          source: "sftp",
          importedBy: null,
        }, now);
        if (statement.ok) {
          const report = statement.value;
          log("info", report.duplicate ? "statement imported before" : "statement imported", {
            ...facts,
            import_id: report.importId,
            sha256: report.sha256,
            days: report.days.length,
            matched: report.matched,
            exceptions: report.exceptions,
            not_read: report.skipped.length,
          });
        } else {
          log("error", "an inbound statement was refused whole and is moved to processed/", {
            ...facts,
            code: statement.code,
            detail: statement.message,
          });
        }
        done.push(file.name);
        continue;
      }
      const imported = await importAchFile(deps, {
        content: file.content,
        fileName: file.name,
        source: "sftp",
        importedBy: null,
        companyId,
      }, now);
      if (imported.ok) {
        const report = imported.value;
        log("info", report.duplicate ? "ACH file imported before" : "ACH file imported", {
          ...facts,
          import_id: report.importId,
          sha256: report.sha256,
          returns: report.returns,
          corrections: report.corrections,
          applied: report.applied,
          not_applied: report.notApplied.length,
        });
      } else {
        log("error", "an inbound ACH file was refused whole and is moved to processed/", {
          ...facts,
          code: imported.code,
          detail: imported.message,
        });
      }
      done.push(file.name);
    } catch (error) {
      log("error", "the import of an inbound ACH file failed; it stays for the next poll", {
        ...facts,
        error: messageOf(error),
      });
    }
  }
  try {
    await markInboundFilesProcessed(target, done);
  } catch (error) {
    // The next poll finds them again, imports nothing (duplicates) and moves them then.
    log("error", "could not move imported ACH files to processed/", {
      ...where,
      files: done,
      error: messageOf(error),
    });
  }
}
