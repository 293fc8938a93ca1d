/**
 * The operator commands of checks (issue 19): the register (`checks:list`, `checks:void`), check
 * files (`checks:files`, `checks:download`, `checks:mark-sent`), the bank's paid items
 * (`checks:import-paid`) and their exceptions (`checks:exceptions`, `checks:resolve-exception`).
 * Reads give no account number; a download is the plain file, for admins, audited before it is
 * written. Each command takes --environment (live by default) and names the environment it acted
 * on. Bad input (a paid-items file without a column, a void of a paid check) is a usage error and
 * writes nothing.
 */
import { handImportSource } from "../operators/hand_import_approval.ts";
import type { Environment } from "../platform/config.ts";
import { centsToDollars } from "../platform/money.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { appendAudit } from "../audit/store.ts";
import {
  CHECK_LIST_LIMIT_MAX,
  CHECK_STATUSES,
  type CheckRecord,
  type CheckStatus,
  listChecks,
} from "../checks/register.ts";
import { markCheckFileSent, readCheckFileContent } from "../checks/files_service.ts";
import { importPaidItems, previewPaidItems } from "../checks/paid_import.ts";
import { formatDollars } from "../platform/money.ts";
import { PAID_IMPORT_BYTES_MAX } from "../checks/paid_import_rules.ts";
import { resolveCheckException } from "../checks/exceptions.ts";
import {
  CHECK_FILES_PAGE_SIZE_MAX,
  type CheckExceptionSummary,
  checkFileCompany,
  type CheckFileKind,
  checkFileKinds,
  type CheckFileStatus,
  checkFileStatuses,
  type CheckFileSummary,
  findCheckException,
  listCheckExceptions,
  listCheckFiles,
} from "../checks/views.ts";
import { voidCheckAudited } from "../checks/voids.ts";
import { withTransmissions } from "./commands_batches.ts";
import {
  batchDepsOf,
  type Command,
  type CommandContext,
  type CommandRequest,
  companyFileImportReach,
  companyIdByTin,
  environmentFlag,
  environmentReach,
  exceptionNotFound as sharedExceptionNotFound,
  exceptionReach,
  exceptionStatusFlag,
  type Flags,
  objectReach,
  pathFlag,
  type Reach,
  readAtMost,
  stageHandImport,
} from "./command_kit.ts";

const ENVIRONMENT_FLAG = "live (default) or test";
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const companyNotFound = (f: Flags) =>
  refuse("company_not_found", `no company with TIN ${f.tin}`, { field: "tin" });
const fileNotFound = (f: Flags, environment: Environment) =>
  refuse("check_file_not_found", `no check file ${f.file} in ${environment}`, { field: "file" });
const exceptionNotFound = sharedExceptionNotFound("exception_not_found", "check exception");

const checkView = (check: CheckRecord, environment: Environment) => ({
  environment,
  number: check.checkNumber,
  kind: check.kind,
  status: check.status,
  amount_cents: check.amountCents,
  payout_id: check.payoutId,
  payee_name: check.payeeName,
  memo: check.memo,
  postage_code: check.postageCode,
  issue_date: check.issueDate,
  issue_file_id: check.issueFileId,
  print_file_id: check.printFileId,
  paid_date: check.paidDate,
  paid_amount_cents: check.paidAmountCents,
  voided_at: iso(check.voidedAt),
  void_reason: check.voidReason,
  voided_by: check.voidedBy,
  void_file_id: check.voidFileId,
  stale_at: iso(check.staleAt),
});

const fileView = (file: CheckFileSummary, environment: Environment) => ({
  id: file.id,
  environment,
  company_id: file.companyId,
  company_tin: file.companyTin,
  kind: file.kind,
  status: file.status,
  positive_pay_file_id: file.positivePayFileId,
  file_name: file.fileName,
  issue_count: file.issueCount,
  void_count: file.voidCount,
  total_cents: file.totalCents,
  byte_size: file.byteSize,
  sha256: file.sha256,
  created_at: iso(file.createdAt),
  transmitted_at: iso(file.transmittedAt),
});

const exceptionView = (x: CheckExceptionSummary, environment: Environment) => ({
  id: x.id,
  environment,
  company_id: x.companyId,
  company_tin: x.companyTin,
  check_number: x.checkNumber,
  kind: x.kind,
  check_status: x.checkStatus,
  issued_amount_cents: x.issuedAmountCents,
  paid_amount_cents: x.paidAmountCents,
  paid_date: x.paidDate,
  payout_id: x.payoutId,
  import_id: x.importId,
  file_name: x.importFileName,
  status: x.status,
  resolution: x.resolution,
  ledger_transaction_id: x.ledgerTransactionId,
  resolved_by: x.resolvedBy,
  resolved_at: iso(x.resolvedAt),
  created_at: iso(x.createdAt),
  // What `--resolution payment_stands` posts: money the bank paid that the ledger had released.
  ledger_effect: x.ledgerEffect && {
    kind: x.ledgerEffect.kind,
    from: x.ledgerEffect.from,
    to: x.ledgerEffect.to,
    amount_cents: x.ledgerEffect.amountCents,
    amount: centsToDollars(x.ledgerEffect.amountCents),
  },
});

/** A whole number flag within bounds, or a refusal naming it. */
function wholeFlag(f: Flags, name: string, min: number, max: number): Result<number | undefined> {
  if (f[name] === undefined) return ok(undefined);
  const value = Number(f[name]);
  if (!/^\d+$/.test(f[name]) || value < min || value > max) {
    return refuse(
      "invalid_input",
      `--${name} ${JSON.stringify(f[name])}: a whole number from ${min} to ${max}`,
      { field: name },
    );
  }
  return ok(value);
}

function dateFlag(f: Flags, name: string): Result<string | undefined> {
  const value = f[name];
  if (value === undefined) return ok(undefined);
  const ms = Date.parse(`${value}T00:00:00Z`);
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(ms) ||
    !new Date(ms).toISOString().startsWith(value)
  ) {
    return refuse("invalid_input", `--${name} ${JSON.stringify(value)}: a date YYYY-MM-DD`, {
      field: name,
    });
  }
  return ok(value);
}

/** The company of --tin, changing `writes` (empty: a read). */
function tinCommandReach(changes: boolean) {
  return async (request: CommandRequest, f: Flags): Promise<Result<Reach>> => {
    const named = environmentReach(f, changes);
    if (!named.ok) return named;
    const companyId = await companyIdByTin(request, f.tin);
    return ok({
      writes: named.value.writes,
      companies: companyId === null ? [] : [companyId],
      hidden: companyNotFound(f),
      objectId: companyId,
    });
  };
}

/** The company of --tin as the command runs it, or a refusal. */
async function namedCompany(
  ctx: CommandContext,
  f: Flags,
): Promise<Result<{ environment: Environment; companyId: string }>> {
  const environment = environmentFlag(f, "live");
  if (!environment.ok) return environment;
  const companyId = await companyIdByTin(ctx, f.tin);
  if (companyId === null) return companyNotFound(f);
  return ok({ environment: environment.value, companyId });
}

/** The reach of a change of one check file: its environment and company. */
const fileChangeReach = objectReach(
  (request, environment, f) => checkFileCompany(request.databases[environment].readClient, f.file),
  fileNotFound,
  (f) => f.file,
);

/**
 * A live paid-items file imported by hand takes two people: staged, sealed, in an approval showing
 * what it would apply now (items matched, money moved, payouts affected), imported once approved.
 */
async function stagePaidImport(
  ctx: CommandContext,
  companyId: string,
  fileName: string,
  content: Uint8Array,
): Promise<Result<Record<string, unknown>>> {
  const previewed = await previewPaidItems(batchDepsOf(ctx, "live"), {
    companyId,
    content,
    fileName,
    source: handImportSource(ctx.actor.origin),
    importedBy: ctx.actor.operator?.id ?? null,
  }, ctx.now);
  if (!previewed.ok) {
    return refuse("invalid_input", `${previewed.message} (in live)`, {
      field: previewed.field ?? "file",
    });
  }
  const preview = previewed.value;
  return await stageHandImport(ctx, {
    kind: "check_paid_import.apply",
    companyId,
    objectId: `${companyId} ${preview.sha256}`,
    fileName,
    sha256: preview.sha256,
    content,
    summary:
      `checks:import-paid ${fileName}: ${preview.matched} of ${preview.items} items matched, ${
        formatDollars(preview.movedCents)
      } moved, ${preview.payouts.length} payouts affected`,
    wouldApply: {
      file_name: fileName,
      sha256: preview.sha256,
      duplicate: preview.duplicate,
      items: preview.items,
      items_matched: preview.matched,
      exceptions: preview.exceptions,
      money_moved_cents: preview.movedCents,
      payouts_affected: preview.payouts,
    },
  });
}

/** What `checks:import-paid` reads of a file: one byte more than an import takes. */
const IMPORT_READ_BYTES_MAX = PAID_IMPORT_BYTES_MAX + 1;

export const checkCommands: Readonly<Record<string, Command>> = {
  "checks:list": {
    summary:
      "list a company's checks in number order, by --status, --number and issue dates --from/--to",
    flags: {
      tin: "the company's TIN",
      status: CHECK_STATUSES.join(", "),
      number: "one check number",
      from: "issued on or after this date (YYYY-MM-DD)",
      to: "issued on or before this date (YYYY-MM-DD)",
      after: "checks numbered after this one (the next page)",
      limit: `checks, at most ${CHECK_LIST_LIMIT_MAX} (default ${CHECK_LIST_LIMIT_MAX})`,
      environment: ENVIRONMENT_FLAG,
    },
    optional: ["number", "from", "to", "after"],
    role: "viewer",
    reach: tinCommandReach(false),
    run: async (ctx, f) => {
      const named = await namedCompany(ctx, f);
      if (!named.ok) return named;
      const { environment, companyId } = named.value;
      if (f.status !== undefined && !(CHECK_STATUSES as readonly string[]).includes(f.status)) {
        return refuse(
          "invalid_input",
          `--status ${JSON.stringify(f.status)}: one of ${CHECK_STATUSES.join(", ")}`,
          { field: "status" },
        );
      }
      const number = wholeFlag(f, "number", 1, 999_999_999);
      if (!number.ok) return number;
      const after = wholeFlag(f, "after", 1, 999_999_999);
      if (!after.ok) return after;
      const limit = wholeFlag(f, "limit", 1, CHECK_LIST_LIMIT_MAX);
      if (!limit.ok) return limit;
      const from = dateFlag(f, "from");
      if (!from.ok) return from;
      const to = dateFlag(f, "to");
      if (!to.ok) return to;
      const checks = await listChecks(ctx.databases[environment].readClient, companyId, {
        ...(f.status === undefined ? {} : { status: f.status as CheckStatus }),
        ...(number.value === undefined ? {} : { checkNumber: number.value }),
        ...(from.value === undefined ? {} : { issuedFrom: from.value }),
        ...(to.value === undefined ? {} : { issuedTo: to.value }),
        ...(after.value === undefined ? {} : { afterNumber: after.value }),
        limit: limit.value ?? CHECK_LIST_LIMIT_MAX,
      });
      return ok({ environment, checks: checks.map((check) => checkView(check, environment)) });
    },
  },
  "checks:void": {
    summary:
      "void an issued check with --reason: the void goes in the next positive-pay file, and the payout is re-offered once that file is sent",
    flags: {
      tin: "the company's TIN",
      number: "the check number",
      reason: "why (kept on the check and in the audit log)",
      environment: ENVIRONMENT_FLAG,
    },
    role: "clerk",
    reach: tinCommandReach(true),
    run: async (ctx, f) => {
      const named = await namedCompany(ctx, f);
      if (!named.ok) return named;
      const { environment, companyId } = named.value;
      const number = wholeFlag(f, "number", 1, 999_999_999);
      if (!number.ok) return number;
      const voidedBy = ctx.actor.operator?.email ?? `${ctx.origin} (no operator)`;
      const voided = await ctx.databases[environment].writer.write((tx) =>
        voidCheckAudited(tx, environment, ctx.actor, {
          companyId,
          checkNumber: number.value!,
          reason: f.reason ?? "",
          voidedBy,
        }, ctx.now)
      );
      if (!voided.ok) {
        if (voided.code === "check_not_found") {
          return refuse("check_not_found", `${voided.message} of TIN ${f.tin} in ${environment}`, {
            field: "number",
          });
        }
        // A paid check, or no reason: bad input, and nothing was written.
        return refuse("invalid_input", voided.message, { field: voided.field });
      }
      return ok(checkView(voided.value, environment));
    },
  },
  "checks:files": {
    summary:
      "list check files newest first (positive-pay and print files: metadata, never the content), by --tin, --kind and --status",
    flags: {
      tin: "only this company's files",
      kind: checkFileKinds.join(" or "),
      status: checkFileStatuses.join(", "),
      limit: `files, at most ${CHECK_FILES_PAGE_SIZE_MAX} (default ${CHECK_FILES_PAGE_SIZE_MAX})`,
      environment: ENVIRONMENT_FLAG,
    },
    optional: ["tin", "kind"],
    role: "viewer",
    reach: async (request, f) => {
      if (f.tin === undefined) return ok({ writes: [], companies: [] });
      const companyId = await companyIdByTin(request, f.tin);
      return ok({
        writes: [],
        companies: companyId === null ? [] : [companyId],
        hidden: companyNotFound(f),
      });
    },
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      if (f.kind !== undefined && !(checkFileKinds as readonly string[]).includes(f.kind)) {
        return refuse("invalid_input", `--kind ${JSON.stringify(f.kind)}: positive_pay or print`, {
          field: "kind",
        });
      }
      if (f.status !== undefined && !(checkFileStatuses as readonly string[]).includes(f.status)) {
        return refuse(
          "invalid_input",
          `--status ${JSON.stringify(f.status)}: one of ${checkFileStatuses.join(", ")}`,
          { field: "status" },
        );
      }
      const limit = wholeFlag(f, "limit", 1, CHECK_FILES_PAGE_SIZE_MAX);
      if (!limit.ok) return limit;
      let companyIds = ctx.operator?.companyScope ?? null;
      if (f.tin !== undefined) {
        const companyId = await companyIdByTin(ctx, f.tin);
        if (companyId === null) return companyNotFound(f);
        companyIds = [companyId];
      }
      const page = await listCheckFiles(
        ctx.databases[environment.value].readClient,
        {
          companyIds,
          kind: (f.kind ?? null) as CheckFileKind | null,
          status: (f.status ?? null) as CheckFileStatus | null,
        },
        { limit: limit.value ?? CHECK_FILES_PAGE_SIZE_MAX, startingAfter: null },
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
  "checks:download": {
    summary:
      "write a check file's plain content (positive-pay CSV or print PDF, with the account number) to --out, mode 0600; a print file only once its positive-pay file was sent; audited",
    flags: {
      file: "the file id (rbt_…)",
      out: "the path to write (it must not exist)",
      environment: ENVIRONMENT_FLAG,
    },
    paths: ["out"],
    role: "admin",
    reach: fileChangeReach,
    run: async (ctx, f) => {
      const out = pathFlag(ctx, f, "out");
      if (!out.ok) return out;
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const read = await readCheckFileContent(batchDepsOf(ctx, environment.value), f.file, ctx.now);
      if (!read.ok) {
        return read.code === "check_file_not_found"
          ? fileNotFound(f, environment.value)
          : refuse(read.code, `${read.message} (in ${environment.value})`, { field: "file" });
      }
      const { file, content } = read.value;
      if (await exists(out.value)) {
        return refuse("file_exists", `${out.value} exists: choose a new path`, { field: "out" });
      }
      const { sha256 } = file;
      // The download is recorded before the file exists: an operator who has the content is in the log.
      await ctx.databases[environment.value].writer.write((tx) =>
        appendAudit(tx, environment.value, ctx.actor, {
          at: ctx.now,
          action: "checks:download",
          objectType: "check_file",
          objectId: file.batchId,
          companyId: file.companyId,
          before: null,
          after: { out: out.value, sha256, bytes: content.length, kind: file.kind },
        })
      );
      try {
        await Deno.writeFile(out.value, content, { mode: 0o600, createNew: true });
      } catch (error) {
        if (error instanceof Deno.errors.AlreadyExists) {
          return refuse("file_exists", `${out.value} exists: choose a new path`, { field: "out" });
        }
        throw error;
      }
      // The mode given at creation is narrowed by the umask; set it whole.
      await Deno.chmod(out.value, 0o600);
      return ok({
        environment: environment.value,
        file_id: file.batchId,
        kind: file.kind,
        out: out.value,
        sha256,
        bytes: content.length,
        mode: "0600",
      });
    },
  },
  "checks:mark-sent": {
    summary:
      "a built live check file without an SFTP target was uploaded (positive pay) or printed (print file) by hand: mark it sent",
    flags: { file: "the file id (rbt_…)", environment: ENVIRONMENT_FLAG },
    role: "admin",
    reach: fileChangeReach,
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const marked = await markCheckFileSent(
        batchDepsOf(ctx, environment.value),
        ctx.actor,
        f.file,
        ctx.now,
      );
      if (!marked.ok) {
        return marked.code === "check_file_not_found" ? fileNotFound(f, environment.value) : marked;
      }
      return ok({ environment: environment.value, file_id: f.file, status: marked.value.status });
    },
  },
  "checks:import-paid": {
    summary:
      "import the bank's paid-items CSV (check number, amount, paid date; a header row) for --tin: matches complete their payouts, the rest become exceptions; a file imported before changes nothing",
    flags: { tin: "the company's TIN", file: "the CSV's path", environment: ENVIRONMENT_FLAG },
    paths: ["file"],
    role: "admin",
    reach: companyFileImportReach(IMPORT_READ_BYTES_MAX),
    audit: (_f, reach) => ({
      action: "checks:import-paid",
      objectType: "check_paid_import",
      objectId: reach.objectId ?? null,
      companyId: reach.companies === "installation" ? null : reach.companies[0] ?? null,
      snapshot: async (tx) => {
        const { rows } = await tx.execute({
          sql: `SELECT id, company_id, sha256, source, file_name, item_count, matched_count,
                  exception_count, report FROM check_paid_imports WHERE sha256 = ? AND company_id = ?`,
          args: [
            reach.objectId ?? null,
            reach.companies === "installation" ? null : reach.companies[0] ?? null,
          ],
        });
        return rows[0] ? { ...rows[0] } : null;
      },
    }),
    run: async (ctx, f) => {
      const named = await namedCompany(ctx, f);
      if (!named.ok) return named;
      const { environment, companyId } = named.value;
      const path = pathFlag(ctx, f, "file");
      if (!path.ok) return path;
      const content = await readAtMost(path.value, IMPORT_READ_BYTES_MAX);
      if (!content.ok) return content;
      const fileName = path.value.split("/").pop() ?? path.value;
      if (environment === "live") {
        return await stagePaidImport(ctx, companyId, fileName, content.value);
      }
      const imported = await importPaidItems(batchDepsOf(ctx, environment), {
        companyId,
        content: content.value,
        fileName,
        source: handImportSource(ctx.actor.origin),
        importedBy: ctx.actor.operator?.id ?? null,
      }, ctx.now);
      if (!imported.ok) {
        // A file that cannot be read whole is bad input: nothing was written.
        return refuse("invalid_input", `${imported.message} (in ${environment})`, {
          field: imported.field ?? "file",
        });
      }
      const report = imported.value;
      return ok({
        environment,
        import_id: report.importId,
        file_name: fileName,
        sha256: report.sha256,
        duplicate: report.duplicate,
        items: report.items,
        matched: report.matched,
        exceptions: report.exceptions,
        not_matched: report.notMatched.map((item) => ({
          line: item.line,
          check_number: item.checkNumber,
          reason: item.reason,
          message: item.message,
          exception_id: item.exceptionId,
        })),
      });
    },
  },
  "checks:exceptions": {
    summary:
      "list paid-item exceptions oldest first (--status open by default), each with the ledger effect of letting the bank's payment stand",
    flags: {
      tin: "only this company's exceptions",
      status: "open (default), resolved or all",
      limit:
        `exceptions, at most ${CHECK_FILES_PAGE_SIZE_MAX} (default ${CHECK_FILES_PAGE_SIZE_MAX})`,
      environment: ENVIRONMENT_FLAG,
    },
    optional: ["tin"],
    role: "viewer",
    reach: async (request, f) => {
      if (f.tin === undefined) return ok({ writes: [], companies: [] });
      const companyId = await companyIdByTin(request, f.tin);
      return ok({
        writes: [],
        companies: companyId === null ? [] : [companyId],
        hidden: companyNotFound(f),
      });
    },
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const asked = exceptionStatusFlag(f);
      if (!asked.ok) return asked;
      const status = asked.value;
      const limit = wholeFlag(f, "limit", 1, CHECK_FILES_PAGE_SIZE_MAX);
      if (!limit.ok) return limit;
      let companyIds = ctx.operator?.companyScope ?? null;
      if (f.tin !== undefined) {
        const companyId = await companyIdByTin(ctx, f.tin);
        if (companyId === null) return companyNotFound(f);
        companyIds = [companyId];
      }
      const exceptions = await listCheckExceptions(
        ctx.databases[environment.value].readClient,
        { companyIds, status: status === "all" ? null : status },
        limit.value ?? CHECK_FILES_PAGE_SIZE_MAX,
      );
      return ok({
        environment: environment.value,
        exceptions: exceptions.map((x) => exceptionView(x, environment.value)),
      });
    },
  },
  "checks:resolve-exception": {
    summary:
      "resolve a paid-item exception: --resolution payment_stands (the ledger records the bank's payment) or bank_reversed (the bank took it back; nothing posted); audited",
    flags: {
      exception: "the exception id (cex_…)",
      resolution: "payment_stands or bank_reversed",
      note: "why (kept in the audit log)",
      environment: ENVIRONMENT_FLAG,
    },
    optional: ["note"],
    role: "admin",
    reach: exceptionReach(findCheckException, exceptionNotFound),
    run: async (ctx, f) => {
      const environment = environmentFlag(f, "live");
      if (!environment.ok) return environment;
      const resolved = await resolveCheckException(batchDepsOf(ctx, environment.value), ctx.actor, {
        exceptionId: f.exception,
        resolution: f.resolution,
        note: f.note ?? null,
        companyIds: ctx.operator?.companyScope ?? null,
      }, ctx.now);
      if (!resolved.ok) {
        if (resolved.code === "exception_not_found") return exceptionNotFound(f, environment.value);
        if (resolved.code === "invalid_resolution") {
          return refuse("invalid_input", resolved.message, { field: resolved.field });
        }
        return refuse(resolved.code, `${resolved.message} (in ${environment.value})`, {
          field: resolved.field,
        });
      }
      const shown = await findCheckException(
        ctx.databases[environment.value].readClient,
        f.exception,
      );
      return ok({
        ...exceptionView(shown!, environment.value),
        completed_payout_id: resolved.value.completedPayoutId,
      });
    },
  },
};

/** Whether something is at `path` already (a download never overwrites it, nor logs itself then). */
async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}
