/**
 * The one catalogue of why a payout failed: each code a rail, a provider or a review reports (ACH
 * return codes, card declines, check and wallet outcomes, sanctions) with its plain meaning and
 * the next step, in English and Spanish. The console, the error docs and the payee's message read
 * it here; a code it does not know is shown as the rail reported it, with a general next step.
 */

export type ReasonLanguage = "en" | "es";

export interface ReasonText {
  readonly meaning: string;
  readonly nextStep: string;
}

export interface FailureReason {
  readonly code: string;
  /** Where the code comes from: a bank return, a card issuer, a check, a wallet provider, a review. */
  readonly source: "ach" | "card" | "check" | "wallet" | "rail" | "review";
  readonly text: Readonly<Record<ReasonLanguage, ReasonText>>;
}

type Entry = readonly [
  code: string,
  source: FailureReason["source"],
  en: ReasonText,
  es: ReasonText,
];

const ASK_NEW_ACCOUNT_EN = "Offer the payment again so the payee can give other bank details.";
const ASK_NEW_ACCOUNT_ES = "Vuelva a ofrecer el pago para que el beneficiario indique otra cuenta.";
const CALL_PAYEE_EN =
  "Contact the payee, then offer the payment again or choose another method with them.";
const CALL_PAYEE_ES =
  "Contacte al beneficiario y vuelva a ofrecer el pago o elija otro método con él.";

const entries: readonly Entry[] = [
  ["R01", "ach", {
    meaning: "The bank returned the payment: not enough money in the account.",
    nextStep: ASK_NEW_ACCOUNT_EN,
  }, {
    meaning: "El banco devolvió el pago: la cuenta no tiene fondos suficientes.",
    nextStep: ASK_NEW_ACCOUNT_ES,
  }],
  ["R02", "ach", {
    meaning: "The bank returned the payment: the account is closed.",
    nextStep: ASK_NEW_ACCOUNT_EN,
  }, {
    meaning: "El banco devolvió el pago: la cuenta está cerrada.",
    nextStep: ASK_NEW_ACCOUNT_ES,
  }],
  ["R03", "ach", {
    meaning:
      "The bank returned the payment: no account matches the number, or the name does not match it.",
    nextStep: ASK_NEW_ACCOUNT_EN,
  }, {
    meaning:
      "El banco devolvió el pago: ninguna cuenta corresponde al número, o el nombre no coincide.",
    nextStep: ASK_NEW_ACCOUNT_ES,
  }],
  ["R04", "ach", {
    meaning: "The bank returned the payment: the account number is not valid.",
    nextStep: ASK_NEW_ACCOUNT_EN,
  }, {
    meaning: "El banco devolvió el pago: el número de cuenta no es válido.",
    nextStep: ASK_NEW_ACCOUNT_ES,
  }],
  ["R06", "ach", {
    meaning: "Our bank asked for the payment back.",
    nextStep: "Check with the bank why it was recalled before paying again.",
  }, {
    meaning: "Nuestro banco pidió la devolución del pago.",
    nextStep: "Consulte con el banco el motivo antes de volver a pagar.",
  }],
  ["R07", "ach", {
    meaning: "The account holder withdrew the authorization.",
    nextStep: CALL_PAYEE_EN,
  }, {
    meaning: "El titular de la cuenta retiró la autorización.",
    nextStep: CALL_PAYEE_ES,
  }],
  ["R08", "ach", {
    meaning: "The account holder stopped the payment.",
    nextStep: CALL_PAYEE_EN,
  }, {
    meaning: "El titular de la cuenta detuvo el pago.",
    nextStep: CALL_PAYEE_ES,
  }],
  ["R09", "ach", {
    meaning: "The bank returned the payment: funds were not yet available in the account.",
    nextStep: "It may be sent again automatically; otherwise offer it again.",
  }, {
    meaning: "El banco devolvió el pago: los fondos aún no estaban disponibles en la cuenta.",
    nextStep: "Puede reenviarse automáticamente; si no, vuelva a ofrecerlo.",
  }],
  ["R10", "ach", {
    meaning: "The account holder says they did not authorize this payment.",
    nextStep: CALL_PAYEE_EN,
  }, {
    meaning: "El titular de la cuenta dice que no autorizó este pago.",
    nextStep: CALL_PAYEE_ES,
  }],
  ["R16", "ach", {
    meaning: "The bank returned the payment: the account is frozen.",
    nextStep: ASK_NEW_ACCOUNT_EN,
  }, {
    meaning: "El banco devolvió el pago: la cuenta está congelada.",
    nextStep: ASK_NEW_ACCOUNT_ES,
  }],
  ["R17", "ach", {
    meaning: "The bank could not process the entry as sent (its fields were not valid).",
    nextStep: ASK_NEW_ACCOUNT_EN,
  }, {
    meaning: "El banco no pudo procesar el pago tal como se envió (datos no válidos).",
    nextStep: ASK_NEW_ACCOUNT_ES,
  }],
  ["R20", "ach", {
    meaning: "The bank returned the payment: the account does not take these payments.",
    nextStep: ASK_NEW_ACCOUNT_EN,
  }, {
    meaning: "El banco devolvió el pago: la cuenta no admite este tipo de pagos.",
    nextStep: ASK_NEW_ACCOUNT_ES,
  }],
  ["R23", "ach", {
    meaning: "The payee refused the payment at their bank.",
    nextStep: CALL_PAYEE_EN,
  }, {
    meaning: "El beneficiario rechazó el pago en su banco.",
    nextStep: CALL_PAYEE_ES,
  }],
  ["R29", "ach", {
    meaning: "The business account holder did not authorize this payment.",
    nextStep: CALL_PAYEE_EN,
  }, {
    meaning: "El titular de la cuenta empresarial no autorizó este pago.",
    nextStep: CALL_PAYEE_ES,
  }],
  ["card_declined", "card", {
    meaning: "The card issuer declined the payment.",
    nextStep: "Offer the payment again so the payee can use another card or method.",
  }, {
    meaning: "El emisor de la tarjeta rechazó el pago.",
    nextStep: "Vuelva a ofrecer el pago para que el beneficiario use otra tarjeta u otro método.",
  }],
  ["card_not_eligible", "card", {
    meaning: "The payee's card cannot receive instant payments.",
    nextStep: "Offer the payment again so the payee can use another debit card or method.",
  }, {
    meaning: "La tarjeta del beneficiario no puede recibir pagos instantáneos.",
    nextStep:
      "Vuelva a ofrecer el pago para que el beneficiario use otra tarjeta de débito u otro método.",
  }],
  ["bank_not_reachable", "rail", {
    meaning: "The payee's bank cannot receive instant bank payments.",
    nextStep: "Offer the payment again so the payee can choose a debit card or another method.",
  }, {
    meaning: "El banco del beneficiario no puede recibir pagos bancarios instantáneos.",
    nextStep:
      "Vuelva a ofrecer el pago para que el beneficiario elija una tarjeta de débito u otro método.",
  }],
  ["rtp_rejected", "rail", {
    meaning: "The payee's bank or the instant payment network rejected the payment.",
    nextStep: ASK_NEW_ACCOUNT_EN,
  }, {
    meaning: "El banco del beneficiario o la red de pagos instantáneos rechazó el pago.",
    nextStep: ASK_NEW_ACCOUNT_ES,
  }],
  ["card_not_issued", "card", {
    meaning: "The card issuer did not issue the virtual card.",
    nextStep: "Offer the payment again so the payee can choose another method.",
  }, {
    meaning: "El emisor no emitió la tarjeta virtual.",
    nextStep: "Vuelva a ofrecer el pago para que el beneficiario elija otro método.",
  }],
  ["returned_undeliverable", "check", {
    meaning: "The post office returned the check: the address could not be delivered to.",
    nextStep: "Confirm the mailing address with the payee, then offer the payment again.",
  }, {
    meaning: "El correo devolvió el cheque: no se pudo entregar en la dirección.",
    nextStep: "Confirme la dirección postal con el beneficiario y vuelva a ofrecer el pago.",
  }],
  ["address_not_mailable", "check", {
    meaning: "The mail provider would not mail the check to the payee's address.",
    nextStep: "Offer the payment again so the payee can give an address that mail reaches.",
  }, {
    meaning: "El proveedor de correo no quiso enviar el cheque a la dirección del beneficiario.",
    nextStep:
      "Vuelva a ofrecer el pago para que el beneficiario indique una dirección a la que llegue el correo.",
  }],
  ["check_voided", "check", {
    meaning: "The check was voided before it was cashed.",
    nextStep: "Offer the payment again so the payee can choose how to be paid.",
  }, {
    meaning: "El cheque se anuló antes de cobrarse.",
    nextStep: "Vuelva a ofrecer el pago para que el beneficiario elija cómo cobrar.",
  }],
  ["check_stale", "check", {
    meaning: "The check was not cashed in time and is no longer valid.",
    nextStep: "Offer the payment again so the payee can choose how to be paid.",
  }, {
    meaning: "El cheque no se cobró a tiempo y ya no es válido.",
    nextStep: "Vuelva a ofrecer el pago para que el beneficiario elija cómo cobrar.",
  }],
  ["unclaimed_returned", "wallet", {
    meaning: "The payee did not claim the wallet payment in time, so it came back.",
    nextStep: "Remind the payee, then offer the payment again.",
  }, {
    meaning: "El beneficiario no reclamó el pago en su billetera a tiempo y fue devuelto.",
    nextStep: "Recuérdeselo al beneficiario y vuelva a ofrecer el pago.",
  }],
  ["RECEIVER_UNREGISTERED", "wallet", {
    meaning: "No wallet account exists for the payee's e-mail or phone.",
    nextStep: "Ask the payee for the e-mail or phone of their wallet, or another method.",
  }, {
    meaning: "No existe una billetera para el correo o teléfono del beneficiario.",
    nextStep: "Pida al beneficiario el correo o teléfono de su billetera, u otro método.",
  }],
  ["paypal_batch_denied", "wallet", {
    meaning: "PayPal denied the whole batch the payment was sent in, so it was not paid.",
    nextStep: "Check the company's PayPal account with PayPal, then offer the payment again.",
  }, {
    meaning: "PayPal denegó todo el lote en que se envió el pago, así que no se pagó.",
    nextStep: "Revise la cuenta PayPal de la empresa con PayPal y vuelva a ofrecer el pago.",
  }],
  ["blocked", "wallet", {
    meaning: "PayPal blocked the payment to the payee's wallet.",
    nextStep: "Offer the payment again so the payee can choose another method.",
  }, {
    meaning: "PayPal bloqueó el pago a la billetera del beneficiario.",
    nextStep: "Vuelva a ofrecer el pago para que el beneficiario elija otro método.",
  }],
  ["RECEIVER_ACCOUNT_LOCKED", "wallet", {
    meaning: "The payee's wallet account is locked.",
    nextStep: CALL_PAYEE_EN,
  }, {
    meaning: "La billetera del beneficiario está bloqueada.",
    nextStep: CALL_PAYEE_ES,
  }],
  ["rail_unavailable", "rail", {
    meaning: "The payment network could not be reached.",
    nextStep: "It is sent again automatically; if it keeps failing, offer it again.",
  }, {
    meaning: "No se pudo conectar con la red de pagos.",
    nextStep: "Se reenvía automáticamente; si sigue fallando, vuelva a ofrecerlo.",
  }],
  ["rail_not_configured", "rail", {
    meaning: "This payment method is not set up for the company.",
    nextStep: "Set up the method's rail, or offer the payment again with the methods that are.",
  }, {
    meaning: "Este método de pago no está configurado para la empresa.",
    nextStep: "Configure el método, o vuelva a ofrecer el pago con los métodos disponibles.",
  }],
  ["sanctions_review", "review", {
    meaning: "A compliance reviewer rejected the payment after a sanctions list match.",
    nextStep: "Do not pay again without compliance approval; cancel the payment.",
  }, {
    meaning: "Un revisor de cumplimiento rechazó el pago por coincidir con una lista de sanciones.",
    nextStep: "No vuelva a pagar sin la aprobación de cumplimiento; cancele el pago.",
  }],
];

const catalogue: ReadonlyMap<string, FailureReason> = new Map(
  entries.map(([code, source, en, es]) => [code, { code, source, text: { en, es } }]),
);

/** Every code of the catalogue, in its order (for the error docs). */
export const failureReasons: readonly FailureReason[] = [...catalogue.values()];

const unknown: Readonly<Record<ReasonLanguage, (code: string) => ReasonText>> = {
  en: (code) => ({
    meaning: `The payment network reported "${code}".`,
    nextStep: CALL_PAYEE_EN,
  }),
  es: (code) => ({
    meaning: `La red de pagos informó "${code}".`,
    nextStep: CALL_PAYEE_ES,
  }),
};

/** The meaning and next step of a failure code in a language; unknown codes are quoted as reported. */
export function explainFailure(code: string, language: ReasonLanguage = "en"): ReasonText {
  return catalogue.get(code)?.text[language] ?? unknown[language](code);
}
