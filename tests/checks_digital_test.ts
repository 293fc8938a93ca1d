/**
 * Digital checks (issue 19): the payee's signed, expiring link to the PDF of their own check. It
 * says "not ready yet" until the check's positive-pay file was sent, then gives the same PDF with
 * the same number every time; an altered or foreign link is a 404, an expired one a 410, a voided
 * check is never served again. The portal's status page carries the link.
 */
import assert from "node:assert/strict";
import { PDFDocument } from "pdf-lib";
import {
  digitalCheckLink,
  payoutDigitalCheck,
  tellPayeeDigitalCheckReady,
} from "../lib/checks/digital.ts";
import { importPaidItems } from "../lib/checks/paid_import.ts";
import { voidCheckAudited } from "../lib/checks/voids.ts";
import { payoutRuntime } from "../lib/payouts/settings.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import type { AppDeps } from "../routes/context.ts";
import { digitalCheckRoutes } from "../routes/digital_checks.tsx";
import { api } from "./api_helpers.ts";
import { embedsFontFile, pdfPageTexts, STAND_IN_MICR_FONT } from "./check_pdf_text.ts";
import {
  checkFilesOf,
  chooseCheck,
  DIGITAL_CHECK,
  markSent,
  registerOf,
  rows,
  withCheckFixture,
} from "./checks_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import { withHttpFixture } from "./http_fixture.ts";
import { MONEY_SETTINGS, type MoneyFixture } from "./money_core_helpers.ts";
import { offeredPayee, PortalBrowser, verify } from "./portal_helpers.ts";

const HOUR_SECONDS = 3600;
const linkSettings = payoutRuntime("live", MONEY_SETTINGS).notifications;

/** The stand-in font as the configuration reads it at start from CHECK_MICR_FONT. */
const MICR_FONT = await Deno.readFile(STAND_IN_MICR_FONT);

/** The link route over the fixture's database with the MICR font, on a clock at its time. */
function linkRoute(m: MoneyFixture) {
  const clock = new FakeClock(m.now());
  const deps = {
    config: { checkMicrFont: MICR_FONT },
    databases: { test: m.database, live: m.database },
    secretBox: testSecretBox,
    clock,
  } as unknown as AppDeps;
  const app = digitalCheckRoutes(deps);
  return {
    clock,
    get: (url: string) => {
      const { pathname, search } = new URL(url);
      return app.request(`${pathname.replace(/^\/checks/, "")}${search}`);
    },
  };
}

async function checkId(m: MoneyFixture, number: number): Promise<string> {
  const [row] = await rows(m, "SELECT id FROM checks WHERE check_number = ?", number);
  return String(row.id);
}

Deno.test("a live digital check: not ready until its positive-pay file is sent, then the same PDF with the same number each time", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const [payoutId] = await chooseCheck(m, [12_345], { method: DIGITAL_CHECK });
    await m.advance(HOUR_SECONDS);
    const id = await checkId(m, 5001);
    const route = linkRoute(m);
    const link = await digitalCheckLink(testSecretBox, linkSettings, id, m.now());
    assert.match(link, /^http:\/\/127\.0\.0\.1:8000\/checks\/live\/digital\/chk_/);

    const early = await route.get(link);
    assert.equal(early.status, 200);
    assert.match(early.headers.get("Content-Type")!, /text\/html/);
    const page = await early.text();
    assert.match(page, /Your check is not ready yet/);
    assert.match(page, /Check number 5001 is on its way to the bank/);
    assert.deepEqual(
      await payoutDigitalCheck(
        m.database.readClient,
        testSecretBox,
        linkSettings,
        payoutId,
        m.now(),
      ),
      { checkNumber: 5001, status: "issued", ready: false, url: link },
    );

    const [positivePay] = await checkFilesOf(m);
    assert.deepEqual([positivePay.kind, positivePay.status], ["positive_pay", "built"]);
    const told = () =>
      rows(m, "SELECT subject, links FROM notifications WHERE subject LIKE '%is ready'");
    assert.deepEqual(await told(), [], "nobody is told before the bank knows the check");
    assert.ok((await markSent(m, "live", String(positivePay.batch_id))).ok);
    // Marking the file sent tells the payee, with a link to the same check.
    const [message] = await told();
    assert.equal(message.subject, "Acme: your check for $123.45 is ready");
    const [sentLink] = JSON.parse(String(message.links)) as string[];
    assert.match(sentLink, new RegExp(`/checks/live/digital/${id}\\?`));

    const ready = await route.get(link);
    assert.equal(ready.status, 200);
    assert.equal(ready.headers.get("Content-Type"), "application/pdf");
    assert.equal(ready.headers.get("Content-Disposition"), 'inline; filename="check-5001.pdf"');
    assert.equal(ready.headers.get("Cache-Control"), "private, no-store");
    const pdf = new Uint8Array(await ready.arrayBuffer());
    assert.equal((await PDFDocument.load(pdf)).getPageCount(), 1);
    const [text] = await pdfPageTexts(pdf);
    assert.match(text, /5001\n/);
    assert.match(text, /One Hundred Twenty Three and 45\/100 Dollars/);
    assert.match(text, /\*\*123\.45/);
    assert.doesNotMatch(text, /NOT NEGOTIABLE/, "the MICR font is set");
    assert.equal(await embedsFontFile(pdf), true);
    assert.doesNotMatch(text, /4455667788/, "the account number is on the MICR line only");

    // Asked again, later, with a fresh link: the same bytes, and still one check in the register.
    route.clock.set(m.now() + 3_600_000);
    const later = await digitalCheckLink(testSecretBox, linkSettings, id, m.now() + 3_600_000);
    assert.notEqual(later, link);
    const again = new Uint8Array(await (await route.get(later)).arrayBuffer());
    assert.deepEqual(again, pdf);
    assert.deepEqual((await registerOf(m)).map((c) => [c.check_number, c.kind]), [
      [5001, "digital"],
    ]);
    const status = await payoutDigitalCheck(
      m.database.readClient,
      testSecretBox,
      linkSettings,
      payoutId,
      m.now(),
    );
    assert.deepEqual([status?.ready, status?.checkNumber], [true, 5001]);
  });
});

Deno.test("a paid digital check's link says it was paid (410) and serves no PDF again", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const [payoutId] = await chooseCheck(m, [10_000], { method: DIGITAL_CHECK });
    await m.advance(HOUR_SECONDS);
    const [positivePay] = await checkFilesOf(m);
    assert.ok((await markSent(m, "live", String(positivePay.batch_id))).ok);
    const route = linkRoute(m);
    const link = await digitalCheckLink(
      testSecretBox,
      linkSettings,
      await checkId(m, 5001),
      m.now(),
    );
    assert.equal((await route.get(link)).status, 200);

    const imported = await importPaidItems({
      database: m.database,
      environment: "live",
      runtime: payoutRuntime("live", MONEY_SETTINGS),
    }, {
      companyId: m.companyId,
      content: new TextEncoder().encode("check_number,amount,paid_date\n5001,100.00,2026-01-08\n"),
      fileName: "paid.csv",
      source: "cli",
      importedBy: "op_admin",
    }, m.now());
    assert.ok(imported.ok, imported.ok ? "" : imported.message);
    assert.equal((await m.payout(payoutId)).status, "completed");

    const paid = await route.get(link);
    assert.equal(paid.status, 410);
    assert.equal(paid.headers.get("Content-Type"), "text/html; charset=UTF-8");
    const page = await paid.text();
    assert.match(page, /<h1>This check was paid<\/h1>/);
    assert.match(
      page,
      /Check number 5001 was deposited and paid on 2026-01-08: it cannot be used again\./,
    );
  });
});

Deno.test("digital check links: altered, foreign or expired links serve nothing; a voided check is never served again", async () => {
  await withCheckFixture("live", async ({ m }) => {
    const [first, second] = await chooseCheck(m, [10_000, 20_000], { method: DIGITAL_CHECK });
    await m.advance(HOUR_SECONDS);
    const [positivePay] = await checkFilesOf(m);
    assert.ok((await markSent(m, "live", String(positivePay.batch_id))).ok);
    const route = linkRoute(m);
    const id = await checkId(m, 5001);
    const otherId = await checkId(m, 5002);
    const link = await digitalCheckLink(testSecretBox, linkSettings, id, m.now());
    const url = new URL(link);
    const signature = url.searchParams.get("signature")!;
    const expires = url.searchParams.get("expires")!;
    const variants: [string, number, RegExp][] = [
      [link.replace(signature, `${signature.slice(0, -2)}AA`), 404, /This link does not work/],
      [link.replace(id, otherId), 404, /not a link to a check/],
      [
        link.replace(`expires=${expires}`, `expires=${Number(expires) + 1}`),
        404,
        /does not work/,
      ],
      [link.replace("/live/", "/test/"), 404, /does not work/],
      [link.replace("/live/", "/prod/"), 404, /does not work/],
      [`${url.origin}${url.pathname}`, 404, /does not work/],
    ];
    for (const [variant, status, body] of variants) {
      const answer = await route.get(variant);
      assert.equal(answer.status, status, variant);
      assert.match(await answer.text(), body);
    }
    route.clock.set(Number(expires) * 1000);
    const expired = await route.get(link);
    assert.equal(expired.status, 410);
    assert.match(await expired.text(), /This link has expired/);
    route.clock.set(m.now());
    assert.equal((await route.get(link)).status, 200);

    // The second check is voided: its link now says it can no longer be used.
    const voided = await m.database.writer.write((tx) =>
      voidCheckAudited(tx, "live", { operator: null, origin: "cli" }, {
        companyId: m.companyId,
        checkNumber: 5002,
        reason: "payee asked for a paper check",
        voidedBy: "ops",
      }, m.now())
    );
    assert.ok(voided.ok);
    const gone = await route.get(
      await digitalCheckLink(testSecretBox, linkSettings, otherId, m.now()),
    );
    assert.equal(gone.status, 410);
    assert.match(await gone.text(), /Check number 5002 was canceled: do not deposit it/);
    assert.deepEqual(
      await payoutDigitalCheck(
        m.database.readClient,
        testSecretBox,
        linkSettings,
        second,
        m.now(),
      ),
      { checkNumber: 5002, status: "voided", ready: false, url: null },
    );
    assert.notEqual(
      (await payoutDigitalCheck(
        m.database.readClient,
        testSecretBox,
        linkSettings,
        first,
        m.now(),
      ))
        ?.url,
      null,
    );
  });
});

Deno.test("the payee is told their digital check is ready, with its number and the signed link", async () => {
  await withCheckFixture("test", async ({ m }) => {
    const [payoutId] = await chooseCheck(m, [5_000], { method: DIGITAL_CHECK });
    const [check] = await rows(m, "SELECT id, check_number FROM checks");
    await m.database.writer.write((tx) =>
      tellPayeeDigitalCheckReady(
        tx,
        {
          secretBox: testSecretBox,
          notifications: payoutRuntime("test", MONEY_SETTINGS).notifications,
        },
        String(check.id),
        m.now(),
      )
    );
    const [message] = await rows(
      m,
      "SELECT channel, subject, body, links FROM notifications WHERE payout_id = ? AND subject LIKE '%check%' ORDER BY rowid DESC",
      payoutId,
    );
    assert.equal(message.subject, "Acme: your check for $50.00 is ready");
    assert.match(
      String(message.body),
      new RegExp(`check number ${check.check_number} for \\$50\\.00`),
    );
    const [link] = JSON.parse(String(message.links)) as string[];
    assert.match(link, new RegExp(`/checks/test/digital/${check.id}\\?expires=\\d+&signature=`));
    assert.ok(String(message.body).includes(link));
  });
});

Deno.test("the portal's status page of a digital check links to its PDF once its positive-pay file was sent", async () => {
  await withHttpFixture(async (f) => {
    const { email, linkPath } = await offeredPayee(f, "dora", { allowed_payment_method_ids: [5] });
    const browser = new PortalBrowser(f);
    await verify(browser, linkPath, email);
    await browser.get(`${linkPath}/method?method=digital_check`);
    const chosen = await browser.post(`${linkPath}/method`, {
      method: "digital_check",
      email,
    });
    assert.equal(chosen.status, 303, browser.lastHtml);
    // The submission takes a check number; the sandbox bank takes its positive-pay file at once.
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 60 });
    await browser.get(linkPath);
    assert.match(browser.lastHtml, /<h2>Your check<\/h2>/);
    assert.match(browser.lastHtml, /Check number 1001 is ready\./);
    const href = /href="([^"]*\/checks\/test\/digital\/[^"]+)"/.exec(browser.lastHtml)?.[1];
    assert.ok(href, browser.lastHtml);
    const url = new URL(href.replaceAll("&amp;", "&"));
    const pdf = await f.app.request(`${url.pathname}${url.search}`);
    assert.equal(pdf.status, 200);
    assert.equal(pdf.headers.get("Content-Type"), "application/pdf");
    const [text] = await pdfPageTexts(new Uint8Array(await pdf.arrayBuffer()));
    assert.match(text, /Two Hundred Fifty and 00\/100 Dollars/);
    assert.match(text, /NOT NEGOTIABLE: print on MICR stock with a MICR font/);
  }, { SANDBOX_INBOX: "1" });
});
