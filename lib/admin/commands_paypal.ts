/**
 * The operator commands of PayPal and Venmo payouts: paypal:set and paypal:show (settings per
 * company and environment; live changes wait for a second admin, as bank settings do), and
 * paypal:cancel-unclaimed (have PayPal cancel an unclaimed item so the payout is offered again,
 * audited). Each takes --environment, live by default, and names the environment it acted on.
 */
import { ok, refuse, type Result } from "../platform/result.ts";
import { requestApproval } from "../operators/approvals.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { payoutRuntime } from "../payouts/runtime.ts";
import { checkPaypalSettings, maskedPaypalSettings } from "../paypal/settings.ts";
import { readPaypalSettings, savePaypalSettings } from "../paypal/settings_store.ts";
import { paypalSettingsChangePayload } from "../paypal/settings_approval.ts";
import { cancelUnclaimedItem } from "../paypal/service.ts";
import {
  type Command,
  type CommandRequest,
  environmentReach,
  type Flags,
  objectReach,
  pathFlag,
  type Reach,
  rowsIn,
} from "./command_kit.ts";

/** A settings file is a few lines of JSON; anything larger is not one. */
const SETTINGS_FILE_BYTES_MAX = 64 * 1024;

interface CompanyRef {
  readonly id: string;
  readonly name: string;
  readonly tin: string;
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

/** A command on the PayPal settings of the company --tin names, in the --environment it names. */
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
async function readSettingsFile(path: string): Promise<Result<unknown, "invalid_input">> {
  const refused = (why: string) =>
    refuse("invalid_input", `--file ${JSON.stringify(path)}: ${why}`, { field: "file" });
  let bytes: Uint8Array;
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) return refused("no such file");
    if (info.size > SETTINGS_FILE_BYTES_MAX) {
      return refused(`${info.size} bytes, at most ${SETTINGS_FILE_BYTES_MAX} are taken`);
    }
    bytes = await Deno.readFile(path);
  } catch {
    return refused("no such file");
  }
  try {
    return ok(JSON.parse(new TextDecoder().decode(bytes)));
  } catch (error) {
    return refused(`not JSON (${(error as Error).message})`);
  }
}

const paypalSet: Command = {
  summary:
    "set a company's PayPal Payouts settings from a JSON file (test: at once; live: once a second admin approves)",
  flags: {
    tin: "the company's TIN",
    file: "the settings as JSON (see the README's Going live with PayPal and Venmo)",
    environment: "live (default) or test",
  },
  role: "admin",
  reach: settingsReach(true),
  audit: (_f, reach) => ({
    action: "paypal:set",
    objectType: "paypal_settings",
    objectId: reach.objectId ?? null,
    companyId: reach.objectId ?? null,
    // The fingerprint tells versions apart; the sealed document never enters the log.
    snapshot: (tx) =>
      rowsIn(
        tx,
        "SELECT company_id, fingerprint, updated_by, updated_at FROM paypal_settings WHERE company_id = ?",
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
    const json = await readSettingsFile(path.value);
    if (!json.ok) return json;
    const checked = checkPaypalSettings(json.value, environment);
    if (!checked.ok) {
      return refuse(checked.code, `--file: ${checked.message}`, { field: checked.field ?? "file" });
    }
    const settings = checked.value;
    if (environment === "live") {
      const requested = await requestApproval(ctx.operatorDeps, {
        operator: ctx.actor.operator!,
        origin: ctx.actor.origin,
      }, {
        kind: "paypal_settings.change",
        environment: "live",
        companyId: company.id,
        objectId: company.id,
        summary: `paypal:set ${company.name} (TIN ${company.tin}): ${settings.baseUrl}, client …${
          settings.clientId.slice(-4)
        }, webhook ${settings.webhookId}`,
        payload: await paypalSettingsChangePayload(ctx.secretBox, company, settings),
      }, ctx.now);
      return requested.ok
        ? ok({
          environment,
          approval_id: requested.value.id,
          status: requested.value.status,
          kind: "paypal_settings.change",
          company_id: company.id,
          summary: requested.value.summary,
          expires_at: requested.value.expires_at,
        })
        : requested;
    }
    const saved = await ctx.databases.test.writer.write((tx) =>
      savePaypalSettings(
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
      settings: maskedPaypalSettings(settings),
    });
  },
};

const paypalShow: Command = {
  summary: "show a company's PayPal settings, the client id masked and the secret left out",
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
    const settings = await readPaypalSettings(database.readClient, ctx.secretBox, company.id);
    if (settings === null) {
      return refuse(
        "paypal_settings_not_found",
        `no PayPal settings for ${company.name} (TIN ${company.tin}) in ${environment}: ${
          environment === "test"
            ? "the sandbox rail pays its PayPal and Venmo payouts"
            : "PayPal and Venmo are not offered to its payees"
        }; set them with paypal:set`,
      );
    }
    const { rows } = await database.readClient.execute({
      sql: "SELECT fingerprint, updated_at FROM paypal_settings WHERE company_id = ?",
      args: [company.id],
    });
    return ok({
      environment,
      company_id: company.id,
      company: company.name,
      tin: company.tin,
      fingerprint: String(rows[0].fingerprint),
      updated_at: new Date(Number(rows[0].updated_at)).toISOString(),
      settings: maskedPaypalSettings(settings),
    });
  },
};

async function findPayout(request: CommandRequest, environment: "test" | "live", f: Flags) {
  const { rows } = await request.databases[environment].readClient.execute({
    sql: "SELECT company_id FROM payouts WHERE id = ?",
    args: [f.payout],
  });
  return rows[0] ? { companyId: String(rows[0].company_id) } : null;
}

const cancelUnclaimed: Command = {
  summary:
    "have PayPal cancel a payout's unclaimed item; once PayPal confirms, the payout fails (unclaimed_canceled) and is offered again",
  flags: { payout: "the payout id (po_…)", environment: "live (default) or test" },
  role: "clerk",
  reach: objectReach(
    findPayout,
    (f, environment) =>
      refuse("payout_not_found", `no payout ${f.payout} in ${environment}`, { field: "payout" }),
    (f) => f.payout,
  ),
  audit: (f, reach) => ({
    action: "paypal:cancel-unclaimed",
    objectType: "payout",
    objectId: f.payout,
    companyId: reach.companies[0] ?? null,
    snapshot: (tx) =>
      rowsIn(
        tx,
        `SELECT p.id, p.status, p.failure_reason, i.payout_item_id, i.transaction_status
           FROM payouts p
             LEFT JOIN rail_batch_entries e ON e.payout_id = p.id AND e.rail = 'paypal'
             LEFT JOIN paypal_items i ON i.entry_id = e.id
          WHERE p.id = ? ORDER BY e.created_at DESC LIMIT 1`,
        [f.payout],
      ),
  }),
  run: async (ctx, f) => {
    const named = environmentReach(f, true);
    if (!named.ok) return named;
    const environment = named.value.environment;
    const database = ctx.databases[environment];
    const found = await findPayout(ctx, environment, f);
    if (!found) {
      return refuse("payout_not_found", `no payout ${f.payout} in ${environment}`, {
        field: "payout",
      });
    }
    // The sandbox moves payouts at the company's sandbox time, as its other moves.
    const now = await domainNow(database, found.companyId, ctx.now);
    const canceled = await cancelUnclaimedItem(
      {
        database,
        secretBox: ctx.secretBox,
        runtime: payoutRuntime(environment, ctx.runtimeSettings),
      },
      f.payout,
      now,
    );
    if (!canceled.ok) return canceled;
    return ok({
      environment,
      payout_id: canceled.value.payout.id,
      payout_item_id: canceled.value.payoutItemId,
      status: canceled.value.payout.status,
      failure_reason: canceled.value.payout.failureReason,
    });
  },
};

export const paypalCommands: Readonly<Record<string, Command>> = {
  "paypal:set": paypalSet,
  "paypal:show": paypalShow,
  "paypal:cancel-unclaimed": cancelUnclaimed,
};
