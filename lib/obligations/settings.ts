/**
 * The company settings of what an insurer owes, as an operator gives them (valibot at the edge,
 * each refusal naming its flag): the offer-expiry action, the default pay_by days, the holder's
 * state of incorporation and the sandbox's shortened dormancy.
 */
import * as v from "valibot";
import { offerExpiryActions, PAY_BY_DAYS_MAX, PAY_BY_DAYS_MIN } from "./deadline.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { PROPERTY_TYPES, type PropertyType, US_STATES } from "./unclaimed_rules.ts";

/** The sandbox's dormancy may be shortened to this many days at least (a day is the clock's unit). */
export const SANDBOX_DORMANCY_DAYS_MIN = 1;
export const SANDBOX_DORMANCY_DAYS_MAX = 3650;

const wholeDays = (name: string, min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d{1,4}$/, `--${name}: a whole number of days from ${min} to ${max}, or none`),
    v.transform(Number),
    v.minValue(min, `--${name}: a whole number of days from ${min} to ${max}, or none`),
    v.maxValue(max, `--${name}: a whole number of days from ${min} to ${max}, or none`),
  );
const orNone = <S extends v.GenericSchema<string, number>>(schema: S) =>
  v.union([v.pipe(v.literal("none"), v.transform(() => null)), schema]);

const settingsFlags = v.object({
  "offer-expiry": v.optional(
    v.picklist(offerExpiryActions, `--offer-expiry: one of ${offerExpiryActions.join(", ")}`),
  ),
  "pay-by-days": v.optional(
    orNone(wholeDays("pay-by-days", PAY_BY_DAYS_MIN, PAY_BY_DAYS_MAX)),
  ),
  "holder-state": v.optional(
    v.pipe(
      v.string(),
      v.toUpperCase(),
      v.regex(/^[A-Z]{2}$/, "--holder-state: a two-letter US state code such as DE"),
    ),
  ),
  "sandbox-dormancy-days": v.optional(
    orNone(
      wholeDays("sandbox-dormancy-days", SANDBOX_DORMANCY_DAYS_MIN, SANDBOX_DORMANCY_DAYS_MAX),
    ),
  ),
});

/** What an operator changes; a setting left out keeps its value. */
export interface SettingsChange {
  readonly offerExpiryAction?: (typeof offerExpiryActions)[number];
  readonly payByDays?: number | null;
  readonly holderState?: string;
  readonly sandboxDormancyDays?: number | null;
}

/** The change the flags ask for, or a refusal naming the first flag at fault. */
export function parseSettingsChange(
  flags: Readonly<Record<string, string | undefined>>,
): Result<SettingsChange, "invalid_input"> {
  const parsed = v.safeParse(settingsFlags, flags);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const field = v.getDotPath(issue) ?? "flags";
    return refuse("invalid_input", issue.message, { field });
  }
  const out = parsed.output;
  const change: SettingsChange = {
    ...(out["offer-expiry"] !== undefined ? { offerExpiryAction: out["offer-expiry"] } : {}),
    ...(out["pay-by-days"] !== undefined ? { payByDays: out["pay-by-days"] } : {}),
    ...(out["holder-state"] !== undefined ? { holderState: out["holder-state"] } : {}),
    ...(out["sandbox-dormancy-days"] !== undefined
      ? { sandboxDormancyDays: out["sandbox-dormancy-days"] }
      : {}),
  };
  if (Object.keys(change).length === 0) {
    return refuse(
      "invalid_input",
      "give at least one of --offer-expiry, --pay-by-days, --holder-state, --sandbox-dormancy-days",
      { field: "offer-expiry" },
    );
  }
  return ok(change);
}

/** A state's dormancy is at most twenty years. */
export const DORMANCY_DAYS_MAX = 7300;

const propertyTypes = Object.keys(PROPERTY_TYPES) as PropertyType[];
const stateFlag = v.pipe(
  v.string(),
  v.toUpperCase(),
  v.check((state) => US_STATES.has(state), "--state: a two-letter US state code such as TX"),
);

/** The first issue of a parse, as the refusal naming its flag. */
function firstIssue(issues: [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]]) {
  const issue = issues[0];
  return refuse("invalid_input", issue.message, { field: v.getDotPath(issue) ?? "flags" });
}

const dormancyFlags = v.object({
  state: stateFlag,
  "property-type": v.picklist(propertyTypes, `--property-type: one of ${propertyTypes.join(", ")}`),
  days: v.pipe(
    v.string(),
    v.regex(/^\d{1,4}$/, `--days: a whole number from 1 to ${DORMANCY_DAYS_MAX}`),
    v.transform(Number),
    v.minValue(1, `--days: a whole number from 1 to ${DORMANCY_DAYS_MAX}`),
    v.maxValue(DORMANCY_DAYS_MAX, `--days: a whole number from 1 to ${DORMANCY_DAYS_MAX}`),
  ),
});

/** A dormancy an admin sets: a state, a property type and its days. */
export function parseDormancyChange(
  flags: Readonly<Record<string, string | undefined>>,
): Result<{ state: string; propertyType: PropertyType; days: number }, "invalid_input"> {
  const parsed = v.safeParse(dormancyFlags, flags);
  if (!parsed.success) return firstIssue(parsed.issues);
  return ok({
    state: parsed.output.state,
    propertyType: parsed.output["property-type"],
    days: parsed.output.days,
  });
}

const reportFlags = v.object({
  state: stateFlag,
  "report-year": v.pipe(
    v.string(),
    v.regex(/^20\d\d$/, "--report-year: a year such as 2026"),
    v.transform(Number),
  ),
});

/** The state and year of a report. */
export function parseReportRequest(
  flags: Readonly<Record<string, string | undefined>>,
): Result<{ state: string; reportYear: number }, "invalid_input"> {
  const parsed = v.safeParse(reportFlags, flags);
  if (!parsed.success) return firstIssue(parsed.issues);
  return ok({ state: parsed.output.state, reportYear: parsed.output["report-year"] });
}
