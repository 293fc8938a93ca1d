/** Every portal form's bad inputs: the form again with a clear message, and nothing stored. */
import assert from "node:assert/strict";
import { withHttpFixture } from "./http_fixture.ts";
import type { HttpFixture } from "./http_fixture.ts";
import { offeredPayee, PortalBrowser, settlingAchForm, verify } from "./portal_helpers.ts";

const inboxOn = { SANDBOX_INBOX: "1" };

async function payoutState(f: HttpFixture) {
  const { rows } = await f.deps.databases.test.readClient.execute(
    `SELECT status, payment_method_id, method_details,
            (SELECT count(*) FROM signed_documents) AS signatures,
            (SELECT count(*) FROM ledger_transactions) AS transactions FROM payouts`,
  );
  return { ...rows[0] };
}

const goodAch = settlingAchForm;

async function verifiedPayee(f: HttpFixture, uuid: string, extra: Record<string, unknown> = {}) {
  const { email, linkPath } = await offeredPayee(f, uuid, extra);
  const browser = new PortalBrowser(f);
  await verify(browser, linkPath, email);
  await browser.get(linkPath);
  return { browser, linkPath };
}

const cases: [string, Record<string, unknown>, Record<string, string>, RegExp][] = [
  [
    "bad routing checksum",
    {},
    { ...goodAch, routing_number: "011000016" },
    /routing number is not valid/,
  ],
  [
    "short account number",
    {},
    { ...goodAch, account_number: "12", account_number_confirm: "12" },
    /4 to 17 digits/,
  ],
  [
    "account numbers differ",
    {},
    { ...goodAch, account_number_confirm: "000123456780" },
    /do not match/,
  ],
  ["ACH without consent", {}, { ...goodAch, consent: "" }, /Tick the box to authorize/],
  ["ACH without a typed name", {}, { ...goodAch, typed_name: " " }, /Type your full name/],
  [
    "instant deposit card with a bad ZIP",
    { allowed_payment_method_ids: [4] },
    {
      method: "instant_deposit",
      card_token_id: "outbound_card_token_sbx_0001",
      card_last_four: "5556",
      cardholder_name: "Pat Doe",
      zip_code: "7330",
    },
    /5 digits/,
  ],
  [
    "unknown postage CODE",
    { allowed_payment_method_ids: [2] },
    {
      method: "check",
      address_one: "1 Main St",
      city: "Austin",
      state: "TX",
      zip_code: "73301",
      postage: "ZZ",
    },
    /Choose a delivery speed/,
  ],
  [
    "check without a state, bad ZIP",
    { allowed_payment_method_ids: [2] },
    { method: "check", address_one: "1 Main St", city: "Austin", state: "XX", zip_code: "7330" },
    /Choose the state\.[\s\S]*5 digits/,
  ],
  [
    "Venmo with a bad phone",
    { allowed_payment_method_ids: [6] },
    { method: "venmo", phone: "123" },
    /Enter a US phone number/,
  ],
  [
    "PayPal with a bad e-mail",
    { allowed_payment_method_ids: [7] },
    { method: "paypal", email: "not-an-email" },
    /Enter an e-mail address/,
  ],
];

for (const [name, extra, form, message] of cases) {
  Deno.test(`portal method form: ${name} → 422, the form again, nothing stored`, async () => {
    await withHttpFixture(async (f) => {
      const { browser, linkPath } = await verifiedPayee(f, "pat", extra);
      await browser.get(`${linkPath}/method?method=${form.method}`);
      const before = await payoutState(f);
      const res = await browser.post(`${linkPath}/method`, form);
      assert.equal(res.status, 422);
      assert.match(browser.lastHtml, message);
      assert.match(browser.lastHtml, /role="alert"/);
      assert.match(browser.lastHtml, /aria-invalid="true"/);
      assert.match(browser.lastHtml, /<form method="post" action="[^"]+\/method">/);
      assert.doesNotMatch(
        browser.lastHtml,
        /000123456789|4000056655665557/,
        "numbers are not echoed",
      );
      assert.deepEqual(await payoutState(f), before);
    }, inboxOn);
  });
}

Deno.test("portal: a forged CSRF token → 403, the page again, nothing stored", async () => {
  await withHttpFixture(async (f) => {
    const { browser, linkPath } = await verifiedPayee(f, "pat");
    await browser.get(`${linkPath}/method?method=ach`);
    const before = await payoutState(f);
    const forged = await browser.post(`${linkPath}/method`, goodAch, "forged-token");
    assert.equal(forged.status, 403);
    assert.match(browser.lastHtml, /did not come from this page/);
    assert.match(browser.lastHtml, /Choose how to be paid/);
    const missing = await browser.post(`${linkPath}/method`, goodAch, "");
    assert.equal(missing.status, 403);
    // Another browser's valid token is not this browser's.
    const other = new PortalBrowser(f);
    await other.get(linkPath);
    const foreign = await browser.post(`${linkPath}/method`, goodAch, other.csrf());
    assert.equal(foreign.status, 403);
    assert.deepEqual(await payoutState(f), before);
    assert.equal(before.status, "modality_offered");
  }, inboxOn);
});

Deno.test("portal: an unverified browser cannot act, even with its own valid token", async () => {
  await withHttpFixture(async (f) => {
    const { linkPath } = await offeredPayee(f, "pat");
    const stranger = new PortalBrowser(f);
    await stranger.get(linkPath);
    const before = await payoutState(f);
    const res = await stranger.post(`${linkPath}/method`, goodAch);
    assert.equal(res.status, 200);
    assert.match(stranger.lastHtml, /Confirm it is you/);
    const method = await stranger.get(`${linkPath}/method?method=ach`);
    assert.equal(method.status, 200);
    assert.match(stranger.lastHtml, /Confirm it is you/);
    assert.deepEqual(await payoutState(f), before);
  }, inboxOn);
});

Deno.test("portal: a method the company did not allow is not offered nor accepted", async () => {
  await withHttpFixture(async (f) => {
    const { browser, linkPath } = await verifiedPayee(f, "pat", {
      allowed_payment_method_ids: [2],
    });
    assert.doesNotMatch(browser.lastHtml, /value="ach"/);
    const before = await payoutState(f);
    await browser.post(`${linkPath}/method`, goodAch);
    assert.match(browser.lastHtml, /Choose how to be paid/);
    assert.deepEqual(await payoutState(f), before);
  }, inboxOn);
});

Deno.test("portal: the company's postage applies; a payee choice is ignored", async () => {
  await withHttpFixture(async (f) => {
    const { browser, linkPath } = await verifiedPayee(f, "pat", {
      allowed_payment_method_ids: [2],
      payment_method_settings: { check_postage_type: "PR" },
    });
    await browser.get(`${linkPath}/method?method=check`);
    assert.match(browser.lastHtml, /Priority Mail \(chosen by the company\)/);
    const res = await browser.post(`${linkPath}/method`, {
      method: "check",
      address_one: "1 Main St",
      city: "Austin",
      state: "TX",
      zip_code: "73301",
      postage: "USPSIDAY",
    });
    assert.equal(res.status, 303, browser.lastHtml);
    const details = JSON.parse(String((await payoutState(f)).method_details));
    assert.equal(details.postage, "PR");
    assert.equal(details.zip_code, "73301");
  }, inboxOn);
});

Deno.test("portal: in the sandbox a test card is typed at the Increase simulator's hosted card field, not the portal; the payout keeps its token and last four only", async () => {
  await withHttpFixture(async (f) => {
    const { browser, linkPath } = await verifiedPayee(f, "pat", {
      allowed_payment_method_ids: [4],
    });
    await browser.get(`${linkPath}/method?method=instant_deposit`);
    assert.doesNotMatch(browser.lastHtml, /name="card_number"/);
    const toPage = await browser.get(`${linkPath}/card`);
    assert.equal(toPage.status, 303);
    const page = new URL(toPage.headers.get("Location")!);
    assert.equal(
      `${page.origin}${page.pathname}`,
      `${f.deps.config.baseUrl}/sandbox/increase/card`,
    );
    const returnUrl = page.searchParams.get("return_url")!;
    assert.equal(returnUrl, `${f.deps.config.baseUrl}${linkPath}/card/return`);
    assert.equal((await f.app.request(`${page.pathname}${page.search}`)).status, 200);
    const typeCard = (pan: string, back = returnUrl) =>
      f.app.request("/sandbox/increase/card", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          pan,
          exp: "12/30",
          cvv: "123",
          return_url: back,
          state: page.searchParams.get("state")!,
        }).toString(),
      });
    const badLuhn = await typeCard("4000 0566 5566 5557");
    assert.equal(badLuhn.status, 422);
    assert.match(await badLuhn.text(), /card number is not valid/);
    // The field sends browsers back only to this service's portal.
    const elsewhere = await typeCard("4000056655665556", "https://attacker.example/portal/x");
    assert.equal(elsewhere.status, 400);
    await elsewhere.body?.cancel();
    const typed = await typeCard("4000 0566 5566 5556");
    assert.equal(typed.status, 303);
    const back = new URL(typed.headers.get("Location")!);
    assert.ok(!back.href.includes("4000056655665556"));
    assert.deepEqual([...back.searchParams.keys()].sort(), ["card_token_id", "state"]);
    await browser.get(`${back.pathname}${back.search}`);
    // The last four are read from the simulator's card token, as from Increase's.
    assert.match(browser.lastHtml, /name="card_last_four" value="5556"/);
    const tokenId = back.searchParams.get("card_token_id")!;
    assert.match(tokenId, /^outbound_card_token_sbx_/);
    // A token Increase never made is no card, whatever last four the form carries.
    const forged = await browser.post(`${linkPath}/method`, {
      method: "instant_deposit",
      card_token_id: "outbound_card_token_sbx_forged",
      card_last_four: "5556",
      cardholder_name: "Pat Doe",
      zip_code: "73301",
    });
    assert.equal(forged.status, 422);
    assert.match(browser.lastHtml, /Enter your card at our card partner first\./);
    assert.equal((await payoutState(f)).method_details, "{}");
    const res = await browser.post(`${linkPath}/method`, {
      method: "instant_deposit",
      card_token_id: tokenId,
      // A form altered in the browser: the last four kept are still the token's.
      card_last_four: "9999",
      cardholder_name: "Pat Doe",
      zip_code: "73301",
    });
    assert.equal(res.status, 303, browser.lastHtml);
    const state = await payoutState(f);
    assert.doesNotMatch(String(state.method_details), /4000056655665556/);
    const details = JSON.parse(String(state.method_details));
    assert.deepEqual(
      [details.last_four, details.card_token_id, details.scenario],
      ["5556", tokenId, undefined],
    );
  }, inboxOn);
});
