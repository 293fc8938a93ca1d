/**
 * What the payee and the authorization parties receive, by e-mail and SMS, in English and Spanish
 * (a Surface B payee's `language`; Surface A payees get English). Plain text only: nothing in a
 * message is markup, so nothing a company typed can become a link or a script.
 */
export type MessageKind =
  | "offer"
  | "reoffer"
  | "endorsement"
  | "resend"
  | "endorsed"
  | "code"
  | "party_request"
  | "details_updated"
  | "digital_check"
  | "deadline"
  | "deadline_fallback"
  | "fallback"
  | "unclaimed_notice";

export type Language = "en" | "es";

export interface MessageFacts {
  readonly company: string;
  /** As formatDollars writes it: "$1,250.00". */
  readonly amount: string;
  readonly firstName?: string | null;
  readonly link?: string;
  readonly code?: string;
  /** The payee's name, in messages to an authorization party. */
  readonly payeeName?: string;
  /** A digital check's number. */
  readonly checkNumber?: number;
  /** The date the payment is due by (YYYY-MM-DD), in deadline reminders. */
  readonly payBy?: string;
}

export interface RenderedMessage {
  readonly subject: string;
  readonly email: string;
  readonly sms: string;
}

export function languageOf(value: unknown): Language {
  return value === "es" ? "es" : "en";
}

type Template = (f: MessageFacts) => RenderedMessage;

const english: Record<MessageKind, Template> = {
  offer: (f) => ({
    subject: `${f.company} has a payment for you`,
    email: `${
      hello(f, "Hello")
    }\n\n${f.company} is paying you ${f.amount}. Choose how you want to be paid:\n${f.link}\n\nThis link is personal; do not share it.`,
    sms: `${f.company} is paying you ${f.amount}. Choose how to be paid: ${f.link}`,
  }),
  reoffer: (f) => ({
    subject: `${f.company}: please choose another way to be paid`,
    email: `${
      hello(f, "Hello")
    }\n\nWe could not pay you ${f.amount} the way you chose. Please choose another way:\n${f.link}\n\nThis link is personal; do not share it.`,
    sms: `${f.company} could not pay you ${f.amount} the way you chose. Choose again: ${f.link}`,
  }),
  endorsement: (f) => ({
    subject: `${f.company} has a payment for you that needs approval`,
    email: `${
      hello(f, "Hello")
    }\n\n${f.company} is paying you ${f.amount}. Others must approve it first; start here:\n${f.link}\n\nThis link is personal; do not share it.`,
    sms: `${f.company} is paying you ${f.amount} (approval needed). Start here: ${f.link}`,
  }),
  resend: (f) => ({
    subject: `Reminder: ${f.company} has a payment for you`,
    email: `${
      hello(f, "Hello")
    }\n\n${f.company} is paying you ${f.amount}. Continue here:\n${f.link}\n\nThis link is personal; do not share it.`,
    sms: `Reminder: ${f.company} is paying you ${f.amount}: ${f.link}`,
  }),
  endorsed: (f) => ({
    subject: `${f.company}: every approval is in`,
    email: `${
      hello(f, "Hello")
    }\n\nEveryone approved your payment of ${f.amount}. Choose how you want to be paid:\n${f.link}\n\nThis link is personal; do not share it.`,
    sms:
      `Every approval is in for your ${f.amount} from ${f.company}. Choose how to be paid: ${f.link}`,
  }),
  code: (f) => ({
    subject: `Your ${f.company} verification code`,
    email:
      `Your verification code is ${f.code}. It expires in 10 minutes.\n\nIf you did not ask for it, ignore this message.`,
    sms: `${f.code} is your ${f.company} payment verification code. It expires in 10 minutes.`,
  }),
  party_request: (f) => ({
    subject: `${f.company}: your approval is needed for a payment`,
    email:
      `Hello,\n\n${f.company} is paying ${f.payeeName} ${f.amount}, and your approval is needed. Review and approve or decline here:\n${f.link}\n\nThis link is personal; do not share it.`,
    sms: `${f.company}: approve a ${f.amount} payment to ${f.payeeName}: ${f.link}`,
  }),
  details_updated: (f) => ({
    subject: `${f.company}: your bank details were updated`,
    email: `${
      hello(f, "Hello")
    }\n\nYour bank told ${f.company} that the account details you gave for your payment of ${f.amount} have changed. ${f.company} uses the updated details from now on; you do not need to do anything.\n\nIf you did not expect this, contact ${f.company}.`,
    sms:
      `Your bank updated the account details for your ${f.amount} from ${f.company}. Nothing to do.`,
  }),
  digital_check: (f) => ({
    subject: `${f.company}: your check for ${f.amount} is ready`,
    email: `${
      hello(f, "Hello")
    }\n\nYour check number ${f.checkNumber} for ${f.amount} from ${f.company} is ready. Print it, or deposit it with your bank's mobile app:\n${f.link}\n\nThe link works for a limited time; your payment page always has a fresh one. This check is yours alone; do not share the link.`,
    sms: `${f.company}: your check ${f.checkNumber} for ${f.amount} is ready: ${f.link}`,
  }),
  deadline: (f) => ({
    subject: `${f.company}: please choose how to be paid by ${f.payBy}`,
    email: `${
      hello(f, "Hello")
    }\n\n${f.company} is paying you ${f.amount} and must pay it by ${f.payBy}. Choose how you want to be paid:\n${f.link}\n\nThis link is personal; do not share it.`,
    sms: `${f.company} must pay you ${f.amount} by ${f.payBy}. Choose how to be paid: ${f.link}`,
  }),
  deadline_fallback: (f) => ({
    subject: `${f.company}: choose how to be paid by ${f.payBy}, or we mail a check`,
    email: `${
      hello(f, "Hello")
    }\n\n${f.company} is paying you ${f.amount} and must pay it by ${f.payBy}. If you have not chosen by then, a check is mailed to your address on file. Choose how you want to be paid:\n${f.link}\n\nThis link is personal; do not share it.`,
    sms:
      `${f.company} must pay you ${f.amount} by ${f.payBy}; after that a check is mailed. Choose: ${f.link}`,
  }),
  fallback: (f) => ({
    subject: `${f.company}: a check for ${f.amount} is being mailed to you`,
    email: `${
      hello(f, "Hello")
    }\n\nYou did not choose how to be paid ${f.amount}, so ${f.company} is mailing you a check to your address on file. Until it is mailed you can still choose another way:\n${f.link}\n\nThis link is personal; do not share it.`,
    sms:
      `${f.company} is mailing you a check for ${f.amount}. Until it is mailed you can choose another way: ${f.link}`,
  }),
  unclaimed_notice: (f) => ({
    subject: `${f.company}: money owed to you will go to the state`,
    email: `${
      hello(f, "Hello")
    }\n\n${f.company} still owes you ${f.amount}. Unless you claim it, the law requires ${f.company} to send it to the state as unclaimed property. Choose how you want to be paid:\n${f.link}\n\nThis link is personal; do not share it.`,
    sms:
      `${f.company} still owes you ${f.amount}; unclaimed, it goes to the state. Claim it: ${f.link}`,
  }),
};

const spanish: Record<MessageKind, Template> = {
  offer: (f) => ({
    subject: `${f.company} tiene un pago para usted`,
    email: `${
      hello(f, "Hola")
    }\n\n${f.company} le paga ${f.amount}. Elija cómo quiere recibirlo:\n${f.link}\n\nEste enlace es personal; no lo comparta.`,
    sms: `${f.company} le paga ${f.amount}. Elija cómo cobrar: ${f.link}`,
  }),
  reoffer: (f) => ({
    subject: `${f.company}: elija otra forma de cobro`,
    email: `${
      hello(f, "Hola")
    }\n\nNo pudimos pagarle ${f.amount} de la forma elegida. Elija otra:\n${f.link}\n\nEste enlace es personal; no lo comparta.`,
    sms: `${f.company} no pudo pagarle ${f.amount} así. Elija otra forma: ${f.link}`,
  }),
  endorsement: (f) => ({
    subject: `${f.company} tiene un pago para usted que requiere aprobación`,
    email: `${
      hello(f, "Hola")
    }\n\n${f.company} le paga ${f.amount}. Otras personas deben aprobarlo primero; empiece aquí:\n${f.link}\n\nEste enlace es personal; no lo comparta.`,
    sms: `${f.company} le paga ${f.amount} (requiere aprobación). Empiece aquí: ${f.link}`,
  }),
  resend: (f) => ({
    subject: `Recordatorio: ${f.company} tiene un pago para usted`,
    email: `${
      hello(f, "Hola")
    }\n\n${f.company} le paga ${f.amount}. Continúe aquí:\n${f.link}\n\nEste enlace es personal; no lo comparta.`,
    sms: `Recordatorio: ${f.company} le paga ${f.amount}: ${f.link}`,
  }),
  endorsed: (f) => ({
    subject: `${f.company}: todas las aprobaciones están listas`,
    email: `${
      hello(f, "Hola")
    }\n\nTodos aprobaron su pago de ${f.amount}. Elija cómo quiere recibirlo:\n${f.link}\n\nEste enlace es personal; no lo comparta.`,
    sms: `Su pago de ${f.amount} de ${f.company} está aprobado. Elija cómo cobrar: ${f.link}`,
  }),
  code: (f) => ({
    subject: `Su código de verificación de ${f.company}`,
    email:
      `Su código de verificación es ${f.code}. Vence en 10 minutos.\n\nSi no lo pidió, ignore este mensaje.`,
    sms: `${f.code} es su código de verificación de pago de ${f.company}. Vence en 10 minutos.`,
  }),
  party_request: (f) => ({
    subject: `${f.company}: se necesita su aprobación para un pago`,
    email:
      `Hola:\n\n${f.company} le paga ${f.amount} a ${f.payeeName} y se necesita su aprobación. Revise y apruebe o rechace aquí:\n${f.link}\n\nEste enlace es personal; no lo comparta.`,
    sms: `${f.company}: apruebe un pago de ${f.amount} a ${f.payeeName}: ${f.link}`,
  }),
  details_updated: (f) => ({
    subject: `${f.company}: se actualizaron sus datos bancarios`,
    email: `${
      hello(f, "Hola")
    }\n\nSu banco informó a ${f.company} que los datos de la cuenta que indicó para su pago de ${f.amount} cambiaron. ${f.company} usa los datos actualizados desde ahora; no tiene que hacer nada.\n\nSi no lo esperaba, comuníquese con ${f.company}.`,
    sms:
      `Su banco actualizó los datos de la cuenta para su pago de ${f.amount} de ${f.company}. No tiene que hacer nada.`,
  }),
  digital_check: (f) => ({
    subject: `${f.company}: su cheque de ${f.amount} está listo`,
    email: `${
      hello(f, "Hola")
    }\n\nSu cheque número ${f.checkNumber} de ${f.amount} de ${f.company} está listo. Imprímalo o deposítelo con la aplicación de su banco:\n${f.link}\n\nEl enlace funciona por un tiempo limitado; su página de pago siempre tiene uno nuevo. Este cheque es solo suyo; no comparta el enlace.`,
    sms: `${f.company}: su cheque ${f.checkNumber} de ${f.amount} está listo: ${f.link}`,
  }),
  deadline: (f) => ({
    subject: `${f.company}: elija cómo cobrar antes del ${f.payBy}`,
    email: `${
      hello(f, "Hola")
    }\n\n${f.company} le paga ${f.amount} y debe pagarlo antes del ${f.payBy}. Elija cómo quiere recibirlo:\n${f.link}\n\nEste enlace es personal; no lo comparta.`,
    sms: `${f.company} debe pagarle ${f.amount} antes del ${f.payBy}. Elija cómo cobrar: ${f.link}`,
  }),
  deadline_fallback: (f) => ({
    subject: `${f.company}: elija cómo cobrar antes del ${f.payBy} o le enviamos un cheque`,
    email: `${
      hello(f, "Hola")
    }\n\n${f.company} le paga ${f.amount} y debe pagarlo antes del ${f.payBy}. Si no ha elegido para entonces, se le enviará un cheque por correo a su dirección registrada. Elija cómo quiere recibirlo:\n${f.link}\n\nEste enlace es personal; no lo comparta.`,
    sms:
      `${f.company} debe pagarle ${f.amount} antes del ${f.payBy}; luego se envía un cheque. Elija: ${f.link}`,
  }),
  fallback: (f) => ({
    subject: `${f.company}: le enviamos un cheque de ${f.amount}`,
    email: `${
      hello(f, "Hola")
    }\n\nNo eligió cómo recibir ${f.amount}, así que ${f.company} le envía un cheque a su dirección registrada. Hasta que se envíe puede elegir otra forma:\n${f.link}\n\nEste enlace es personal; no lo comparta.`,
    sms:
      `${f.company} le envía un cheque de ${f.amount}. Hasta que se envíe puede elegir otra forma: ${f.link}`,
  }),
  unclaimed_notice: (f) => ({
    subject: `${f.company}: el dinero que se le debe irá al estado`,
    email: `${
      hello(f, "Hola")
    }\n\n${f.company} todavía le debe ${f.amount}. Si no lo reclama, la ley obliga a ${f.company} a entregarlo al estado como bienes no reclamados. Elija cómo quiere recibirlo:\n${f.link}\n\nEste enlace es personal; no lo comparta.`,
    sms:
      `${f.company} todavía le debe ${f.amount}; si no lo reclama, irá al estado. Reclámelo: ${f.link}`,
  }),
};

function hello(f: MessageFacts, word: string): string {
  return f.firstName ? `${word} ${f.firstName},` : `${word},`;
}

export function renderMessage(
  kind: MessageKind,
  language: Language,
  facts: MessageFacts,
): RenderedMessage {
  return (language === "es" ? spanish : english)[kind](facts);
}
