/**
 * The payee sees their virtual card in Lithic's hosted iframe, and the portal never receives its
 * number: over HTTP (the status page carries the signed embed URL and frames the issuer's origin
 * only), and in real Chromium (the iframe shows the number, loaded from the contract server;
 * nothing the portal's origin sent or received holds it). Test environment, a company with Lithic
 * settings pointing at the contract server.
 */
import assert from "node:assert/strict";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import type { PortalBrowser } from "./portal_helpers.ts";
import { cardChosenInPortal, configureLithic } from "./cards_helpers.ts";
import { inPortalChromium } from "./portal_chromium.ts";
import { LithicContractServer } from "./lithic_contract_server.ts";
import type { ContractCard } from "./lithic_contract_server.ts";

const INBOX = { SANDBOX_INBOX: "1" };

/**
 * Whether a page shows `digits` as a number of its own: a 3-digit CVV also occurs by chance inside
 * the page's tokens, nonces and longer numbers, which show nothing.
 */
function showsNumber(html: string, digits: string): boolean {
  return new RegExp(`(?<![\\w+/=.,-])${digits}(?![\\w+/=.,-])`).test(html);
}

/** A payee of Acme (test) who chose a virtual card in the portal and whose card was issued. */
async function paidByCard(
  f: HttpFixture,
  server: LithicContractServer,
): Promise<{ browser: PortalBrowser; linkPath: string; card: ContractCard }> {
  await configureLithic(f.deps.databases.test, server, f.cast.acme.id, f.clock.now());
  server.now = () => f.clock.now();
  const { browser, linkPath } = await cardChosenInPortal(f);
  const [card] = [...server.cards.values()];
  assert.ok(card, "Lithic issued no card");
  assert.equal(card.spend_limit, 25_000);
  return { browser, linkPath, card };
}

Deno.test("portal: a paid virtual card is shown in Lithic's signed iframe; the page frames that origin only and never holds the number", async () => {
  const server = await LithicContractServer.start();
  try {
    await withHttpFixture(async (f) => {
      const { browser, linkPath, card } = await paidByCard(f, server);
      const page = await browser.get(linkPath);
      assert.equal(page.status, 200);
      assert.match(browser.lastHtml, /<h1>Paid<\/h1>/);
      assert.match(browser.lastHtml, new RegExp(`card ending in ${card.last_four}`));
      const src = /<iframe[^>]* src="([^"]+)"/.exec(browser.lastHtml)?.[1]?.replaceAll(
        "&amp;",
        "&",
      );
      assert.ok(src, browser.lastHtml);
      const url = new URL(src);
      assert.equal(url.origin, server.baseUrl);
      assert.equal(url.pathname, "/v1/embed/card");
      const request = JSON.parse(atob(url.searchParams.get("embed_request")!));
      assert.equal(request.token, card.token);
      assert.match(
        page.headers.get("Content-Security-Policy")!,
        new RegExp(`frame-src ${server.baseUrl}$`),
      );
      assert.ok(!browser.lastHtml.includes(server.panOf(card)));
      assert.ok(!showsNumber(browser.lastHtml, server.cvvOf(card)));
      // The signed URL works at Lithic; one tampered with does not.
      const shown = await fetch(src);
      assert.equal(shown.status, 200);
      assert.match(await shown.text(), new RegExp(server.panOf(card).slice(0, 4)));
      url.searchParams.set("hmac", "forged");
      const forged = await fetch(url);
      assert.equal(forged.status, 401);
      await forged.body?.cancel();
    }, INBOX);
  } finally {
    await server.close();
  }
});

Deno.test({
  name:
    "browser: the payee's Chromium shows the card number inside Lithic's iframe; the portal's origin never sends or receives it",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const server = await LithicContractServer.start();
    try {
      await withHttpFixture(async (f) => {
        const { browser: portal, linkPath, card } = await paidByCard(f, server);
        const pan = server.panOf(card);
        await inPortalChromium(f, portal, { port: 0 }, async (page, portalTraffic, origin) => {
          await page.goto(`${origin}${linkPath}`);
          const frame = page.frameLocator("iframe.virtual-card");
          const shown = await frame.locator("#pan").textContent({ timeout: 15_000 });
          assert.equal(shown?.replaceAll(" ", ""), pan);
          // The portal's own document cannot see into the issuer's frame, and holds no number.
          assert.ok(!(await page.content()).includes(pan));
          assert.ok(!showsNumber(await page.content(), server.cvvOf(card)));
          assert.ok(portalTraffic.length > 0);
          for (const seen of portalTraffic) {
            assert.ok(
              !seen.replaceAll(" ", "").includes(pan),
              "the portal's origin saw the number",
            );
          }
          assert.ok(server.embedsServed.includes(card.token));
        });
      }, INBOX);
    } finally {
      await server.close();
    }
  },
});
