/**
 * Surface A's EventReason in words (seed 2.12: "a status-changed message"): no internal ids or
 * state names. A failure says what the rail answered, with its code, as a company's claims
 * handler would read it: `ACH returned R03: no account / unable to locate account`.
 */
import {
  eventCatalogue,
  modalityOf,
  type PayoutStatus,
  surfaceAStatus,
} from "../payouts/states.ts";

/** NACHA return reasons a credit to a payee can come back with (Operating Rules, appendix 4). */
const ACH_RETURNS: Readonly<Record<string, string>> = {
  R01: "insufficient funds",
  R02: "account closed",
  R03: "no account / unable to locate account",
  R04: "invalid account number structure",
  R06: "returned per the originating bank's request",
  R16: "account frozen",
  R17: "file record edit criteria",
  R20: "non-transaction account",
  R23: "credit entry refused by the receiver",
};

/** Each method as a sentence names it. */
const METHOD_WORDS: Readonly<Record<string, string>> = {
  ach: "ACH",
  check: "check",
  vcc: "virtual card",
  instant_deposit: "instant deposit",
  digital_check: "digital check",
  venmo: "Venmo",
  paypal: "PayPal",
};

/** The payment method as a sentence names it, and capitalized to start one. */
function methodWords(methodId: number | null): { method: string; title: string } {
  const modality = methodId === null ? undefined : modalityOf(methodId);
  const method = modality ? METHOD_WORDS[modality.code] : "payment";
  return { method, title: method.charAt(0).toUpperCase() + method.slice(1) };
}

/**
 * A failure code the service produces, in words with the code. `methodId` is the payment method
 * that failed (null when none was chosen).
 */
export function failureInWords(code: string, methodId: number | null): string {
  const { method, title } = methodWords(methodId);
  if (/^R\d\d$/.test(code)) {
    const meaning = ACH_RETURNS[code];
    return meaning ? `ACH returned ${code}: ${meaning}` : `ACH returned ${code}`;
  }
  const words: Readonly<Record<string, string>> = {
    card_declined: `${title} declined: the card issuer refused the payment`,
    card_not_issued: `${title} not issued: the card issuer refused to issue the card`,
    card_not_eligible: `${title} not sent: the payee's card cannot receive instant payments`,
    bank_not_reachable: `${title} not sent: the payee's bank cannot receive instant payments`,
    rtp_rejected: `${title} rejected by the payee's bank or the instant payment network`,
    RECEIVER_UNREGISTERED: `${title} failed: no ${method} account has the payee's e-mail or phone`,
    blocked: `${title} blocked: PayPal blocked the payment to the payee's ${method} account`,
    paypal_batch_denied: `${title} not paid: PayPal denied the whole batch it was sent in`,
    returned_undeliverable: `${title} returned: undeliverable at the payee's address`,
    address_not_mailable: `${title} not mailed: the mail provider refused the payee's address`,
    rail_unavailable: `${title} not sent: the payment network was unavailable`,
    rail_not_configured: `${title} not sent: no live ${method} rail is configured`,
    sanctions: `${title} stopped: held by sanctions screening`,
    sanctions_review: `${title} stopped: an operator rejected it after sanctions screening`,
    sanctions_list_missing: `${title} not sent: no sanctions list is loaded`,
  };
  return `${words[code] ?? `${title} failed`} (${code})`;
}

/**
 * Money of a completed payout that came back (event 12), in words with the code: an ACH return
 * after the return window closed, or a provider's refund (`refunded`).
 */
export function lateReturnInWords(code: string, methodId: number | null): string {
  const { title } = methodWords(methodId);
  if (/^R\d\d$/.test(code)) {
    const meaning = ACH_RETURNS[code];
    return `ACH returned ${code} after the payment completed${meaning ? `: ${meaning}` : ""}`;
  }
  if (code === "refunded") return `${title} refunded after the payment completed`;
  if (code === "card_unspent") return `${title} closed with an unspent balance, which came back`;
  return `${title} returned after the payment completed (${code})`;
}

/** What an event's payload says happened (EventTypeId 3 and 11 keep the party's own sentence). */
export function surfaceAEventReason(
  event: { eventTypeId: number; reason: string | null },
  payout: {
    status: PayoutStatus | null;
    failureCode: string | null;
    methodId: number | null;
    simple: boolean;
  },
): string | null {
  const partyEvent = event.eventTypeId === 3 || event.eventTypeId === 11;
  if (partyEvent || payout.status === null) return event.reason;
  if (event.eventTypeId === eventCatalogue.fallback_at_deadline.id) {
    return "Fallback at deadline: the payee did not choose by the pay_by date; a check is mailed to the address on file";
  }
  if (event.eventTypeId === eventCatalogue.escheated.id) {
    return "Remitted to the state as unclaimed property: the payee claims it from the state";
  }
  if (event.eventTypeId === eventCatalogue.returned.id && payout.failureCode !== null) {
    return lateReturnInWords(payout.failureCode, payout.methodId);
  }
  if (payout.status === "failed" && payout.failureCode !== null) {
    return failureInWords(payout.failureCode, payout.methodId);
  }
  const subject = payout.simple ? "Payment" : "Payee";
  return `${subject} status changed to ${surfaceAStatus[payout.status].name}`;
}
