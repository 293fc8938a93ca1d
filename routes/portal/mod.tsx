/** @jsxImportSource hono/jsx */
/**
 * The payee portal (DESIGN 9): a link → a one-time code → documents to sign → endorsements →
 * the choice of a method → confirmation and a status page that follows the payout. Routes only
 * read the form, call the portal store and render; every POST carries the session's CSRF token,
 * and every refusal renders the same form again with the reason, having stored nothing. Each
 * page is in the language `language.ts` chooses, with texts from lib/portal/portal_text.ts.
 */
import { type Context, Hono } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { getConnInfo } from "hono/deno";
import type { Database } from "../../db/client.ts";
import { resendPayeeLink } from "../../lib/notify/store.ts";
import { formatDollars } from "../../lib/platform/money.ts";
import { selectMethod } from "../../lib/payouts/jobs.ts";
import {
  decideEndorsement,
  findLinkByToken,
  findParty,
  listParties,
  listPortalDocuments,
  type PortalLink,
  type PortalPayout,
  prepareSignatures,
  readPortalDocument,
  readPortalPayout,
  requestPartyEndorsement,
  sendVerificationCode,
  storeSignatures,
  verifyCode,
} from "../../lib/portal/store.ts";
import { payoutRuntime, runtimeSettingsOf } from "../../lib/payouts/runtime.ts";
import { domainNow } from "../../lib/sandbox/clock_store.ts";
import type { Environment } from "../../lib/platform/config.ts";
import { randomBase62 } from "../../lib/platform/keys.ts";
import { checkMethodDetails, type FieldProblem } from "../../lib/portal/method_details.ts";
import type { PortalText } from "../../lib/portal/portal_text.ts";
import { type PortalSession, PortalSessions } from "../../lib/portal/session.ts";
import { type ModalityCode, modalityOf } from "../../lib/payouts/states.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import { chooseLocale, type Locale, recordedLocale } from "./language.ts";
import { checkPartyContact, PartyPage, PartyRow } from "./parties.tsx";
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
const TYPED_NAME_LENGTH_MAX = 120;
/** Payee documents: after authentication (1), ACH authorization (2), custom (4); parties read 3. */
const PAYEE_DOCUMENT_TYPES = [1, 4] as const;
const ACH_DOCUMENT_TYPES = [2] as const;
const PARTY_DOCUMENT_TYPES = [3] as const;

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
  const environments: Environment[] = ["test", "live"];
  const runtimeOf = (environment: Environment) =>
    payoutRuntime(environment, runtimeSettingsOf(deps.config));

  /** The link a token names and its environment (a token does not say which). */
  const findLink = async (
    token: string,
  ): Promise<{ environment: Environment; link: PortalLink } | null> => {
    if (!/^[0-9A-Za-z]{43}$/.test(token)) return null;
    for (const environment of environments) {
      const link = await findLinkByToken(deps.databases[environment].readClient, token);
      if (link) return { environment, link };
    }
    return null;
  };

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
    let ip: string | null = null;
    try {
      ip = getConnInfo(c).remote.address ?? null;
    } catch {
      // app.request in tests has no connection.
    }
    return { ip, userAgent: c.req.header("User-Agent")?.slice(0, 512) ?? null };
  };

  /** The link of the token, with the browser's session; a page instead when there is none. */
  const visit = async (c: PortalContext): Promise<Visit | Response> => {
    const token = c.req.param("token") ?? "";
    const realNow = deps.clock.now();
    const found = await findLink(token);
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
    const now = await domainNow(database, found.link.companyId, realNow);
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
    const payout = await readPortalPayout(v.database.readClient, v.link.payoutId);
    const party = v.link.partyUuid === null
      ? null
      : await findParty(v.database.readClient, payout.id, v.link.partyUuid);
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
      const documents = await listPortalDocuments(
        v.database.readClient,
        payout.id,
        PARTY_DOCUMENT_TYPES,
      );
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
      const documents = (await listPortalDocuments(
        v.database.readClient,
        payout.id,
        PAYEE_DOCUMENT_TYPES,
      )).filter((d) => d.isSignRequired && !d.signed);
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
      const parties = await listParties(v.database.readClient, payout.id);
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
    if (payout.status === "modality_offered") {
      const failed = payout.timeline.some((step) => step.status === "failed");
      const readable = (await listPortalDocuments(
        v.database.readClient,
        payout.id,
        PAYEE_DOCUMENT_TYPES,
      )).filter((d) => !d.isSignRequired);
      return c.html(
        <Page locale={locale} title={t.choice.title} company={payout.companyName}>
          <Problems t={t} problems={problems} />
          {failed && payout.failureReason
            ? <p class="notice" role="status">{t.choice.failedBefore(payout.failureReason)}</p>
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
    return c.html(statusPage(locale, payout, options.notice), status);
  };

  const statusPage = (locale: Locale, payout: PortalPayout, notice?: string) => {
    const t = locale.text;
    const summary = methodSummary(t, payout.methodDetails);
    return (
      <Page locale={locale} title={t.status.labels[payout.status]} company={payout.companyName}>
        {notice ? <p class="notice" role="status">{notice}</p> : null}
        <AmountCard t={t} payout={payout} />
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

  const typedNameProblem = (
    t: PortalText,
    input: { field: string; value: string | undefined },
  ): FieldProblem | null => {
    const name = (input.value ?? "").trim();
    if (name.length < 2) return { field: input.field, message: t.form.typeFullName };
    if (name.length > TYPED_NAME_LENGTH_MAX) {
      return { field: input.field, message: t.form.nameTooLong };
    }
    return null;
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
      const found = await findLink(token);
      const locale = chooseLocale(c, {
        base: `/portal/${encodeURIComponent(token)}`,
        holder: found?.link.language ?? null,
        secure,
      });
      const t = locale.text;
      if (found && found.link.partyUuid === null) {
        const { environment, link } = found;
        const database = deps.databases[environment];
        const realNow = deps.clock.now();
        const domainTime = await domainNow(database, link.companyId, realNow);
        const sent = await database.writer.write((tx) =>
          resendPayeeLink(tx, runtimeOf(environment).notifications, link.payoutId, {
            realNow,
            domainNow: domainTime,
          })
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
      const sent = await v.database.writer.write((tx) =>
        sendVerificationCode(tx, v.environment, v.link.id, {
          realNow: v.realNow,
          domainNow: v.domainNow,
        })
      );
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
      // Wrapped: a wrong code is a refusal whose counting must commit, not roll back.
      const { checked } = await v.database.writer.write(async (tx) => ({
        checked: await verifyCode(tx, v.link.id, code, v.realNow),
      }));
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
    const types = v.link.partyUuid === null
      ? [...PAYEE_DOCUMENT_TYPES, ...ACH_DOCUMENT_TYPES]
      : PARTY_DOCUMENT_TYPES;
    const document = await readPortalDocument(
      v.database.readClient,
      v.link.payoutId,
      c.req.param("documentId"),
      types,
    );
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
      const problems = [
        typedNameProblem(v.t, { field: "typed_name", value: form.typed_name }),
        form.consent === "yes" ? null : { field: "consent", message: v.t.sign.consentMissing },
      ].filter((p): p is FieldProblem => p !== null);
      if (v.link.partyUuid !== null) return await render(c, v, {});
      if (problems.length > 0) return await render(c, v, { status: 422, problems });
      const documents = (await listPortalDocuments(
        v.database.readClient,
        v.link.payoutId,
        PAYEE_DOCUMENT_TYPES,
      )).filter((d) => d.isSignRequired && !d.signed);
      const prepared = await prepareSignatures(v.database.readClient, v.link.payoutId, documents, {
        typedName: form.typed_name.trim(),
        role: "payee",
        ...clientOf(c),
      }, v.domainNow);
      const stored = await v.database.writer.write((tx) =>
        storeSignatures(tx, v.link.payoutId, prepared)
      );
      if (!stored.ok) {
        return await render(c, v, {
          status: 409,
          problems: [{ field: "form", message: v.t.form.documentChanged }],
        });
      }
      return seeOther(c, v);
    }),
  );

  app.post(
    "/:token/parties/:partyUuid",
    post(async (c, v, form) => {
      if (v.link.partyUuid !== null) return await render(c, v, {});
      const partyUuid = c.req.param("partyUuid") ?? "";
      const payout = await readPortalPayout(v.database.readClient, v.link.payoutId);
      const party = await findParty(v.database.readClient, v.link.payoutId, partyUuid);
      if (!party || payout.status !== "awaiting_endorsement") return await render(c, v, {});
      const { email, phone, problems } = checkPartyContact(v.t, { party, payout, form });
      if (problems.length > 0) return await render(c, v, { status: 422, problems });
      const requested = await v.database.writer.write((tx) =>
        requestPartyEndorsement(
          tx,
          runtimeOf(v.environment).notifications,
          v.link.payoutId,
          partyUuid,
          { email, phone },
          v.domainNow,
        )
      );
      if (!requested.ok) return await render(c, v, {});
      return await render(c, v, { notice: v.t.approvals.sent(party.name) });
    }),
  );

  const decide = (endorse: boolean) =>
    post(async (c, v, form) => {
      if (v.link.partyUuid === null) return await render(c, v, {});
      const field = endorse ? "typed_name" : "decline_name";
      const problems = [
        typedNameProblem(v.t, { field, value: form[field] }),
        !endorse || form.consent === "yes" ? null : {
          field: "consent",
          message: v.t.party.consentMissing,
        },
      ].filter((p): p is FieldProblem => p !== null);
      if (problems.length > 0) return await render(c, v, { status: 422, problems });
      const typedName = form[field].trim();
      const prepared = endorse
        ? await prepareSignatures(
          v.database.readClient,
          v.link.payoutId,
          (await listPortalDocuments(v.database.readClient, v.link.payoutId, PARTY_DOCUMENT_TYPES))
            .filter((d) => d.isSignRequired),
          { typedName, role: `authorization party ${v.link.partyUuid}`, ...clientOf(c) },
          v.domainNow,
        )
        : [];
      await v.database.writer.write(async (tx) => {
        const decided = await decideEndorsement(
          tx,
          runtimeOf(v.environment),
          v.link.payoutId,
          v.link.partyUuid!,
          { endorse, typedName },
          v.domainNow,
        );
        if (decided.ok) await storeSignatures(tx, v.link.payoutId, prepared);
      });
      return seeOther(c, v);
    });
  app.post("/:token/endorse", decide(true));
  app.post("/:token/decline", decide(false));

  const methodFor = (v: Visit, payout: PortalPayout, code: string | undefined) => {
    const modality = code ? modalityOf(code) : undefined;
    return modality && payout.allowedPaymentMethodIds.includes(modality.id) &&
        v.link.partyUuid === null && payout.status === "modality_offered"
      ? modality
      : null;
  };

  const methodPage = async (
    c: PortalContext,
    v: Visit,
    payout: PortalPayout,
    modality: ModalityCode,
    values: Record<string, string>,
    problems: readonly FieldProblem[],
    status: 200 | 409 | 422,
  ) => {
    const achDocuments = modality === "ach"
      ? await listPortalDocuments(v.database.readClient, payout.id, ACH_DOCUMENT_TYPES)
      : [];
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
    const payout = await readPortalPayout(v.database.readClient, v.link.payoutId);
    const modality = methodFor(v, payout, c.req.query("method"));
    if (!modality) return await render(c, v, {});
    return await methodPage(c, v, payout, modality.code, {}, [], 200);
  });

  app.post(
    "/:token/method",
    post(async (c, v, form) => {
      const payout = await readPortalPayout(v.database.readClient, v.link.payoutId);
      const modality = methodFor(v, payout, form.method);
      if (!modality) return await render(c, v, {});
      const checked = checkMethodDetails(modality.code, form, {
        text: v.t.methodProblems,
        fixedPostage: payout.fixedPostage,
      });
      const problems: FieldProblem[] = checked.ok ? [] : [...checked.problems];
      if (modality.code === "ach") {
        const nameProblem = typedNameProblem(v.t, { field: "typed_name", value: form.typed_name });
        if (nameProblem) problems.push(nameProblem);
        if (form.consent !== "yes") {
          problems.push({ field: "consent", message: v.t.choice.consentMissing });
        }
      }
      // Numbers are never sent back into the page; the payee types them again.
      const { account_number: _a, account_number_confirm: _b, card_number: _c, ...safe } = form;
      if (!checked.ok || problems.length > 0) {
        return await methodPage(c, v, payout, modality.code, safe, problems, 422);
      }
      const details = checked.value;
      const signatures = modality.code === "ach"
        ? await prepareSignatures(
          v.database.readClient,
          payout.id,
          (await listPortalDocuments(v.database.readClient, payout.id, ACH_DOCUMENT_TYPES))
            .filter((d) => d.isSignRequired),
          { typedName: form.typed_name.trim(), role: "payee", ...clientOf(c) },
          v.domainNow,
        )
        : [];
      const kept: Record<string, string> = { ...details.public };
      if (details.secret !== null) {
        kept.account_sealed = await deps.secretBox.sealText(details.secret);
      }
      if (modality.code === "instant_deposit") kept.card_token = `tok_${randomBase62(24)}`;
      const selected = await v.database.writer.write(async (tx) => {
        const stored = await storeSignatures(tx, payout.id, signatures);
        if (!stored.ok) return stored;
        return await selectMethod(tx, runtimeOf(v.environment), payout.id, {
          paymentMethodId: modality.id,
          details: details.railHints,
          kept,
        }, v.domainNow);
      });
      if (!selected.ok) {
        const message = selected.code === "insufficient_funds"
          ? v.t.choice.unavailable
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
