/**
 * The operator commands of ACH files: listing, showing, downloading, marking sent, voiding,
 * resolving in-doubt files and importing returns and notices of change (lib/ach). Listing and
 * showing give metadata and masked entries (viewer); the plain content and every change are for
 * admins. Each command takes --environment (live by default) and names the environment it acted
 * on, or looked in when it found nothing. Paths are read and written by the process that runs
 * the command: the CLI, or the running service through its loopback endpoint (the CLI makes them
 * absolute first).
 */
import { handImportSource } from "../operators/hand_import_approval.ts";
import type { Environment } from "../platform/config.ts";
import { sha256Hex } from "../platform/keys.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { appendAudit } from "../audit/store.ts";
import {
  type AchFileActionResult,
  type AchFileDeps,
  markAchFileSent,
  readAchFileContent,
  requestAchFileRelease,
  resolveAchFile,
  voidAchFile,
} from "../ach/files_service.ts";
import { importAchFile, previewAchImport } from "../ach/imports.ts";
import { unfinishedImportWords } from "../ach/import_rules.ts";
import { formatDollars } from "../platform/money.ts";
import {
  ACH_FILES_PAGE_SIZE_MAX,
  achFileCompany,
  type AchFileDetail,
  type AchFileEntry,
  type AchFileStatus,
  achFileStatuses,
  type AchFileSummary,
  entryOwnerIds,
  findAchFile,
  listAchFiles,
} from "../ach/views.ts";
import { withTransmissions } from "./commands_batches.ts";
import { type AchImportRow, listAchImports } from "../console/bank_files.ts";
import {
  batchDepsOf,
  type Command,
  type CommandContext,
  type CommandRequest,
  companyIdByTin,
  environmentFlag,
  environmentReach,
  type Flags,
  limitFlag,
  objectReach,
  pathFlag,
  type Reach,
  readAtMost,
  reads,
  stageHandImport,
} from "./command_kit.ts";

/** What `ach:import` reads of a file: one byte more than an import takes, so a larger file is refused whole. */
const IMPORT_READ_BYTES_MAX = 10 * 1024 * 1024 + 1;

const fileNotFound = (f: Flags, environment: Environment) =>
  refuse("ach_file_not_found", `no ACH file ${f.file} in ${environment}`, { field: "file" });

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** How many imports `ach:imports` lists at most. */
const ACH_IMPORTS_LISTED_MAX = 100;

/** An imported file as `ach:imports` lists it (never its content). */
function importView(row: AchImportRow, environment: Environment) {
  const { unfinished } = row;
  return {
    id: row.id,
    environment,
    company_name: row.companyName,
    file_name: row.fileName,
    source: row.source,
    imported_at: iso(row.importedAt),
    return_count: row.returnCount,
    correction_count: row.correctionCount,
    applied_count: row.appliedCount,
    not_applied: row.notApplied,
    unfinished: unfinished && {
      state: unfinished.state,
      entries_done: unfinished.entriesDone,
      entries: unfinished.entries,
      resumes_at: iso(unfinished.resumesAt),
    },
  };
}

function fileView(file: AchFileSummary, environment: Environment) {
  return {
    id: file.id,
    environment,
    company_id: file.companyId,
    company_tin: file.companyTin,
    status: file.status,
    created_at: iso(file.createdAt),
    bank_date: file.bankDate,
    effective_date: file.effectiveDate,
    cutoff_kind: file.cutoffKind,
    window_ends_at: iso(file.windowEndsAt),
    entry_count: file.entryCount,
    credit_total_cents: file.creditTotalCents,
    debit_total_cents: file.debitTotalCents,
    sha256: file.sha256,
    file_name: file.fileName,
    file_id_modifier: file.fileIdModifier,
    transmitted_at: iso(file.transmittedAt),
    approval_id: file.approvalId,
  };
}

const entryView = (entry: AchFileEntry) => ({
  trace: entry.traceNumber,
  direction: entry.direction,
  amount_cents: entry.amountCents,
  transaction_code: entry.transactionCode,
  entry_class: entry.entryClass,
  ...entryOwnerIds(entry),
  account_last_four: entry.accountLastFour,
  status: entry.status,
  return_code: entry.returnCode,
});

const detailView = (file: AchFileDetail, environment: Environment) => ({
  ...fileView(file, environment),
  entries: file.entries.map(entryView),
});

/** The reach of a read of one file: its company (for the scope check), writing nothing. */
async function fileReadReach(request: CommandRequest, f: Flags): Promise<Result<Reach>> {
  const named = environmentReach(f, false);
  if (!named.ok) return named;
  const { environment } = named.value;
  const found = await achFileCompany(request.databases[environment].readClient, f.file);
  return ok({
    writes: [],
    companies: found ? [found.companyId] : [],
    hidden: fileNotFound(f, environment),
    objectId: f.file,
  });
}

/** The reach of a change of one file: its environment and company. */
const fileChangeReach = objectReach(
  (request, environment, f) => achFileCompany(request.databases[environment].readClient, f.file),
  fileNotFound,
  (f) => f.file,
);

/**
 * A live file imported by hand takes two people: it is staged, sealed, in an approval showing what
 * it would apply now, and imported when a second admin approves.
 */
async function stageLiveImport(
  ctx: CommandContext,
  deps: ReturnType<typeof batchDepsOf>,
  fileName: string,
  content: Uint8Array,
): Promise<Result<Record<string, unknown>>> {
  const previewed = await previewAchImport(deps, {
    content,
    fileName,
    source: handImportSource(ctx.actor.origin),
    importedBy: ctx.actor.operator?.id ?? null,
  }, ctx.now);
  if (!previewed.ok) return refuse(previewed.code, `${previewed.message} (${fileName}, in live)`);
  const preview = previewed.value;
  return await stageHandImport(ctx, {
    kind: "ach_import.apply",
    companyId: null,
    objectId: preview.sha256,
    fileName,
    sha256: preview.sha256,
    content,
    summary: `ach:import ${fileName}: ${preview.applied} entries matched, ${
      formatDollars(preview.movedCents)
    } moved, ${preview.payouts.length} payouts and ${preview.fundings.length} fundings affected${
      preview.unfinished
        ? ` (completes its import ${unfinishedImportWords(preview.unfinished)})`
        : ""
    }`,
    wouldApply: {
      file_name: fileName,
      sha256: preview.sha256,
      duplicate: preview.duplicate,
      returns: preview.returns,
      corrections: preview.corrections,
      entries_matched: preview.applied,
      money_moved_cents: preview.movedCents,
      payouts_affected: preview.payouts,
      fundings_affected: preview.fundings,
      not_applied: preview.notApplied,
      // Its counts are the file's whole; the matches and money only what is left to apply.
      unfinished_import: preview.unfinished ? unfinishedImportWords(preview.unfinished) : null,
    },
  });
}

/** The file of --file in --environment as the command's operator may see it, or a refusal. */
async function namedFile(
  ctx: CommandContext,
  f: Flags,
): Promise<Result<{ environment: Environment; file: AchFileDetail }>> {
  const environment = environmentFlag(f, "live");
  if (!environment.ok) return environment;
  const file = await findAchFile(ctx.databases[environment.value].readClient, f.file);
  if (!file) return fileNotFound(f, environment.value);
  return ok({ environment: environment.value, file });
}

const actionView = (environment: Environment, done: AchFileActionResult) => ({
  environment,
  file_id: done.fileId,
  status: done.status,
  approval_id: done.approvalId,
});

/** A file action of lib/ach/files_service.ts as a command; the service audits in its unit. */
function fileActionCommand(
  summary: string,
  flags: Readonly<Record<string, string>>,
  action: (
    deps: AchFileDeps,
    ctx: CommandContext,
    f: Flags,
  ) => Promise<Result<AchFileActionResult, string>>,
): Command {
  return {
    summary,
    flags: { file: "the file id (rbt_…)", ...flags, environment: "live (default) or test" },
    role: "admin",
    reach: fileChangeReach,
    run: async (ctx, f) => {
      const named = await namedFile(ctx, f);
      if (!named.ok) return named;
      const { environment } = named.value;
      const done = await action(batchDepsOf(ctx, environment), ctx, f);
      if (!done.ok) {
        return done.code === "ach_file_not_found" ? fileNotFound(f, environment) : done;
      }
      return ok(actionView(environment, done.value));
    },
  };
}

export const achCommands: Readonly<Record<string, Command>> = {
  "ach:files": {
    summary:
      "list ACH files newest first (metadata and totals, never the content), by --tin and --status",
    flags: {
      tin: "only this company's files",
      status: `${achFileStatuses.join(", ")}`,
      limit: `files, at most ${ACH_FILES_PAGE_SIZE_MAX} (default ${ACH_FILES_PAGE_SIZE_MAX})`,
      environment: "live (default) or test",
    },
    optional: ["tin"],
    role: "viewer",
    reach: async (request, f) => {
      if (f.tin === undefined) return ok({ writes: [], companies: [] });
      const companyId = await companyIdByTin(request, f.tin);
      return ok({
        writes: [],
        companies: companyId === null ? [] : [companyId],
        hidden: refuse("company_not_found", `no company with TIN ${f.tin}`, { field: "tin" }),
      });
    },
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const status = f.status ?? null;
      if (status !== null && !(achFileStatuses as readonly string[]).includes(status)) {
        return refuse(
          "invalid_input",
          `--status ${JSON.stringify(status)}: one of ${achFileStatuses.join(", ")}`,
          { field: "status" },
        );
      }
      const limit = limitFlag(f, ACH_FILES_PAGE_SIZE_MAX, ACH_FILES_PAGE_SIZE_MAX);
      if (!limit.ok) return limit;
      let companyIds = ctx.operator?.companyScope ?? null;
      if (f.tin !== undefined) {
        const companyId = await companyIdByTin(ctx, f.tin);
        if (companyId === null) {
          return refuse("company_not_found", `no company with TIN ${f.tin}`, { field: "tin" });
        }
        companyIds = [companyId];
      }
      const page = await listAchFiles(
        ctx.databases[environment.value].readClient,
        { companyIds, status: status as AchFileStatus | null },
        { limit: limit.value, startingAfter: null },
      );
      return ok({
        environment: environment.value,
        files: await withTransmissions(
          ctx.databases[environment.value].readClient,
          page!.data.map((file) => fileView(file, environment.value)),
        ),
        has_more: page!.hasMore,
      });
    },
  },
  "ach:imports": {
    summary:
      "list imported return and notice-of-change files newest first: counts, what was not applied, an import that stopped midway",
    flags: {
      limit: `imports, at most ${ACH_IMPORTS_LISTED_MAX} (default ${ACH_IMPORTS_LISTED_MAX})`,
      environment: "live (default) or test",
    },
    role: "viewer",
    reach: reads,
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const limit = limitFlag(f, ACH_IMPORTS_LISTED_MAX, ACH_IMPORTS_LISTED_MAX);
      if (!limit.ok) return limit;
      const page = await listAchImports(
        ctx.databases[environment.value].readClient,
        ctx.operator?.companyScope ?? null,
        { sort: "imported", direction: "desc", limit: limit.value, offset: 0 },
      );
      return ok({
        environment: environment.value,
        imports: page.data.map((row) => importView(row, environment.value)),
        has_more: page.hasMore,
      });
    },
  },
  "ach:show": {
    summary: "one ACH file's metadata and entries, account numbers masked to their last four",
    flags: { file: "the file id (rbt_…)", environment: "live (default) or test" },
    role: "viewer",
    reach: fileReadReach,
    run: async (ctx, f) => {
      const named = await namedFile(ctx, f);
      if (!named.ok) return named;
      const [shown] = await withTransmissions(
        ctx.databases[named.value.environment].readClient,
        [detailView(named.value.file, named.value.environment)],
      );
      return ok(shown);
    },
  },
  "ach:download": {
    summary:
      "write an ACH file's plain content (full account numbers) to --out, mode 0600; audited as a download",
    flags: {
      file: "the file id (rbt_…)",
      out: "the path to write (it must not exist)",
      environment: "live (default) or test",
    },
    paths: ["out"],
    role: "admin",
    reach: fileChangeReach,
    run: async (ctx, f) => {
      const out = pathFlag(ctx, f, "out");
      if (!out.ok) return out;
      const named = await namedFile(ctx, f);
      if (!named.ok) return named;
      const { environment, file } = named.value;
      const read = await readAchFileContent(batchDepsOf(ctx, environment), file.id, ctx.now);
      if (!read.ok) {
        return read.code === "ach_file_not_found"
          ? fileNotFound(f, environment)
          : refuse(read.code, `${read.message} (in ${environment})`, { field: "file" });
      }
      const bytes = new TextEncoder().encode(read.value.content);
      const { sha256 } = read.value;
      // The download is recorded before the file exists: an operator who has the content is in the log.
      await ctx.databases[environment].writer.write((tx) =>
        appendAudit(tx, environment, ctx.actor, {
          at: ctx.now,
          action: "ach:download",
          objectType: "ach_file",
          objectId: file.id,
          companyId: file.companyId,
          before: null,
          after: { out: out.value, sha256, bytes: bytes.length, status: file.status },
        })
      );
      try {
        await Deno.writeFile(out.value, bytes, { mode: 0o600, createNew: true });
      } catch (error) {
        if (error instanceof Deno.errors.AlreadyExists) {
          return refuse("file_exists", `${out.value} exists: choose a new path`, {
            field: "out",
          });
        }
        throw error;
      }
      // The mode given at creation is narrowed by the umask; set it whole.
      await Deno.chmod(out.value, 0o600);
      return ok({
        environment,
        file_id: file.id,
        out: out.value,
        sha256,
        bytes: bytes.length,
        mode: "0600",
      });
    },
  },
  "ach:mark-sent": fileActionCommand(
    "a built file without an SFTP target was uploaded to the bank by hand: mark it transmitted",
    {},
    (deps, ctx, f) => markAchFileSent(deps, ctx.actor, f.file, ctx.now),
  ),
  "ach:void": fileActionCommand(
    "void a built file: its entries go back to the queue for the next cutoff (new traces)",
    {},
    (deps, ctx, f) => voidAchFile(deps, ctx.actor, f.file, ctx.now),
  ),
  "ach:resolve": fileActionCommand(
    "resolve an in-doubt file after asking the bank: --as transmitted or voided (live: a second admin approves)",
    { as: "transmitted or voided: what the bank says it received" },
    async (deps, ctx, f) => {
      if (f.as !== "transmitted" && f.as !== "voided") {
        return refuse("invalid_input", `--as ${JSON.stringify(f.as)}: transmitted or voided`, {
          field: "as",
        });
      }
      return await resolveAchFile(deps, ctx.actor, f.file, f.as, ctx.now);
    },
  ),
  "ach:release": fileActionCommand(
    "ask a second admin to release a built live file over BANK_FILE_APPROVAL_LIMIT_CENTS (approvals:approve sends it)",
    {},
    (deps, ctx, f) => requestAchFileRelease(deps, ctx.actor, f.file, ctx.now),
  ),
  "ach:import": {
    summary:
      "import a return or notice-of-change file from the bank (a file imported before changes nothing); prints the report (live: staged with what it would apply, imported once a second admin approves)",
    flags: { file: "the file's path", environment: "live (default) or test" },
    paths: ["file"],
    role: "admin",
    // Any company's entries may come back in one file: only an operator of every company imports.
    reach: async (request, f) => {
      const named = environmentReach(f, true);
      if (!named.ok) return named;
      // The file's SHA-256 names the import in the audit log (unreadable: the run refuses it).
      const path = pathFlag(request, f, "file");
      const content = path.ok ? await readAtMost(path.value, IMPORT_READ_BYTES_MAX) : null;
      return ok({
        writes: named.value.writes,
        companies: "installation",
        objectId: content?.ok ? await sha256Hex(content.value) : null,
      });
    },
    audit: (_f, reach) => ({
      action: "ach:import",
      objectType: "ach_import",
      objectId: reach.objectId ?? null,
      companyId: null,
      snapshot: async (tx) => {
        const { rows } = await tx.execute({
          sql: `SELECT id, company_id, sha256, source, file_name, return_count, correction_count,
                  applied_count, report FROM ach_imports WHERE sha256 = ?`,
          args: [reach.objectId ?? null],
        });
        return rows[0] ? { ...rows[0] } : null;
      },
    }),
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const path = pathFlag(ctx, f, "file");
      if (!path.ok) return path;
      const content = await readAtMost(path.value, IMPORT_READ_BYTES_MAX);
      if (!content.ok) return content;
      const fileName = path.value.split("/").pop() ?? path.value;
      const deps = batchDepsOf(ctx, environment.value);
      if (environment.value === "live") {
        return await stageLiveImport(ctx, deps, fileName, content.value);
      }
      const imported = await importAchFile(deps, {
        content: content.value,
        fileName,
        source: handImportSource(ctx.actor.origin),
        importedBy: ctx.actor.operator?.id ?? null,
      }, ctx.now);
      if (!imported.ok) {
        return refuse(imported.code, `${imported.message} (${fileName}, in ${environment.value})`);
      }
      const report = imported.value;
      return ok({
        environment: environment.value,
        import_id: report.importId,
        file_name: fileName,
        sha256: report.sha256,
        duplicate: report.duplicate,
        returns: report.returns,
        corrections: report.corrections,
        applied: report.applied,
        not_applied: report.notApplied.map((entry) => ({
          trace: entry.trace,
          reason: entry.reason,
        })),
      });
    },
  },
};
