/**
 * The sandbox's test details (contract §10): test payees and the details a developer enters pick
 * what happens to a payout. Every method is paid by the same rail as in live, bound to the
 * sandbox's bank or to a provider's simulator, which reads these: the ACH sandbox bank, the check
 * bank and the sandbox's Lithic by the scenario fixed at selection, the sandbox's PayPal and the
 * Increase simulator (lib/instant/simulator.ts) by the receiver, card or routing number entered.
 */
import { type ModalityCode, modalityOf } from "../payouts/states.ts";
import type { SandboxScenario } from "./seam.ts";

/** The test details that pick a scenario, and what a `fail+<modality>` payee does per method. */
export const sandboxTestDetails = {
  achSettles: "000123456789",
  achReturnsR03: "000111111116",
  achTransientOnce: "000222222227",
  /** Settles and completes, then comes back after completion (a late return). */
  achReturnsLate: "000333333338",
  cardSucceeds: "4000056655665556",
  cardDeclined: "4000000000000002",
  /** An instant deposit card no network route can push to (`card_not_eligible`). */
  cardNotPushable: "4000000000000101",
  /** A bank whose routing number cannot take an instant bank payment (`bank_not_reachable`). */
  rtpUnreachableRouting: "091000019",
  checkUndeliverableZip: "00000",
  /** Venmo phones of the sandbox's PayPal: one it has no account of, one whose payee never claims. */
  venmoUnregisteredPhone: "+15555550404",
  venmoUnclaimedPhone: "+15555550202",
  /** The Venmo phone whose payment the sandbox's PayPal refunds after it completed. */
  venmoRefundedPhone: "+15555550303",
  /** Venmo phones the sandbox's PayPal holds, blocks, and denies the batch of, as the e-mails
   * `held@`, `blocked@` and `denied@` (lib/paypal/simulator.ts). */
  venmoHeldPhone: "+15555550505",
  venmoBlockedPhone: "+15555550606",
  venmoDeniedPhone: "+15555550707",
  /** The Venmo phone a `success+venmo` payee acting by itself enters. */
  venmoPhone: "+15555550100",
} as const;

/**
 * What a `fail+<modality>` payee's selection does on a rail that decides by scenario. PayPal and
 * Venmo have none: the sandbox's PayPal decides by the receiver (lib/paypal/simulator.ts), which a
 * test payee acting by itself enters (`testPayeeWallet`).
 */
const failScenario: Readonly<
  Record<Exclude<ModalityCode, "instant_deposit">, SandboxScenario | null>
> = {
  ach: "returns_r03",
  check: "undeliverable",
  digital_check: "undeliverable",
  // No card: the sandbox's Lithic reads this scenario (lib/cards/sandbox_lithic.ts).
  vcc: "declined",
  venmo: null,
  paypal: null,
};

/**
 * Where a test payee's postal check is mailed when its record holds no address: `success+check`
 * and `fail+check` choose checks by themselves, and a check is never printed without an address.
 */
export const TEST_PAYEE_MAILING_ADDRESS: Readonly<Record<string, string>> = {
  address_one: "1 Sandbox Way",
  city: "Austin",
  state: "TX",
  zip_code: "73301",
};

/**
 * The PayPal e-mail or Venmo phone a PayPal or Venmo test payee enters when it acts by itself:
 * one the sandbox's PayPal pays, or (`fail+`) one it has no account of. A payee whose e-mail
 * carries its marker (`/api`) is paid at that e-mail.
 */
export function testPayeeWallet(
  marker: { kind: "success" | "fail"; modality: ModalityCode },
  email: string | null,
): Readonly<Record<string, string>> | undefined {
  if (marker.modality === "venmo") {
    return {
      phone: marker.kind === "fail"
        ? sandboxTestDetails.venmoUnregisteredPhone
        : sandboxTestDetails.venmoPhone,
    };
  }
  if (marker.modality !== "paypal") return undefined;
  const own = testPayeeMarker(email);
  if (own?.kind === marker.kind && own.modality === "paypal") return undefined;
  return { email: `${marker.kind}+paypal@example.com` };
}

/**
 * The debit cards of test payees' instant deposits: tokens the Increase simulator's card vault
 * knows without anyone typing them, `success` for card 4000056655665556 and `fail` for
 * 4000000000000002, whose issuer declines.
 */
export const TEST_PAYEE_CARD_TOKENS = {
  success: "outbound_card_token_sbx_test_payee_success",
  fail: "outbound_card_token_sbx_test_payee_fail",
} as const;

/** What a `success+instant` or `fail+instant` payee's choice keeps, as the hosted card page would. */
export function testPayeeCard(kind: "success" | "fail"): Record<string, string> {
  const number = kind === "success"
    ? sandboxTestDetails.cardSucceeds
    : sandboxTestDetails.cardDeclined;
  return {
    card_token_id: TEST_PAYEE_CARD_TOKENS[kind],
    cardholder_name: "Sandbox Payee",
    zip: TEST_PAYEE_MAILING_ADDRESS.zip_code,
    last_four: number.slice(-4),
  };
}

/** The test payee marker of an e-mail local part or payee id: `success+ach`, `fail+venmo`, `noaction`. */
export function testPayeeMarker(
  emailOrId: string | null,
): { kind: "success" | "fail"; modality: ModalityCode } | { kind: "noaction" } | null {
  if (!emailOrId) return null;
  const local = emailOrId.split("@")[0].toLowerCase();
  if (local === "noaction") return { kind: "noaction" };
  const match = /^(success|fail)\+([a-z_]+)$/.exec(local);
  if (!match) return null;
  const modality = modalityOf(match[2])?.code;
  if (!modality) return null;
  return { kind: match[1] as "success" | "fail", modality };
}

/**
 * The scenario of a selection in the sandbox, from the payee marker and the entered details;
 * null for instant deposit, whose outcomes the Increase simulator decides.
 */
export function sandboxScenario(
  modality: ModalityCode,
  details: { accountNumber?: string; cardNumber?: string; zip?: string },
  marker: ReturnType<typeof testPayeeMarker>,
): SandboxScenario | null {
  if (modality === "instant_deposit") return null;
  const failing = marker?.kind === "fail" ? failScenario[modality] : null;
  if (failing) return failing;
  const t = sandboxTestDetails;
  if (modality === "ach" && details.accountNumber === t.achReturnsR03) return "returns_r03";
  if (modality === "ach" && details.accountNumber === t.achTransientOnce) return "transient_once";
  if (modality === "vcc" && details.cardNumber === t.cardDeclined) return "declined";
  if (modality === "check" && details.zip === t.checkUndeliverableZip) return "undeliverable";
  return "settles";
}
