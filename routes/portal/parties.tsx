/** @jsxImportSource hono/jsx */
/**
 * Authorization parties in the portal (contract §9, step 3): the payee's list of parties to ask,
 * and a party's own page to approve or decline.
 */
import type { PortalDocument, PortalParty, PortalPayout } from "../../lib/portal/service.ts";
import type { FieldProblem } from "../../lib/portal/method_details.ts";
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
