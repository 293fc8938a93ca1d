/** @jsxImportSource hono/jsx */
/**
 * The payee portal (contract §9): a link → a one-time code → documents to sign → endorsements →
 * the choice of a method → confirmation and a status page that follows the payout. Routes only
 * read the form, call lib/portal/service.ts and render; every POST carries the session's CSRF
 * token, and every refusal renders the same form again with the reason, having stored nothing
 * (a wrong code is counted). Each page is in the language `language.ts` chooses, with texts from
 * lib/portal/portal_text.ts.
 */
import { explainFailure } from "../../lib/payouts/failure_reasons.ts";
import { type Context, Hono } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import type { Database } from "../../db/client.ts";
import { formatDollars } from "../../lib/platform/money.ts";
import {
  askParty,
  checkCode,
  choosableNow,
  chooseMethod,
  decideAsParty,
  documentsFor,
  documentsToSign,
  findLink,
  linkDocument,
  linkNow,
  offeredMethod,
  type PortalLink,
  portalParties,
  portalParty,
  type PortalPayout,
  portalPayout,
  renewPayeeLink,
  sendCode,
  signAsPayee,
} from "../../lib/portal/service.ts";
import { payoutRuntime, runtimeSettingsOf } from "../../lib/payouts/settings.ts";
import type { Environment } from "../../lib/platform/config.ts";
import type { FieldProblem } from "../../lib/portal/method_details.ts";
import type { PortalText } from "../../lib/portal/portal_text.ts";
import { type PortalSession, PortalSessions } from "../../lib/portal/session.ts";
import { type ModalityCode, modalityOf } from "../../lib/payouts/states.ts";
import { type PayoutDigitalCheck, payoutDigitalCheck } from "../../lib/checks/digital.ts";
import { type CardEmbed, cardEmbedOf } from "../../lib/cards/service.ts";
import { hostedCardPage, returnedCardToken } from "../../lib/instant/service.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { peerAddressOf } from "../peer.ts";
import { chooseLocale, type Locale, recordedLocale } from "./language.ts";
import { PartyPage, PartyRow } from "./parties.tsx";
import { codeNotSentProblem, codeRefusedProblem, VerifyPage } from "./verification.tsx";
import {
  AmountCard,
  Csrf,
  DocumentList,
  MethodChoice,
  MethodFields,
  methodSummary,
  Page,
  portalCss,
  Problems,
  Signature,
  Timeline,
} from "./views.tsx";

const SESSION_COOKIE = "portal_session";

/** Strict headers on every portal response: no framing, no referrer (the path is a secret). */
export const portalSecurityHeaders: Readonly<Record<string, string>> = {
  "Content-Security-Policy":
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cross-Origin-Opener-Policy": "same-origin",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
  "Cache-Control": "no-store",
};

interface Visit {
  readonly token: string;
  readonly base: string;
  readonly environment: Environment;
  readonly database: Database;
  readonly link: PortalLink;
  readonly realNow: number;
  readonly domainNow: number;
  readonly session: PortalSession;
  readonly csrf: string;
  readonly locale: Locale;
  /** The locale's texts. */
  readonly t: PortalText;
}

type PortalContext = Context<AppEnv>;

export function portalRoutes(deps: AppDeps): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const sessions = new PortalSessions(deps.jwtSecret);
  const runtimeOf = (environment: Environment) =>
    payoutRuntime(environment, runtimeSettingsOf(deps.config));
  // Imported at the first page that needs a provider (a card, instant deposit): the simulators it
  // binds are not loaded before the API answers.
  const reachesOf = async (environment: Environment, database: Database) =>
    (await import("../../lib/payouts/provider_reaches.ts")).providerReachesOf(
      environment,
      runtimeSettingsOf(deps.config),
      database,
      deps.secretBox,
    );

  app.use(async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(portalSecurityHeaders)) {
      if (!c.res.headers.has(name)) c.res.headers.set(name, value);
    }
  });

  const secure = deps.config.baseUrl.startsWith("https:");

  app.onError((error, c) => {
    const id = c.get("requestId");
    console.error(JSON.stringify({
      time: new Date().toISOString(),
      level: "error",
      msg: "portal error",
      request_id: id,
      error: error instanceof Error ? error.stack ?? error.message : String(error),
    }));
    // The page's own locale when the failure came after it was chosen; the browser's before.
    const locale = recordedLocale(c) ?? chooseLocale(c, {
      base: new URL(c.req.url).pathname.split("/").slice(0, 3).join("/"),
      holder: null,
      secure,
    });
    const t = locale.text;
    return c.html(
      <Page locale={locale} title={t.error.title}>
        <p>{t.error.body}</p>
        <p>{t.error.reference(id)}</p>
      </Page>,
      500,
    );
  });

  app.get("/assets/portal.css", (c) => {
    c.header("Content-Type", "text/css; charset=utf-8");
    c.header("Cache-Control", "public, max-age=3600");
    return c.body(portalCss);
  });

  const clientOf = (c: PortalContext) => {
    return { ip: peerAddressOf(c), userAgent: c.req.header("User-Agent")?.slice(0, 512) ?? null };
  };

  /** The link of the token, with the browser's session; a page instead when there is none. */
  const visit = async (c: PortalContext): Promise<Visit | Response> => {
    const token = c.req.param("token") ?? "";
    const realNow = deps.clock.now();
    const found = await findLink(deps.databases, token);
    const base = `/portal/${encodeURIComponent(token)}`;
    const locale = chooseLocale(c, { base, holder: found?.link.language ?? null, secure });
    const t = locale.text;
    if (!found) {
      return c.html(
        <Page locale={locale} title={t.link.unknownTitle}>
          <p>{t.link.unknownBody}</p>
        </Page>,
        404,
      );
    }
    const database = deps.databases[found.environment];
    const now = await linkNow(database, found.link, realNow);
    if (found.link.replacedAt !== null || found.link.expiresAt <= now) {
      const renewable = found.link.partyUuid === null;
      return c.html(
        <Page locale={locale} title={t.link.expiredTitle}>
          <p>{found.link.replacedAt !== null ? t.link.replaced : t.link.expired}</p>
          {renewable
            ? (
              <form method="post" action={`${base}/renew`}>
                <p>{t.link.renewOffer}</p>
                <button type="submit">{t.link.renewButton}</button>
              </form>
            )
            : <p>{t.link.partyRenew}</p>}
        </Page>,
        410,
      );
    }
    let session = await sessions.decode(getCookie(c, SESSION_COOKIE), realNow);
    if (!session) {
      session = sessions.start(realNow);
      await writeSession(c, base, session);
    }
    return {
      token,
      base,
      environment: found.environment,
      database,
      link: found.link,
      realNow,
      domainNow: now,
      session,
      csrf: await sessions.csrfToken(session),
      locale,
      t,
    };
  };

  const writeSession = async (c: PortalContext, base: string, session: PortalSession) => {
    setCookie(c, SESSION_COOKIE, await sessions.encode(session), {
      path: base,
      httpOnly: true,
      sameSite: "Lax",
      secure,
      maxAge: Math.floor((session.expiresAt - deps.clock.now()) / 1000),
    });
  };

  const verified = (v: Visit) => v.session.verifiedLinkId === v.link.id;

  const formOf = async (c: PortalContext): Promise<Record<string, string>> => {
    const body = await c.req.parseBody();
    const form: Record<string, string> = {};
    for (const [name, value] of Object.entries(body)) {
      if (typeof value === "string") form[name] = value;
    }
    return form;
  };

  /** Runs a POST: the visit, the CSRF check, then the action; a forged form changes nothing. */
  const post = (
    action: (c: PortalContext, v: Visit, form: Record<string, string>) => Promise<Response>,
    options: { needsVerification: boolean } = { needsVerification: true },
  ) =>
  async (c: PortalContext) => {
    const v = await visit(c);
    if (v instanceof Response) return v;
    const form = await formOf(c);
    if (!await sessions.csrfValid(v.session, form.csrf)) {
      return await render(c, v, {
        status: 403,
        problems: [{ field: "form", message: v.t.form.forged }],
      });
    }
    if (options.needsVerification && !verified(v)) return await render(c, v, {});
    return await action(c, v, form);
  };

  const seeOther = (c: PortalContext, v: Visit, suffix = "") =>
    c.redirect(`${v.base}${suffix}`, 303);

  interface RenderOptions {
    readonly status?: 200 | 400 | 403 | 409 | 422 | 429;
    readonly problems?: readonly FieldProblem[];
    readonly notice?: string;
  }

  /** The page this link is at now: verification, documents, endorsements, choice or status. */
  const render = async (c: PortalContext, v: Visit, options: RenderOptions) => {
    const status = options.status ?? 200;
    const problems = options.problems ?? [];
    const { locale, t } = v;
    const payout = await portalPayout(v.database, v.link, deps.config.checkMicrFont);
    const party = v.link.partyUuid === null
      ? null
      : await portalParty(v.database, payout.id, v.link.partyUuid);
    if (!verified(v)) {
      return c.html(
        <VerifyPage
          locale={locale}
          base={v.base}
          csrf={v.csrf}
          link={v.link}
          payout={payout}
          party={party}
          realNow={v.realNow}
          problems={problems}
          notice={options.notice}
        />,
        status,
      );
    }
    if (v.link.partyUuid !== null) {
      const documents = await documentsFor(v.database, payout.id, "party");
      return c.html(
        <PartyPage
          locale={locale}
          base={v.base}
          csrf={v.csrf}
          payout={payout}
          party={party}
          documents={documents}
          problems={problems}
        />,
        status,
      );
    }
    if (payout.status === "escheated") {
      return c.html(
        <Page locale={locale} title={t.payment.escheatedTitle} company={payout.companyName}>
          <p>{t.payment.escheated(payout.companyName, payout.escheatedState ?? "")}</p>
        </Page>,
        status,
      );
    }
    if (payout.status === "canceled") {
      return c.html(
        <Page locale={locale} title={t.payment.canceledTitle} company={payout.companyName}>
          <p>{t.payment.canceled(payout.companyName)}</p>
        </Page>,
        status,
      );
    }
    const actionable = payout.status === "awaiting_endorsement" ||
      payout.status === "modality_offered";
    if (actionable) {
      const documents = await documentsToSign(v.database, payout.id);
      if (documents.length > 0) {
        return c.html(
          <Page locale={locale} title={t.sign.title} company={payout.companyName}>
            <Problems t={t} problems={problems} />
            <AmountCard t={t} payout={payout} />
            <p>{t.sign.intro(payout.companyName)}</p>
            <DocumentList t={t} base={v.base} documents={documents} />
            <form method="post" action={`${v.base}/sign`}>
              <Csrf token={v.csrf} />
              <Signature
                nameLabel={t.sign.nameLabel}
                consentLabel={t.sign.consentLabel}
                problems={problems}
              />
              <button type="submit">{t.sign.button}</button>
            </form>
          </Page>,
          status,
        );
      }
    }
    if (payout.status === "awaiting_endorsement") {
      const parties = await portalParties(v.database, payout.id);
      return c.html(
        <Page locale={locale} title={t.approvals.title} company={payout.companyName}>
          <Problems t={t} problems={problems} />
          {options.notice ? <p class="notice" role="status">{options.notice}</p> : null}
          <AmountCard t={t} payout={payout} />
          <p>{t.approvals.intro}</p>
          {parties.map((party) => (
            <PartyRow t={t} base={v.base} party={party} csrf={v.csrf} problems={problems} />
          ))}
        </Page>,
        status,
      );
    }
    if (choosableNow(payout)) {
      const failed = payout.timeline.some((step) => step.status === "failed");
      const readable = (await documentsFor(v.database, payout.id, "payee"))
        .filter((d) => !d.isSignRequired);
      return c.html(
        <Page locale={locale} title={t.choice.title} company={payout.companyName}>
          <Problems t={t} problems={problems} />
          {failed && payout.failureReason
            ? (
              <p class="notice" role="status">
                {t.choice.failedBefore(
                  explainFailure(payout.failureReason, locale.language).meaning,
                )}
              </p>
            )
            : null}
          <AmountCard t={t} payout={payout} />
          {readable.length > 0
            ? (
              <>
                <p>{t.choice.documentsFrom(payout.companyName)}</p>
                <DocumentList t={t} base={v.base} documents={readable} />
              </>
            )
            : null}
          <MethodChoice t={t} base={v.base} payout={payout} />
        </Page>,
        status,
      );
    }
    // A digital check's status page carries a fresh signed link to the check's PDF.
    const digitalCheck = payout.paymentMethodId === modalityOf("digital_check")?.id
      ? await payoutDigitalCheck(
        v.database.readClient,
        deps.secretBox,
        runtimeOf(v.environment).notifications,
        payout.id,
        v.realNow,
      )
      : null;
    // A virtual card is shown in its issuer's iframe: the page may frame the issuer's origin only.
    const card = payout.paymentMethodId === modalityOf("vcc")?.id
      ? await cardEmbedOf(
        { database: v.database, lithic: (await reachesOf(v.environment, v.database)).lithic },
        payout.id,
        v.realNow,
      )
      : null;
    if (card) {
      c.header(
        "Content-Security-Policy",
        `${portalSecurityHeaders["Content-Security-Policy"]}; frame-src ${card.origin}`,
      );
    }
    return c.html(statusPage(locale, payout, options.notice, digitalCheck, card), status);
  };

  const statusPage = (
    locale: Locale,
    payout: PortalPayout,
    notice?: string,
    digitalCheck: PayoutDigitalCheck | null = null,
    card: CardEmbed | null = null,
  ) => {
    const t = locale.text;
    const summary = methodSummary(t, payout.methodDetails);
    return (
      <Page locale={locale} title={t.status.labels[payout.status]} company={payout.companyName}>
        {notice ? <p class="notice" role="status">{notice}</p> : null}
        {payout.escheatedState !== null
          ? (
            <p class="notice" role="status">
              {t.status.returnedEscheated(payout.companyName, payout.escheatedState)}
            </p>
          )
          : null}
        <AmountCard t={t} payout={payout} />
        {digitalCheck ? <DigitalCheckCard t={t} check={digitalCheck} /> : null}
        {card ? <VirtualCardFrame t={t} card={card} /> : null}
        {summary
          ? (
            <div class="card">
              <p>
                <strong>{t.status.howPaid}</strong> {summary}
              </p>
              {payout.payeeFeeCents > 0
                ? (
                  <p>
                    {t.status.fee(
                      formatDollars(payout.payeeFeeCents),
                      formatDollars(payout.amountCents - payout.payeeFeeCents),
                    )}
                  </p>
                )
                : null}
            </div>
          )
          : null}
        <h2>{t.status.historyHeading}</h2>
        <Timeline t={t} payout={payout} />
        <p>{t.status.comeBack}</p>
      </Page>
    );
  };

  app.get("/:token", async (c) => {
    const v = await visit(c);
    if (v instanceof Response) return v;
    const confirmed = c.req.query("confirmed") === "1" && verified(v);
    return await render(c, v, confirmed ? { notice: v.t.payment.confirmed } : {});
  });

  app.post(
    "/:token/renew",
    async (c) => {
      const token = c.req.param("token");
      const found = await findLink(deps.databases, token);
      const locale = chooseLocale(c, {
        base: `/portal/${encodeURIComponent(token)}`,
        holder: found?.link.language ?? null,
        secure,
      });
      const t = locale.text;
      if (found && found.link.partyUuid === null) {
        const { environment, link } = found;
        const sent = await renewPayeeLink(
          deps.databases[environment],
          runtimeOf(environment).notifications,
          link,
          deps.clock.now(),
        );
        return c.html(
          <Page
            locale={locale}
            title={sent === "sent" ? t.link.renewedTitle : t.link.notRenewedTitle}
          >
            <p role="status">
              {sent === "sent"
                ? t.link.renewed
                : sent === "rate_limited"
                ? t.link.renewLimit(deps.config.limits.RESEND_PER_HOUR_MAX)
                : t.link.closed}
            </p>
          </Page>,
          sent === "rate_limited" ? 429 : 200,
        );
      }
      return c.html(
        <Page locale={locale} title={t.link.unknownTitle}>
          <p>{t.link.unknownShort}</p>
        </Page>,
        404,
      );
    },
  );

  app.post(
    "/:token/code",
    post(async (c, v) => {
      const sent = await sendCode(v.database, v.link, {
        realNow: v.realNow,
        domainNow: v.domainNow,
      });
      if (!sent.ok) {
        const fresh = await visit(c);
        if (fresh instanceof Response) return fresh;
        return await render(c, fresh, {
          status: 429,
          problems: [codeNotSentProblem(fresh.t, sent.code)],
        });
      }
      return seeOther(c, v);
    }, { needsVerification: false }),
  );

  app.post(
    "/:token/verify",
    post(async (c, v, form) => {
      const code = (form.code ?? "").replace(/\s/g, "");
      const checked = await checkCode(v.database, v.link, code, v.realNow);
      if (!checked.ok) {
        const fresh = await visit(c);
        if (fresh instanceof Response) return fresh;
        return await render(c, fresh, {
          status: checked.code === "link_locked" ? 429 : 422,
          problems: [codeRefusedProblem(fresh.t, {
            code: checked.code,
            attemptsLeft: Number(checked.details?.attempts_left ?? 0),
          })],
        });
      }
      // A new session after verification: anything fixed before it is worth nothing now.
      await writeSession(c, v.base, sessions.start(v.realNow, v.link.id));
      return seeOther(c, v);
    }, { needsVerification: false }),
  );

  app.get("/:token/documents/:documentId", async (c) => {
    const v = await visit(c);
    if (v instanceof Response) return v;
    if (!verified(v)) return await render(c, v, {});
    const document = await linkDocument(v.database, v.link, c.req.param("documentId"));
    if (!document) {
      return c.html(
        <Page locale={v.locale} title={v.t.payment.documentNotFoundTitle}>
          <p>{v.t.payment.documentNotFound}</p>
        </Page>,
        404,
      );
    }
    c.header("Content-Type", "application/pdf");
    c.header(
      "Content-Disposition",
      `inline; filename="${document.name.replace(/[^\w.\- ]/g, "_")}.pdf"`,
    );
    // A PDF viewer may run no script of the document's in this origin.
    c.header("Content-Security-Policy", "sandbox");
    return c.body(document.content as Uint8Array<ArrayBuffer>);
  });

  app.post(
    "/:token/sign",
    post(async (c, v, form) => {
      const signed = await signAsPayee(v.database, v.link, form, {
        t: v.t,
        client: clientOf(c),
        now: v.domainNow,
      });
      if (signed.ok) return seeOther(c, v);
      if (signed.code === "form_invalid") {
        return await render(c, v, { status: 422, problems: signed.problems });
      }
      if (signed.code === "not_payee") return await render(c, v, {});
      // A stored document that cannot be stamped: nothing was signed, and operators were told.
      const message = signed.code === "document_unreadable"
        ? v.t.form.documentUnreadable(signed.documentName)
        : v.t.form.documentChanged;
      return await render(c, v, { status: 409, problems: [{ field: "form", message }] });
    }),
  );

  app.post(
    "/:token/parties/:partyUuid",
    post(async (c, v, form) => {
      const asked = await askParty(v.database, runtimeOf(v.environment).notifications, v.link, {
        partyUuid: c.req.param("partyUuid") ?? "",
        form,
      }, { t: v.t, now: v.domainNow });
      if (asked.ok) return await render(c, v, { notice: v.t.approvals.sent(asked.value.name) });
      if (asked.code === "form_invalid") {
        return await render(c, v, { status: 422, problems: asked.problems });
      }
      return await render(c, v, {});
    }),
  );

  const decide = (endorse: boolean) =>
    post(async (c, v, form) => {
      const decided = await decideAsParty(
        v.database,
        runtimeOf(v.environment),
        v.link,
        { endorse, form },
        { t: v.t, client: clientOf(c), now: v.domainNow },
      );
      if (!decided.ok) {
        if (decided.code === "form_invalid") {
          return await render(c, v, { status: 422, problems: decided.problems });
        }
        if (decided.code === "not_party") return await render(c, v, {});
        // A document signed meanwhile by another payout: nothing was decided; the page asks again.
        if (decided.code === "document_used") {
          return await render(c, v, {
            status: 409,
            problems: [{ field: "form", message: v.t.form.documentChanged }],
          });
        }
        if (decided.code === "document_unreadable") {
          const message = v.t.form.documentUnreadable(decided.documentName);
          return await render(c, v, { status: 409, problems: [{ field: "form", message }] });
        }
      }
      return seeOther(c, v);
    });
  app.post("/:token/endorse", decide(true));
  app.post("/:token/decline", decide(false));

  const methodPage = async (
    c: PortalContext,
    v: Visit,
    payout: PortalPayout,
    modality: ModalityCode,
    values: Record<string, string>,
    problems: readonly FieldProblem[],
    status: 200 | 409 | 422,
  ) => {
    const achDocuments = modality === "ach" ? await documentsFor(v.database, payout.id, "ach") : [];
    const { t } = v;
    return c.html(
      <Page locale={v.locale} title={t.methods[modality]} company={payout.companyName}>
        <Problems t={t} problems={problems} />
        <AmountCard t={t} payout={payout} />
        <form method="post" action={`${v.base}/method`}>
          <Csrf token={v.csrf} />
          <input type="hidden" name="method" value={modality} />
          <MethodFields
            t={t}
            modality={modality}
            values={values}
            problems={problems}
            fixedPostage={payout.fixedPostage}
            postageCodes={payout.postageCodes}
            hostedCardLink={`${v.base}/card`}
            instantLink={`${v.base}/method?method=instant_deposit`}
          />
          {modality === "ach"
            ? (
              <>
                <h2>{t.choice.authorization}</h2>
                {achDocuments.length > 0
                  ? (
                    <>
                      <p>{t.choice.readAuthorization}</p>
                      <DocumentList t={t} base={v.base} documents={achDocuments} />
                    </>
                  )
                  : null}
                <Signature
                  nameLabel={t.choice.authorizationNameLabel}
                  consentLabel={t.choice.authorizationConsent(payout.companyName)}
                  typedName={values.typed_name}
                  problems={problems}
                />
              </>
            )
            : null}
          <button type="submit">{t.choice.confirm}</button>
        </form>
        <p>
          <a href={v.base}>{t.choice.another}</a>
        </p>
      </Page>,
      status,
    );
  };

  app.get("/:token/method", async (c) => {
    const v = await visit(c);
    if (v instanceof Response) return v;
    if (!verified(v)) return await render(c, v, {});
    const payout = await portalPayout(v.database, v.link, deps.config.checkMicrFont);
    const modality = offeredMethod(v.link, payout, c.req.query("method"));
    if (!modality) return await render(c, v, {});
    const values: Record<string, string> =
      modality.code === "instant_deposit" && c.req.query("to") === "bank"
        ? { instant_to: "bank" }
        : {};
    return await methodPage(c, v, payout, modality.code, values, [], 200);
  });

  // The payee types the card at the provider's hosted page, which sends them back with its token.
  app.get("/:token/card", async (c) => {
    const v = await visit(c);
    if (v instanceof Response) return v;
    if (!verified(v)) return await render(c, v, {});
    const payout = await portalPayout(v.database, v.link, deps.config.checkMicrFont);
    if (!offeredMethod(v.link, payout, "instant_deposit")) return await render(c, v, {});
    const page = await hostedCardPage(
      { database: v.database, increase: (await reachesOf(v.environment, v.database)).increase },
      v.link.companyId,
      {
        returnUrl: `${deps.config.baseUrl}${v.base}/card/return`,
        state: v.csrf,
        language: v.locale.language,
      },
    );
    if (page === null) return await render(c, v, {});
    return c.redirect(page, 303);
  });

  app.get("/:token/card/return", async (c) => {
    const v = await visit(c);
    if (v instanceof Response) return v;
    if (!verified(v)) return await render(c, v, {});
    const payout = await portalPayout(v.database, v.link, deps.config.checkMicrFont);
    const modality = offeredMethod(v.link, payout, "instant_deposit");
    // A return that is not this session's (its state differs) is a fresh start.
    if (!modality || c.req.query("state") !== v.csrf) return await render(c, v, {});
    // The card's last four come from Increase's token, not from the browser's return.
    const card = await returnedCardToken(
      { database: v.database, increase: (await reachesOf(v.environment, v.database)).increase },
      v.link.companyId,
      c.req.query("card_token_id") ?? "",
      v.domainNow,
    );
    return await methodPage(
      c,
      v,
      payout,
      modality.code,
      card ? { card_token_id: card.cardTokenId, card_last_four: card.lastFour } : {},
      [],
      200,
    );
  });

  app.post(
    "/:token/method",
    post(async (c, v, form) => {
      const payout = await portalPayout(v.database, v.link, deps.config.checkMicrFont);
      const modality = offeredMethod(v.link, payout, form.method);
      if (!modality) return await render(c, v, {});
      const selected = await chooseMethod(
        v.database,
        {
          runtime: runtimeOf(v.environment),
          secretBox: deps.secretBox,
          increase: (await reachesOf(v.environment, v.database)).increase,
        },
        v.link,
        { payout, modality, form },
        { t: v.t, client: clientOf(c), now: v.domainNow },
      );
      // Numbers are never sent back into the page; the payee types them again.
      const { account_number: _a, account_number_confirm: _b, card_number: _c, ...safe } = form;
      if (!selected.ok) {
        if (selected.code === "form_invalid") {
          return await methodPage(c, v, payout, modality.code, safe, selected.problems, 422);
        }
        if (selected.code === "not_offered") return await render(c, v, {});
        const message = selected.code === "insufficient_funds"
          ? v.t.choice.unavailable
          : selected.code === "document_unreadable"
          ? v.t.form.documentUnreadable(selected.documentName)
          : v.t.choice.changed;
        return await methodPage(
          c,
          v,
          payout,
          modality.code,
          safe,
          [{ field: "form", message }],
          409,
        );
      }
      return seeOther(c, v, "?confirmed=1");
    }),
  );

  return app;
}

/** A virtual card on the status page: the issuer's iframe; its number never reaches this page. */
function VirtualCardFrame(props: { t: PortalText; card: CardEmbed }) {
  const t = props.t.virtualCard;
  return (
    <div class="card">
      <h2>{t.heading}</h2>
      <p>{t.intro(props.card.lastFour)}</p>
      <iframe
        class="virtual-card"
        src={props.card.embedUrl}
        title={t.frameTitle}
        allow="clipboard-write"
        sandbox="allow-scripts allow-same-origin"
        referrerpolicy="no-referrer"
      />
    </div>
  );
}

/** A digital check on the status page: its link once ready, else why it cannot be had. */
function DigitalCheckCard(props: { t: PortalText; check: PayoutDigitalCheck }) {
  const t = props.t.digitalCheck;
  const { checkNumber, ready, url } = props.check;
  return (
    <div class="card">
      <h2>{t.heading}</h2>
      {url === null ? <p>{t.voided(checkNumber)}</p> : ready
        ? (
          <>
            <p>{t.ready(checkNumber)}</p>
            <p>
              <a href={url}>{t.download}</a>
            </p>
            <p>{t.howTo}</p>
          </>
        )
        : <p>{t.notReady(checkNumber)}</p>}
    </div>
  );
}
