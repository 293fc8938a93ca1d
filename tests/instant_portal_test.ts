/**
 * The payee types their debit card at the tokenization provider's hosted page and never at the
 * portal: over HTTP (the method page links to the hosted page, which sends the payee back with a
 * card token; the payee then gives the name and ZIP on the card), and in real Chromium against the
 * contract server's hosted page (nothing the portal's origin sent or received holds the number).
 * Test environment, a company with Increase settings pointing at the contract server; without
 * them, the Increase simulator's hosted card field takes the card (in Chromium too) and its
 * routing lookup refuses the sandbox's unreachable bank.
 */
import assert from "node:assert/strict";
import { freePort } from "../bench/service.ts";
import { sandboxTestDetails } from "../lib/rails/sandbox.ts";
import { api } from "./api_helpers.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import { offeredPayee, PortalBrowser, v1, verify } from "./portal_helpers.ts";
import { configureIncrease } from "./instant_helpers.ts";
import { IncreaseContractServer } from "./increase_contract_server.ts";
import { inPortalChromium } from "./portal_chromium.ts";

const PAN = "4000123412341234";

async function offered(f: HttpFixture, server: IncreaseContractServer) {
  await configureIncrease(f.deps.databases.test, server, f.cast.acme.id, f.clock.now());
  const { email, linkPath } = await offeredPayee(f, "pat", { allowed_payment_method_ids: [4] });
  const browser = new PortalBrowser(f);
  await verify(browser, linkPath, email);
  return { browser, linkPath };
}

Deno.test("portal: instant deposit sends the payee to the hosted card page and back with a token; the name and ZIP complete the choice; the push goes out", async () => {
  const server = await IncreaseContractServer.start();
  try {
    await withHttpFixture(async (f) => {
      const { browser, linkPath } = await offered(f, server);
      await browser.get(`${linkPath}/method?method=instant_deposit`);
      assert.match(browser.lastHtml, new RegExp(`href="${linkPath}/card"`));
      assert.doesNotMatch(browser.lastHtml, /name="card_number"/);
      const toPage = await browser.get(`${linkPath}/card`);
      assert.equal(toPage.status, 303);
      const page = new URL(toPage.headers.get("Location")!);
      assert.equal(`${page.origin}${page.pathname}`, `${server.baseUrl}/hosted/card`);
      assert.equal(
        page.searchParams.get("return_url"),
        `${f.deps.config.baseUrl}${linkPath}/card/return`,
      );
      // The payee's browser posts the card to the provider, which sends it back with a token.
      const typed = await fetch(`${server.baseUrl}/hosted/card`, {
        method: "POST",
        redirect: "manual",
        body: new URLSearchParams({
          pan: PAN,
          exp: "12/30",
          cvv: "123",
          return_url: page.searchParams.get("return_url")!,
          state: page.searchParams.get("state")!,
        }),
      });
      const back = new URL(typed.headers.get("Location")!);
      await typed.body?.cancel();
      assert.ok(!back.href.includes(PAN));
      // The provider forwarded the vault's fields to Increase's vault, which made the token.
      const tokenId = back.searchParams.get("card_token_id")!;
      assert.deepEqual([...back.searchParams.keys()].sort(), ["card_token_id", "state"]);
      assert.equal(server.tokens.get(tokenId)?.expirationDate, "2030-12-31");
      const returned = await browser.get(`${back.pathname}${back.search}`);
      assert.equal(returned.status, 200);
      assert.match(browser.lastHtml, new RegExp(`name="card_token_id" value="${tokenId}"`));
      // Its last four are Increase's token's, read with the API key, never the browser's word.
      assert.ok(server.requests.includes(`GET /card_tokens/${tokenId}`));
      assert.match(browser.lastHtml, /name="card_last_four" value="1234"/);
      const chosen = await browser.post(`${linkPath}/method`, {
        method: "instant_deposit",
        card_token_id: tokenId,
        card_last_four: "1234",
        cardholder_name: "Pat Doe",
        zip_code: "73301",
      });
      assert.equal(chosen.status, 303, browser.lastHtml);
      await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
      assert.equal(server.pushesTo(tokenId).length, 1);
      const status = await browser.get(linkPath);
      assert.equal(status.status, 200);
      assert.match(browser.lastHtml, /Debit card ending in 1234/, browser.lastHtml);
      const [stored] = (await f.deps.databases.test.readClient.execute(
        "SELECT status, method_details FROM payouts",
      )).rows;
      assert.equal(stored.status, "funds_sent");
      assert.ok(!String(stored.method_details).includes(PAN));
      assert.equal(JSON.parse(String(stored.method_details)).network, "visa");
      // /v1 shows it as instant_deposit with the network it went over.
      const [{ id: payoutId }] = (await f.deps.databases.test.readClient.execute(
        "SELECT id FROM payouts",
      )).rows;
      const shown = await (await v1(f, "GET", `/v1/disbursements/${payoutId}`)).json();
      assert.deepEqual([shown.modality, shown.network], ["instant_deposit", "visa"]);

      // A return that is not this session's is a fresh start, and no token is taken from it.
      await browser.get(`${linkPath}/card/return?state=other&card_token_id=x`);
      assert.doesNotMatch(browser.lastHtml, /name="card_token_id"/);
      // Nor from a return of this session naming a token Increase does not have (404).
      await browser.get(`${linkPath}/method?method=instant_deposit`);
      await browser.get(
        `${linkPath}/card/return?state=${page.searchParams.get("state")}&card_token_id=forged`,
      );
      assert.doesNotMatch(browser.lastHtml, /name="card_token_id"/);
    }, { SANDBOX_INBOX: "1" });
  } finally {
    await server.close();
  }
});

Deno.test("contract: Increase's vault takes the card's number, expiry and CVV2 with the tokenization key only, answers {card_token}, and refuses a malformed field by name; the hosted page shows the refusal and sends nothing back", async () => {
  const server = await IncreaseContractServer.start();
  try {
    const vault = (key: string, body: Record<string, unknown>) =>
      fetch(`${server.baseUrl}/card_tokens`, {
        method: "POST",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    const card = {
      primary_account_number: PAN,
      expiration_month: 3,
      expiration_year: 2030,
      card_verification_value2: "123",
    };
    const made = await vault(server.tokenizationKey, card);
    assert.equal(made.status, 200);
    const { card_token: tokenId, ...rest } = await made.json();
    assert.deepEqual(rest, {});
    const read = await fetch(`${server.baseUrl}/card_tokens/${tokenId}`, {
      headers: { Authorization: `Bearer ${server.apiKey}` },
    });
    const token = await read.json();
    assert.deepEqual({ ...token, created_at: "…" }, {
      id: tokenId,
      created_at: "…",
      expiration_date: "2030-03-31",
      last4: "1234",
      length: 16,
      prefix: "40001234",
      type: "card_token",
    });
    const apiKeyRefused = await vault(server.apiKey, card);
    assert.equal(apiKeyRefused.status, 401);
    await apiKeyRefused.body?.cancel();
    const refused = await vault(server.tokenizationKey, { ...card, expiration_month: 13 });
    assert.equal(refused.status, 400);
    assert.deepEqual(await refused.json(), {
      status: 400,
      type: "invalid_parameters_error",
      title: "invalid parameters error",
      detail: "expiration_month: must be an integer from 1 to 12",
    });
    const page = await fetch(`${server.baseUrl}/hosted/card`, {
      method: "POST",
      redirect: "manual",
      body: new URLSearchParams({
        pan: PAN,
        exp: "13/30",
        cvv: "123",
        return_url: "http://127.0.0.1:1/portal/x/card/return",
        state: "s",
      }),
    });
    assert.equal(page.status, 422);
    assert.match(await page.text(), /expiration_month: must be an integer from 1 to 12/);
    assert.equal(server.tokens.size, 1);
  } finally {
    await server.close();
  }
});

Deno.test({
  name:
    "browser: the payee types the card in Chromium at the contract server's hosted page; the portal's origin never sends or receives the number",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const server = await IncreaseContractServer.start();
    const port = freePort();
    try {
      await withHttpFixture(async (f) => {
        const { browser: portal, linkPath } = await offered(f, server);
        await inPortalChromium(f, portal, { port }, async (page, portalTraffic, origin) => {
          await page.goto(`${origin}${linkPath}/method?method=instant_deposit`);
          await page.getByRole("link", { name: "Enter your debit card securely" }).click();
          await page.waitForURL(`${server.baseUrl}/hosted/card**`);
          await page.getByLabel("Card number").fill(PAN);
          await page.getByLabel("Expiry").fill("12/30");
          await page.getByLabel("CVV").fill("123");
          await page.getByRole("button", { name: "Save card" }).click();
          await page.waitForURL(`${origin}${linkPath}/card/return**`);
          await page.getByLabel("Name on the card").fill("Pat Doe");
          await page.getByLabel("ZIP code").fill("73301");
          await page.getByRole("button", { name: /Confirm/ }).click();
          await page.waitForURL(`${origin}${linkPath}?confirmed=1`);
          const [token] = server.tokens.values();
          assert.equal(token.pan, PAN);
          assert.ok(portalTraffic.length > 0);
          for (const seen of portalTraffic) {
            assert.ok(!seen.includes(PAN), "the portal's origin saw the card number");
          }
        });
      }, { SANDBOX_INBOX: "1", BASE_URL: `http://127.0.0.1:${port}` });
    } finally {
      await server.close();
    }
  },
});

Deno.test({
  name:
    "browser, sandbox without Increase settings: the payee types a test card in Chromium at the Increase simulator's hosted card field; no request to or answer from the portal holds the number; the push completes",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const port = freePort();
    const card = "4000056655665556";
    await withHttpFixture(async (f) => {
      const { email, linkPath } = await offeredPayee(f, "pat", { allowed_payment_method_ids: [4] });
      const portal = new PortalBrowser(f);
      await verify(portal, linkPath, email);
      const watched = { port, watched: "/portal/" };
      await inPortalChromium(f, portal, watched, async (page, portalTraffic, origin) => {
        await page.goto(`${origin}${linkPath}/method?method=instant_deposit`);
        await page.getByRole("link", { name: "Enter your debit card securely" }).click();
        await page.waitForURL(`${origin}/sandbox/increase/card**`);
        await page.getByLabel("Card number").fill(card);
        await page.getByLabel("Expiry (MM/YY)").fill("12/30");
        await page.getByLabel("Security code (CVV)").fill("123");
        await page.getByRole("button", { name: "Save card" }).click();
        await page.waitForURL(`${origin}${linkPath}/card/return**`);
        await page.getByLabel("Name on the card").fill("Pat Doe");
        await page.getByLabel("ZIP code").fill("73301");
        await page.getByRole("button", { name: /Confirm/ }).click();
        await page.waitForURL(`${origin}${linkPath}?confirmed=1`);
        assert.ok(portalTraffic.length > 0);
        for (const seen of portalTraffic) {
          assert.ok(!seen.includes(card), "the portal saw the card number");
        }
      });
      await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 5 });
      const [stored] = (await f.deps.databases.test.readClient.execute(
        "SELECT status, method_details FROM payouts",
      )).rows;
      assert.equal(stored.status, "completed");
      assert.equal(JSON.parse(String(stored.method_details)).last_four, "5556");
    }, { SANDBOX_INBOX: "1", BASE_URL: `http://127.0.0.1:${port}` });
  },
});

/** What the sandbox's hosted card field shows in each language the portal speaks. */
const HOSTED_FIELD_TEXTS = [
  ["en", {
    title: "Sandbox card partner",
    cardNumber: "Card number",
    expiry: "Expiry \\(MM/YY\\)",
    cvv: "Security code \\(CVV\\)",
    save: "Save card",
    problems: {
      pan: "This card number is not valid: check the digits on the front of your card.",
      exp: "This expiry is not valid: type the month and year printed on your card, as MM/YY.",
      expired: "This card has expired: use a card whose expiry has not passed.",
      cvv: "This security code is not valid: type the 3 or 4 digits printed on your card.",
    },
  }],
  ["es", {
    title: "Socio de tarjetas del sandbox",
    cardNumber: "Número de tarjeta",
    expiry: "Vencimiento \\(MM/AA\\)",
    cvv: "Código de seguridad \\(CVV\\)",
    save: "Guardar tarjeta",
    problems: {
      pan: "Este número de tarjeta no es válido: revise los dígitos del frente de su tarjeta.",
      exp:
        "Este vencimiento no es válido: escriba el mes y el año impresos en su tarjeta, como MM/AA.",
      expired: "Esta tarjeta está vencida: use una tarjeta cuyo vencimiento no haya pasado.",
      cvv:
        "Este código de seguridad no es válido: escriba los 3 o 4 dígitos impresos en su tarjeta.",
    },
  }],
] as const;

for (const [language, text] of HOSTED_FIELD_TEXTS) {
  Deno.test(`portal in ${language}, sandbox without Increase settings: the hosted card field is sent the portal's language and shows its labels (number, expiry, CVV), each refusal beside the field at fault and its button in it; a card typed there with its expiry goes back to the portal, its token reporting that expiry`, async () => {
    await withHttpFixture(async (f) => {
      const { email, linkPath } = await offeredPayee(f, "pat", { allowed_payment_method_ids: [4] });
      const browser = new PortalBrowser(f);
      await verify(browser, linkPath, email);
      await browser.get(`${linkPath}/method?method=instant_deposit&lang=${language}`);
      const toField = await browser.get(`${linkPath}/card`);
      assert.equal(toField.status, 303);
      const field = new URL(toField.headers.get("Location")!);
      assert.equal(field.pathname, "/sandbox/increase/card");
      assert.equal(field.searchParams.get("lang"), language);
      const shown = await browser.get(`${field.pathname}${field.search}`);
      assert.equal(shown.status, 200);
      const speaks = (html: string) => {
        assert.match(html, new RegExp(`<html lang="${language}">`));
        assert.match(html, new RegExp(`<title>${text.title}</title>`));
        assert.match(html, new RegExp(`<label for="pan">${text.cardNumber}</label>`));
        assert.match(html, new RegExp(`<label for="exp">${text.expiry}</label>`));
        assert.match(html, new RegExp(`<label for="cvv">${text.cvv}</label>`));
        assert.match(html, new RegExp(`<button type="submit">${text.save}</button>`));
        assert.match(html, new RegExp(`name="lang" value="${language}"`));
      };
      speaks(browser.lastHtml);
      const form = {
        return_url: field.searchParams.get("return_url")!,
        state: field.searchParams.get("state")!,
        lang: language,
      };
      const card = { pan: "4000056655665556", exp: "07/31", cvv: "123" };
      const refusals = [
        [{ pan: "4111 1111 1111 1112" }, "pan", text.problems.pan],
        [{ exp: "13/31" }, "exp", text.problems.exp],
        [{ exp: "" }, "exp", text.problems.exp],
        [{ exp: "12/20" }, "exp", text.problems.expired],
        [{ cvv: "12" }, "cvv", text.problems.cvv],
      ] as const;
      for (const [typo, field, problem] of refusals) {
        const refused = await browser.post("/sandbox/increase/card", {
          ...form,
          ...card,
          ...typo,
        });
        assert.equal(refused.status, 422, JSON.stringify(typo));
        speaks(browser.lastHtml);
        assert.ok(
          browser.lastHtml.includes(`<p class="error" id="card-problem">${problem}</p>`),
          JSON.stringify(typo),
        );
        const marked = [...browser.lastHtml.matchAll(/<input id="(\w+)"[^>]*aria-invalid="true"/g)]
          .map((m) => m[1]);
        assert.deepEqual(marked, [field], JSON.stringify(typo));
        // What was typed is never shown back.
        assert.ok(!browser.lastHtml.includes("4111 1111 1111 1112"));
      }
      const typed = await browser.post("/sandbox/increase/card", { ...form, ...card });
      assert.equal(typed.status, 303);
      const back = new URL(typed.headers.get("Location")!);
      assert.equal(back.pathname, `${linkPath}/card/return`);
      assert.deepEqual([...back.searchParams.keys()].sort(), ["card_token_id", "state"]);
      const returned = await browser.get(`${back.pathname}${back.search}`);
      assert.equal(returned.status, 200);
      assert.match(browser.lastHtml, new RegExp(`<html lang="${language}"`));
      assert.match(browser.lastHtml, /name="card_token_id" value="outbound_card_token_/);
      assert.match(browser.lastHtml, /name="card_last_four" value="5556"/);
      const [kept] = (await f.deps.databases.test.readClient.execute(
        "SELECT expiration_date FROM increase_simulator_cards",
      )).rows;
      assert.equal(kept.expiration_date, "2031-07-31");
    }, { SANDBOX_INBOX: "1" });
  });
}

const bankForm = (routing: string) => ({
  method: "instant_deposit",
  instant_to: "bank",
  account_holder: "Pat Doe",
  routing_number: routing,
  account_number: "000123456789",
  account_number_confirm: "000123456789",
});

Deno.test("portal: an instant bank payment is offered only to a bank Increase's routing lookup says takes RTP; a reachable one is paid over RTP", async () => {
  const server = await IncreaseContractServer.start();
  try {
    await withHttpFixture(async (f) => {
      const { browser, linkPath } = await offered(f, server);
      await browser.get(`${linkPath}/method?method=instant_deposit&to=bank`);
      assert.match(browser.lastHtml, /name="instant_to" value="bank"/);
      const refused = await browser.post(`${linkPath}/method`, bankForm("091000019"));
      assert.equal(refused.status, 422);
      assert.match(browser.lastHtml, /Your bank cannot receive instant payments/);
      assert.equal(server.rtpTransfers.size, 0);
      const chosen = await browser.post(`${linkPath}/method`, bankForm("021000021"));
      assert.equal(chosen.status, 303, browser.lastHtml);
      await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
      const [transfer] = server.rtpTransfers.values();
      assert.deepEqual([transfer.amount, transfer.routing_number], [25_000, "021000021"]);
      await browser.get(linkPath);
      assert.match(browser.lastHtml, /Instant payment to the bank account ending in 6789/);
      const [stored] = (await f.deps.databases.test.readClient.execute(
        "SELECT method_details FROM payouts",
      )).rows;
      assert.ok(!String(stored.method_details).includes("000123456789"));
    }, { SANDBOX_INBOX: "1" });
  } finally {
    await server.close();
  }
});

Deno.test("sandbox: routing number 091000019 cannot take an instant bank payment (the choice is refused); another bank is paid", async () => {
  await withHttpFixture(async (f) => {
    const { email, linkPath } = await offeredPayee(f, "pat", { allowed_payment_method_ids: [4] });
    const browser = new PortalBrowser(f);
    await verify(browser, linkPath, email);
    await browser.get(`${linkPath}/method?method=instant_deposit&to=bank`);
    const refused = await browser.post(
      `${linkPath}/method`,
      bankForm(sandboxTestDetails.rtpUnreachableRouting),
    );
    assert.equal(refused.status, 422);
    assert.match(browser.lastHtml, /Your bank cannot receive instant payments/);
    assert.equal((await browser.post(`${linkPath}/method`, bankForm("021000021"))).status, 303);
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 10 });
    const [stored] = (await f.deps.databases.test.readClient.execute(
      "SELECT status FROM payouts",
    )).rows;
    assert.equal(stored.status, "completed");
  }, { SANDBOX_INBOX: "1" });
});
