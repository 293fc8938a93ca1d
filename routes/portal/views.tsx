/** @jsxImportSource hono/jsx */
/**
 * Portal pages (contract §9): server-rendered, no script, one column that fits a phone, every input
 * labelled, errors announced and tied to their fields. hono/jsx escapes every value it renders.
 */
import type { Child } from "hono/jsx";
import type { PortalDocument, PortalPayout } from "../../lib/portal/service.ts";
import { type FieldProblem, postageCodes, usStates } from "../../lib/portal/method_details.ts";
import type { PortalText } from "../../lib/portal/portal_text.ts";
import { formatDollars } from "../../lib/platform/money.ts";
import { type ModalityCode, modalityOf } from "../../lib/payouts/states.ts";
import type { Locale } from "./language.ts";

export const portalCss = `
*{box-sizing:border-box}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#111;background:#f6f7f9}
header{background:#0b3d91;color:#fff;padding:.75rem 1rem;display:flex;flex-wrap:wrap;justify-content:space-between;gap:.25rem 1rem}
header p{margin:0;font-weight:600}
header a{color:#fff}
header a[aria-current]{font-weight:600;text-decoration:none}
main{max-width:36rem;margin:0 auto;padding:1rem}
h1{font-size:1.45rem;line-height:1.25;margin:.5rem 0 1rem}
h2{font-size:1.1rem;margin:1.25rem 0 .5rem}
.card{background:#fff;border:1px solid #c9ced6;border-radius:.5rem;padding:1rem;margin:0 0 1rem}
.virtual-card{width:100%;max-width:22rem;height:14rem;border:0}
.amount{font-size:2rem;font-weight:700;margin:.25rem 0}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
.hint{display:block;font-weight:400;color:#444;font-size:.9rem}
input[type=text],input[type=email],input[type=tel],select{width:100%;font-size:1rem;padding:.6rem;border:2px solid #555;border-radius:.35rem;background:#fff;color:#111}
input[aria-invalid=true],select[aria-invalid=true]{border-color:#b00020}
.check{display:flex;gap:.6rem;align-items:flex-start;margin:.75rem 0;font-weight:400}
.check input{width:1.4rem;height:1.4rem;margin-top:.1rem;flex:none}
fieldset{border:0;padding:0;margin:0}
legend{font-weight:600;margin:.5rem 0}
.option{display:flex;gap:.6rem;align-items:center;border:2px solid #c9ced6;border-radius:.4rem;padding:.7rem;margin:.5rem 0;font-weight:400;background:#fff}
.option input{width:1.3rem;height:1.3rem;flex:none}
button{display:block;width:100%;font-size:1.05rem;font-weight:600;padding:.8rem;margin:1rem 0 0;border:0;border-radius:.4rem;background:#0b3d91;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#0b3d91;border:2px solid #0b3d91}
button.danger{background:#fff;color:#b00020;border:2px solid #b00020}
:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
.error{color:#b00020;font-weight:600}
.errors{border:2px solid #b00020;border-radius:.4rem;padding:.5rem 1rem;background:#fff5f5}
.notice{border-left:4px solid #0b3d91;padding:.5rem 1rem;background:#eef3fb}
ol.timeline{padding-left:1.2rem}
.code{font-size:1.6rem;letter-spacing:.3em;text-align:center}
a{color:#0b3d91}
footer{max-width:36rem;margin:0 auto;padding:1rem;color:#444;font-size:.85rem}
`;

export function Page(
  props: { locale: Locale; title: string; company?: string; children: Child },
) {
  const { language, text, switchHrefs } = props.locale;
  return (
    <html lang={language}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{props.title}</title>
        <link rel="stylesheet" href="/portal/assets/portal.css" />
      </head>
      <body>
        <header>
          <p>{props.company ? text.page.paymentFrom(props.company) : text.page.portalName}</p>
          <nav aria-label={text.page.languageSwitch}>
            <a
              href={switchHrefs.en}
              lang="en"
              hreflang="en"
              aria-current={language === "en" ? "true" : undefined}
            >
              English
            </a>
            {" | "}
            <a
              href={switchHrefs.es}
              lang="es"
              hreflang="es"
              aria-current={language === "es" ? "true" : undefined}
            >
              Español
            </a>
          </nav>
        </header>
        <main id="main">
          <h1>{props.title}</h1>
          {props.children}
        </main>
        <footer>{text.page.footer}</footer>
      </body>
    </html>
  );
}

/** Problems listed at the top (announced), each linking to its field. */
export function Problems(props: { t: PortalText; problems: readonly FieldProblem[] }) {
  if (props.problems.length === 0) return null;
  return (
    <div class="errors" role="alert" tabindex={-1} id="problems">
      <p class="error">{props.t.page.problemsHeading}</p>
      <ul>
        {props.problems.map((p) => (
          <li>
            {p.field === "form" ? p.message : <a href={`#${p.field}`}>{p.message}</a>}
          </li>
        ))}
      </ul>
    </div>
  );
}

export function Csrf(props: { token: string }) {
  return <input type="hidden" name="csrf" value={props.token} />;
}

interface FieldProps {
  name: string;
  label: string;
  hint?: string;
  value?: string;
  type?: "text" | "email" | "tel";
  autocomplete?: string;
  inputmode?: "numeric" | "tel" | "email" | "text";
  problems: readonly FieldProblem[];
}

export function Field(props: FieldProps) {
  const problem = props.problems.find((p) => p.field === props.name);
  const describedBy = [props.hint ? `${props.name}-hint` : "", problem ? `${props.name}-error` : ""]
    .filter(Boolean).join(" ");
  return (
    <>
      <label for={props.name}>
        {props.label}
        {props.hint ? <span class="hint" id={`${props.name}-hint`}>{props.hint}</span> : null}
      </label>
      {problem ? <p class="error" id={`${props.name}-error`}>{problem.message}</p> : null}
      <input
        type={props.type ?? "text"}
        id={props.name}
        name={props.name}
        value={props.value ?? ""}
        autocomplete={props.autocomplete ?? "off"}
        inputmode={props.inputmode}
        aria-invalid={problem ? "true" : undefined}
        aria-describedby={describedBy || undefined}
      />
    </>
  );
}

/** A typed-name signature with its consent box: the portal's one way to sign. */
export function Signature(
  props: {
    nameLabel: string;
    consentLabel: string;
    typedName?: string;
    problems: readonly FieldProblem[];
  },
) {
  return (
    <>
      <Field
        name="typed_name"
        label={props.nameLabel}
        autocomplete="name"
        value={props.typedName}
        problems={props.problems}
      />
      <Consent name="consent" label={props.consentLabel} problems={props.problems} />
    </>
  );
}

export function Consent(props: { name: string; label: string; problems: readonly FieldProblem[] }) {
  const problem = props.problems.find((p) => p.field === props.name);
  return (
    <>
      {problem ? <p class="error" id={`${props.name}-error`}>{problem.message}</p> : null}
      <label class="check" for={props.name}>
        <input
          type="checkbox"
          id={props.name}
          name={props.name}
          value="yes"
          aria-invalid={problem ? "true" : undefined}
        />
        <span>{props.label}</span>
      </label>
    </>
  );
}

/** A postage CODE's name in the page's language; an unknown CODE as it is. */
const postageName = (t: PortalText, code: string) => {
  const known = postageCodes.find((c) => c === code);
  return known ? t.postage[known] : code;
};

/** The chosen method in the page's language, from what the payout kept; null before a choice. */
export function methodSummary(
  t: PortalText,
  details: Readonly<Record<string, string>> | null,
): string | null {
  if (!details?.modality) return null;
  const modality = modalityOf(details.modality);
  return modality ? t.methodSummary[modality.code](details) : null;
}

export function AmountCard(props: { t: PortalText; payout: PortalPayout }) {
  const { payout, t } = props;
  return (
    <div class="card">
      <p>{t.payment.isPayingYou(payout.companyName)}</p>
      <p class="amount">{formatDollars(payout.amountCents)}</p>
      {payout.memo ? <p>{t.payment.memo(payout.memo)}</p> : null}
    </div>
  );
}

export function DocumentList(
  props: { t: PortalText; base: string; documents: readonly PortalDocument[] },
) {
  return (
    <ul>
      {props.documents.map((d) => (
        <li>
          <a href={`${props.base}/documents/${d.id}`}>{props.t.payment.document(d.name)}</a>
        </li>
      ))}
    </ul>
  );
}

export function MethodChoice(
  props: { t: PortalText; base: string; payout: PortalPayout },
) {
  const { t } = props;
  const methods = props.payout.allowedPaymentMethodIds
    .map((id) => modalityOf(id))
    .filter((m) => m !== undefined);
  return (
    <form method="get" action={`${props.base}/method`}>
      <fieldset>
        <legend>{t.choice.legend}</legend>
        {methods.map((m, index) => (
          <label class="option" for={`method-${m.code}`}>
            <input
              type="radio"
              name="method"
              id={`method-${m.code}`}
              value={m.code}
              checked={index === 0}
            />
            <span>{t.methods[m.code]}</span>
          </label>
        ))}
      </fieldset>
      <button type="submit">{t.choice.continue}</button>
    </form>
  );
}

/** The fields of one method's form. */
/**
 * A debit card typed at the provider's hosted page: before, a link there; after, its token (and
 * last four) as hidden fields, with the name on the card and its ZIP for the $0 validation.
 */
function HostedCardFields(
  props: {
    values: Readonly<Record<string, string>>;
    problems: readonly FieldProblem[];
    t: PortalText;
    hostedCardLink: string;
  },
) {
  const { values, problems, t } = props;
  const field = t.fields;
  const missing = problems.find((p) => p.field === "card_token_id");
  if (!values.card_token_id) {
    return (
      <>
        {missing ? <p class="error">{missing.message}</p> : null}
        <p>{field.cardHosted}</p>
        <p>
          <a href={props.hostedCardLink}>{field.cardHostedLink}</a>
        </p>
      </>
    );
  }
  return (
    <>
      <input type="hidden" name="card_token_id" value={values.card_token_id} />
      <input type="hidden" name="card_last_four" value={values.card_last_four ?? ""} />
      <p>{field.cardEntered}</p>
      <Field
        name="cardholder_name"
        label={field.cardholderName}
        autocomplete="cc-name"
        value={values.cardholder_name}
        problems={problems}
      />
      <Field
        name="zip_code"
        label={field.zipCode}
        inputmode="numeric"
        autocomplete="postal-code"
        value={values.zip_code}
        problems={problems}
      />
    </>
  );
}

/** A bank account's routing number and its number typed twice (ACH and instant bank payments). */
function BankAccountFields(
  props: {
    values: Readonly<Record<string, string>>;
    problems: readonly FieldProblem[];
    t: PortalText;
  },
) {
  const { values, problems } = props;
  const field = props.t.fields;
  return (
    <>
      <Field
        name="routing_number"
        label={field.routingNumber}
        hint={field.routingHint}
        inputmode="numeric"
        value={values.routing_number}
        problems={problems}
      />
      <Field
        name="account_number"
        label={field.accountNumber}
        inputmode="numeric"
        problems={problems}
      />
      <Field
        name="account_number_confirm"
        label={field.accountNumberAgain}
        inputmode="numeric"
        problems={problems}
      />
    </>
  );
}

/** An instant bank payment: the account its payment goes to over Real-Time Payments. */
function InstantBankFields(
  props: {
    values: Readonly<Record<string, string>>;
    problems: readonly FieldProblem[];
    t: PortalText;
  },
) {
  const { values, problems, t } = props;
  const field = t.fields;
  return (
    <>
      <input type="hidden" name="instant_to" value="bank" />
      <Field
        name="account_holder"
        label={field.accountHolder}
        autocomplete="name"
        value={values.account_holder}
        problems={problems}
      />
      <BankAccountFields values={values} problems={problems} t={t} />
    </>
  );
}

export function MethodFields(
  props: {
    modality: ModalityCode;
    values: Readonly<Record<string, string>>;
    problems: readonly FieldProblem[];
    fixedPostage: string | null;
    /** The codes the payee may pick; absent or null: every code. */
    postageCodes?: readonly string[] | null;
    t: PortalText;
    /** Where the payee goes to type the card at the provider's hosted page. */
    hostedCardLink: string;
    /** The instant deposit page, to switch between a debit card and a bank account. */
    instantLink?: string;
  },
) {
  const { values, problems, t } = props;
  const field = t.fields;
  if (props.modality === "instant_deposit") {
    const link = props.instantLink ?? "";
    if (values.instant_to === "bank") {
      return (
        <>
          <InstantBankFields values={values} problems={problems} t={t} />
          <p>
            <a href={link}>{field.instantCardLink}</a>
          </p>
        </>
      );
    }
    return (
      <>
        <HostedCardFields {...props} />
        <p>
          <a href={`${link}&to=bank`}>{field.instantBankLink}</a>
        </p>
      </>
    );
  }
  switch (props.modality) {
    case "ach":
      return (
        <>
          <BankAccountFields values={values} problems={problems} t={t} />
          <fieldset>
            <legend>{field.accountType}</legend>
            {(["checking", "savings"] as const).map((type) => (
              <label class="option" for={`account_type-${type}`}>
                <input
                  type="radio"
                  name="account_type"
                  id={`account_type-${type}`}
                  value={type}
                  checked={(values.account_type ?? "checking") === type}
                />
                <span>{field[type]}</span>
              </label>
            ))}
          </fieldset>
        </>
      );
    case "check": {
      const stateProblem = problems.find((p) => p.field === "state");
      return (
        <>
          <Field
            name="address_one"
            label={field.street}
            autocomplete="address-line1"
            value={values.address_one}
            problems={problems}
          />
          <Field
            name="address_two"
            label={field.streetTwo}
            autocomplete="address-line2"
            value={values.address_two}
            problems={problems}
          />
          <Field
            name="city"
            label={field.city}
            autocomplete="address-level2"
            value={values.city}
            problems={problems}
          />
          <label for="state">{field.state}</label>
          {stateProblem ? <p class="error" id="state-error">{stateProblem.message}</p> : null}
          <select
            id="state"
            name="state"
            autocomplete="address-level1"
            aria-invalid={stateProblem ? "true" : undefined}
          >
            <option value="">{t.page.choose}</option>
            {usStates.map((s) => (
              <option key={s} value={s} selected={values.state === s}>{s}</option>
            ))}
          </select>
          <Field
            name="zip_code"
            label={field.zipCode}
            inputmode="numeric"
            autocomplete="postal-code"
            value={values.zip_code}
            problems={problems}
          />
          {props.fixedPostage
            ? (
              <p>
                {field.fixedPostage(postageName(t, props.fixedPostage))}
              </p>
            )
            : (
              <fieldset>
                <legend id="postage">{field.postageLegend}</legend>
                {problems.some((p) => p.field === "postage")
                  ? <p class="error">{problems.find((p) => p.field === "postage")!.message}</p>
                  : null}
                {postageCodes.filter((code) => props.postageCodes?.includes(code) ?? true).map((
                  code,
                ) => (
                  <label class="option" for={`postage-${code}`}>
                    <input
                      type="radio"
                      name="postage"
                      id={`postage-${code}`}
                      value={code}
                      checked={(values.postage ?? "FC") === code}
                      aria-invalid={problems.some((x) => x.field === "postage")
                        ? "true"
                        : undefined}
                    />
                    <span>{t.postage[code]}</span>
                  </label>
                ))}
              </fieldset>
            )}
        </>
      );
    }
    case "venmo":
      return (
        <Field
          name="phone"
          label={field.venmoPhone}
          type="tel"
          autocomplete="tel"
          value={values.phone}
          problems={problems}
        />
      );
    case "paypal":
    case "vcc":
    case "digital_check":
      return (
        <Field
          name="email"
          label={props.modality === "paypal" ? field.paypalEmail : field.email}
          type="email"
          autocomplete="email"
          value={values.email}
          problems={problems}
        />
      );
  }
}

export function Timeline(props: { t: PortalText; payout: PortalPayout }) {
  const { t } = props;
  return (
    <ol class="timeline">
      {props.payout.timeline.map((step) => (
        <li>
          {t.status.labels[step.status]} — {t.status.time(step.at)}
        </li>
      ))}
    </ol>
  );
}
