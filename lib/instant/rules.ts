/**
 * The push-to-card rules, pure: whether a card token can take a push (its capabilities), what a
 * $0 card validation says of the payee's name and ZIP, and what a card push transfer's status
 * does to its payout. A push is final, so anything short of a validation that matched ends in a
 * decline that offers the payee the other methods again, never in a second push.
 *
 * | Increase card push transfer status              | payout                                   |
 * | ----------------------------------------------- | ---------------------------------------- |
 * | complete                                        | completed                                |
 * | pending_approval, pending_reviewing,            | funds_sent; checked again (webhooks and  |
 * | pending_submission, submitted,                  | polling)                                 |
 * | requires_attention                              |                                          |
 * | declined, canceled                              | failed `card_declined`, offered again    |
 *
 * A Real-Time Payments transfer (an instant bank payment) goes the same way: complete completes,
 * rejected or canceled fails the payout `rtp_rejected` (the network's reason code kept as the
 * return code), anything else waits.
 */

/** The failure reason of a card that cannot take a push (no push route supports it). */
export const CARD_NOT_ELIGIBLE = "card_not_eligible";
/** The failure reason of a declined validation or push. */
export const CARD_DECLINED = "card_declined";
/** The failure reason of a bank the routing lookup says cannot take a Real-Time Payments transfer. */
export const BANK_NOT_REACHABLE = "bank_not_reachable";
/** The failure reason of a Real-Time Payments transfer the network or the payee's bank rejected. */
export const RTP_REJECTED = "rtp_rejected";

/** A card token's capabilities as Increase reports them (GET /card_tokens/{id}/capabilities). */
export interface CardCapabilities {
  readonly routes: readonly {
    readonly route: string;
    readonly domestic_push_transfers: string;
    readonly cross_border_push_transfers: string;
  }[];
}

/** The network routes a domestic push may take to this card (empty: not push-eligible). */
export function pushRoutes(capabilities: CardCapabilities): string[] {
  return capabilities.routes.filter((r) => r.domestic_push_transfers === "supported")
    .map((r) => r.route);
}

/** A card validation as Increase reports it (the fields the rules read). */
export interface CardValidationState {
  readonly status: string;
  readonly acceptance: {
    readonly cardholder_full_name_result?: string | null;
    readonly cardholder_last_name_result?: string | null;
    readonly cardholder_postal_code_result?: string | null;
  } | null;
  readonly decline: { readonly reason: string } | null;
}

/** What a validation says: the card is the payee's, it is not (with why), or not known yet. */
export type ValidationVerdict =
  | { readonly kind: "valid" }
  | { readonly kind: "invalid"; readonly why: string }
  | { readonly kind: "pending" };

/** A validation passes when the issuer accepted it and neither the name nor the ZIP failed to match. */
export function validationVerdict(validation: CardValidationState): ValidationVerdict {
  if (validation.status === "declined") {
    return {
      kind: "invalid",
      why: `the issuer declined the validation (${validation.decline?.reason ?? "no reason"})`,
    };
  }
  if (validation.status !== "complete") return { kind: "pending" };
  const a = validation.acceptance;
  const nameResult = a?.cardholder_full_name_result ?? a?.cardholder_last_name_result ?? null;
  if (nameResult === "no_match") {
    return { kind: "invalid", why: "the cardholder's name does not match" };
  }
  if (a?.cardholder_postal_code_result === "no_match") {
    return { kind: "invalid", why: "the cardholder's ZIP code does not match" };
  }
  return { kind: "valid" };
}

/** What a push's status does to its payout. */
export type PushAction =
  | { readonly kind: "complete" }
  | { readonly kind: "fail"; readonly reason: string }
  | { readonly kind: "wait" };

const WAITING = new Set([
  "pending_approval",
  "pending_reviewing",
  "pending_submission",
  "submitted",
  "requires_attention",
]);

/** The table above, for a push to a card (`card`) or a Real-Time Payments transfer (`rtp`). */
export function pushAction(status: string, network: "card" | "rtp" = "card"): PushAction {
  if (status === "complete") return { kind: "complete" };
  if (WAITING.has(status)) return { kind: "wait" };
  return { kind: "fail", reason: network === "rtp" ? RTP_REJECTED : CARD_DECLINED };
}

/** The network a kept transfer took, as `pushAction` reads it. */
export const networkOf = (route: string): "card" | "rtp" => route === "rtp" ? "rtp" : "card";

/** How long after its `n`-th check (1 or more) a push still pending is checked again. */
export function pushRecheckMs(n: number): number {
  const delays = [30_000, 60_000, 5 * 60_000, 15 * 60_000, 3_600_000];
  return delays[Math.min(Math.max(n, 1), delays.length) - 1];
}

/** The first and last name of a cardholder's full name, as a validation takes them. */
export function splitName(full: string): { first: string; last: string } {
  const parts = full.trim().split(/\s+/);
  return parts.length === 1
    ? { first: parts[0], last: parts[0] }
    : { first: parts[0], last: parts.slice(1).join(" ") };
}
