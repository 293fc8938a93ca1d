/**
 * The payee portal's use cases (contract §9): a link found by its token, the one-time code, the
 * payee's signatures, asking authorization parties, a party's endorsement or decline, the
 * choice of a method, and a fresh link on request. Each write is one write unit opened here; a
 * use case that refuses aborts it, except a wrong code, whose counting must commit. Signed copies
 * are stamped before the unit (PDF work is CPU, not database). Form problems come back in the
 * page's language, as `form_invalid` with the fields at fault.
 */
import { lobMails } from "../lob/store.ts";
import { LOB_POSTAGE_CODES } from "../lob/rules.ts";
import type { Database } from "../../db/client.ts";
import type { Environment } from "../platform/config.ts";
import type { SecretBox } from "../platform/crypto.ts";
import { type Ok, ok, type Refusal, refuse, type Result } from "../platform/result.ts";
import type { PayoutRow } from "../payouts/store.ts";
import { type PayoutRuntime, selectMethod } from "../payouts/jobs.ts";
import { type ModalityCode, modalityOf } from "../payouts/states.ts";
import { payableAmong } from "../payouts/payable.ts";
import { type NotificationSettings, resendPayeeLink } from "../notify/store.ts";
import { domainNow } from "../sandbox/clock_store.ts";
import { reportUnstampableDocument, UnstampableDocumentError } from "../documents/service.ts";
import {
  checkMethodDetails,
  type FieldProblem,
  isPlausibleEmail,
  normalizeUsPhone,
} from "./method_details.ts";
import { instantBankReachable, returnedCardToken } from "../instant/service.ts";
import type { IncreaseAccount } from "../instant/account.ts";
import type { ProviderReach } from "../rails/provider_reach.ts";
import type { PortalText } from "./portal_text.ts";
import {
  decideEndorsement,
  findLinkByToken,
  findParty,
  listParties,
  listPortalDocuments,
  type PortalDocument,
  type PortalLink,
  type PortalParty,
  type PortalPayout,
  type PreparedSignature,
  prepareSignatures,
  readPortalDocument,
  readPortalPayout,
  requestPartyEndorsement,
  sendVerificationCode,
  type Signer,
  storeSignatures,
  v1DisbursementPayout,
  verifyCode,
} from "./store.ts";

export type { PortalDocument, PortalLink, PortalParty, PortalPayout };

/** A typed name is a signature: at least two characters, at most this many. */
export const TYPED_NAME_LENGTH_MAX = 120;

/** Who reads which document types: the payee 1 and 4, with ACH also 2, parties 3. */
const documentTypes = {
  payee: [1, 4],
  ach: [2],
  party: [3],
} as const satisfies Record<string, readonly number[]>;

export type DocumentAudience = keyof typeof documentTypes;

/** A form the portal refused, with each field at fault in the page's language. */
export interface FormRefusal extends Refusal<"form_invalid"> {
  readonly problems: readonly FieldProblem[];
}

const formRefusal = (problems: readonly FieldProblem[]): FormRefusal => ({
  ...refuse("form_invalid", `the form has ${problems.length} problem(s)`),
  problems,
});

/** The browser a signature is made in, kept on its certificate. */
export interface SigningClient {
  readonly ip: string | null;
  readonly userAgent: string | null;
}

/** The request's clocks: security limits run on real time, what happens on domain time. */
export interface PortalTimes {
  readonly realNow: number;
  readonly domainNow: number;
}

const PORTAL_TOKEN = /^[0-9A-Za-z]{43}$/;

/** The link a token names and its environment (a token does not say which), or null. */
export async function findLink(
  databases: Readonly<Record<Environment, Database>>,
  token: string,
): Promise<{ environment: Environment; link: PortalLink } | null> {
  if (!PORTAL_TOKEN.test(token)) return null;
  for (const environment of ["test", "live"] as const) {
    const link = await findLinkByToken(databases[environment].readClient, token);
    if (link) return { environment, link };
  }
  return null;
}

/** The link's company's domain time. */
export function linkNow(database: Database, link: PortalLink, realNow: number): Promise<number> {
  return domainNow(database, link.companyId, realNow);
}

/**
 * The payout of a link as the portal shows it, with its timeline. Its allowed methods are only
 * those the company can be paid by in the link's environment (live: ACH once bank settings are
 * stored), so the payee is offered, and may choose, nothing that cannot be paid.
 */
export async function portalPayout(
  database: Database,
  link: PortalLink,
  micrFont: Uint8Array | null,
): Promise<PortalPayout> {
  const payout = await readPortalPayout(database.readClient, link.payoutId);
  const payable = await payableAmong(
    database.readClient,
    database.environment,
    link.companyId,
    payout.allowedPaymentMethodIds,
    micrFont,
  );
  const mailed = await lobMails(database.readClient, link.companyId);
  return {
    ...payout,
    allowedPaymentMethodIds: payable,
    postageCodes: mailed ? LOB_POSTAGE_CODES : null,
  };
}

/** The party a party's link belongs to, or null. */
export function portalParty(
  database: Database,
  payoutId: string,
  partyUuid: string,
): Promise<PortalParty | null> {
  return findParty(database.readClient, payoutId, partyUuid);
}

/** The payout's authorization parties, in the order the company listed them. */
export function portalParties(database: Database, payoutId: string): Promise<PortalParty[]> {
  return listParties(database.readClient, payoutId);
}

/** The documents `audience` reads on this payout, with whether the payout signed each. */
export function documentsFor(
  database: Database,
  payoutId: string,
  audience: DocumentAudience,
): Promise<(PortalDocument & { signed: boolean })[]> {
  return listPortalDocuments(database.readClient, payoutId, documentTypes[audience]);
}

/** The payee's documents still to sign before anything else. */
export async function documentsToSign(
  database: Database,
  payoutId: string,
): Promise<PortalDocument[]> {
  return (await documentsFor(database, payoutId, "payee")).filter((d) =>
    d.isSignRequired && !d.signed
  );
}

/** An original PDF the link's holder may read: the payee's (ACH included) or the parties'. */
export function linkDocument(
  database: Database,
  link: PortalLink,
  documentId: string,
): Promise<{ name: string; content: Uint8Array } | null> {
  const types = link.partyUuid === null
    ? [...documentTypes.payee, ...documentTypes.ach]
    : documentTypes.party;
  return readPortalDocument(database.readClient, link.payoutId, documentId, types);
}

/** Sends a one-time code to the link holder's channels; refused while locked or too soon. */
export async function sendCode(
  database: Database,
  link: PortalLink,
  times: PortalTimes,
): Promise<Result<{ channels: ("email" | "sms")[] }, "link_locked" | "code_too_soon">> {
  return await database.writer.write(async (tx) => {
    const sent = await sendVerificationCode(tx, database.environment, link.id, times);
    return sent.ok ? sent : tx.abort(sent);
  });
}

/**
 * Checks a code. A wrong one is refused AND counted: the unit commits the count (and the lock at
 * the last try), which is why this refusal does not abort.
 */
export async function checkCode(
  database: Database,
  link: PortalLink,
  code: string,
  realNow: number,
): Promise<Result<void, "link_locked" | "code_expired" | "code_wrong">> {
  return await database.writer.write((tx) => verifyCode(tx, link.id, code, realNow));
}

/** A typed name that can stand as a signature, or its problem. */
function typedNameProblem(
  t: PortalText,
  input: { field: string; value: string | undefined },
): FieldProblem | null {
  const name = (input.value ?? "").trim();
  if (name.length < 2) return { field: input.field, message: t.form.typeFullName };
  if (name.length > TYPED_NAME_LENGTH_MAX) {
    return { field: input.field, message: t.form.nameTooLong };
  }
  return null;
}

const present = (problems: (FieldProblem | null)[]) =>
  problems.filter((p): p is FieldProblem => p !== null);

/** A stored document that cannot be stamped: nothing is signed, and the signer is told which. */
export interface UnreadableDocumentRefusal extends Refusal<"document_unreadable"> {
  readonly documentName: string;
}

/**
 * Stamps the certificate of each document, before any write unit (PDF work is CPU). A stored
 * document pdf-lib cannot stamp (damaged since its upload) is refused by name and reported to
 * operators (reportUnstampableDocument), so the signer meets a clear page, never an error.
 */
async function stampSignatures(
  database: Database,
  link: PortalLink,
  documents: readonly PortalDocument[],
  signing: { signer: Signer; now: number },
): Promise<Ok<PreparedSignature[]> | UnreadableDocumentRefusal> {
  const prepared: PreparedSignature[] = [];
  for (const document of documents) {
    try {
      prepared.push(
        ...await prepareSignatures(
          database.readClient,
          link.payoutId,
          [document],
          signing.signer,
          signing.now,
        ),
      );
    } catch (error) {
      if (!(error instanceof UnstampableDocumentError)) throw error;
      await reportUnstampableDocument(database, {
        companyId: link.companyId,
        documentId: document.id,
        payoutId: link.payoutId,
        error,
      }, signing.now);
      return { ...refuse("document_unreadable", error.message), documentName: document.name };
    }
  }
  return ok(prepared);
}

/** The payee signs the documents still to sign: a typed name and the consent box. */
export async function signAsPayee(
  database: Database,
  link: PortalLink,
  form: Readonly<Record<string, string>>,
  options: { t: PortalText; client: SigningClient; now: number },
): Promise<
  Result<void, "not_payee" | "document_used"> | FormRefusal | UnreadableDocumentRefusal
> {
  const { t } = options;
  const problems = present([
    typedNameProblem(t, { field: "typed_name", value: form.typed_name }),
    form.consent === "yes" ? null : { field: "consent", message: t.sign.consentMissing },
  ]);
  if (link.partyUuid !== null) return refuse("not_payee", "a party's link signs no payee document");
  if (problems.length > 0) return formRefusal(problems);
  const prepared = await stampSignatures(
    database,
    link,
    await documentsToSign(database, link.payoutId),
    {
      signer: { typedName: form.typed_name.trim(), role: "payee", ...options.client },
      now: options.now,
    },
  );
  if (!prepared.ok) return prepared;
  return await database.writer.write(async (tx) => {
    const stored = await storeSignatures(tx, link.payoutId, prepared.value);
    return stored.ok ? stored : tx.abort(stored);
  });
}

/**
 * The contact the payee entered for a party the company gave none for: an e-mail and/or a US
 * phone, and not the payee's own. Problems name the form's fields.
 */
function partyContact(
  t: PortalText,
  entry: { party: PortalParty; payout: PortalPayout; form: Readonly<Record<string, string>> },
): { email: string | null; phone: string | null; problems: FieldProblem[] } {
  const { party, payout, form } = entry;
  const prefix = `party-${party.partyUuid}`;
  const problems: FieldProblem[] = [];
  let email: string | null = null;
  let phone: string | null = null;
  if (party.companyEmail !== null || party.companyPhone !== null) {
    return { email, phone, problems };
  }
  const rawEmail = (form[`${prefix}-email`] ?? "").trim();
  const rawPhone = (form[`${prefix}-phone`] ?? "").trim();
  if (rawEmail && !isPlausibleEmail(rawEmail)) {
    problems.push({ field: `${prefix}-email`, message: t.approvals.emailInvalid });
  } else if (rawEmail) email = rawEmail;
  if (rawPhone) {
    phone = normalizeUsPhone(rawPhone);
    if (!phone) problems.push({ field: `${prefix}-phone`, message: t.approvals.phoneInvalid });
  }
  if (!rawEmail && !rawPhone) {
    problems.push({ field: `${prefix}-email`, message: t.approvals.contactMissing(party.name) });
  }
  const own = (value: string | null, mine: string | null) =>
    value !== null && mine !== null && value.toLowerCase() === mine.toLowerCase();
  if (own(email, payout.email) || own(phone, normalizeUsPhone(payout.phone ?? ""))) {
    problems.push({ field: `${prefix}-email`, message: t.approvals.contactIsPayees(party.name) });
  }
  return { email, phone, problems };
}

/**
 * The payee asks a party for its endorsement: while the payout awaits endorsements, with the
 * company's contact for the party or one the payee enters.
 */
export async function askParty(
  database: Database,
  notifications: NotificationSettings,
  link: PortalLink,
  request: { partyUuid: string; form: Readonly<Record<string, string>> },
  options: { t: PortalText; now: number },
): Promise<
  | Result<PortalParty, "not_askable" | "party_not_pending" | "contact_required">
  | FormRefusal
> {
  const notAskable = refuse("not_askable", "this link cannot ask this party now");
  if (link.partyUuid !== null) return notAskable;
  // Its contact and status are what count here, not the methods it may be paid by.
  const payout = await readPortalPayout(database.readClient, link.payoutId);
  const party = await portalParty(database, link.payoutId, request.partyUuid);
  if (!party || payout.status !== "awaiting_endorsement") return notAskable;
  const { email, phone, problems } = partyContact(options.t, {
    party,
    payout,
    form: request.form,
  });
  if (problems.length > 0) return formRefusal(problems);
  return await database.writer.write(async (tx) => {
    const requested = await requestPartyEndorsement(
      tx,
      notifications,
      link.payoutId,
      request.partyUuid,
      { email, phone },
      options.now,
    );
    return requested.ok ? ok(party) : tx.abort(requested);
  });
}

/**
 * A party endorses (typed name, consent, and its documents signed) or declines (typed name). The
 * decision and the signed copies commit together: a signature refused (a one-time document taken
 * meanwhile) leaves the party undecided.
 */
export async function decideAsParty(
  database: Database,
  runtime: PayoutRuntime,
  link: PortalLink,
  decision: { endorse: boolean; form: Readonly<Record<string, string>> },
  options: { t: PortalText; client: SigningClient; now: number },
): Promise<
  | Result<
    { allEndorsed: boolean },
    "not_party" | "party_not_pending" | "not_awaiting_endorsement" | "document_used"
  >
  | FormRefusal
  | UnreadableDocumentRefusal
> {
  const { endorse, form } = decision;
  const { t } = options;
  const partyUuid = link.partyUuid;
  if (partyUuid === null) return refuse("not_party", "the payee's link decides for no party");
  const field = endorse ? "typed_name" : "decline_name";
  const problems = present([
    typedNameProblem(t, { field, value: form[field] }),
    !endorse || form.consent === "yes" ? null : {
      field: "consent",
      message: t.party.consentMissing,
    },
  ]);
  if (problems.length > 0) return formRefusal(problems);
  const typedName = form[field].trim();
  const prepared = endorse
    ? await stampSignatures(
      database,
      link,
      (await documentsFor(database, link.payoutId, "party")).filter((d) => d.isSignRequired),
      {
        signer: { typedName, role: `authorization party ${partyUuid}`, ...options.client },
        now: options.now,
      },
    )
    : ok([]);
  if (!prepared.ok) return prepared;
  return await database.writer.write(async (tx) => {
    const decided = await decideEndorsement(
      tx,
      runtime,
      link.payoutId,
      partyUuid,
      { endorse, typedName },
      options.now,
    );
    if (!decided.ok) return tx.abort(decided);
    const stored = await storeSignatures(tx, link.payoutId, prepared.value);
    return stored.ok ? decided : tx.abort(stored);
  });
}

/**
 * Whether the payee may choose a method now: while offered, and after the pay_by deadline's
 * fallback chose a mailed check for them, until that check leaves (the state machine refuses
 * the choice once the check is in a built file).
 */
export function choosableNow(payout: Pick<PortalPayout, "status" | "methodDetails">): boolean {
  return payout.status === "modality_offered" ||
    (payout.status === "modality_selected" && String(payout.methodDetails?.fallback) === "true");
}

/** The method `code` names when the payee may choose it now on this link; null otherwise. */
export function offeredMethod(
  link: PortalLink,
  payout: PortalPayout,
  code: string | undefined,
): { id: number; code: ModalityCode } | null {
  const modality = code ? modalityOf(code) : undefined;
  return modality && payout.allowedPaymentMethodIds.includes(modality.id) &&
      link.partyUuid === null && choosableNow(payout)
    ? modality
    : null;
}

type SelectionRefusal = Extract<Awaited<ReturnType<typeof selectMethod>>, { ok: false }>["code"];

/**
 * The payee chooses a method: its details checked; for ACH, the authorization signed with a typed
 * name and consent. Account numbers are kept sealed, a card as a token; the payout keeps only
 * their last four digits in the clear. Signatures and the selection commit together.
 */
export async function chooseMethod(
  database: Database,
  deps: {
    runtime: PayoutRuntime;
    secretBox: SecretBox;
    /** The Increase the company's instant bank payments are looked up at. */
    increase: ProviderReach<IncreaseAccount>;
  },
  link: PortalLink,
  choice: {
    payout: PortalPayout;
    modality: { id: number; code: ModalityCode };
    form: Readonly<Record<string, string>>;
  },
  options: { t: PortalText; client: SigningClient; now: number },
): Promise<
  | Result<PayoutRow, SelectionRefusal | "not_offered" | "document_used">
  | FormRefusal
  | UnreadableDocumentRefusal
> {
  const { payout, modality, form } = choice;
  const { t } = options;
  if (!offeredMethod(link, payout, modality.code)) {
    return refuse("not_offered", `${modality.code} cannot be chosen on this link now`);
  }
  const checked = checkMethodDetails(modality.code, form, {
    text: t.methodProblems,
    fixedPostage: payout.fixedPostage,
    // A company whose checks Lob mails takes only the postage Lob mails checks with.
    postageCodes: modality.code === "check" && await lobMails(database.readClient, link.companyId)
      ? LOB_POSTAGE_CODES
      : undefined,
  });
  const problems: FieldProblem[] = checked.ok ? [] : [...checked.problems];
  // An instant bank payment is offered only to a bank the routing lookup says can take it.
  if (checked.ok && modality.code === "instant_deposit" && form.instant_to === "bank") {
    const reachable = await instantBankReachable(
      { database, increase: deps.increase },
      link.companyId,
      String(checked.value.public.routing_number),
      options.now,
    );
    if (reachable !== true) {
      problems.push({
        field: "routing_number",
        message: reachable === false
          ? t.methodProblems.bankNotReachable
          : t.methodProblems.bankLookupFailed,
      });
    }
  }
  // A card's last four are read from Increase's token again: the form's copy came from the browser.
  let cardLastFour: string | null = null;
  if (checked.ok && modality.code === "instant_deposit" && form.instant_to !== "bank") {
    const card = await returnedCardToken(
      { database, increase: deps.increase },
      link.companyId,
      String(checked.value.public.card_token_id),
      options.now,
    );
    if (card === null) {
      problems.push({ field: "card_token_id", message: t.methodProblems.cardNotEntered });
    } else {
      cardLastFour = card.lastFour;
    }
  }
  if (modality.code === "ach") {
    const nameProblem = typedNameProblem(t, { field: "typed_name", value: form.typed_name });
    if (nameProblem) problems.push(nameProblem);
    if (form.consent !== "yes") {
      problems.push({ field: "consent", message: t.choice.consentMissing });
    }
  }
  if (!checked.ok || problems.length > 0) return formRefusal(problems);
  const details = checked.value;
  const signatures = modality.code === "ach"
    ? await stampSignatures(
      database,
      link,
      (await documentsFor(database, payout.id, "ach")).filter((d) => d.isSignRequired),
      {
        signer: { typedName: form.typed_name.trim(), role: "payee", ...options.client },
        now: options.now,
      },
    )
    : ok([]);
  if (!signatures.ok) return signatures;
  const kept: Record<string, string> = { ...details.public };
  if (cardLastFour !== null) kept.last_four = cardLastFour;
  if (details.secret !== null) {
    kept.account_sealed = await deps.secretBox.sealText(details.secret);
  }
  return await database.writer.write(async (tx) => {
    const stored = await storeSignatures(tx, payout.id, signatures.value);
    if (!stored.ok) return tx.abort(stored);
    const selected = await selectMethod(tx, payout.id, {
      paymentMethodId: modality.id,
      details: details.railHints,
      kept,
    }, options.now);
    return selected.ok ? selected : tx.abort(selected);
  });
}

/**
 * A fresh link to the payee at their own request, within the hourly resend allowance and while
 * the payout can still be acted on or followed.
 */
export async function renewPayeeLink(
  database: Database,
  notifications: NotificationSettings,
  link: PortalLink,
  realNow: number,
): Promise<"sent" | "rate_limited" | "closed"> {
  const now = await linkNow(database, link, realNow);
  return await database.writer.write((tx) =>
    resendPayeeLink(tx, notifications, link.payoutId, { realNow, domainNow: now })
  );
}

const V1_DISBURSEMENT_ID = /^dsb_[0-9A-Za-z]{22}$/;

/**
 * `payee_url`'s button: a fresh link to the payee of a /v1 disbursement, on the channel the
 * company has on file. Nothing is told back: an unknown id, a rate-limited or a closed payout
 * look the same.
 */
export async function sendLinkOfV1Disbursement(
  databases: Readonly<Record<Environment, Database>>,
  notificationsOf: (environment: Environment) => NotificationSettings,
  disbursementId: string,
  realNow: number,
): Promise<void> {
  if (!V1_DISBURSEMENT_ID.test(disbursementId)) return;
  for (const environment of ["test", "live"] as const) {
    const database = databases[environment];
    const payout = await v1DisbursementPayout(database.readClient, disbursementId);
    if (!payout) continue;
    const now = await domainNow(database, payout.companyId, realNow);
    await database.writer.write((tx) =>
      resendPayeeLink(tx, notificationsOf(environment), payout.payoutId, {
        realNow,
        domainNow: now,
      })
    );
  }
}
