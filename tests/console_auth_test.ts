/**
 * Console sign-in and sessions (issue 20): password and TOTP, the first sign-in's QR code, the
 * cookie's attributes, CSRF, the idle timeout, TOTP required for live, sign-out, and the audit
 * rows each writes.
 */
import assert from "node:assert/strict";
import { SESSION_IDLE_MS } from "../lib/operators/rules.ts";
import { totpCodeAt } from "../lib/operators/totp.ts";
import { withHttpFixture } from "./http_fixture.ts";
import { enrollmentCodeOf, makeOperator, operatorDepsOf } from "./operator_helpers.ts";
import { createOperator } from "../lib/operators/service.ts";
import { consoleAs, ConsoleBrowser, countRows, hiddenValue, textOf } from "./console_helpers.ts";

const auditCount = (action: string) =>
  `SELECT count(*) AS n FROM audit_log WHERE action = '${action}'`;

Deno.test("console: an unsigned visitor is sent to the sign-in page, which comes back after", async () => {
  await withHttpFixture(async (f) => {
    const browser = new ConsoleBrowser(f);
    const page = await browser.get("/console/payouts?status=failed");
    assert.equal(page.status, 303);
    assert.equal(page.location, "/console/sign-in?next=%2Fconsole%2Fpayouts");
    const signIn = await browser.get(page.location!);
    assert.equal(signIn.status, 200);
    assert.match(signIn.html, /<label for="email">E-mail/);
    assert.match(signIn.html, /autocomplete="one-time-code"/);
    assert.equal(hiddenValue(signIn.html, "next"), "/console/payouts");
    // Its script tells the server the browser's time zone before the first signed-in page.
    assert.match(signIn.html, /<script src="\/console\/assets\/console.js" defer><\/script>/);
    assert.equal(signIn.headers.get("X-Frame-Options"), "DENY");
    assert.match(signIn.headers.get("Content-Security-Policy")!, /frame-ancestors 'none'/);
  });
});

Deno.test("console: sign-in with password and TOTP sets an HttpOnly, Strict, Secure cookie and is audited", async () => {
  await withHttpFixture(async (f) => {
    const operator = await makeOperator(
      f.deps,
      { email: "ana@ops.test", role: "clerk", signIn: false },
      f.clock.now(),
    );
    const browser = new ConsoleBrowser(f);
    await browser.get("/console/sign-in");
    const signedIn = await browser.post("/console/sign-in", {
      email: operator.email,
      password: operator.password,
      code: totpCodeAt(operator.totpSecret, f.clock.now()),
      next: "/console/payouts",
    });
    assert.equal(signedIn.status, 303);
    assert.equal(signedIn.location, "/console/payouts");
    const cookie = signedIn.headers.getSetCookie().find((line) =>
      line.startsWith("console_session=")
    )!;
    assert.match(cookie, /^console_session=ops_[0-9A-Za-z]{43}; /);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Strict/);
    assert.match(cookie, /; Secure/);
    assert.match(cookie, /; Path=\/console/);
    assert.equal(await countRows(f, "live", auditCount("login")), 1);
    const { rows } = await f.deps.databases.live.readClient.execute(
      "SELECT origin, operator_email FROM audit_log WHERE action = 'login'",
    );
    assert.deepEqual({ ...rows[0] }, {
      origin: "console 127.0.0.1",
      operator_email: "ana@ops.test",
    });
  }, { BASE_URL: "https://console.example.test" });
});

Deno.test("console: the cookie is not Secure when BASE_URL is plain http", async () => {
  await withHttpFixture(async (f) => {
    const operator = await makeOperator(
      f.deps,
      { email: "ana@ops.test", role: "viewer", signIn: false },
      f.clock.now(),
    );
    const signedIn = await new ConsoleBrowser(f).signIn(operator);
    const cookie = signedIn.headers.getSetCookie().find((l) => l.startsWith("console_session="))!;
    assert.doesNotMatch(cookie, /Secure/);
  }, { BASE_URL: "http://127.0.0.1:8000" });
});

Deno.test("console: a wrong code or password is refused, keeps the e-mail typed, and counts", async () => {
  await withHttpFixture(async (f) => {
    const operator = await makeOperator(
      f.deps,
      { email: "ana@ops.test", role: "clerk", signIn: false },
      f.clock.now(),
    );
    const browser = new ConsoleBrowser(f);
    const wrong = await browser.signIn(operator, { code: "000000" });
    assert.equal(wrong.status, 401);
    assert.match(textOf(wrong.html), /the e-mail, password or TOTP code is wrong/);
    assert.match(wrong.html, /id="email" name="email" value="ana@ops.test"/);
    assert.doesNotMatch(wrong.html, new RegExp(operator.password));
    assert.equal(browser.cookies.has("console_session"), false);
    assert.equal(await countRows(f, "live", auditCount("login:failed")), 1);
    const { rows } = await f.deps.databases.live.readClient.execute(
      "SELECT failed_attempts FROM operators",
    );
    assert.equal(rows[0].failed_attempts, 1);
  });
});

Deno.test("console: the first sign-in shows the TOTP secret as a QR code and as text, then never again", async () => {
  await withHttpFixture(async (f) => {
    const operator = await makeOperator(
      f.deps,
      { email: "ana@ops.test", role: "clerk", signIn: false },
      f.clock.now(),
    );
    const browser = new ConsoleBrowser(f);
    await browser.get("/console/sign-in");
    const enroll = await browser.post("/console/sign-in", {
      email: operator.email,
      password: operator.password,
      code: "",
    });
    assert.equal(enroll.status, 403);
    assert.match(enroll.html, /<svg[^>]*viewBox/);
    assert.match(enroll.html, new RegExp(`id="totp-secret">${operator.totpSecret}<`));
    // A wrong password is never shown the secret.
    const guess = await browser.post("/console/sign-in", {
      email: operator.email,
      password: "not-the-password-at-all",
      code: "",
    });
    assert.equal(guess.status, 401);
    assert.doesNotMatch(guess.html, new RegExp(operator.totpSecret));
    assert.doesNotMatch(guess.html, /<svg/);
    assert.equal((await browser.signIn(operator)).status, 303);
    f.clock.advance(30_000);
    const again = await new ConsoleBrowser(f).post("/console/sign-in", {
      email: operator.email,
      password: operator.password,
      code: "",
    }, { csrf: null });
    assert.doesNotMatch(again.html, new RegExp(operator.totpSecret));
  });
});

Deno.test("console: a sign-in without the form's token is refused and writes nothing", async () => {
  await withHttpFixture(async (f) => {
    const operator = await makeOperator(
      f.deps,
      { email: "ana@ops.test", role: "clerk", signIn: false },
      f.clock.now(),
    );
    const browser = new ConsoleBrowser(f);
    await browser.get("/console/sign-in");
    const forged = await browser.post("/console/sign-in", {
      email: operator.email,
      password: operator.password,
      code: totpCodeAt(operator.totpSecret, f.clock.now()),
    }, { csrf: "forged" });
    assert.equal(forged.status, 403);
    assert.equal(browser.cookies.has("console_session"), false);
    assert.equal(await countRows(f, "live", "SELECT count(*) AS n FROM operator_sessions"), 0);
    assert.equal(await countRows(f, "live", auditCount("login:failed")), 0);
  });
});

Deno.test("console: a state-changing form without the session's CSRF token is refused 403 and writes nothing", async () => {
  await withHttpFixture(async (f) => {
    const { browser } = await consoleAs(f, { email: "ana@ops.test", role: "admin" });
    const before = await countRows(f, "live", "SELECT count(*) AS n FROM audit_log");
    for (const csrf of [null, "forged-token"]) {
      const refused = await browser.post("/console/sign-out", {}, { csrf });
      assert.equal(refused.status, 403);
      assert.match(textOf(refused.html), /security token is missing or stale/);
    }
    assert.equal(await countRows(f, "live", "SELECT count(*) AS n FROM audit_log"), before);
    assert.equal(
      await countRows(
        f,
        "live",
        "SELECT count(*) AS n FROM operator_sessions WHERE ended_at IS NULL",
      ),
      1,
    );
  });
});

Deno.test("console: a session idle for an hour has expired and asks for a new sign-in", async () => {
  await withHttpFixture(async (f) => {
    const { browser } = await consoleAs(f, { email: "ana@ops.test", role: "viewer" });
    assert.equal((await browser.get("/console/payouts")).status !== 303, true);
    f.clock.advance(SESSION_IDLE_MS + 1);
    const expired = await browser.get("/console/payouts");
    assert.equal(expired.status, 303);
    assert.equal(expired.location, "/console/sign-in?next=%2Fconsole%2Fpayouts&notice=expired");
    const notice = await browser.get(expired.location!);
    assert.match(textOf(notice.html), /Your session ended after an hour without use/);
  });
});

Deno.test("console: use keeps the session alive past the first idle hour", async () => {
  await withHttpFixture(async (f) => {
    const { browser } = await consoleAs(f, { email: "ana@ops.test", role: "viewer" });
    for (let i = 0; i < 3; i++) {
      f.clock.advance(SESSION_IDLE_MS - 5 * 60_000);
      assert.notEqual((await browser.get("/console/payouts")).status, 303);
    }
  });
});

Deno.test("console: live data needs a session signed in with TOTP (dev mode signs in without)", async () => {
  await withHttpFixture(async (f) => {
    const operator = await makeOperator(
      f.deps,
      { email: "ana@ops.test", role: "admin", signIn: false },
      f.clock.now(),
    );
    const browser = new ConsoleBrowser(f);
    await browser.get("/console/sign-in");
    const signedIn = await browser.post("/console/sign-in", {
      email: operator.email,
      password: operator.password,
      code: "",
    });
    assert.equal(signedIn.status, 303);
    const test = await browser.get("/console/payouts?env=test");
    assert.equal(test.status, 200);
    assert.match(test.html, /id="test-banner"/);
    const live = await browser.get("/console/payouts?env=live");
    assert.equal(live.status, 403);
    assert.match(textOf(live.html), /Live data needs a session signed in with a TOTP code/);
    assert.doesNotMatch(live.html, /id="test-banner"/);
    // The refused choice is not remembered: the next page is test again.
    assert.match((await browser.get("/console/payouts")).html, /id="test-banner"/);
  }, { SANDBOX_DEV: "1" });
});

Deno.test("console: with TOTP, live is shown without the test banner, and the choice is remembered", async () => {
  await withHttpFixture(async (f) => {
    const { browser } = await consoleAs(f, { email: "ana@ops.test", role: "viewer" });
    const test = await browser.get("/console/payouts");
    assert.match(test.html, /id="test-banner"/);
    const live = await browser.get("/console/payouts?env=live");
    assert.equal(live.status, 200);
    assert.doesNotMatch(live.html, /id="test-banner"/);
    assert.match(live.html, /<a href="\/console\/payouts\?env=live" aria-current="page">Live<\/a>/);
    const remembered = await browser.get("/console/payouts");
    assert.doesNotMatch(remembered.html, /id="test-banner"/);
  });
});

Deno.test("console: sign-out ends the session (audited) and the cookie no longer works", async () => {
  await withHttpFixture(async (f) => {
    const { browser } = await consoleAs(f, { email: "ana@ops.test", role: "viewer" });
    const token = browser.cookies.get("console_session")!;
    await browser.get("/console/payouts");
    const out = await browser.post("/console/sign-out", {});
    assert.equal(out.status, 303);
    assert.equal(out.location, "/console/sign-in?notice=signed_out");
    assert.equal(browser.cookies.has("console_session"), false);
    assert.equal(await countRows(f, "live", auditCount("logout")), 1);
    browser.cookies.set("console_session", token);
    const after = await browser.get("/console/payouts");
    assert.equal(after.status, 303);
    assert.equal(after.location, "/console/sign-in?next=%2Fconsole%2Fpayouts");
  });
});

Deno.test("console: an unknown console path answers 404 in the console's frame", async () => {
  await withHttpFixture(async (f) => {
    const { browser } = await consoleAs(f, { email: "ana@ops.test", role: "viewer" });
    const page = await browser.get("/console/nowhere");
    assert.equal(page.status, 404);
    assert.match(page.html, /aria-label="Console pages"/);
  });
});

Deno.test("console: an operator enrols with the code sent to them, then the first sign-in shows their own TOTP secret", async () => {
  await withHttpFixture(async (f) => {
    const admin = await makeOperator(
      f.deps,
      { email: "ana@ops.test", role: "admin" },
      f.clock.now(),
    );
    const created = await createOperator(
      operatorDepsOf(f.deps),
      { operator: { id: admin.id, email: admin.email }, origin: "test" },
      { email: "cleo@ops.test", role: "clerk", companies: undefined },
      f.clock.now(),
    );
    assert.ok(created.ok);
    const code = await enrollmentCodeOf(f.deps, "cleo@ops.test");
    const browser = new ConsoleBrowser(f);
    const form = await browser.get(`/console/enroll?code=${code}`);
    assert.equal(form.status, 200);
    assert.match(form.html, new RegExp(`value="${code}"`));
    const weak = await browser.post("/console/enroll", { code, password: "too short" });
    assert.equal(weak.status, 400);
    const enrolled = await browser.post("/console/enroll", {
      code,
      password: "cleo's own password",
    });
    assert.deepEqual([enrolled.status, enrolled.location], [
      303,
      "/console/sign-in?notice=enrolled",
    ]);
    const reused = await browser.post("/console/enroll", { code, password: "another password!" });
    assert.equal(reused.status, 401, "a code works once");
    await browser.get("/console/sign-in");
    const first = await browser.post("/console/sign-in", {
      email: "cleo@ops.test",
      password: "cleo's own password",
      code: "",
    });
    assert.equal(first.status, 403);
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(first.html)![1];
    const signedIn = await browser.post("/console/sign-in", {
      email: "cleo@ops.test",
      password: "cleo's own password",
      code: totpCodeAt(secret, f.clock.now()),
    });
    assert.equal(signedIn.status, 303);
  });
});
