import assert from "node:assert/strict";
import { api } from "./api_helpers.ts";
import { withHttpFixture } from "./http_fixture.ts";
import {
  inbox,
  lastMessage,
  offeredPayee,
  pathOf,
  PortalBrowser,
  settlingAchForm,
  verify,
} from "./portal_helpers.ts";

const inboxOn = { SANDBOX_INBOX: "1" };

Deno.test("portal: code, ACH with a test account, confirmation, completed after the clock advance", async () => {
  await withHttpFixture(async (f) => {
    const { disbursementUuid, email, linkPath } = await offeredPayee(f, "pat");
    const browser = new PortalBrowser(f);
    const first = await browser.get(linkPath);
    assert.equal(first.status, 200);
    assert.match(browser.lastHtml, /Confirm it is you/);
    assert.match(browser.lastHtml, /p•••@example\.test/);
    assert.equal(first.headers.get("Referrer-Policy"), "no-referrer");
    assert.match(first.headers.get("Content-Security-Policy")!, /frame-ancestors 'none'/);
    await verify(browser, linkPath, email);

    const choose = await browser.get(linkPath);
    assert.equal(choose.status, 200);
    assert.match(browser.lastHtml, /Choose how to be paid/);
    assert.match(browser.lastHtml, /\$250\.00/);
    await browser.get(`${linkPath}/method?method=ach`);
    assert.match(browser.lastHtml, /Routing number/);

    const chosen = await browser.post(`${linkPath}/method`, settlingAchForm);
    assert.equal(chosen.status, 303, browser.lastHtml);
    await browser.get(`${linkPath}?confirmed=1`);
    assert.match(browser.lastHtml, /Your choice is confirmed/);
    assert.match(browser.lastHtml, /Checking account ending in 6789/);
    assert.match(browser.lastHtml, /<h1>Payment method chosen<\/h1>/);
    // The payout.submit job queues it; the 10:30 New York cutoff's file sends it.
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 30 * 60 });
    await browser.get(`${linkPath}?confirmed=1`);
    assert.match(browser.lastHtml, /Money sent/);
    assert.doesNotMatch(browser.lastHtml, /000123456789/);

    const stored = await f.deps.databases.test.readClient.execute(
      "SELECT method_details, method_last_four FROM payouts",
    );
    assert.equal(stored.rows[0].method_last_four, "6789");
    assert.doesNotMatch(String(stored.rows[0].method_details), /000123456789/);
    const sealed = JSON.parse(String(stored.rows[0].method_details)).account_sealed;
    assert.equal(await f.deps.secretBox.openText(sealed), "000123456789");

    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 5 * 86_400 });
    const transaction = await api(
      f,
      "GET",
      `/api/disbursements/${disbursementUuid}/payees/pat/transaction`,
    );
    const body = await transaction.json();
    assert.equal(body.status, "Completed", JSON.stringify(body));
    assert.equal(body.account_last_four, "6789");
    await browser.get(linkPath);
    assert.match(browser.lastHtml, /<h1>Paid<\/h1>/);
  }, inboxOn);
});

Deno.test("portal: a wrong code three times locks the link for 15 minutes", async () => {
  await withHttpFixture(async (f) => {
    const { email, linkPath } = await offeredPayee(f, "lock");
    const browser = new PortalBrowser(f);
    await browser.get(linkPath);
    await browser.post(`${linkPath}/code`, {});
    const code = (await lastMessage(f, email, /verification code/)).code!;
    const wrong = code === "000000" ? "111111" : "000000";
    await browser.get(linkPath);
    const first = await browser.post(`${linkPath}/verify`, { code: wrong });
    assert.equal(first.status, 422);
    assert.match(browser.lastHtml, /That code is not right\. 2 tries left\./);
    await browser.post(`${linkPath}/verify`, { code: wrong });
    assert.match(browser.lastHtml, /1 try left/);
    const third = await browser.post(`${linkPath}/verify`, { code: wrong });
    assert.equal(third.status, 429);
    assert.match(browser.lastHtml, /locked for 15 minutes/);
    // The right code no longer works while locked.
    const right = await browser.post(`${linkPath}/verify`, { code }, browser.csrf() || "x");
    assert.notEqual(right.status, 303);
    f.clock.advance(15 * 60_000 + 1);
    await browser.get(linkPath);
    assert.match(browser.lastHtml, /Send me a code/);
  }, inboxOn);
});

Deno.test("portal: unknown and replaced links show clear pages", async () => {
  await withHttpFixture(async (f) => {
    const browser = new PortalBrowser(f);
    const unknown = await browser.get(`/portal/${"A".repeat(43)}`);
    assert.equal(unknown.status, 404);
    assert.match(browser.lastHtml, /This link does not work/);
    const junk = await browser.get("/portal/../../etc");
    assert.equal(junk.status, 404);
    const { disbursementUuid, email, linkPath } = await offeredPayee(f, "old");
    const resent = await api(
      f,
      "POST",
      `/api/disbursements/${disbursementUuid}/payees/old/resend-notification`,
    );
    assert.equal(resent.status, 202);
    const replaced = await browser.get(linkPath);
    assert.equal(replaced.status, 410);
    assert.match(browser.lastHtml, /A newer link was sent/);
    const linksBefore = (await inbox(f)).filter((m) => m.to === email).length;
    const renewed = await browser.post(`${linkPath}/renew`, {});
    assert.equal(renewed.status, 200);
    assert.match(browser.lastHtml, /We sent you a new link/);
    const links = (await inbox(f)).filter((m) => m.to === email).map((m) => pathOf(m.links[0]));
    assert.equal(links.length, linksBefore + 1);
    assert.equal(new Set(links).size, links.length, "every notice carries its own link");
  }, inboxOn);
});
