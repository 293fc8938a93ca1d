/** @jsxImportSource hono/jsx */
/**
 * Authorization parties in the portal (DESIGN 9, step 3): the payee's list of parties to ask, the
 * check of a contact the payee enters for one, and a party's own page to approve or decline.
 */
import type { PortalDocument, PortalParty, PortalPayout } from "../../lib/portal/store.ts";
import {
  type FieldProblem,
  isPlausibleEmail,
  normalizeUsPhone,
} from "../../lib/portal/method_details.ts";
import type { PortalText } from "../../lib/portal/portal_text.ts";
import type { Locale } from "./language.ts";
import { formatDollars } from "../../lib/platform/money.ts";
import { Csrf, DocumentList, Field, Page, Problems, Signature } from "./views.tsx";

/** One party on the payee's page: its status, and the form that asks it (again). */
export function PartyRow(props: {
  t: PortalText;
  base: string;
  party: PortalParty;
  csrf: string;
  problems: readonly FieldProblem[];
}) {
  const { party, base, t } = props;
  const supplied = party.companyEmail !== null || party.companyPhone !== null;
  const prefix = `party-${party.partyUuid}`;
  const problems = props.problems.filter((p) => p.field.startsWith(prefix));
  const status = party.status === "endorsed"
    ? t.approvals.approved
    : party.status === "declined"
    ? t.approvals.declined
    : party.linkSent
    ? t.approvals.asked
    : t.approvals.notAsked;
  return (
    <div class="card">
      <h2>{party.name}</h2>
      <p>{t.approvals.status(status)}</p>
      {party.status !== "pending"
        ? null
        : (
          <form method="post" action={`${base}/parties/${encodeURIComponent(party.partyUuid)}`}>
            <Csrf token={props.csrf} />
            {supplied
              ? (
                <p>
                  {t.approvals.suppliedContacts(
                    [party.companyEmail, party.companyPhone].filter((c): c is string => Boolean(c)),
                  )}
                </p>
              )
              : (
                <>
                  <p>{t.approvals.enterContact}</p>
                  <Field
                    name={`${prefix}-email`}
                    label={t.approvals.emailLabel}
                    type="email"
                    value={party.enteredEmail ?? ""}
                    problems={problems}
                  />
                  <Field
                    name={`${prefix}-phone`}
                    label={t.approvals.phoneLabel}
                    type="tel"
                    value={party.enteredPhone ?? ""}
                    problems={problems}
                  />
                </>
              )}
            <button type="submit" class={party.linkSent ? "secondary" : undefined}>
              {party.linkSent ? t.approvals.resend(party.name) : t.approvals.ask(party.name)}
            </button>
          </form>
        )}
    </div>
  );
}

/**
 * The contact the payee entered for a party the company gave none for: an e-mail and/or a US
 * phone, and not the payee's own. Problems name the form's fields.
 */
export function checkPartyContact(
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

/** A party's own page: approve or decline, or what it already decided. */
export function PartyPage(props: {
  locale: Locale;
  base: string;
  csrf: string;
  payout: PortalPayout;
  party: PortalParty | null;
  documents: readonly PortalDocument[];
  problems: readonly FieldProblem[];
}) {
  const { locale, base, payout, party, problems } = props;
  const t = locale.text;
  const payeeName = [payout.firstName, payout.lastName].filter(Boolean).join(" ") ||
    t.party.payeeFallback;
  if (party?.status === "endorsed" || party?.status === "declined") {
    return (
      <Page locale={locale} title={t.party.thanksTitle} company={payout.companyName}>
        <p role="status">
          {t.party.decided({
            endorsed: party.status === "endorsed",
            amount: formatDollars(payout.amountCents),
            payee: payeeName,
          })}
        </p>
      </Page>
    );
  }
  if (!party || payout.status !== "awaiting_endorsement") {
    return (
      <Page locale={locale} title={t.party.notNeededTitle} company={payout.companyName}>
        <p>{t.party.notNeeded}</p>
      </Page>
    );
  }
  return (
    <Page locale={locale} title={t.party.title} company={payout.companyName}>
      <Problems t={t} problems={problems} />
      <div class="card">
        <p>{t.party.isPaying(payout.companyName, payeeName)}</p>
        <p class="amount">{formatDollars(payout.amountCents)}</p>
        <p>{t.party.needed(party.name)}</p>
      </div>
      {props.documents.length > 0
        ? (
          <>
            <p>{t.party.pleaseRead}</p>
            <DocumentList t={t} base={base} documents={props.documents} />
          </>
        )
        : null}
      <form method="post" action={`${base}/endorse`}>
        <Csrf token={props.csrf} />
        <Signature
          nameLabel={t.party.nameLabel}
          consentLabel={t.party.consentLabel(payeeName)}
          problems={problems}
        />
        <button type="submit">{t.party.approve}</button>
      </form>
      <form method="post" action={`${base}/decline`}>
        <Csrf token={props.csrf} />
        <h2>{t.party.declineHeading}</h2>
        <Field
          name="decline_name"
          label={t.party.declineNameLabel}
          autocomplete="name"
          problems={problems}
        />
        <button type="submit" class="danger">{t.party.decline}</button>
      </form>
    </Page>
  );
}
