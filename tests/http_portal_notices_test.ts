/**
 * What payees receive: Surface B payees in their language and on their channel, the non-secret
 * `payee_url` landing page that sends a fresh link, and an inbox whose links all lead somewhere.
 */
import assert from "node:assert/strict";
import { withHttpFixture } from "./http_fixture.ts";
import { inbox, pathOf, PortalBrowser, v1Disbursement } from "./portal_helpers.ts";

const inboxOn = { SANDBOX_INBOX: "1" };

Deno.test("notices: a Spanish-speaking SMS payee gets Spanish SMS, code included", async () => {
  await withHttpFixture(async (f) => {
    await v1Disbursement(f, {
      id: "rosa",
      name: "Rosa",
      phone: "+15552013344",
      language: "es",
      contact_channel: "sms",
    });
    const [offer] = await inbox(f);
    assert.equal(offer.channel, "sms");
    assert.equal(offer.to, "+15552013344");
    assert.match(offer.body, /^Acme Mutual le paga \$75\.00\. Elija cómo cobrar: http/);
    const browser = new PortalBrowser(f);
    const linkPath = pathOf(offer.links[0]);
    await browser.get(linkPath);
    assert.match(browser.lastHtml, /un teléfono que termina en 3344/);
    f.clock.advance(1000); // the inbox sorts by time: the code comes after the offer
    await browser.post(`${linkPath}/code`, {});
    const [code] = await inbox(f);
    assert.match(code.body, /^\d{6} es su código de verificación de pago de Acme Mutual\./);
    assert.equal(code.code, code.body.slice(0, 6));
    // A second code at once is refused: the phone is not a target for floods.
    await browser.get(linkPath);
    const again = await browser.post(`${linkPath}/code`, {});
    assert.equal(again.status, 429);
    assert.match(browser.lastHtml, /Espere medio minuto/);
  }, inboxOn);
});

Deno.test("payee_url: a non-secret page that sends a fresh link and tells nothing", async () => {
  await withHttpFixture(async (f) => {
    const { id, payee_url } = await v1Disbursement(f, { id: "pay-me", email: "pm@example.test" });
    assert.equal(pathOf(payee_url), `/pay/${id}`);
    const browser = new PortalBrowser(f);
    const landing = await browser.get(`/pay/${id}`);
    assert.equal(landing.status, 200);
    assert.doesNotMatch(browser.lastHtml, /75\.00|pm@example|Acme/, "the page reveals nothing");
    const before = (await inbox(f)).length;
    f.clock.advance(1000);
    const sent = await browser.post(`/pay/${id}`, {});
    assert.equal(sent.status, 200);
    assert.match(browser.lastHtml, /Check your messages/);
    const messages = await inbox(f);
    assert.equal(messages.length, before + 1);
    assert.match(messages[0].subject!, /^Reminder: Acme Mutual has a payment for you$/);

    // An unknown id gets the same answer and sends nothing; a forged form is refused.
    await browser.get(`/pay/dsb_${"x".repeat(22)}`);
    await browser.post(`/pay/dsb_${"x".repeat(22)}`, {});
    assert.match(browser.lastHtml, /Check your messages/);
    assert.equal((await inbox(f)).length, before + 1);
    const forged = await new PortalBrowser(f).post(`/pay/${id}`, {}, "forged");
    assert.equal(forged.status, 403);
    assert.equal((await inbox(f)).length, before + 1);
  }, inboxOn);
});

Deno.test("inbox: every link the flows sent leads to a page; only the newest of a payee is live", async () => {
  await withHttpFixture(async (f) => {
    const { id } = await v1Disbursement(f, { id: "ink", email: "ink@example.test" });
    const browser = new PortalBrowser(f);
    await browser.get(`/pay/${id}`);
    f.clock.advance(1000);
    await browser.post(`/pay/${id}`, {});
    const page = await (await f.app.request("/sandbox/inbox")).text();
    const links = [...page.matchAll(/<a href="([^"]+\/portal\/[^"]+)">/g)].map((m) => m[1]);
    assert.equal(links.length, 2);
    const statuses = [];
    for (const link of links) statuses.push((await new PortalBrowser(f).get(pathOf(link))).status);
    assert.deepEqual(statuses, [200, 410], "newest first: the live link, then the replaced one");
  }, inboxOn);
});
