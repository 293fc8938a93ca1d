/**
 * The operator commands of PayPal and Venmo payouts: paypal:set and paypal:show (settings per
 * company and environment; live changes wait for a second admin, as bank settings do), and
 * paypal:cancel-unclaimed (have PayPal cancel an unclaimed item so the payout is offered again,
 * audited). Each takes --environment, live by default, and names the environment it acted on.
 */
import { ok, refuse } from "../platform/result.ts";
import { payoutRuntime } from "../payouts/settings.ts";
import { providerReachesOf } from "../payouts/provider_reaches.ts";
import { maskedPaypalSettings } from "../paypal/settings.ts";
import { readPaypalSettings } from "../paypal/settings_store.ts";
import { paypalSealedSettings } from "../paypal/settings_approval.ts";
import { cancelUnclaimedItem } from "../paypal/service.ts";
import {
  type Command,
  type CommandRequest,
  environmentReach,
  type Flags,
  objectReach,
  rowsIn,
} from "./command_kit.ts";
import { sealedSettingsCommands } from "./sealed_settings.ts";

/** A settings file is a few lines of JSON; anything larger is not one. */
const SETTINGS_FILE_BYTES_MAX = 64 * 1024;

const paypalSettingsCommands = sealedSettingsCommands({
  rail: paypalSealedSettings,
  setSummary:
    "set a company's PayPal Payouts settings from a JSON file (test: at once; live: once a second admin approves)",
  showSummary: "show a company's PayPal settings, the client id masked and the secret left out",
  fileHelp: "the settings as JSON (see the README's Going live with PayPal and Venmo)",
  fileBytesMax: SETTINGS_FILE_BYTES_MAX,
  approvalSummary: (company, settings) =>
    `paypal:set ${company.name} (TIN ${company.tin}): ${settings.baseUrl}, client …${
      settings.clientId.slice(-4)
    }, webhook ${settings.webhookId}`,
  masked: maskedPaypalSettings,
  read: async (reader, secretBox, _environment, companyId) => {
    const settings = await readPaypalSettings(reader, secretBox, companyId);
    return settings === null ? null : { settings, fields: {} };
  },
  notFoundMessage: (company, environment) =>
    `no PayPal settings for ${company.name} (TIN ${company.tin}) in ${environment}: ${
      environment === "test"
        ? "the sandbox's PayPal pays its PayPal and Venmo payouts"
        : "PayPal and Venmo are not offered to its payees"
    }; set them with paypal:set`,
});

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
    const now = ctx.now;
    const canceled = await cancelUnclaimedItem(
      {
        database,
        runtime: payoutRuntime(environment, ctx.runtimeSettings),
        paypal: providerReachesOf(environment, ctx.runtimeSettings, database, ctx.secretBox).paypal,
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
  "paypal:set": paypalSettingsCommands.set,
  "paypal:show": paypalSettingsCommands.show,
  "paypal:cancel-unclaimed": cancelUnclaimed,
};
