/**
 * The set and show commands of a rail's sealed settings (bank:set and bank:show, paypal:set and
 * paypal:show): set reads a JSON file and checks it, saves it at once in test and asks a second
 * admin in live (lib/operators/sealed_settings_approval.ts); show prints the settings masked.
 */
import type { SqlReader } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { requestApproval } from "../operators/approvals.ts";
import {
  sealedSettingsChangePayload,
  type SealedSettingsRail,
} from "../operators/sealed_settings_approval.ts";
import {
  type Command,
  type CommandRequest,
  environmentReach,
  type Flags,
  pathFlag,
  type Reach,
  rowsIn,
} from "./command_kit.ts";

interface CompanyRef {
  readonly id: string;
  readonly name: string;
  readonly tin: string;
}

/** What the commands of one rail's sealed settings say and show beyond what they share. */
export interface SealedSettingsCommands<S> {
  readonly rail: SealedSettingsRail<S>;
  readonly setSummary: string;
  readonly showSummary: string;
  /** The help of --file: where the settings file is described. */
  readonly fileHelp: string;
  readonly fileBytesMax: number;
  /** The one line an approver reads of a live change. */
  readonly approvalSummary: (company: CompanyRef, settings: S) => string;
  readonly masked: (settings: S) => Record<string, unknown>;
  /** The settings show prints, with the fields it adds before the fingerprint; null: none. */
  readonly read: (
    reader: SqlReader,
    secretBox: SecretBox,
    environment: Environment,
    companyId: string,
  ) => Promise<{ settings: S; fields: Record<string, unknown> } | null>;
  /** What show says when the company has no settings in the environment. */
  readonly notFoundMessage: (company: CompanyRef, environment: Environment) => string;
}

async function companyByTin(request: CommandRequest, tin: string): Promise<CompanyRef | null> {
  const { rows } = await request.databases.live.readClient.execute({
    sql: "SELECT id, name, tin FROM companies WHERE tin = ?",
    args: [tin],
  });
  return rows[0]
    ? { id: String(rows[0].id), name: String(rows[0].name), tin: String(rows[0].tin) }
    : null;
}

const companyNotFound = (f: Flags) =>
  refuse("company_not_found", `no company with TIN ${f.tin}`, { field: "tin" });

/** A command on the settings of the company --tin names, in the --environment it names. */
function settingsReach(changes: boolean) {
  return async (request: CommandRequest, f: Flags): Promise<Result<Reach>> => {
    const named = environmentReach(f, changes);
    if (!named.ok) return named;
    const company = await companyByTin(request, f.tin);
    return ok({
      writes: named.value.writes,
      companies: company ? [company.id] : [],
      hidden: companyNotFound(f),
      objectId: company?.id ?? null,
    });
  };
}

/** The settings file's JSON, refused naming --file when it is missing, too large or not JSON. */
async function readSettingsFile(
  path: string,
  bytesMax: number,
): Promise<Result<unknown, "invalid_input">> {
  const refused = (why: string) =>
    refuse("invalid_input", `--file ${JSON.stringify(path)}: ${why}`, { field: "file" });
  let bytes: Uint8Array;
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) return refused("no such file");
    if (info.size > bytesMax) return refused(`${info.size} bytes, at most ${bytesMax} are taken`);
    bytes = await Deno.readFile(path);
  } catch (error) {
    return refused(
      error instanceof Deno.errors.NotFound
        ? "no such file"
        : `cannot be read (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  try {
    return ok(JSON.parse(new TextDecoder().decode(bytes)));
  } catch (error) {
    return refused(`not JSON (${(error as Error).message})`);
  }
}

/** The set and show commands of one rail's sealed settings. */
export function sealedSettingsCommands<S>(
  config: SealedSettingsCommands<S>,
): { set: Command; show: Command } {
  const { rail } = config;
  const set: Command = {
    summary: config.setSummary,
    flags: {
      tin: "the company's TIN",
      file: config.fileHelp,
      environment: "live (default) or test",
    },
    paths: ["file"],
    role: "admin",
    reach: settingsReach(true),
    audit: (_f, reach) => ({
      action: rail.action,
      objectType: rail.table,
      objectId: reach.objectId ?? null,
      companyId: reach.objectId ?? null,
      // The fingerprint tells versions apart; the sealed document never enters the log.
      snapshot: (tx) =>
        rowsIn(
          tx,
          `SELECT company_id, fingerprint, updated_by, updated_at FROM ${rail.table} WHERE company_id = ?`,
          [reach.objectId ?? null],
        ),
    }),
    run: async (ctx, f) => {
      const named = environmentReach(f, true);
      if (!named.ok) return named;
      const environment = named.value.environment;
      const company = await companyByTin(ctx, f.tin);
      if (!company) return companyNotFound(f);
      const path = pathFlag(ctx, f, "file");
      if (!path.ok) return path;
      const json = await readSettingsFile(path.value, config.fileBytesMax);
      if (!json.ok) return json;
      const checked = rail.check(json.value, environment);
      if (!checked.ok) {
        return refuse(checked.code, `--file: ${checked.message}`, {
          field: checked.field ?? "file",
        });
      }
      const settings = checked.value;
      if (environment === "live") {
        const requested = await requestApproval(ctx.operatorDeps, {
          operator: ctx.actor.operator!,
          origin: ctx.actor.origin,
        }, {
          kind: rail.kind,
          environment: "live",
          companyId: company.id,
          objectId: company.id,
          summary: config.approvalSummary(company, settings),
          payload: await sealedSettingsChangePayload(rail, ctx.secretBox, company, settings),
        }, ctx.now);
        return requested.ok
          ? ok({
            environment,
            approval_id: requested.value.id,
            status: requested.value.status,
            kind: rail.kind,
            company_id: company.id,
            summary: requested.value.summary,
            expires_at: requested.value.expires_at,
          })
          : requested;
      }
      const saved = await ctx.databases.test.writer.write((tx) =>
        rail.save(
          tx,
          ctx.secretBox,
          company.id,
          settings,
          ctx.actor.operator?.id ?? null,
          ctx.now,
        )
      );
      return ok({
        environment,
        company_id: company.id,
        tin: company.tin,
        fingerprint: saved.fingerprint,
        previous_fingerprint: saved.previousFingerprint,
        settings: config.masked(settings),
      });
    },
  };
  const show: Command = {
    summary: config.showSummary,
    flags: { tin: "the company's TIN", environment: "live (default) or test" },
    role: "admin",
    reach: settingsReach(false),
    run: async (ctx, f) => {
      const named = environmentReach(f, false);
      if (!named.ok) return named;
      const environment = named.value.environment;
      const company = await companyByTin(ctx, f.tin);
      if (!company) return companyNotFound(f);
      const database = ctx.databases[environment];
      const found = await config.read(database.readClient, ctx.secretBox, environment, company.id);
      if (found === null) {
        return refuse(`${rail.table}_not_found`, config.notFoundMessage(company, environment));
      }
      const { rows } = await database.readClient.execute({
        sql: `SELECT fingerprint, updated_at FROM ${rail.table} WHERE company_id = ?`,
        args: [company.id],
      });
      return ok({
        environment,
        company_id: company.id,
        company: company.name,
        tin: company.tin,
        ...found.fields,
        fingerprint: rows[0] ? String(rows[0].fingerprint) : null,
        updated_at: rows[0] ? new Date(Number(rows[0].updated_at)).toISOString() : null,
        settings: config.masked(found.settings),
      });
    },
  };
  return { set, show };
}
