/**
 * What every table of operator commands is made of: the command's shape, the request and context
 * it runs with, and the reach helpers (which environments and companies a command touches). The
 * tables themselves are lib/admin/commands.ts (the core) and one file per capability beside it.
 */
import { handImportSource } from "../operators/hand_import_approval.ts";
import { isAbsolute, resolve } from "node:path";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import type { RuntimeSettings } from "../payouts/settings.ts";
import { batchServiceDeps } from "../payouts/runtime.ts";
import { ok, type Refusal, refuse, type Result } from "../platform/result.ts";
import { sha256Hex } from "../platform/keys.ts";
import type { Databases } from "../identity/admin.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { AuditActor } from "../audit/store.ts";
import type { AuditedChange } from "../audit/service.ts";
import type { Role } from "../operators/rules.ts";
import type { OperatorDeps, SignedInOperator } from "../operators/service.ts";
import { requestApproval } from "../operators/approvals.ts";
import type { ApprovalKind } from "../operators/rules.ts";

/** What the caller of a command gives: the CLI, or the admin endpoint for a running service. */
export interface CommandRequest {
  readonly databases: Databases;
  readonly now: number;
  readonly keyGraceSeconds: number;
  readonly secretBox: SecretBox;
  /** The payout settings of the configuration (offer lifetime, BASE_URL for payee links). */
  readonly runtimeSettings: RuntimeSettings;
  /** Dev mode (`deno task dev`): no TOTP, and test-only commands need no session. */
  readonly dev: boolean;
  /** `cli` when the CLI opened the databases itself; `http <address>` through the endpoint. */
  readonly origin: string;
  /** The operator session token the caller holds, if any. */
  readonly sessionToken: string | null;
  /** What the CLI prompted for (e-mail, password, TOTP code): never flags, never logged. */
  readonly input: Readonly<Record<string, string>>;
}

/** Where the databases are, from the configuration, for a command that opens them itself. */
export interface DatabaseSettings {
  readonly urls: Readonly<Record<Environment, string>>;
  readonly authToken: string | null;
  readonly busyTimeoutMs: number;
}

/** What a command runs with: the request, its operator (null: dev mode without a session). */
export interface CommandContext extends CommandRequest {
  /** The databases; for an audited command every unit written through them is audited. */
  readonly databases: Databases;
  readonly operatorDeps: OperatorDeps;
  readonly operator: SignedInOperator | null;
  readonly actor: AuditActor;
  /**
   * The real time; `now` is the domain time the command decides with (in test, its company's
   * sandbox time), for what converts it itself.
   */
  readonly realNow: number;
  /** Given to a command that opens no database through the runner (`needsDatabases: false`). */
  readonly databaseSettings: DatabaseSettings;
}

/**
 * What the rails' batch actions, file services and imports of a command run on: the environment's
 * rails from the composition root, its database and the live one.
 */
export const batchDepsOf = (ctx: CommandContext, environment: Environment) =>
  batchServiceDeps({
    environment,
    database: ctx.databases[environment],
    liveDatabase: ctx.databases.live,
    secretBox: ctx.secretBox,
    runtimeSettings: ctx.runtimeSettings,
  });

export type Flags = Record<string, string>;

/** What a command reaches with given flags. */
export interface Reach {
  /** The environments whose data it changes; empty for a read. */
  readonly writes: readonly Environment[];
  /** The companies it acts on, or "installation" when it acts across every company. */
  readonly companies: readonly string[] | "installation";
  /** What an operator outside the scope is told: what a missing object gets. */
  readonly hidden?: Refusal;
  /** The object the audit rows name, when the flags give it by a secret or a natural key. */
  readonly objectId?: string | null;
}

/** A value the CLI prompts for; `optional` ones may be left empty. */
export interface Prompt {
  readonly name: string;
  readonly label: string;
  readonly secret: boolean;
  readonly optional?: boolean;
  /** Asked only when the flags call for it (absent: always). */
  readonly when?: (flags: Flags) => boolean;
}

export interface Command {
  readonly summary: string;
  readonly flags: Readonly<Record<string, string>>;
  /** The least role that may run it. */
  readonly role: Role;
  /** Runs without a session: signing in and out, and the first admin. */
  readonly public?: (flags: Flags) => boolean;
  /**
   * False for a public command that opens no database (secrets:generate, restore): the CLI runs
   * it on this host in any DATA_DIR, even one holding no database, and gives it no databases and
   * no sealing key (touching either throws). Absent or true: the command needs both databases, and
   * the CLI refuses a DATA_DIR without them rather than create empty ones.
   */
  readonly needsDatabases?: boolean;
  readonly prompts?: readonly Prompt[];
  /** Flags of `flags` that may be left out (besides the ones every table shares). */
  readonly optional?: readonly string[];
  /** Flags of `flags` that take no value: given, they read "true". */
  readonly switches?: readonly string[];
  /**
   * Flags of `flags` that name a file or directory (read with pathFlag): the CLI resolves a
   * relative one against its own working directory before sending the command to the service.
   */
  readonly paths?: readonly string[];
  readonly reach: (request: CommandRequest, flags: Flags) => Promise<Result<Reach>>;
  /**
   * How the units it writes through ctx.databases are audited; absent when it writes nothing or
   * its use cases write their own audit rows.
   */
  readonly audit?: (flags: Flags, reach: Reach) => AuditedChange;
  readonly run: (ctx: CommandContext, flags: Flags) => Promise<Result<Record<string, unknown>>>;
}

/** Whether a command opens the databases (every command but those that say otherwise). */
export const needsDatabases = (command: Command): boolean => command.needsDatabases !== false;

export const reads = (): Promise<Result<Reach>> =>
  Promise.resolve(ok({ writes: [], companies: [] }));
export const readsEverything = (): Promise<Result<Reach>> =>
  Promise.resolve(ok({ writes: [], companies: "installation" }));
export const changesOperators = (): Promise<Result<Reach>> =>
  Promise.resolve(ok({ writes: ["live"], companies: "installation" }));
export const BOTH: readonly Environment[] = ["live", "test"];

export async function companyIdByTin(request: CommandRequest, tin: string): Promise<string | null> {
  const { rows } = await request.databases.live.readClient.execute({
    sql: "SELECT id FROM companies WHERE tin = ?",
    args: [tin],
  });
  return rows[0] ? String(rows[0].id) : null;
}

/** A command on the company a --tin names, changing `writes`. */
export function tinReach(writes: readonly Environment[], hidden?: (flags: Flags) => Refusal) {
  return async (request: CommandRequest, flags: Flags): Promise<Result<Reach>> => {
    const companyId = await companyIdByTin(request, flags.tin);
    return ok({
      writes,
      companies: companyId === null ? [] : [companyId],
      hidden: hidden?.(flags) ??
        refuse("company_not_found", `no company with TIN ${flags.tin}`, { field: "tin" }),
      objectId: companyId,
    });
  };
}

/** A read whose --tin, when given, narrows it to that company (hidden as missing outside the scope). */
export async function optionalTinReach(
  request: CommandRequest,
  flags: Flags,
): Promise<Result<Reach>> {
  if (flags.tin === undefined) return ok({ writes: [], companies: [] });
  const companyId = await companyIdByTin(request, flags.tin);
  return ok({
    writes: [],
    companies: companyId === null ? [] : [companyId],
    hidden: refuse("company_not_found", `no company with TIN ${flags.tin}`, { field: "tin" }),
  });
}

/**
 * The companies a listing covers: the --tin company when named (refused when unknown), else the
 * operator's scope (null: every company).
 */
export async function listedCompanies(
  ctx: CommandContext,
  flags: Flags,
): Promise<Result<readonly string[] | null>> {
  if (flags.tin === undefined) return ok(ctx.operator?.companyScope ?? null);
  const companyId = await companyIdByTin(ctx, flags.tin);
  if (companyId === null) {
    return refuse("company_not_found", `no company with TIN ${flags.tin}`, { field: "tin" });
  }
  return ok([companyId]);
}

/** The --status of an exceptions listing: open (by default), resolved or all. */
export function exceptionStatusFlag(
  flags: Flags,
): Result<"open" | "resolved" | "all", "invalid_input"> {
  const status = flags.status ?? "open";
  if (status === "open" || status === "resolved" || status === "all") return ok(status);
  return refuse("invalid_input", `--status ${JSON.stringify(status)}: open, resolved or all`, {
    field: "status",
  });
}

/**
 * The reach of a file imported for the --tin company (at most `readBytesMax` bytes read): its
 * --environment and company; the file's SHA-256 names the import in the audit log (unreadable: the
 * run refuses it).
 */
export function companyFileImportReach(readBytesMax: number) {
  return async (request: CommandRequest, flags: Flags): Promise<Result<Reach>> => {
    const named = environmentReach(flags, true);
    if (!named.ok) return named;
    const companyId = await companyIdByTin(request, flags.tin);
    const path = pathFlag(request, flags, "file");
    const content = path.ok ? await readAtMost(path.value, readBytesMax) : null;
    return ok({
      writes: named.value.writes,
      companies: companyId === null ? [] : [companyId],
      hidden: refuse("company_not_found", `no company with TIN ${flags.tin}`, { field: "tin" }),
      objectId: content?.ok ? await sha256Hex(content.value) : null,
    });
  };
}

/** What a live command answers once it asked a second admin: the approval, and what it is about. */
export function approvalAnswer(
  requested: Result<{ id: string; status: string; summary: string; expires_at: string }>,
  about: Record<string, unknown>,
): Result<Record<string, unknown>> {
  return requested.ok
    ? ok({
      environment: "live",
      approval_id: requested.value.id,
      status: requested.value.status,
      ...about,
      summary: requested.value.summary,
      expires_at: requested.value.expires_at,
    })
    : requested;
}

/** A live file imported by hand, as a rail's preview shows it, to stage for a second admin. */
export interface HandImport {
  readonly kind: Extract<
    ApprovalKind,
    "ach_import.apply" | "check_paid_import.apply" | "statement_import.apply"
  >;
  readonly companyId: string | null;
  readonly objectId: string;
  readonly fileName: string;
  readonly sha256: string;
  readonly content: Uint8Array;
  readonly summary: string;
  /** What the file would apply now, shown to the approver and in the answer. */
  readonly wouldApply: Record<string, unknown>;
}

/**
 * Stages a live hand import: the file is sealed into an approval (payload `file_name`, `sha256`,
 * `content_sealed`, `source`, `preview`) that a second admin decides; answers the approval and the
 * preview. Approved, it is imported by lib/operators/hand_import_approval.ts.
 */
export async function stageHandImport(
  ctx: CommandContext,
  hand: HandImport,
): Promise<Result<Record<string, unknown>>> {
  const staged = {
    file_name: hand.fileName,
    sha256: hand.sha256,
    content_sealed: await ctx.secretBox.sealText(new TextDecoder().decode(hand.content)),
    source: handImportSource(ctx.actor.origin),
  };
  const requested = await requestApproval(ctx.operatorDeps, {
    operator: ctx.actor.operator!,
    origin: ctx.actor.origin,
  }, {
    kind: hand.kind,
    environment: "live",
    companyId: hand.companyId,
    objectId: hand.objectId,
    summary: hand.summary,
    payload: { ...staged, preview: hand.wouldApply },
  }, ctx.now);
  return approvalAnswer(requested, { kind: hand.kind, would_apply: hand.wouldApply });
}

/** Plain rows of a query in the unit, for audit snapshots. */
export async function rowsIn(tx: WriteTx, sql: string, args: (string | number | null)[]) {
  const { rows } = await tx.execute({ sql, args });
  return rows.map((row) => ({ ...row }));
}

/** The environment a command names with --environment, live by default. */
export function environmentReach(
  flags: Flags,
  changes: boolean,
): Result<{ environment: Environment; writes: Environment[] }> {
  const environment = environmentFlag(flags, "live");
  if (!environment.ok) return environment;
  return ok({ environment: environment.value, writes: changes ? [environment.value] : [] });
}

/**
 * The reach of a command that changes one object of the --environment it names: the object's
 * company, or what an operator outside the scope is told when it is not there.
 */
export function objectReach(
  find: (request: CommandRequest, environment: Environment, flags: Flags) => Promise<
    { companyId: string } | null
  >,
  hidden: (flags: Flags, environment: Environment) => Refusal,
  objectId?: (flags: Flags) => string,
) {
  return async (request: CommandRequest, f: Flags): Promise<Result<Reach>> => {
    const named = environmentReach(f, true);
    if (!named.ok) return named;
    const { environment, writes } = named.value;
    const found = await find(request, environment, f);
    return ok({
      writes,
      companies: found ? [found.companyId] : [],
      hidden: hidden(f, environment),
      ...(objectId ? { objectId: objectId(f) } : {}),
    });
  };
}

/** What an operator is told when the --exception an exception command names is not there. */
export const exceptionNotFound =
  <Code extends string>(code: Code, noun: string) => (f: Flags, environment: Environment) =>
    refuse(code, `no ${noun} ${f.exception} in ${environment}`, { field: "exception" });

/** The reach of a command that resolves the exception its --exception names, found by `find`. */
export function exceptionReach(
  find: (
    reader: Databases[Environment]["readClient"],
    exceptionId: string,
  ) => Promise<{ companyId: string } | null>,
  hidden: (flags: Flags, environment: Environment) => Refusal,
) {
  return objectReach(
    (request, environment, f) => find(request.databases[environment].readClient, f.exception),
    hidden,
    (f) => f.exception,
  );
}

export function environmentFlag(
  flags: Flags,
  fallback: Environment,
): Result<Environment, "invalid_input"> {
  const value = flags.environment ?? fallback;
  if (value === "test" || value === "live") return ok(value);
  return refuse("invalid_input", `--environment ${JSON.stringify(value)}: test or live`, {
    field: "environment",
  });
}

/** A list's --limit: a whole number from 1 to `max`, `fallback` when not given. */
export function limitFlag(
  flags: Flags,
  fallback: number,
  max: number,
): Result<number, "invalid_input"> {
  if (flags.limit === undefined) return ok(fallback);
  const limit = Number(flags.limit);
  if (/^\d+$/.test(flags.limit) && limit >= 1 && limit <= max) return ok(limit);
  return refuse(
    "invalid_input",
    `--limit ${JSON.stringify(flags.limit)}: a whole number from 1 to ${max}`,
    { field: "limit" },
  );
}

/**
 * A path flag as an absolute path. The CLI resolves it against its working directory; through the
 * running service's endpoint a relative path would land in the service's, so it is refused.
 */
export function pathFlag(
  request: CommandRequest,
  flags: Flags,
  name: string,
): Result<string, "invalid_input"> {
  const value = flags[name];
  if (isAbsolute(value)) return ok(value);
  if (request.origin === "cli") return ok(resolve(value));
  return refuse(
    "invalid_input",
    `--${name} ${JSON.stringify(value)}: give an absolute path, the running service opens it`,
    { field: name },
  );
}

/** The flags with each path flag of the command made absolute against `cwd`, the CLI's own. */
export function absolutePathFlags(command: Command, flags: Flags, cwd: string): Flags {
  const resolved = { ...flags };
  for (const name of command.paths ?? []) {
    if (resolved[name] !== undefined) resolved[name] = resolve(cwd, resolved[name]);
  }
  return resolved;
}

/** The first `bytesMax` bytes of a file, or a refusal naming the path when it cannot be read. */
export async function readAtMost(path: string, bytesMax: number): Promise<Result<Uint8Array>> {
  let handle: Deno.FsFile;
  try {
    handle = await Deno.open(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.PermissionDenied) {
      const why = error instanceof Deno.errors.NotFound ? "does not exist" : "cannot be read";
      return refuse("invalid_input", `--file ${JSON.stringify(path)} ${why}`, { field: "file" });
    }
    throw error;
  }
  try {
    const buffer = new Uint8Array(bytesMax);
    let filled = 0;
    while (filled < bytesMax) {
      const read = await handle.read(buffer.subarray(filled));
      if (read === null) break;
      filled += read;
    }
    return ok(buffer.slice(0, filled));
  } finally {
    handle.close();
  }
}
