/**
 * Offer only what can be paid (issues 18 and 19): which payment methods a company can be paid by
 * in an environment. In test every method is payable (the sandbox rails pay them all). In live a
 * method is payable once its rail is configured for the company: ACH with bank settings, postal
 * checks with a check account in them, digital checks with that and a MICR font, PayPal and Venmo
 * with PayPal settings, virtual cards with Lithic settings, instant deposit with Increase
 * settings. A create whose allowed methods hold none of them is refused before anything is written, and the
 * portal offers the payee only the payable ones.
 */
import type { SqlReader } from "../../db/writer.ts";
import { hasAchRail } from "../ach/bank_store.ts";
import { digitalChecksPrintable, hasCheckRail } from "../checks/settings_store.ts";
import { hasPaypalRail } from "../paypal/settings_store.ts";
import { lithicSettingsStore } from "../cards/store.ts";
import { lobMails } from "../lob/store.ts";
import { lobPostageOf } from "../lob/rules.ts";
import { increaseSettingsStore } from "../instant/store.ts";
import type { Environment } from "../platform/config.ts";
import { type Refusal, refuse } from "../platform/result.ts";
import { sanctionsListLoaded } from "../sanctions/service.ts";
import { modalities, modalityOf } from "./states.ts";

/** Which live rails a company has configured. */
export interface LiveRails {
  readonly ach: boolean;
  readonly check: boolean;
  readonly digitalCheck: boolean;
  /** PayPal's Payouts API pays both PayPal and Venmo recipients. */
  readonly paypal: boolean;
  /** Lithic issues virtual cards. */
  readonly vcc: boolean;
  /** Increase pushes instant deposits to debit cards. */
  readonly instantDeposit: boolean;
}

/** The method ids live rails can pay, given which of them the company has configured. */
export function livePayableMethodIds(rails: LiveRails): ReadonlySet<number> {
  const codes = [
    ...(rails.ach ? ["ach"] : []),
    ...(rails.check ? ["check"] : []),
    ...(rails.digitalCheck ? ["digital_check"] : []),
    ...(rails.paypal ? ["paypal", "venmo"] : []),
    ...(rails.vcc ? ["vcc"] : []),
    ...(rails.instantDeposit ? ["instant_deposit"] : []),
  ];
  return new Set(codes.map((code) => modalityOf(code)!.id));
}

/** Every method id: the test environment's sandbox rails pay them all. */
const EVERY_METHOD: ReadonlySet<number> = new Set(modalities.map((m) => m.id));

/**
 * The method ids the company can be paid by in `environment`; `micrFont` is the MICR font read at
 * start (CHECK_MICR_FONT), without which live digital checks cannot be paid.
 */
export async function payableMethodIds(
  reader: SqlReader,
  environment: Environment,
  companyId: string,
  micrFont: Uint8Array | null,
): Promise<ReadonlySet<number>> {
  if (environment === "test") return EVERY_METHOD;
  // One after another: the reader may be a write unit's transaction.
  const ach = await hasAchRail(reader, environment, companyId);
  const check = await hasCheckRail(reader, environment, companyId);
  return livePayableMethodIds({
    ach,
    check,
    // A digital check is a check the payee prints: the same account, and a MICR font.
    digitalCheck: check && digitalChecksPrintable(environment, micrFont),
    paypal: await hasPaypalRail(reader, environment, companyId),
    vcc: await lithicSettingsStore.has(reader, companyId),
    instantDeposit: await increaseSettingsStore.has(reader, companyId),
  });
}

/** The allowed methods the company can pay, in the order given. */
export async function payableAmong(
  reader: SqlReader,
  environment: Environment,
  companyId: string,
  allowedMethodIds: readonly number[],
  micrFont: Uint8Array | null,
): Promise<number[]> {
  const payable = await payableMethodIds(reader, environment, companyId, micrFont);
  return allowedMethodIds.filter((id) => payable.has(id));
}

const describe = (id: number) => {
  const modality = modalityOf(id);
  return modality ? `${modality.code} (${id})` : String(id);
};

/** One payee's allowed methods, and the field of the request that gave them. */
export interface AllowedMethods {
  readonly methodIds: readonly number[];
  readonly field: string;
}

/**
 * Why a create cannot be paid, or null: a payee none of whose allowed methods has a configured
 * rail (`rail_not_configured`, naming the methods and the field), or, in live, no sanctions list
 * loaded to screen its payees against (`sanctions_list_missing`). Checked before anything is
 * written.
 */
export async function unpayableCreate(
  reader: SqlReader,
  environment: Environment,
  companyId: string,
  payees: readonly AllowedMethods[],
  micrFont: Uint8Array | null,
): Promise<Refusal<"rail_not_configured" | "sanctions_list_missing"> | null> {
  if (environment === "test") return null;
  const payable = await payableMethodIds(reader, environment, companyId, micrFont);
  for (const { methodIds, field } of payees) {
    if (methodIds.some((id) => payable.has(id))) continue;
    const configured = payable.size === 0
      ? "none is configured for this company (live pays ACH and checks once its bank settings are stored, PayPal and Venmo once its PayPal settings are, virtual cards once its Lithic settings are, instant deposit once its Increase settings are)"
      : `only ${[...payable].map(describe).join(", ")} can be paid`;
    return refuse(
      "rail_not_configured",
      `no rail is configured in live for the allowed methods ${
        methodIds.map(describe).join(", ")
      }: ${configured}`,
      { field },
    );
  }
  if (!(await sanctionsListLoaded(reader, environment))) {
    return refuse(
      "sanctions_list_missing",
      "no sanctions (OFAC SDN) list is loaded in live, so payees cannot be screened: an operator loads it with `deno task admin ofac:load --file <sdn.csv>`",
    );
  }
  return null;
}

/** A payee's postal-check postage fixed by the company, and the field that gave it. */
export interface FixedPostage {
  readonly methodIds: readonly number[];
  /** The company's `check_postage_type`, or null when the payee picks. */
  readonly postage: string | null;
  readonly field: string;
}

/**
 * Why a create's fixed postage cannot be mailed, or null: a company whose postal checks Lob mails
 * can only fix a postage code Lob mails checks with (`postage_not_mailable`, naming the code and
 * the field). Checked before anything is written, in both environments.
 */
export async function unmailablePostage(
  reader: SqlReader,
  companyId: string,
  payees: readonly FixedPostage[],
): Promise<Refusal<"postage_not_mailable"> | null> {
  const postalCheck = modalityOf("check")!.id;
  const fixed = payees.filter((p) => p.postage !== null && p.methodIds.includes(postalCheck));
  if (fixed.length === 0 || !(await lobMails(reader, companyId))) return null;
  for (const payee of fixed) {
    const mailable = lobPostageOf(payee.postage!);
    if (!mailable.ok) return { ...mailable, field: payee.field };
  }
  return null;
}
