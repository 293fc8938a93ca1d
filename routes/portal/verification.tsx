/** @jsxImportSource hono/jsx */
/**
 * The portal's first step (contract §9, step 1): a one-time code to the link holder's channels
 * (shown masked) before the payment is shown; a lock after too many wrong codes.
 */
import type { PortalLink, PortalParty, PortalPayout } from "../../lib/portal/service.ts";
import type { FieldProblem } from "../../lib/portal/method_details.ts";
import type { PortalText } from "../../lib/portal/portal_text.ts";
import type { Locale } from "./language.ts";
import { Csrf, Field, Page, Problems } from "./views.tsx";

const maskEmail = (email: string | null) => {
  if (!email) return null;
  const [local, domain] = email.split("@");
  return `${local.slice(0, 1)}•••@${domain}`;
};

const maskPhone = (t: PortalText, phone: string | null) =>
  phone ? t.verify.phoneEnding(phone.replace(/\D/g, "").slice(-4)) : null;

/** Where the code goes, masked: the payee's channels, or the party's own contact. */
function destinationOf(t: PortalText, payout: PortalPayout, party: PortalParty | null): string {
  if (party === null) {
    const channels = [maskEmail(payout.email), maskPhone(t, payout.phone)]
      .filter((d): d is string => d !== null);
    return channels.length > 0 ? t.verify.either(channels) : t.verify.anyChannel;
  }
  return maskEmail(party.companyEmail ?? party.enteredEmail) ??
    maskPhone(t, party.companyPhone ?? party.enteredPhone) ?? t.verify.anyChannel;
}

export function VerifyPage(props: {
  locale: Locale;
  base: string;
  csrf: string;
  link: PortalLink;
  payout: PortalPayout;
  /** The party a party's link belongs to; null on the payee's link. */
  party: PortalParty | null;
  realNow: number;
  problems: readonly FieldProblem[];
  notice?: string;
}) {
  const { locale, base, link, payout, problems, realNow } = props;
  const t = locale.text;
  if (link.lockedUntil !== null && link.lockedUntil > realNow) {
    const minutes = Math.ceil((link.lockedUntil - realNow) / 60_000);
    return (
      <Page locale={locale} title={t.verify.lockedTitle} company={payout.companyName}>
        <Problems t={t} problems={problems} />
        <p role="alert">{t.verify.locked(minutes)}</p>
      </Page>
    );
  }
  const destination = destinationOf(t, payout, props.party);
  const codeLive = link.codeExpiresAt !== null && link.codeExpiresAt > realNow;
  return (
    <Page locale={locale} title={t.verify.title} company={payout.companyName}>
      <Problems t={t} problems={problems} />
      {props.notice ? <p class="notice" role="status">{props.notice}</p> : null}
      {codeLive
        ? (
          <>
            <form method="post" action={`${base}/verify`}>
              <Csrf token={props.csrf} />
              <Field
                name="code"
                label={t.verify.codeLabel}
                hint={t.verify.codeHint(destination)}
                inputmode="numeric"
                autocomplete="one-time-code"
                problems={problems}
              />
              <button type="submit">{t.verify.confirm}</button>
            </form>
            <form method="post" action={`${base}/code`}>
              <Csrf token={props.csrf} />
              <button type="submit" class="secondary">{t.verify.newCode}</button>
            </form>
          </>
        )
        : (
          <form method="post" action={`${base}/code`}>
            <Csrf token={props.csrf} />
            <p>{t.verify.willSend(destination)}</p>
            <button type="submit">{t.verify.sendCode}</button>
          </form>
        )}
    </Page>
  );
}

/** Why a new code was not sent. */
export function codeNotSentProblem(
  t: PortalText,
  code: "code_too_soon" | "link_locked",
): FieldProblem {
  return {
    field: "form",
    message: code === "code_too_soon" ? t.verify.tooSoon : t.verify.tooManyWrong,
  };
}

/** Why a code was not accepted; a wrong one says how many tries are left. */
export function codeRefusedProblem(
  t: PortalText,
  refusal: { code: "code_wrong" | "code_expired" | "link_locked"; attemptsLeft: number },
): FieldProblem {
  switch (refusal.code) {
    case "code_wrong":
      return { field: "code", message: t.verify.wrongCode(refusal.attemptsLeft) };
    case "code_expired":
      return { field: "form", message: t.verify.codeExpired };
    case "link_locked":
      return { field: "form", message: t.verify.tooManyWrong };
  }
}
