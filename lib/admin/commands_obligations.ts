/**
 * The operator commands of what an insurer owes: a company's deadline settings (what an unchosen
 * offer becomes, the default pay_by) and its unclaimed-property settings.
 */
import { ok, refuse } from "../platform/result.ts";
import {
  BOTH,
  type Command,
  companyIdByTin,
  optionalTinReach,
  rowsIn,
  tinReach,
} from "./command_kit.ts";
import { parseSettingsChange } from "../obligations/settings.ts";
import { changeObligationSettings, obligationSettingsOf } from "../obligations/service.ts";
import type { ObligationSettings } from "../obligations/store.ts";

const settingsView = (tin: string, settings: ObligationSettings) => ({
  tin,
  offer_expiry: settings.offerExpiryAction,
  pay_by_days: settings.payByDays,
  holder_state: settings.holderState,
  sandbox_dormancy_days: settings.sandboxDormancyDays,
});

/** The commands of deadlines and unclaimed property. */
export const obligationCommands: Readonly<Record<string, Command>> = {
  "obligations:show": {
    summary: "show a company's deadline and unclaimed-property settings",
    flags: { tin: "the company's TIN" },
    role: "viewer",
    reach: optionalTinReach,
    run: async (ctx, f) => {
      const companyId = await companyIdByTin(ctx, f.tin);
      if (companyId === null) {
        return refuse("company_not_found", `no company with TIN ${f.tin}`, { field: "tin" });
      }
      return ok(settingsView(f.tin, await obligationSettingsOf(ctx.databases, companyId)));
    },
  },
  "obligations:set": {
    summary:
      "set what an unchosen offer becomes (cancel, fallback to a mailed check, hold as owed), the default pay_by days, the holder's state, and the sandbox's dormancy (both environments)",
    flags: {
      tin: "the company's TIN",
      "offer-expiry": "cancel, fallback or hold",
      "pay-by-days": "days from create to pay_by, 1-365, or none",
      "holder-state": "the holder's state of incorporation, two letters",
      "sandbox-dormancy-days": "test only: every dormancy period in days, or none",
    },
    optional: ["offer-expiry", "pay-by-days", "holder-state", "sandbox-dormancy-days"],
    role: "admin",
    reach: tinReach(BOTH),
    audit: (f, reach) => ({
      action: "obligations:set",
      objectType: "company",
      objectId: f.tin,
      companyId: reach.objectId ?? null,
      snapshot: (tx) =>
        rowsIn(
          tx,
          `SELECT id, offer_expiry_action, pay_by_days, holder_state, sandbox_dormancy_days
             FROM companies WHERE tin = ?`,
          [f.tin],
        ),
    }),
    run: async (ctx, f) => {
      const change = parseSettingsChange(f);
      if (!change.ok) return change;
      const companyId = await companyIdByTin(ctx, f.tin);
      if (companyId === null) {
        return refuse("company_not_found", `no company with TIN ${f.tin}`, { field: "tin" });
      }
      const changed = await changeObligationSettings(ctx.databases, companyId, change.value);
      return ok(settingsView(f.tin, changed));
    },
  },
};
