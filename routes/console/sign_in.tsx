/** @jsxImportSource hono/jsx */
/**
 * Signing in and out of the console with the operators of lib/operators: e-mail, password and a
 * TOTP code. An operator who has never used their TOTP secret is shown it after the password was
 * checked (QR code and text) to enroll an app. The session is the operator session the CLI also
 * uses, its token in an HttpOnly, SameSite=Strict cookie (Secure behind https).
 */
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { Child } from "hono/jsx";
import { renderSVG } from "uqr";
import { pendingTotpEnrollment, type TotpEnrollment } from "../../lib/console/sign_in.ts";
import { PASSWORD_LENGTH_MAX_CHARACTERS, SESSION_ABSOLUTE_MS } from "../../lib/operators/rules.ts";
import { readSession, signIn, signOut } from "../../lib/operators/service.ts";
import { enroll } from "../../lib/operators/enrollment.ts";
import { PurposeMac } from "../../lib/platform/crypto.ts";
import { constantTimeEqual, randomBase62 } from "../../lib/platform/keys.ts";
import type { AppDeps } from "../context.ts";
import { Field, type FieldProblem, FormProblems, type FormValues } from "./kit.tsx";
import {
  type ConsoleContext,
  type ConsoleEnv,
  consoleOrigin,
  cookieOptions,
  operatorDepsOf,
  SESSION_COOKIE,
} from "./session.ts";

/** The sign-in form's CSRF nonce lives this long in its own cookie. */
const SIGN_IN_NONCE_TTL_SECONDS = 30 * 60;
const SIGN_IN_COOKIE = "console_sign_in";

/** Where to go after signing in: a console path only, never another site. */
function safeNext(next: unknown): string {
  return typeof next === "string" && /^\/console(\/[A-Za-z0-9_\-./?=&%]*)?$/.test(next) &&
      !next.includes("//")
    ? next
    : "/console";
}

function BarePage(props: { title: string; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{`${props.title} · Console`}</title>
        <link rel="stylesheet" href="/console/assets/console.css" />
        {
          /* Tells the server the browser's time zone before the first signed-in page, which would
            otherwise reload itself to show times in it (and could be read mid-reload). */
        }
        <script src="/console/assets/console.js" defer></script>
      </head>
      <body>
        <header class="top">
          <p class="brand">Disbursements console</p>
        </header>
        <main id="main" class="narrow">
          <h1>{props.title}</h1>
          {props.children}
        </main>
      </body>
    </html>
  );
}

const NOTICES: Readonly<Record<string, string>> = {
  expired: "Your session ended after an hour without use. Sign in again.",
  signed_out: "You are signed out.",
  enrolled: "Your password is set. Sign in: your first sign-in shows your TOTP secret to scan.",
};

function SignInPage(props: {
  csrf: string;
  next: string;
  values: FormValues;
  problems: readonly FieldProblem[];
  notice?: string;
  enrollment?: TotpEnrollment | null;
  dev: boolean;
}) {
  const { enrollment } = props;
  return (
    <BarePage title="Sign in">
      {props.notice ? <div class="notice" role="status">{props.notice}</div> : null}
      <FormProblems problems={props.problems} />
      {enrollment
        ? (
          <section class="card" aria-labelledby="enroll-heading">
            <h2 id="enroll-heading">Set up your authenticator app</h2>
            <p>
              This is your first sign-in. Scan this code with an authenticator app (or type the
              key), then enter your password again and the six-digit code the app shows.
            </p>
            <div
              role="img"
              aria-label="QR code of your TOTP secret"
              class="qr"
              dangerouslySetInnerHTML={{ __html: renderSVG(enrollment.uri, { border: 2 }) }}
            />
            <p>
              Key: <span class="secret" id="totp-secret">{enrollment.secret}</span>
            </p>
          </section>
        )
        : null}
      <form method="post" action="/console/sign-in" class="card">
        <input type="hidden" name="csrf" value={props.csrf} />
        <input type="hidden" name="next" value={props.next} />
        <Field
          name="email"
          label="E-mail"
          type="email"
          autocomplete="username"
          required
          values={props.values}
          problems={props.problems}
        />
        <Field
          name="password"
          label="Password"
          type="password"
          autocomplete="current-password"
          required
          problems={props.problems}
        />
        <Field
          name="code"
          label="TOTP code"
          hint={props.dev
            ? "Six digits from your authenticator app; dev mode signs in without one (test data only)."
            : "Six digits from your authenticator app."}
          autocomplete="one-time-code"
          inputmode="numeric"
          problems={props.problems}
        />
        <p>
          <button type="submit">Sign in</button>
        </p>
      </form>
    </BarePage>
  );
}

/** Enrollment: the code sent to a new or reset operator, and the password they choose. */
function EnrollPage(props: {
  csrf: string;
  code: string;
  problems: readonly FieldProblem[];
}) {
  return (
    <BarePage title="Enrol">
      <FormProblems problems={props.problems} />
      <p>
        Enter the enrollment code you were sent and choose your password (at least 12 characters).
        Your first sign-in then shows your own TOTP secret to scan.
      </p>
      <form method="post" action="/console/enroll" class="card">
        <input type="hidden" name="csrf" value={props.csrf} />
        <Field
          name="code"
          label="Enrollment code"
          autocomplete="off"
          required
          values={{ code: props.code }}
          problems={props.problems}
        />
        <Field
          name="password"
          label="Your new password"
          type="password"
          autocomplete="new-password"
          required
          problems={props.problems}
        />
        <p>
          <button type="submit">Enrol</button>
        </p>
      </form>
    </BarePage>
  );
}

/** The field each sign-in refusal points at. */
const REFUSAL_FIELD: Readonly<Record<string, string>> = {
  invalid_input: "email",
  totp_required: "code",
  totp_replayed: "code",
  totp_not_enrolled: "code",
};

export function signInRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const operatorDeps = operatorDepsOf(deps);
  const mac = new PurposeMac(deps.jwtSecret, "console-sign-in");

  /** The sign-in form's token, from a nonce cookie made when there is none. */
  const signInCsrf = async (c: ConsoleContext) => {
    let nonce = getCookie(c, SIGN_IN_COOKIE);
    if (!nonce || !/^[0-9A-Za-z]{22}$/.test(nonce)) {
      nonce = randomBase62(22);
      setCookie(c, SIGN_IN_COOKIE, nonce, cookieOptions(deps, SIGN_IN_NONCE_TTL_SECONDS));
    }
    return await mac.sign(`sign-in|${nonce}`);
  };

  app.get("/sign-in", async (c) => {
    const token = getCookie(c, SESSION_COOKIE);
    if (token && (await readSession(operatorDeps, token, deps.clock.now())).ok) {
      return c.redirect(safeNext(c.req.query("next")), 303);
    }
    return c.html(
      <SignInPage
        csrf={await signInCsrf(c)}
        next={safeNext(c.req.query("next"))}
        values={{}}
        problems={[]}
        notice={NOTICES[c.req.query("notice") ?? ""]}
        dev={deps.config.dev}
      />,
    );
  });

  app.post("/sign-in", async (c) => {
    const form = await c.req.parseBody();
    const text = (name: string) => typeof form[name] === "string" ? form[name] as string : "";
    const nonce = getCookie(c, SIGN_IN_COOKIE) ?? "";
    const expected = await mac.sign(`sign-in|${nonce}`);
    const next = safeNext(form.next);
    const values = { email: text("email") };
    const render = async (
      problems: FieldProblem[],
      status: 400 | 401 | 403,
      enrollment?: TotpEnrollment | null,
    ) =>
      c.html(
        <SignInPage
          csrf={await signInCsrf(c)}
          next={next}
          values={values}
          problems={problems}
          enrollment={enrollment}
          dev={deps.config.dev}
        />,
        status,
      );
    if (nonce === "" || !constantTimeEqual(text("csrf"), expected)) {
      return render([{
        field: "form",
        message: "The form's security token is missing or stale. Sign in again.",
      }], 403);
    }
    if (text("password").length > PASSWORD_LENGTH_MAX_CHARACTERS) {
      return render([{ field: "password", message: "The password is too long." }], 400);
    }
    const result = await signIn(operatorDeps, consoleOrigin(c), {
      email: text("email"),
      password: text("password"),
      code: text("code"),
    }, deps.clock.now());
    if (!result.ok) {
      // The password was right (signIn checks it first): a first sign-in is shown its secret.
      const enrollment = result.code === "totp_required"
        ? await pendingTotpEnrollment(operatorDeps, text("email"))
        : null;
      return render(
        [{
          field: REFUSAL_FIELD[result.code] ?? "form",
          message: enrollment
            ? "Scan the code below, then sign in with the six-digit code of your app."
            : result.message,
        }],
        result.code === "sign_in_failed" || result.code === "totp_replayed" ? 401 : 403,
        enrollment,
      );
    }
    deleteCookie(c, SIGN_IN_COOKIE, { path: "/console" });
    setCookie(
      c,
      SESSION_COOKIE,
      result.value.token,
      cookieOptions(deps, Math.floor(SESSION_ABSOLUTE_MS / 1000)),
    );
    return c.redirect(next, 303);
  });

  app.get("/enroll", async (c) =>
    c.html(
      <EnrollPage
        csrf={await signInCsrf(c)}
        code={/^enr_[0-9A-Za-z]{32}$/.test(c.req.query("code") ?? "") ? c.req.query("code")! : ""}
        problems={[]}
      />,
    ));

  app.post("/enroll", async (c) => {
    const form = await c.req.parseBody();
    const text = (name: string) => typeof form[name] === "string" ? form[name] as string : "";
    const nonce = getCookie(c, SIGN_IN_COOKIE) ?? "";
    const render = async (problems: FieldProblem[], status: 400 | 401 | 403) =>
      c.html(<EnrollPage csrf={await signInCsrf(c)} code="" problems={problems} />, status);
    if (nonce === "" || !constantTimeEqual(text("csrf"), await mac.sign(`sign-in|${nonce}`))) {
      return render([{
        field: "form",
        message: "The form's security token is missing or stale. Enrol again.",
      }], 403);
    }
    if (text("password").length > PASSWORD_LENGTH_MAX_CHARACTERS) {
      return render([{ field: "password", message: "The password is too long." }], 400);
    }
    const enrolled = await enroll(operatorDeps, consoleOrigin(c), {
      code: text("code"),
      password: text("password"),
    }, deps.clock.now());
    if (!enrolled.ok) {
      return render(
        [{
          field: enrolled.code === "weak_password" ? "password" : "code",
          message: enrolled.message,
        }],
        enrolled.code === "weak_password" ? 400 : 401,
      );
    }
    return c.redirect("/console/sign-in?notice=enrolled", 303);
  });

  return app;
}

/** Signing out ends the operator session (audited) and drops the cookie. Behind consoleSession. */
export function signOutRoutes(deps: AppDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  app.post("/sign-out", async (c) => {
    await signOut(operatorDepsOf(deps), consoleOrigin(c), c.get("sessionToken"), deps.clock.now());
    deleteCookie(c, SESSION_COOKIE, { path: "/console" });
    return c.redirect("/console/sign-in?notice=signed_out", 303);
  });
  return app;
}
