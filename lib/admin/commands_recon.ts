/**
 * The operator commands of bank reconciliation (lib/reconciliation): importing a bank statement
 * (BAI2 or camt.053) for a company, listing the exceptions its matching left, and resolving one
 * with a note (and, when the ledger must follow the bank, an adjusting entry). In live a hand
 * import and an adjusting entry wait for a second admin. Each command takes --environment (live by
 * default) and names the environment it acted on.
 */
import { handImportSource } from "../operators/hand_import_approval.ts";
import type { Environment } from "../platform/config.ts";
import { centsToDollars } from "../platform/money.ts";
import { ok, refuse } from "../platform/result.ts";
import { requestApproval } from "../operators/approvals.ts";
import {
  adjustmentPreview,
  checkNote,
  findReconException,
  listReconExceptions,
  RECON_EXCEPTIONS_PAGE_MAX,
  type ReconException,
  resolveReconException,
} from "../reconciliation/exceptions.ts";
import {
  importStatement,
  previewStatement,
  type StatementImportDeps,
  type StatementImportReport,
} from "../reconciliation/service.ts";
import { STATEMENT_BYTES_MAX } from "../reconciliation/statement.ts";
import {
  approvalAnswer,
  type Command,
  type CommandContext,
  companyFileImportReach,
  companyIdByTin,
  environmentFlag,
  exceptionNotFound as sharedExceptionNotFound,
  exceptionReach,
  exceptionStatusFlag,
  type Flags,
  limitFlag,
  listedCompanies,
  optionalTinReach,
  pathFlag,
  readAtMost,
  stageHandImport,
} from "./command_kit.ts";

const ENVIRONMENT_FLAG = "live (default) or test";
/** One byte more than an import takes, so a larger file is refused whole. */
const IMPORT_READ_BYTES_MAX = STATEMENT_BYTES_MAX + 1;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const companyNotFound = (f: Flags) =>
  refuse("company_not_found", `no company with TIN ${f.tin}`, { field: "tin" });
const exceptionNotFound = sharedExceptionNotFound(
  "exception_not_found",
  "reconciliation exception",
);

const depsOf = (ctx: CommandContext, environment: Environment): StatementImportDeps => ({
  database: ctx.databases[environment],
  environment,
  secretBox: ctx.secretBox,
});

/** What an import did (or would do), as the commands print it. */
export const importReportView = (report: StatementImportReport) => ({
  import_id: report.importId,
  sha256: report.sha256,
  format: report.format,
  duplicate: report.duplicate,
  matched: report.matched,
  exceptions: report.exceptions,
  days: report.days.map((d) => ({
    account: `••••${d.accountLastFour}`,
    role: d.role,
    date: d.date,
    opening_cents: d.openingCents,
    closing_cents: d.closingCents,
    lines: d.lines,
    matched: d.matched,
    exceptions: d.exceptions,
  })),
  not_read: report.skipped.map((s) => ({
    account: `••••${s.accountLastFour}`,
    date: s.date,
    reason: s.reason,
  })),
});

const exceptionView = (x: ReconException, environment: Environment) => ({
  id: x.id,
  environment,
  company_id: x.companyId,
  statement_date: x.statementDate,
  account: `••••${x.accountLastFour}`,
  side: x.side,
  kind: x.kind,
  direction: x.direction,
  amount_cents: x.amountCents,
  amount: centsToDollars(x.amountCents),
  subject_id: x.subjectId,
  reason: x.reason,
  status: x.status,
  note: x.note,
  ledger_transaction_id: x.ledgerTransactionId,
  resolved_by: x.resolvedBy,
  resolved_at: iso(x.resolvedAt),
  created_at: iso(x.createdAt),
});

export const reconCommands: Readonly<Record<string, Command>> = {
  "recon:import": {
    summary:
      "import the bank's statement file (BAI2 prior-day or camt.053) for --tin and reconcile each account's day it reports; a file imported before changes nothing (live: staged with what it would do, imported once a second admin approves)",
    flags: {
      tin: "the company's TIN",
      file: "the statement file's path",
      environment: ENVIRONMENT_FLAG,
    },
    paths: ["file"],
    role: "admin",
    reach: companyFileImportReach(IMPORT_READ_BYTES_MAX),
    audit: (_f, reach) => ({
      action: "recon:import",
      objectType: "statement_import",
      objectId: reach.objectId ?? null,
      companyId: reach.companies === "installation" ? null : reach.companies[0] ?? null,
      snapshot: async (tx) => {
        const { rows } = await tx.execute({
          sql: `SELECT id, company_id, sha256, format, source, file_name, bank_file_id, day_count,
                  line_count, matched_count, exception_count, report
                  FROM statement_imports WHERE sha256 = ? AND company_id = ?`,
          args: [
            reach.objectId ?? null,
            reach.companies === "installation" ? null : reach.companies[0] ?? null,
          ],
        });
        return rows[0] ? { ...rows[0] } : null;
      },
    }),
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const companyId = await companyIdByTin(ctx, f.tin);
      if (companyId === null) return companyNotFound(f);
      const path = pathFlag(ctx, f, "file");
      if (!path.ok) return path;
      const content = await readAtMost(path.value, IMPORT_READ_BYTES_MAX);
      if (!content.ok) return content;
      const fileName = path.value.split("/").pop() ?? path.value;
      const request = {
        companyId,
        content: content.value,
        fileName,
        source: handImportSource(ctx.actor.origin),
        importedBy: ctx.actor.operator?.id ?? null,
      };
      const deps = depsOf(ctx, environment.value);
      if (environment.value === "live") {
        const previewed = await previewStatement(deps, request, ctx.now);
        if (!previewed.ok) {
          return refuse(previewed.code, `${previewed.message} (in live)`, {
            field: previewed.field ?? "file",
          });
        }
        const preview = previewed.value;
        return await stageHandImport(ctx, {
          kind: "statement_import.apply",
          companyId,
          objectId: `${companyId} ${preview.sha256}`,
          fileName,
          sha256: preview.sha256,
          content: content.value,
          summary:
            `recon:import ${fileName}: ${preview.days.length} account days, ${preview.matched} lines matched, ${preview.exceptions} exceptions`,
          wouldApply: { file_name: fileName, ...importReportView(preview) },
        });
      }
      const imported = await importStatement(deps, request, ctx.now);
      if (!imported.ok) {
        return refuse(imported.code, `${imported.message} (in ${environment.value})`, {
          field: imported.field ?? "file",
          details: imported.details,
        });
      }
      return ok({
        environment: environment.value,
        file_name: fileName,
        ...importReportView(imported.value),
      });
    },
  },
  "recon:exceptions": {
    summary:
      "list reconciliation exceptions oldest first (--status open by default): bank lines nothing expected, and expected moves the bank did not report",
    flags: {
      tin: "only this company's exceptions",
      status: "open (default), resolved or all",
      limit:
        `exceptions, at most ${RECON_EXCEPTIONS_PAGE_MAX} (default ${RECON_EXCEPTIONS_PAGE_MAX})`,
      environment: ENVIRONMENT_FLAG,
    },
    optional: ["tin"],
    role: "viewer",
    reach: optionalTinReach,
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const asked = exceptionStatusFlag(f);
      if (!asked.ok) return asked;
      const status = asked.value;
      const limit = limitFlag(f, RECON_EXCEPTIONS_PAGE_MAX, RECON_EXCEPTIONS_PAGE_MAX);
      if (!limit.ok) return limit;
      const companyIds = await listedCompanies(ctx, f);
      if (!companyIds.ok) return companyIds;
      const found = await listReconExceptions(ctx.databases[environment.value].readClient, {
        companyIds: companyIds.value,
        status,
        limit: limit.value,
      });
      return ok({
        environment: environment.value,
        exceptions: found.map((x) => exceptionView(x, environment.value)),
      });
    },
  },
  "recon:resolve": {
    summary:
      "resolve a reconciliation exception with --note; --adjust-line LINE also posts an adjusting entry so the line's ledger follows the bank (live: a second admin approves it); audited",
    flags: {
      exception: "the exception id (rex_…)",
      note: "why (kept with the exception and in the audit log)",
      "adjust-line": "the code of the line the adjusting entry posts to",
      environment: ENVIRONMENT_FLAG,
    },
    optional: ["adjust-line"],
    role: "admin",
    reach: exceptionReach(findReconException, exceptionNotFound),
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const note = checkNote(f.note);
      if (!note.ok) return note;
      const input = {
        exceptionId: f.exception,
        note: note.value,
        adjustLine: f["adjust-line"] ?? null,
        companyIds: ctx.operator?.companyScope ?? null,
      };
      const refused = (r: { code: string; message: string; field?: string }) =>
        r.code === "exception_not_found"
          ? exceptionNotFound(f, environment.value)
          : refuse(r.code, `${r.message} (in ${environment.value})`, { field: r.field });
      if (environment.value === "live" && input.adjustLine !== null) {
        const previewed = await adjustmentPreview(ctx.databases.live.readClient, input);
        if (!previewed.ok) return refused(previewed);
        const { exception, adjustment } = previewed.value;
        const requested = await requestApproval(ctx.operatorDeps, {
          operator: ctx.actor.operator!,
          origin: ctx.actor.origin,
        }, {
          kind: "recon_exception.adjust",
          environment: "live",
          companyId: exception.companyId,
          objectId: exception.id,
          summary: `recon:resolve ${exception.id}: ${adjustment!.kind} of ${
            centsToDollars(adjustment!.amountCents)
          } on line ${adjustment!.lineCode} (${adjustment!.from} to ${adjustment!.to})`,
          payload: {
            exception_id: exception.id,
            note: note.value,
            adjust_line: adjustment!.lineCode,
          },
        }, ctx.now);
        return approvalAnswer(requested, {
          kind: "recon_exception.adjust",
          exception_id: exception.id,
          would_post: {
            kind: adjustment!.kind,
            line: adjustment!.lineCode,
            from: adjustment!.from,
            to: adjustment!.to,
            amount_cents: adjustment!.amountCents,
          },
        });
      }
      const resolved = await resolveReconException(
        ctx.databases[environment.value],
        environment.value,
        ctx.actor,
        input,
        ctx.now,
      );
      if (!resolved.ok) return refused(resolved);
      const { exception, adjustment } = resolved.value;
      return ok({
        ...exceptionView(exception, environment.value),
        adjustment: adjustment === null ? null : {
          kind: adjustment.kind,
          line: adjustment.lineCode,
          from: adjustment.from,
          to: adjustment.to,
          amount_cents: adjustment.amountCents,
        },
      });
    },
  },
};
