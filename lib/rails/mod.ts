/**
 * Payment rails: one interface. A rail either refuses a payout before sending (coded reason) or
 * accepts it and says when and how it ends (settled, or failed/returned with a reason). Nothing
 * pretends to pay: a live rail that is not configured refuses with `rail_not_configured`.
 */
import { addBusinessDays } from "../platform/business_days.ts";
import type { ModalityCode } from "../payouts/states.ts";
import { ok, refuse, type Result } from "../platform/result.ts";

/** How a sandbox payout will behave, fixed at selection from test details (DESIGN 10 and 14). */
export type SandboxScenario =
  | "settles"
  | "returns_r03"
  | "transient_once"
  | "declined"
  | "account_not_found"
  | "undeliverable";

export interface RailSubmission {
  readonly payoutId: string;
  readonly modality: ModalityCode;
  /** 0 for the first attempt, then the number of automatic retries so far. */
  readonly attempt: number;
  readonly scenario: SandboxScenario;
}

export interface RailAcceptance {
  readonly reference: string;
  readonly outcome:
    | { readonly kind: "complete"; readonly at: number }
    | { readonly kind: "fail"; readonly at: number; readonly reason: string };
}

export type RailRefusal = "rail_not_configured" | "card_declined" | "account_not_found";

export interface Rail {
  submit(submission: RailSubmission, now: number): Result<RailAcceptance, RailRefusal>;
}

const SECOND_MS = 1000;
const DAY_MS = 86_400_000;

/** The test details that pick a scenario, and what a `fail+<modality>` payee does per method. */
export const sandboxTestDetails = {
  achSettles: "000123456789",
  achReturnsR03: "000111111116",
  achTransientOnce: "000222222227",
  cardSucceeds: "4000056655665556",
  cardDeclined: "4000000000000002",
  checkUndeliverableZip: "00000",
} as const;

const failScenario: Readonly<Record<ModalityCode, SandboxScenario>> = {
  ach: "returns_r03",
  check: "undeliverable",
  digital_check: "undeliverable",
  vcc: "declined",
  instant_deposit: "declined",
  venmo: "account_not_found",
  paypal: "account_not_found",
};

/** The test payee marker of an e-mail local part or payee id: `success+ach`, `fail+venmo`, `noaction`. */
export function testPayeeMarker(
  emailOrId: string | null,
): { kind: "success" | "fail"; modality: ModalityCode } | { kind: "noaction" } | null {
  if (!emailOrId) return null;
  const local = emailOrId.split("@")[0].toLowerCase();
  if (local === "noaction") return { kind: "noaction" };
  const match = /^(success|fail)\+([a-z_]+)$/.exec(local);
  if (!match) return null;
  const modality = (match[2] === "instant" ? "instant_deposit" : match[2]) as ModalityCode;
  if (!(modality in failScenario)) return null;
  return { kind: match[1] as "success" | "fail", modality };
}

/** The scenario of a selection in the sandbox, from the payee marker and the entered details. */
export function sandboxScenario(
  modality: ModalityCode,
  details: { accountNumber?: string; cardNumber?: string; zip?: string },
  marker: ReturnType<typeof testPayeeMarker>,
): SandboxScenario {
  if (marker?.kind === "fail") return failScenario[modality];
  const t = sandboxTestDetails;
  if (modality === "ach" && details.accountNumber === t.achReturnsR03) return "returns_r03";
  if (modality === "ach" && details.accountNumber === t.achTransientOnce) return "transient_once";
  if (
    (modality === "instant_deposit" || modality === "vcc") && details.cardNumber === t.cardDeclined
  ) {
    return "declined";
  }
  if (modality === "check" && details.zip === t.checkUndeliverableZip) return "undeliverable";
  return "settles";
}

/** When a settled payment of each method completes (ACH: after its return window). */
function completionTime(modality: ModalityCode, sentAt: number): number {
  switch (modality) {
    case "ach":
      // Settles after one business day; returns stay possible for two more.
      return addBusinessDays(sentAt, 3);
    case "check":
      return sentAt + 5 * DAY_MS;
    case "digital_check":
      return addBusinessDays(sentAt, 1);
    default:
      return sentAt + 5 * SECOND_MS;
  }
}

/** The deterministic sandbox rails of DESIGN 10 and 14. */
export const sandboxRail: Rail = {
  submit(submission, now) {
    const reference = `sbx_${submission.modality}_${submission.payoutId}_${submission.attempt}`;
    switch (submission.scenario) {
      case "declined":
        return refuse("card_declined", "the card issuer declined the payment");
      case "account_not_found":
        return refuse(
          "account_not_found",
          `no ${submission.modality} account matches the payee's details`,
        );
      case "returns_r03":
        return ok({
          reference,
          outcome: { kind: "fail", at: addBusinessDays(now, 2), reason: "R03" },
        });
      case "undeliverable":
        return ok({
          reference,
          outcome: { kind: "fail", at: now + 5 * DAY_MS, reason: "returned_undeliverable" },
        });
      case "transient_once":
        if (submission.attempt === 0) {
          return ok({
            reference,
            outcome: { kind: "fail", at: now + 5 * SECOND_MS, reason: "rail_unavailable" },
          });
        }
        return ok({
          reference,
          outcome: { kind: "complete", at: completionTime(submission.modality, now) },
        });
      case "settles":
        return ok({
          reference,
          outcome: { kind: "complete", at: completionTime(submission.modality, now) },
        });
    }
  },
};

/** The live rail until a provider is configured: refuses every payout, loudly. */
export const unconfiguredLiveRail: Rail = {
  submit(submission) {
    return refuse(
      "rail_not_configured",
      `no live ${submission.modality} rail is configured; payout ${submission.payoutId} was not sent`,
    );
  },
};

/** Whether the company's retry policy allows another automatic attempt after `reason`. */
export function retryAllowed(
  policy: { retryMax: number; retryReasons: readonly string[] },
  reason: string,
  retriesSoFar: number,
): boolean {
  return retriesSoFar < policy.retryMax && policy.retryReasons.includes(reason);
}
