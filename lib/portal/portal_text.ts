/**
 * Every text the payee portal shows, in English and Spanish: page titles, labels, notices and the
 * problems a refused form lists. The Spanish table has the English table's type, so a missing or
 * extra entry does not compile. Texts companies supply (their name, document names, a memo) and
 * amounts are inserted as given by the functions that take them.
 */
import type { ModalityCode, PayoutStatus } from "../payouts/states.ts";
import type { Language } from "../notify/messages.ts";
import type { MethodFacts, PostageCode, RequiredField } from "./method_details.ts";

const timeOptions: Intl.DateTimeFormatOptions = {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "numeric",
  minute: "2-digit",
  timeZone: "UTC",
  timeZoneName: "short",
};
// Built at the first status page, not at load: a formatter's locale data costs a start ~30 ms.
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatTime(locale: "en-US" | "es-US", at: number): string {
  let formatter = formatters.get(locale);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat(locale, timeOptions);
    formatters.set(locale, formatter);
  }
  return formatter.format(at);
}

const english = {
  page: {
    paymentFrom: (company: string) => `Payment from ${company}`,
    portalName: "Payment portal",
    footer: "This page is private to you. Do not share its address.",
    languageSwitch: "Language",
    problemsHeading: "Please fix this:",
    choose: "Choose…",
  },
  error: {
    title: "Something went wrong",
    body: "We could not complete this step. Nothing was changed. Please try again in a moment.",
    reference: (id: string) => `If it keeps happening, quote this reference to the company: ${id}`,
  },
  link: {
    unknownTitle: "This link does not work",
    unknownBody:
      "The address is not a payment link we know. Check that you opened the whole link from the latest message, or ask the company that is paying you to send a new one.",
    unknownShort: "The address is not a payment link we know.",
    expiredTitle: "This link has expired",
    replaced: "A newer link was sent since this one; use the latest message.",
    expired: "Links stop working after a while to keep your payment safe.",
    renewOffer: "We can send a new link to the e-mail or phone the company has for you.",
    renewButton: "Send me a new link",
    partyRenew: "Ask the person who is being paid to send you a new link.",
    renewedTitle: "We sent you a new link",
    renewed: "Open the newest message from us and use the link in it.",
    notRenewedTitle: "No new link was sent",
    renewLimit: (perHour: number) =>
      `At most ${perHour} new links an hour. Please try again later.`,
    closed: "This payment cannot be acted on any more. Contact the company that pays you.",
  },
  form: {
    forged: "This form was not accepted because it did not come from this page. Please try again.",
    typeFullName: "Type your full name.",
    nameTooLong: "That name is too long.",
    documentChanged: "A document changed meanwhile. Please read again.",
    documentUnreadable: (name: string) =>
      `We cannot prepare "${name}" for your signature right now, so nothing was signed. We have told the team that runs this service. Please try again later, or contact the company that pays you.`,
  },
  verify: {
    title: "Confirm it is you",
    anyChannel: "your e-mail or phone",
    phoneEnding: (lastFour: string) => `a phone ending in ${lastFour}`,
    either: (destinations: readonly string[]) => destinations.join(" or "),
    codeLabel: "Enter the 6-digit code",
    codeHint: (destination: string) => `We sent it to ${destination}. It works for 10 minutes.`,
    confirm: "Confirm",
    newCode: "Send me a new code",
    willSend: (destination: string) =>
      `To keep your payment safe, we will send a 6-digit code to ${destination}.`,
    sendCode: "Send me a code",
    lockedTitle: "Too many wrong codes",
    locked: (minutes: number) =>
      `To protect your payment, this link is locked for ${minutes} ${
        minutes === 1 ? "minute" : "minutes"
      }. Come back after that and ask for a new code.`,
    tooSoon: "We sent a code moments ago. Wait half a minute before asking for another.",
    tooManyWrong: "Too many wrong codes.",
    wrongCode: (attemptsLeft: number) =>
      `That code is not right. ${attemptsLeft} ${attemptsLeft === 1 ? "try" : "tries"} left.`,
    codeExpired: "That code has expired. Ask for a new one.",
  },
  payment: {
    isPayingYou: (company: string) => `${company} is paying you`,
    memo: (memo: string) => `For: ${memo}`,
    document: (name: string) => `${name} (PDF)`,
    documentNotFoundTitle: "Document not found",
    documentNotFound: "This document is not part of your payment.",
    canceledTitle: "This payment was canceled",
    canceled: (company: string) =>
      `${company} canceled this payment. Contact them if you have questions.`,
    escheatedTitle: "This payment went to the state",
    escheated: (company: string, state: string) =>
      `Nobody claimed this payment, so ${company} sent it to the state of ${state} as unclaimed property, as the law requires. Claim it from ${state}'s unclaimed property program; it keeps it for you.`,
    confirmed: "Thank you. Your choice is confirmed.",
  },
  sign: {
    title: "Read and sign",
    intro: (company: string) => `Before you continue, ${company} asks you to read and sign:`,
    nameLabel: "Type your full name to sign",
    consentLabel: "I have read these documents and I agree to sign them electronically.",
    button: "Sign and continue",
    consentMissing: "Tick the box to agree to sign electronically.",
  },
  approvals: {
    title: "Approvals needed",
    intro:
      "Before you can choose how to be paid, each person below must approve this payment. We send each one their own link. We will tell you when every approval is in.",
    status: (status: string) => `Status: ${status}`,
    approved: "Approved",
    declined: "Declined",
    asked: "Asked; waiting for their approval",
    notAsked: "Not asked yet",
    suppliedContacts: (contacts: readonly string[]) =>
      `We will contact them at ${contacts.join(" and ")} (provided by the company).`,
    enterContact: "The company did not give their contact details. Enter an e-mail or phone.",
    emailLabel: "Their e-mail",
    phoneLabel: "Their mobile phone (optional)",
    resend: (party: string) => `Send ${party} a new link`,
    ask: (party: string) => `Ask ${party} to approve`,
    sent: (party: string) => `We sent ${party} a link to approve.`,
    emailInvalid: "Enter an e-mail address, like name@example.com.",
    phoneInvalid: "Enter a US mobile number, like 555-201-3344.",
    contactMissing: (party: string) => `Enter an e-mail or a phone number for ${party}.`,
    contactIsPayees: (party: string) =>
      `${party} must be reached at their own e-mail or phone, not yours.`,
  },
  party: {
    payeeFallback: "the payee",
    thanksTitle: "Thank you",
    decided: (facts: { endorsed: boolean; amount: string; payee: string }) =>
      `You ${
        facts.endorsed ? "approved" : "declined"
      } the payment of ${facts.amount} to ${facts.payee}. There is nothing else to do.`,
    notNeededTitle: "No approval needed",
    notNeeded: "This payment no longer needs your approval.",
    title: "Approve a payment",
    isPaying: (company: string, payee: string) => `${company} is paying ${payee}`,
    needed: (party: string) =>
      `Your approval (${party}) is needed before the payment can go ahead.`,
    pleaseRead: "Please read:",
    nameLabel: "Type your full name to approve",
    consentLabel: (payee: string) =>
      `I approve this payment to ${payee} and agree to sign electronically.`,
    approve: "Approve the payment",
    declineHeading: "Do not approve?",
    declineNameLabel: "Type your full name to decline",
    decline: "Decline the payment",
    consentMissing: "Tick the box to approve and sign electronically.",
  },
  choice: {
    title: "Choose how to be paid",
    failedBefore: (meaning: string) =>
      `We could not pay you the way you chose before. ${meaning} Please choose again.`,
    documentsFrom: (company: string) => `Documents from ${company}:`,
    legend: "How do you want to be paid?",
    continue: "Continue",
    authorization: "Authorization",
    readAuthorization: "Read the deposit authorization:",
    authorizationNameLabel: "Type your full name to sign the authorization",
    authorizationConsent: (company: string) =>
      `I authorize ${company} to deposit this payment into the account above, and I agree to sign electronically.`,
    confirm: "Confirm: get paid this way",
    another: "Choose another way",
    consentMissing: "Tick the box to authorize the deposit.",
    unavailable: "This method cannot be used for this payment right now. Please choose another.",
    changed: "This choice could not be made: the payment changed meanwhile. Please start again.",
  },
  methods: {
    ach: "Direct deposit to a bank account (ACH)",
    check: "Paper check by mail",
    vcc: "Virtual card by e-mail",
    instant_deposit: "Instant deposit to a debit card",
    digital_check: "Digital check by e-mail",
    venmo: "Venmo",
    paypal: "PayPal",
  } satisfies Record<ModalityCode, string>,
  fields: {
    routingNumber: "Routing number",
    routingHint: "9 digits, at the bottom left of a check",
    accountNumber: "Account number",
    accountNumberAgain: "Account number again",
    accountType: "Account type",
    checking: "Checking",
    savings: "Savings",
    cardHosted:
      "You type your card at our card partner's secure page; its number never reaches us. Then you come back here.",
    cardHostedLink: "Enter your debit card securely",
    cardEntered: "Your card is entered. Confirm the name on it and its billing ZIP code.",
    cardholderName: "Name on the card",
    instantBankLink: "Or get it instantly in your bank account",
    instantCardLink: "Or get it on your debit card",
    accountHolder: "Name on the account",
    street: "Street address",
    streetTwo: "Apartment, suite (optional)",
    city: "City",
    state: "State",
    zipCode: "ZIP code",
    fixedPostage: (postage: string) => `Delivery: ${postage} (chosen by the company)`,
    postageLegend: "Delivery speed",
    venmoPhone: "Phone number of your Venmo account",
    paypalEmail: "E-mail of your PayPal account",
    email: "Your e-mail",
  },
  postage: {
    FC: "First-Class Mail (free)",
    PR: "Priority Mail",
    PRS: "Priority Mail with signature confirmation",
    SC: "Courier 2-day",
    FSO: "Courier standard overnight",
    USPSIDAY: "Priority Mail Express",
  } satisfies Record<PostageCode, string>,
  methodProblems: {
    required: {
      routing_number: {
        missing: "Enter the routing number.",
        tooLong: "The routing number is too long.",
      },
      account_number: {
        missing: "Enter the account number.",
        tooLong: "The account number is too long.",
      },
      cardholder_name: {
        missing: "Enter the name on the card.",
        tooLong: "The name on the card is too long.",
      },
      account_holder: {
        missing: "Enter the name on the account.",
        tooLong: "The name on the account is too long.",
      },
      address_one: {
        missing: "Enter the street address.",
        tooLong: "The street address is too long.",
      },
      city: { missing: "Enter the city.", tooLong: "The city is too long." },
      zip_code: { missing: "Enter the ZIP code.", tooLong: "The ZIP code is too long." },
      venmo_phone: {
        missing: "Enter the phone number of your Venmo account.",
        tooLong: "The phone number of your Venmo account is too long.",
      },
      paypal_email: {
        missing: "Enter the e-mail of your PayPal account.",
        tooLong: "The e-mail of your PayPal account is too long.",
      },
      email: { missing: "Enter your e-mail.", tooLong: "Your e-mail is too long." },
    } satisfies Record<RequiredField, { missing: string; tooLong: string }>,
    routingInvalid:
      "This routing number is not valid: check the nine digits at the bottom left of a check.",
    accountDigits: "An account number has 4 to 17 digits.",
    accountMismatch: "The two account numbers do not match.",
    accountType: "Choose checking or savings.",
    cardNotEntered: "Enter your card at our card partner first.",
    bankNotReachable:
      "Your bank cannot receive instant payments. Choose a debit card or another way to be paid.",
    bankLookupFailed: "We could not check your bank just now. Try again in a minute.",
    state: "Choose the state.",
    zipCode: "A ZIP code has 5 digits (or ZIP+4).",
    addressTwoTooLong: "The second address line is too long.",
    postage: "Choose a delivery speed from the list.",
    phoneInvalid: "Enter a US phone number, like 555-201-3344.",
    emailInvalid: "Enter an e-mail address, like name@example.com.",
  },
  methodSummary: {
    ach: (f: MethodFacts) =>
      `${f.account_type === "savings" ? "Savings" : "Checking"} account ending in ${f.last_four}`,
    instant_deposit: (f: MethodFacts) =>
      f.instant_to === "bank"
        ? `Instant payment to the bank account ending in ${f.last_four}`
        : `Debit card ending in ${f.last_four}`,
    check: (f: MethodFacts) =>
      `Check mailed to ${f.address_one}, ${f.city}, ${f.state} ${f.zip_code} (${f.postage})`,
    venmo: (f: MethodFacts) => `Venmo account of ${f.phone}`,
    paypal: (f: MethodFacts) => `PayPal account ${f.email}`,
    vcc: (f: MethodFacts) => `Virtual card sent to ${f.email}`,
    digital_check: (f: MethodFacts) => `Digital check sent to ${f.email}`,
  } satisfies Record<ModalityCode, (f: MethodFacts) => string>,
  status: {
    labels: {
      pending_funds: "Waiting for the company's funds",
      created: "Created",
      pending_approval: "Waiting for the company's approval",
      awaiting_endorsement: "Waiting for approvals",
      modality_offered: "Waiting for you to choose how to be paid",
      modality_selected: "Payment method chosen",
      in_review: "Under review",
      funds_sent: "Money sent",
      completed: "Paid",
      failed: "Payment failed",
      canceled: "Canceled",
      escheated: "Sent to the state as unclaimed property",
    } satisfies Record<PayoutStatus, string>,
    howPaid: "How you are paid:",
    fee: (fee: string, net: string) => `Fee ${fee}; you receive ${net}.`,
    historyHeading: "What happened so far",
    comeBack: "Come back to this page at any time to follow your payment.",
    returnedEscheated: (company: string, state: string) =>
      `Money of this payment came back unclaimed, so ${company} sent it to the state of ${state} as unclaimed property, as the law requires. Claim it from ${state}'s unclaimed property program; it keeps it for you.`,
    time: (at: number) => formatTime("en-US", at),
  },
  hostedCard: {
    title: "Sandbox card partner",
    intro:
      "The Increase simulator's hosted card field: type a sandbox test card. The payment portal gets back only a token and the last four digits.",
    cardNumber: "Card number",
    expiry: "Expiry (MM/YY)",
    cvv: "Security code (CVV)",
    save: "Save card",
    problems: {
      card_number_invalid:
        "This card number is not valid: check the digits on the front of your card.",
      card_expiry_invalid:
        "This expiry is not valid: type the month and year printed on your card, as MM/YY.",
      card_expired: "This card has expired: use a card whose expiry has not passed.",
      card_cvv_invalid:
        "This security code is not valid: type the 3 or 4 digits printed on your card.",
    },
  },
  virtualCard: {
    heading: "Your virtual card",
    intro: (lastFour: string) =>
      `Your card ending in ${lastFour} is shown below by the card issuer. Use it online or add it to your phone's wallet; it is good for one purchase up to the amount paid.`,
    frameTitle: "Your virtual card, shown by the card issuer",
  },
  digitalCheck: {
    heading: "Your check",
    ready: (number: number) => `Check number ${number} is ready.`,
    download: "Download your check (PDF)",
    howTo:
      "Print it on plain paper, or deposit it with your bank's mobile app. Deposit it only once.",
    notReadyTitle: "Your check is not ready yet",
    notReady: (number: number) =>
      `Check number ${number} is on its way to the bank. It will be ready to download soon: come back to your payment page later.`,
    paidTitle: "This check was paid",
    paid: (number: number, date: string | null) =>
      `Check number ${number} was deposited and paid${
        date === null ? "" : ` on ${date}`
      }: it cannot be used again. Your payment page shows the payment.`,
    voidedTitle: "This check can no longer be used",
    voided: (number: number) =>
      `Check number ${number} was canceled: do not deposit it. Your payment page shows what happens next.`,
    linkTitle: "This link does not work",
    expired: "This link has expired. Open your payment page for a new one.",
    invalid:
      "This address is not a link to a check. Open the newest message or your payment page for the right link.",
  },
  landing: {
    title: "Your payment",
    intro:
      "To see your payment and choose how to be paid, we send a private link to the e-mail or phone the company has for you.",
    button: "Send me my link",
    forgedTitle: "Please try again",
    forged: "This form was not accepted because it did not come from this page.",
    startAgain: "Start again",
    sentTitle: "Check your messages",
    sent:
      "If this payment is waiting for you, we just sent a private link to the e-mail or phone the company has for you. Open the newest message and follow its link.",
  },
};

/** The shape of every portal text table: the English one's. */
export type PortalText = typeof english;

const spanish: PortalText = {
  page: {
    paymentFrom: (company) => `Pago de ${company}`,
    portalName: "Portal de pagos",
    footer: "Esta página es solo para usted. No comparta el enlace.",
    languageSwitch: "Idioma",
    problemsHeading: "Corrija lo siguiente:",
    choose: "Elija…",
  },
  error: {
    title: "Algo salió mal",
    body: "No pudimos completar este paso y no se cambió nada. Inténtelo de nuevo en un momento.",
    reference: (id) => `Si el problema continúa, dé esta referencia a la compañía: ${id}`,
  },
  link: {
    unknownTitle: "Este enlace no funciona",
    unknownBody:
      "Esta dirección no corresponde a ningún enlace de pago. Revise que abrió el enlace completo del mensaje más reciente, o pida a la compañía que le paga que le envíe uno nuevo.",
    unknownShort: "Esta dirección no corresponde a ningún enlace de pago.",
    expiredTitle: "Este enlace ya no es válido",
    replaced: "Le enviamos un enlace más reciente; use el del último mensaje.",
    expired: "Para proteger su pago, los enlaces dejan de funcionar después de un tiempo.",
    renewOffer:
      "Podemos enviarle un enlace nuevo al correo electrónico o al teléfono que la compañía tiene registrado.",
    renewButton: "Envíenme un enlace nuevo",
    partyRenew: "Pida a la persona que recibe el pago que le envíe un enlace nuevo.",
    renewedTitle: "Le enviamos un enlace nuevo",
    renewed: "Abra nuestro mensaje más reciente y use el enlace que contiene.",
    notRenewedTitle: "No se envió un enlace nuevo",
    renewLimit: (perHour) =>
      `Puede pedir como máximo ${perHour} enlaces nuevos por hora. Inténtelo más tarde.`,
    closed: "Este pago ya no admite cambios. Comuníquese con la compañía que le paga.",
  },
  form: {
    forged:
      "No pudimos aceptar este formulario porque no se envió desde esta página. Inténtelo de nuevo.",
    typeFullName: "Escriba su nombre completo.",
    nameTooLong: "Ese nombre es demasiado largo.",
    documentChanged: "Un documento cambió mientras tanto. Vuelva a leerlo.",
    documentUnreadable: (name) =>
      `No podemos preparar "${name}" para su firma en este momento, así que no se firmó nada. Ya avisamos al equipo que opera este servicio. Inténtelo más tarde o comuníquese con la compañía que le paga.`,
  },
  verify: {
    title: "Confirme su identidad",
    anyChannel: "su correo electrónico o teléfono",
    phoneEnding: (lastFour) => `un teléfono que termina en ${lastFour}`,
    either: (destinations) => destinations.join(" o "),
    codeLabel: "Escriba el código de 6 dígitos",
    codeHint: (destination) => `Se lo enviamos a ${destination}. Es válido por 10 minutos.`,
    confirm: "Confirmar",
    newCode: "Envíenme un código nuevo",
    willSend: (destination) =>
      `Para proteger su pago, le enviaremos un código de 6 dígitos a ${destination}.`,
    sendCode: "Envíenme un código",
    lockedTitle: "Demasiados códigos incorrectos",
    locked: (minutes) =>
      `Para proteger su pago, este enlace está bloqueado por ${minutes} ${
        minutes === 1 ? "minuto" : "minutos"
      }. Después, vuelva y pida un código nuevo.`,
    tooSoon: "Le enviamos un código hace un momento. Espere medio minuto antes de pedir otro.",
    tooManyWrong: "Demasiados códigos incorrectos.",
    wrongCode: (attemptsLeft) =>
      `Ese código no es correcto. ${
        attemptsLeft === 1 ? "Le queda 1 intento." : `Le quedan ${attemptsLeft} intentos.`
      }`,
    codeExpired: "Ese código venció. Pida uno nuevo.",
  },
  payment: {
    isPayingYou: (company) => `${company} le paga`,
    memo: (memo) => `Concepto: ${memo}`,
    document: (name) => `${name} (PDF)`,
    documentNotFoundTitle: "No encontramos el documento",
    documentNotFound: "Este documento no forma parte de su pago.",
    canceledTitle: "Este pago fue cancelado",
    canceled: (company) =>
      `${company} canceló este pago. Si tiene preguntas, comuníquese con la compañía.`,
    escheatedTitle: "Este pago se entregó al estado",
    escheated: (company, state) =>
      `Nadie reclamó este pago, así que ${company} lo entregó al estado de ${state} como bienes no reclamados, como exige la ley. Reclámelo al programa de bienes no reclamados de ${state}; lo guarda para usted.`,
    confirmed: "Gracias. Su elección quedó confirmada.",
  },
  sign: {
    title: "Lea y firme",
    intro: (company) => `Antes de continuar, ${company} le pide que lea y firme:`,
    nameLabel: "Escriba su nombre completo para firmar",
    consentLabel: "Leí estos documentos y acepto firmarlos electrónicamente.",
    button: "Firmar y continuar",
    consentMissing: "Marque la casilla para aceptar la firma electrónica.",
  },
  approvals: {
    title: "Se necesitan aprobaciones",
    intro:
      "Antes de que pueda elegir cómo recibir su pago, cada una de las personas que aparecen abajo debe aprobarlo. Le enviamos a cada una su propio enlace y le avisaremos cuando tengamos todas las aprobaciones.",
    status: (status) => `Estado: ${status}`,
    approved: "Aprobado",
    declined: "Rechazado",
    asked: "Solicitado; esperando su aprobación",
    notAsked: "Todavía no se ha solicitado",
    suppliedContacts: (contacts) =>
      `Nos comunicaremos con esta persona en ${
        contacts.join(" y ")
      } (datos proporcionados por la compañía).`,
    enterContact:
      "La compañía no nos dio los datos de contacto de esta persona. Escriba un correo electrónico o un teléfono.",
    emailLabel: "Correo electrónico de esta persona",
    phoneLabel: "Teléfono celular de esta persona (opcional)",
    resend: (party) => `Enviar un enlace nuevo a ${party}`,
    ask: (party) => `Pedir la aprobación de ${party}`,
    sent: (party) => `Le enviamos a ${party} un enlace para aprobar el pago.`,
    emailInvalid: "Escriba un correo electrónico válido, como nombre@ejemplo.com.",
    phoneInvalid: "Escriba un número de celular de EE. UU., como 555-201-3344.",
    contactMissing: (party) => `Escriba un correo electrónico o un teléfono de ${party}.`,
    contactIsPayees: (party) =>
      `Escriba el correo electrónico o el teléfono de ${party}, no los suyos.`,
  },
  party: {
    payeeFallback: "la persona que recibe el pago",
    thanksTitle: "Gracias",
    decided: (facts) =>
      `Usted ${
        facts.endorsed ? "aprobó" : "rechazó"
      } el pago de ${facts.amount} a ${facts.payee}. No tiene que hacer nada más.`,
    notNeededTitle: "Ya no se necesita su aprobación",
    notNeeded: "Este pago ya no necesita su aprobación.",
    title: "Apruebe un pago",
    isPaying: (company, payee) => `${company} le paga a ${payee}`,
    needed: (party) => `Se necesita su aprobación (${party}) para que el pago pueda continuar.`,
    pleaseRead: "Lea lo siguiente:",
    nameLabel: "Escriba su nombre completo para aprobar",
    consentLabel: (payee) => `Apruebo este pago a ${payee} y acepto firmar electrónicamente.`,
    approve: "Aprobar el pago",
    declineHeading: "¿No lo aprueba?",
    declineNameLabel: "Escriba su nombre completo para rechazarlo",
    decline: "Rechazar el pago",
    consentMissing: "Marque la casilla para aprobar y firmar electrónicamente.",
  },
  choice: {
    title: "Elija cómo quiere recibir su pago",
    failedBefore: (meaning) =>
      `No pudimos pagarle de la forma que eligió. ${meaning} Elija otra vez, por favor.`,
    documentsFrom: (company) => `Documentos de ${company}:`,
    legend: "¿Cómo quiere recibir su pago?",
    continue: "Continuar",
    authorization: "Autorización",
    readAuthorization: "Lea la autorización de depósito:",
    authorizationNameLabel: "Escriba su nombre completo para firmar la autorización",
    authorizationConsent: (company) =>
      `Autorizo a ${company} a depositar este pago en la cuenta indicada arriba y acepto firmar electrónicamente.`,
    confirm: "Confirmar: quiero recibir mi pago así",
    another: "Elegir otra forma de pago",
    consentMissing: "Marque la casilla para autorizar el depósito.",
    unavailable:
      "Esta forma de pago no está disponible para este pago en este momento. Elija otra.",
    changed:
      "No pudimos registrar su elección porque el pago cambió mientras tanto. Empiece otra vez.",
  },
  methods: {
    ach: "Depósito directo en una cuenta bancaria (ACH)",
    check: "Cheque en papel por correo postal",
    vcc: "Tarjeta virtual por correo electrónico",
    instant_deposit: "Depósito instantáneo en una tarjeta de débito",
    digital_check: "Cheque digital por correo electrónico",
    venmo: "Venmo",
    paypal: "PayPal",
  },
  fields: {
    routingNumber: "Número de ruta (routing number)",
    routingHint: "9 dígitos, en la parte inferior izquierda de un cheque",
    accountNumber: "Número de cuenta",
    accountNumberAgain: "Vuelva a escribir el número de cuenta",
    accountType: "Tipo de cuenta",
    checking: "Cheques",
    savings: "Ahorros",
    cardHosted:
      "Escriba su tarjeta en la página segura de nuestro socio de tarjetas; su número nunca nos llega. Luego vuelva aquí.",
    cardHostedLink: "Ingresar su tarjeta de débito de forma segura",
    cardEntered:
      "Su tarjeta está ingresada. Confirme el nombre que figura en ella y el código postal de facturación.",
    cardholderName: "Nombre que figura en la tarjeta",
    instantBankLink: "O recíbalo al instante en su cuenta bancaria",
    instantCardLink: "O recíbalo en su tarjeta de débito",
    accountHolder: "Nombre del titular de la cuenta",
    street: "Dirección (calle y número)",
    streetTwo: "Apartamento, unidad o suite (opcional)",
    city: "Ciudad",
    state: "Estado",
    zipCode: "Código postal (ZIP)",
    fixedPostage: (postage) => `Envío: ${postage} (elegido por la compañía)`,
    postageLegend: "Tipo de envío",
    venmoPhone: "Número de teléfono de su cuenta de Venmo",
    paypalEmail: "Correo electrónico de su cuenta de PayPal",
    email: "Su correo electrónico",
  },
  postage: {
    FC: "Correo de primera clase (gratis)",
    PR: "Priority Mail (correo prioritario)",
    PRS: "Priority Mail con confirmación de firma",
    SC: "Mensajería en 2 días",
    FSO: "Mensajería estándar al día siguiente",
    USPSIDAY: "Priority Mail Express (correo urgente)",
  },
  methodProblems: {
    required: {
      routing_number: {
        missing: "Escriba el número de ruta.",
        tooLong: "El número de ruta es demasiado largo.",
      },
      account_number: {
        missing: "Escriba el número de cuenta.",
        tooLong: "El número de cuenta es demasiado largo.",
      },
      cardholder_name: {
        missing: "Escriba el nombre que figura en la tarjeta.",
        tooLong: "El nombre de la tarjeta es demasiado largo.",
      },
      account_holder: {
        missing: "Escriba el nombre del titular de la cuenta.",
        tooLong: "El nombre del titular de la cuenta es demasiado largo.",
      },
      address_one: {
        missing: "Escriba la dirección.",
        tooLong: "La dirección es demasiado larga.",
      },
      city: {
        missing: "Escriba la ciudad.",
        tooLong: "El nombre de la ciudad es demasiado largo.",
      },
      zip_code: {
        missing: "Escriba el código postal.",
        tooLong: "El código postal es demasiado largo.",
      },
      venmo_phone: {
        missing: "Escriba el número de teléfono de su cuenta de Venmo.",
        tooLong: "El número de teléfono de su cuenta de Venmo es demasiado largo.",
      },
      paypal_email: {
        missing: "Escriba el correo electrónico de su cuenta de PayPal.",
        tooLong: "El correo electrónico de su cuenta de PayPal es demasiado largo.",
      },
      email: {
        missing: "Escriba su correo electrónico.",
        tooLong: "Su correo electrónico es demasiado largo.",
      },
    },
    routingInvalid:
      "Este número de ruta no es válido: revise los nueve dígitos de la parte inferior izquierda de un cheque.",
    accountDigits: "El número de cuenta debe tener de 4 a 17 dígitos.",
    accountMismatch: "Los dos números de cuenta no coinciden.",
    accountType: "Elija cuenta de cheques o de ahorros.",
    cardNotEntered: "Primero ingrese su tarjeta en la página de nuestro socio de tarjetas.",
    bankNotReachable:
      "Su banco no puede recibir pagos instantáneos. Elija una tarjeta de débito u otra forma de cobro.",
    bankLookupFailed: "No pudimos consultar su banco ahora. Inténtelo de nuevo en un minuto.",
    state: "Elija el estado.",
    zipCode: "El código postal debe tener 5 dígitos (o ZIP+4).",
    addressTwoTooLong: "La segunda línea de la dirección es demasiado larga.",
    postage: "Elija un tipo de envío de la lista.",
    phoneInvalid: "Escriba un número de teléfono de EE. UU., como 555-201-3344.",
    emailInvalid: "Escriba un correo electrónico válido, como nombre@ejemplo.com.",
  },
  methodSummary: {
    ach: (f) =>
      `Cuenta de ${
        f.account_type === "savings" ? "ahorros" : "cheques"
      } que termina en ${f.last_four}`,
    instant_deposit: (f) =>
      f.instant_to === "bank"
        ? `Pago instantáneo a la cuenta bancaria que termina en ${f.last_four}`
        : `Tarjeta de débito que termina en ${f.last_four}`,
    check: (f) =>
      `Cheque enviado por correo a ${f.address_one}, ${f.city}, ${f.state} ${f.zip_code} (${f.postage})`,
    venmo: (f) => `Cuenta de Venmo con el teléfono ${f.phone}`,
    paypal: (f) => `Cuenta de PayPal ${f.email}`,
    vcc: (f) => `Tarjeta virtual enviada a ${f.email}`,
    digital_check: (f) => `Cheque digital enviado a ${f.email}`,
  },
  status: {
    labels: {
      pending_funds: "En espera de los fondos de la compañía",
      created: "Creado",
      pending_approval: "En espera de la aprobación de la compañía",
      awaiting_endorsement: "En espera de aprobaciones",
      modality_offered: "En espera de que elija cómo recibir su pago",
      modality_selected: "Forma de pago elegida",
      in_review: "En revisión",
      funds_sent: "Dinero enviado",
      completed: "Pagado",
      failed: "No se pudo hacer el pago",
      canceled: "Cancelado",
      escheated: "Entregado al estado como bienes no reclamados",
    },
    howPaid: "Cómo recibe su pago:",
    fee: (fee, net) => `Cargo de ${fee}; usted recibe ${net}.`,
    historyHeading: "Lo que ha pasado hasta ahora",
    comeBack: "Vuelva a esta página cuando quiera para seguir su pago.",
    returnedEscheated: (company, state) =>
      `El dinero de este pago volvió sin reclamar, así que ${company} lo entregó al estado de ${state} como bienes no reclamados, como exige la ley. Reclámelo al programa de bienes no reclamados de ${state}; lo guarda para usted.`,
    time: (at) => formatTime("es-US", at),
  },
  hostedCard: {
    title: "Socio de tarjetas del sandbox",
    intro:
      "El campo de tarjeta alojado del simulador de Increase: escriba una tarjeta de prueba del sandbox. El portal de pagos recibe solo un token y los últimos cuatro dígitos.",
    cardNumber: "Número de tarjeta",
    expiry: "Vencimiento (MM/AA)",
    cvv: "Código de seguridad (CVV)",
    save: "Guardar tarjeta",
    problems: {
      card_number_invalid:
        "Este número de tarjeta no es válido: revise los dígitos del frente de su tarjeta.",
      card_expiry_invalid:
        "Este vencimiento no es válido: escriba el mes y el año impresos en su tarjeta, como MM/AA.",
      card_expired: "Esta tarjeta está vencida: use una tarjeta cuyo vencimiento no haya pasado.",
      card_cvv_invalid:
        "Este código de seguridad no es válido: escriba los 3 o 4 dígitos impresos en su tarjeta.",
    },
  },
  virtualCard: {
    heading: "Su tarjeta virtual",
    intro: (lastFour) =>
      `El emisor muestra abajo su tarjeta terminada en ${lastFour}. Úsela en línea o agréguela a la billetera de su teléfono; sirve para una compra hasta el monto pagado.`,
    frameTitle: "Su tarjeta virtual, mostrada por el emisor",
  },
  digitalCheck: {
    heading: "Su cheque",
    ready: (number) => `El cheque número ${number} está listo.`,
    download: "Descargar su cheque (PDF)",
    howTo:
      "Imprímalo en papel común o deposítelo con la aplicación de su banco. Deposítelo una sola vez.",
    notReadyTitle: "Su cheque todavía no está listo",
    notReady: (number) =>
      `El cheque número ${number} está en camino al banco. Pronto podrá descargarlo: vuelva más tarde a su página de pago.`,
    paidTitle: "Este cheque ya fue pagado",
    paid: (number, date) =>
      `El cheque número ${number} fue depositado y pagado${
        date === null ? "" : ` el ${date}`
      }: no se puede usar de nuevo. Su página de pago muestra el pago.`,
    voidedTitle: "Este cheque ya no se puede usar",
    voided: (number) =>
      `El cheque número ${number} fue cancelado: no lo deposite. Su página de pago indica lo que sigue.`,
    linkTitle: "Este enlace no funciona",
    expired: "Este enlace venció. Abra su página de pago para obtener uno nuevo.",
    invalid:
      "Esta dirección no es un enlace a un cheque. Abra el mensaje más reciente o su página de pago para obtener el enlace correcto.",
  },
  landing: {
    title: "Su pago",
    intro:
      "Para ver su pago y elegir cómo recibirlo, le enviamos un enlace privado al correo electrónico o al teléfono que la compañía tiene registrado.",
    button: "Envíenme mi enlace",
    forgedTitle: "Inténtelo de nuevo",
    forged: "No pudimos aceptar este formulario porque no se envió desde esta página.",
    startAgain: "Empezar de nuevo",
    sentTitle: "Revise sus mensajes",
    sent:
      "Si este pago le corresponde, le acabamos de enviar un enlace privado al correo electrónico o al teléfono que la compañía tiene registrado. Abra el mensaje más reciente y siga el enlace.",
  },
};

const tables: Readonly<Record<Language, PortalText>> = { en: english, es: spanish };

/** The portal's texts in one language. */
export function portalText(language: Language): PortalText {
  return tables[language];
}
