/** @jsxImportSource hono/jsx */
/**
 * The payee portal (DESIGN 9): a link → a one-time code → documents to sign → endorsements →
 * the choice of a method → confirmation and a status page that follows the payout. Routes only
 * read the form, call the portal store and render; every POST carries the session's CSRF token,
 * and every refusal renders the same form again with the reason, having stored nothing.
 */
import { type Context, Hono } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { getConnInfo } from "hono/deno";
import type { Database } from "../../db/client.ts";
import { resendPayeeLink, RESENDS_PER_HOUR } from "../../db/notification_store.ts";
import { selectMethod } from "../../db/payout_jobs.ts";
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
} from "../../db/portal_store.ts";
import { payoutRuntime, runtimeSettingsOf } from "../../db/runtime.ts";
import { domainNow } from "../../db/sandbox_clock_store.ts";
import type { Environment } from "../../lib/config.ts";
import { randomBase62 } from "../../lib/keys.ts";
import {
  checkMethodDetails,
  type FieldProblem,
  isPlausibleEmail,
  normalizeUsPhone,
} from "../../lib/portal/method_details.ts";
import { type PortalSession, PortalSessions } from "../../lib/portal/session.ts";
import { type ModalityCode, modalityOf } from "../../lib/payouts/states.ts";
import type { AppDeps, AppEnv } from "../context.ts";
import {
  AmountCard,
  Csrf,
  DocumentList,
  dollars,
  Field,
  MethodChoice,
  MethodFields,
  methodLabels,
  Page,
  PartyRow,
  portalCss,
  Problems,
  Signature,
  statusLabels,
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

  app.onError((error, c) => {
    const id = c.get("requestId");
    console.error(JSON.stringify({
      time: new Date().toISOString(),
      level: "error",
      msg: "portal error",
      request_id: id,
      error: error instanceof Error ? error.stack ?? error.message : String(error),
    }));
    return c.html(
      <Page title="Something went wrong">
        <p>We could not complete this step. Nothing was changed. Please try again in a moment.</p>
        <p>If it keeps happening, quote this reference to the company: {id}</p>
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
    if (!found) {
      return c.html(
        <Page title="This link does not work">
          <p>
            The address is not a payment link we know. Check that you opened the whole link from the
            latest message, or ask the company that is paying you to send a new one.
          </p>
        </Page>,
        404,
      );
    }
    const database = deps.databases[found.environment];
    const now = await domainNow(database, found.link.companyId, realNow);
    const base = `/portal/${token}`;
    if (found.link.replacedAt !== null || found.link.expiresAt <= now) {
      const renewable = found.link.partyUuid === null;
      return c.html(
        <Page title="This link has expired">
          <p>
            {found.link.replacedAt !== null
              ? "A newer link was sent since this one; use the latest message."
              : "Links stop working after a while to keep your payment safe."}
          </p>
          {renewable
            ? (
              <form method="post" action={`${base}/renew`}>
                <p>We can send a new link to the e-mail or phone the company has for you.</p>
                <button type="submit">Send me a new link</button>
              </form>
            )
            : <p>Ask the person who is being paid to send you a new link.</p>}
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
    };
  };

  const writeSession = async (c: PortalContext, base: string, session: PortalSession) => {
    setCookie(c, SESSION_COOKIE, await sessions.encode(session), {
      path: base,
      httpOnly: true,
      sameSite: "Lax",
      secure: deps.config.baseUrl.startsWith("https:"),
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
        problems: [{
          field: "form",
          message:
            "This form was not accepted because it did not come from this page. Please try again.",
        }],
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
    const payout = await readPortalPayout(v.database.readClient, v.link.payoutId);
    if (!verified(v)) return c.html(await verifyPage(v, payout, problems, options.notice), status);
    if (v.link.partyUuid !== null) return c.html(await partyPage(v, payout, problems), status);
    if (payout.status === "canceled") {
      return c.html(
        <Page title="This payment was canceled" company={payout.companyName}>
          <p>{payout.companyName} canceled this payment. Contact them if you have questions.</p>
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
          <Page title="Read and sign" company={payout.companyName}>
            <Problems problems={problems} />
            <AmountCard payout={payout} />
            <p>Before you continue, {payout.companyName} asks you to read and sign:</p>
            <DocumentList base={v.base} documents={documents} />
            <form method="post" action={`${v.base}/sign`}>
              <Csrf token={v.csrf} />
              <Signature
                nameLabel="Type your full name to sign"
                consentLabel="I have read these documents and I agree to sign them electronically."
                problems={problems}
              />
              <button type="submit">Sign and continue</button>
            </form>
          </Page>,
          status,
        );
      }
    }
    if (payout.status === "awaiting_endorsement") {
      const parties = await listParties(v.database.readClient, payout.id);
      return c.html(
        <Page title="Approvals needed" company={payout.companyName}>
          <Problems problems={problems} />
          {options.notice ? <p class="notice" role="status">{options.notice}</p> : null}
          <AmountCard payout={payout} />
          <p>
            Before you can choose how to be paid, each person below must approve this payment. We
            send each one their own link. We will tell you when every approval is in.
          </p>
          {parties.map((party) => (
            <PartyRow base={v.base} party={party} csrf={v.csrf} problems={problems} />
          ))}
        </Page>,
        status,
      );
    }
    if (payout.status === "modality_offered") {
      const failed = payout.timeline.some((t) => t.status === "failed");
      const readable = (await listPortalDocuments(
        v.database.readClient,
        payout.id,
        PAYEE_DOCUMENT_TYPES,
      )).filter((d) => !d.isSignRequired);
      return c.html(
        <Page title="Choose how to be paid" company={payout.companyName}>
          <Problems problems={problems} />
          {failed && payout.failureReason
            ? (
              <p class="notice" role="status">
                We could not pay you the way you chose before ({payout.failureReason}). Please
                choose again.
              </p>
            )
            : null}
          <AmountCard payout={payout} />
          {readable.length > 0
            ? (
              <>
                <p>Documents from {payout.companyName}:</p>
                <DocumentList base={v.base} documents={readable} />
              </>
            )
            : null}
          <MethodChoice base={v.base} payout={payout} problems={problems} />
        </Page>,
        status,
      );
    }
    return c.html(statusPage(payout, options.notice), status);
  };

  const statusPage = (payout: PortalPayout, notice?: string) => (
    <Page title={statusLabels[payout.status]} company={payout.companyName}>
      {notice ? <p class="notice" role="status">{notice}</p> : null}
      <AmountCard payout={payout} />
      {payout.methodSummary
        ? (
          <div class="card">
            <p>
              <strong>How you are paid:</strong> {payout.methodSummary}
            </p>
            {payout.payeeFeeCents > 0
              ? (
                <p>
                  Fee {dollars(payout.payeeFeeCents)}; you receive{" "}
                  {dollars(payout.amountCents - payout.payeeFeeCents)}.
                </p>
              )
              : null}
          </div>
        )
        : null}
      <h2>What happened so far</h2>
      <Timeline payout={payout} />
      <p>Come back to this page at any time to follow your payment.</p>
    </Page>
  );

  const mask = (value: string | null, kind: "email" | "phone") => {
    if (!value) return null;
    if (kind === "phone") return `a phone ending in ${value.replace(/\D/g, "").slice(-4)}`;
    const [local, domain] = value.split("@");
    return `${local.slice(0, 1)}•••@${domain}`;
  };

  const verifyPage = async (
    v: Visit,
    payout: PortalPayout,
    problems: readonly FieldProblem[],
    notice?: string,
  ) => {
    const link = v.link;
    const locked = link.lockedUntil !== null && link.lockedUntil > v.realNow;
    const codeLive = link.codeExpiresAt !== null && link.codeExpiresAt > v.realNow;
    let destination = "your e-mail or phone";
    if (link.partyUuid === null) {
      destination = [mask(payout.email, "email"), mask(payout.phone, "phone")].filter(Boolean)
        .join(" or ") || destination;
    } else {
      const party = await findParty(v.database.readClient, payout.id, link.partyUuid);
      const email = party?.companyEmail ?? party?.enteredEmail ?? null;
      destination = mask(email, "email") ??
        mask(party?.companyPhone ?? party?.enteredPhone ?? null, "phone") ?? destination;
    }
    if (locked) {
      const minutes = Math.ceil((link.lockedUntil! - v.realNow) / 60_000);
      return (
        <Page title="Too many wrong codes" company={payout.companyName}>
          <Problems problems={problems} />
          <p role="alert">
            To protect your payment, this link is locked for {minutes}{" "}
            {minutes === 1 ? "minute" : "minutes"}. Come back after that and ask for a new code.
          </p>
        </Page>
      );
    }
    return (
      <Page title="Confirm it is you" company={payout.companyName}>
        <Problems problems={problems} />
        {notice ? <p class="notice" role="status">{notice}</p> : null}
        {codeLive
          ? (
            <>
              <form method="post" action={`${v.base}/verify`}>
                <Csrf token={v.csrf} />
                <Field
                  name="code"
                  label="Enter the 6-digit code"
                  hint={`We sent it to ${destination}. It works for 10 minutes.`}
                  inputmode="numeric"
                  autocomplete="one-time-code"
                  problems={problems}
                />
                <button type="submit">Confirm</button>
              </form>
              <form method="post" action={`${v.base}/code`}>
                <Csrf token={v.csrf} />
                <button type="submit" class="secondary">Send me a new code</button>
              </form>
            </>
          )
          : (
            <form method="post" action={`${v.base}/code`}>
              <Csrf token={v.csrf} />
              <p>To keep your payment safe, we will send a 6-digit code to {destination}.</p>
              <button type="submit">Send me a code</button>
            </form>
          )}
      </Page>
    );
  };

  const partyPage = async (v: Visit, payout: PortalPayout, problems: readonly FieldProblem[]) => {
    const party = await findParty(v.database.readClient, payout.id, v.link.partyUuid!);
    const payeeName = [payout.firstName, payout.lastName].filter(Boolean).join(" ") ||
      "the payee";
    if (party?.status === "endorsed" || party?.status === "declined") {
      return (
        <Page title="Thank you" company={payout.companyName}>
          <p role="status">
            You {party.status === "endorsed" ? "approved" : "declined"} the payment of{" "}
            {dollars(payout.amountCents)} to {payeeName}. There is nothing else to do.
          </p>
        </Page>
      );
    }
    if (!party || payout.status !== "awaiting_endorsement") {
      return (
        <Page title="No approval needed" company={payout.companyName}>
          <p>This payment no longer needs your approval.</p>
        </Page>
      );
    }
    const documents = await listPortalDocuments(
      v.database.readClient,
      payout.id,
      PARTY_DOCUMENT_TYPES,
    );
    return (
      <Page title="Approve a payment" company={payout.companyName}>
        <Problems problems={problems} />
        <div class="card">
          <p>
            {payout.companyName} is paying {payeeName}
          </p>
          <p class="amount">{dollars(payout.amountCents)}</p>
          <p>Your approval ({party.name}) is needed before the payment can go ahead.</p>
        </div>
        {documents.length > 0
          ? (
            <>
              <p>Please read:</p>
              <DocumentList base={v.base} documents={documents} />
            </>
          )
          : null}
        <form method="post" action={`${v.base}/endorse`}>
          <Csrf token={v.csrf} />
          <Signature
            nameLabel="Type your full name to approve"
            consentLabel={`I approve this payment to ${payeeName} and agree to sign electronically.`}
            problems={problems}
          />
          <button type="submit">Approve the payment</button>
        </form>
        <form method="post" action={`${v.base}/decline`}>
          <Csrf token={v.csrf} />
          <h2>Do not approve?</h2>
          <Field
            name="decline_name"
            label="Type your full name to decline"
            autocomplete="name"
            problems={problems}
          />
          <button type="submit" class="danger">Decline the payment</button>
        </form>
      </Page>
    );
  };

  const typedNameProblem = (field: string, value: string | undefined): FieldProblem | null => {
    const name = (value ?? "").trim();
    if (name.length < 2) return { field, message: "Type your full name." };
    if (name.length > TYPED_NAME_LENGTH_MAX) return { field, message: "That name is too long." };
    return null;
  };

  app.get("/:token", async (c) => {
    const v = await visit(c);
    if (v instanceof Response) return v;
    const confirmed = c.req.query("confirmed") === "1" && verified(v);
    return await render(c, v, confirmed ? { notice: "Thank you. Your choice is confirmed." } : {});
  });

  app.post(
    "/:token/renew",
    async (c) => {
      const found = await findLink(c.req.param("token"));
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
          <Page title={sent === "sent" ? "We sent you a new link" : "No new link was sent"}>
            <p role="status">
              {sent === "sent"
                ? "Open the newest message from us and use the link in it."
                : sent === "rate_limited"
                ? `At most ${RESENDS_PER_HOUR} new links an hour. Please try again later.`
                : "This payment cannot be acted on any more. Contact the company that pays you."}
            </p>
          </Page>,
          sent === "rate_limited" ? 429 : 200,
        );
      }
      return c.html(
        <Page title="This link does not work">
          <p>The address is not a payment link we know.</p>
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
          problems: [{
            field: "form",
            message: sent.code === "code_too_soon"
              ? "We sent a code moments ago. Wait half a minute before asking for another."
              : "Too many wrong codes.",
          }],
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
        const attemptsLeft = Number(checked.details?.attempts_left ?? 0);
        return await render(c, fresh, {
          status: checked.code === "link_locked" ? 429 : 422,
          problems: [{
            field: checked.code === "code_wrong" ? "code" : "form",
            message: checked.code === "code_wrong"
              ? `That code is not right. ${attemptsLeft} ${
                attemptsLeft === 1 ? "try" : "tries"
              } left.`
              : checked.code === "code_expired"
              ? "That code has expired. Ask for a new one."
              : "Too many wrong codes.",
          }],
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
        <Page title="Document not found">
          <p>This document is not part of your payment.</p>
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
        typedNameProblem("typed_name", form.typed_name),
        form.consent === "yes" ? null : {
          field: "consent",
          message: "Tick the box to agree to sign electronically.",
        },
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
          problems: [{
            field: "form",
            message: "A document changed meanwhile. Please read again.",
          }],
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
      const prefix = `party-${partyUuid}`;
      const problems: FieldProblem[] = [];
      let email: string | null = null;
      let phone: string | null = null;
      if (party.companyEmail === null && party.companyPhone === null) {
        const rawEmail = (form[`${prefix}-email`] ?? "").trim();
        const rawPhone = (form[`${prefix}-phone`] ?? "").trim();
        if (rawEmail && !isPlausibleEmail(rawEmail)) {
          problems.push({
            field: `${prefix}-email`,
            message: "Enter an e-mail address, like name@example.com.",
          });
        } else if (rawEmail) email = rawEmail;
        if (rawPhone) {
          phone = normalizeUsPhone(rawPhone);
          if (!phone) {
            problems.push({
              field: `${prefix}-phone`,
              message: "Enter a US mobile number, like 555-201-3344.",
            });
          }
        }
        if (!rawEmail && !rawPhone) {
          problems.push({
            field: `${prefix}-email`,
            message: `Enter an e-mail or a phone number for ${party.name}.`,
          });
        }
        const own = (value: string | null, mine: string | null) =>
          value !== null && mine !== null && value.toLowerCase() === mine.toLowerCase();
        if (own(email, payout.email) || own(phone, normalizeUsPhone(payout.phone ?? ""))) {
          problems.push({
            field: `${prefix}-email`,
            message: `${party.name} must be reached at their own e-mail or phone, not yours.`,
          });
        }
      }
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
      return await render(c, v, { notice: `We sent ${party.name} a link to approve.` });
    }),
  );

  const decide = (endorse: boolean) =>
    post(async (c, v, form) => {
      if (v.link.partyUuid === null) return await render(c, v, {});
      const field = endorse ? "typed_name" : "decline_name";
      const problems = [
        typedNameProblem(field, form[field]),
        !endorse || form.consent === "yes" ? null : {
          field: "consent",
          message: "Tick the box to approve and sign electronically.",
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
    return c.html(
      <Page title={methodLabels[modality]} company={payout.companyName}>
        <Problems problems={problems} />
        <AmountCard payout={payout} />
        <form method="post" action={`${v.base}/method`}>
          <Csrf token={v.csrf} />
          <input type="hidden" name="method" value={modality} />
          <MethodFields
            modality={modality}
            values={values}
            problems={problems}
            fixedPostage={payout.fixedPostage}
          />
          {modality === "ach"
            ? (
              <>
                <h2>Authorization</h2>
                {achDocuments.length > 0
                  ? (
                    <>
                      <p>Read the deposit authorization:</p>
                      <DocumentList base={v.base} documents={achDocuments} />
                    </>
                  )
                  : null}
                <Signature
                  nameLabel="Type your full name to sign the authorization"
                  consentLabel={`I authorize ${payout.companyName} to deposit this payment into the account above, and I agree to sign electronically.`}
                  typedName={values.typed_name}
                  problems={problems}
                />
              </>
            )
            : null}
          <button type="submit">Confirm: get paid this way</button>
        </form>
        <p>
          <a href={v.base}>Choose another way</a>
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
        fixedPostage: payout.fixedPostage,
      });
      const problems: FieldProblem[] = checked.ok ? [] : [...checked.problems];
      if (modality.code === "ach") {
        const nameProblem = typedNameProblem("typed_name", form.typed_name);
        if (nameProblem) problems.push(nameProblem);
        if (form.consent !== "yes") {
          problems.push({ field: "consent", message: "Tick the box to authorize the deposit." });
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
      const kept: Record<string, string> = { ...details.public, summary: details.summary };
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
          ? "This method cannot be used for this payment right now. Please choose another."
          : "This choice could not be made: the payment changed meanwhile. Please start again.";
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
