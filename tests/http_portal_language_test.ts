/**
 * The portal in the payee's language: a /v1 payee's `language` (Surface A payees: English), the
 * page's English | Español switch remembered in a cookie scoped to the link, and the browser's
 * Accept-Language where no payout is known. The text tables are checked against each other.
 */
import assert from "node:assert/strict";
import { applyMove } from "../lib/payouts/store.ts";
import { portalText } from "../lib/portal/portal_text.ts";
import { acceptedLanguage } from "../routes/portal/language.ts";
import { api, parties, payee } from "./api_helpers.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";
import {
  inbox,
  lastMessage,
  offeredPayee,
  pathOf,
  PortalBrowser,
  settlingAchForm,
  v1,
  v1Disbursement,
  verify,
} from "./portal_helpers.ts";

const inboxOn = { SANDBOX_INBOX: "1" };
const noFees = { payorFeeCents: 0, payeeFeeCents: 0, serviceFeeCents: 0 };
const spanishBrowser = { "Accept-Language": "es-MX,es;q=0.9" };
const englishBrowser = { "Accept-Language": "en-US" };

/** A Spanish-speaking /v1 payee reached by e-mail; returns the path of the offer's link. */
async function spanishPayee(f: HttpFixture): Promise<string> {
  await v1Disbursement(f, {
    id: "rosa",
    name: "Rosa Díaz",
    email: "rosa@example.test",
    language: "es",
  });
  return pathOf((await lastMessage(f, "rosa@example.test", /Elija cómo/)).links[0]);
}

const htmlLang = (html: string) => /<html lang="([^"]*)">/.exec(html)?.[1];
const heading = (html: string) => /<h1>([^<]*)<\/h1>/.exec(html)?.[1];

Deno.test("portal language: a Spanish /v1 payee is verified, chooses ACH and follows it in Spanish", async () => {
  await withHttpFixture(async (f) => {
    const linkPath = await spanishPayee(f);
    const browser = new PortalBrowser(f, englishBrowser);

    const first = await browser.get(linkPath);
    assert.equal(first.status, 200);
    assert.equal(htmlLang(browser.lastHtml), "es", "the payee's language beats the browser's");
    assert.equal(heading(browser.lastHtml), "Confirme su identidad");
    assert.match(
      browser.lastHtml,
      /<p>Para proteger su pago, le enviaremos un código de 6 dígitos a r•••@example\.test\.<\/p>/,
    );
    assert.match(browser.lastHtml, /<button type="submit">Envíenme un código<\/button>/);
    assert.match(browser.lastHtml, new RegExp(`<a href="${linkPath}\\?lang=en" lang="en"`));
    assert.match(browser.lastHtml, /<footer>Esta página es solo para usted\./);

    assert.equal((await browser.post(`${linkPath}/code`, {})).status, 303);
    const code = (await lastMessage(f, "rosa@example.test", /código de verificación/)).code!;
    await browser.get(linkPath);
    assert.equal(htmlLang(browser.lastHtml), "es");
    assert.match(browser.lastHtml, /Escriba el código de 6 dígitos/);
    assert.match(
      browser.lastHtml,
      /Se lo enviamos a r•••@example\.test\. Es válido por 10 minutos\./,
    );
    const wrong = await browser.post(`${linkPath}/verify`, {
      code: code === "000000" ? "111111" : "000000",
    });
    assert.equal(wrong.status, 422);
    assert.match(browser.lastHtml, /<p class="error">Corrija lo siguiente:<\/p>/);
    assert.match(browser.lastHtml, /Ese código no es correcto\. Le quedan 2 intentos\./);
    assert.equal((await browser.post(`${linkPath}/verify`, { code })).status, 303);

    const choose = await browser.get(linkPath);
    assert.equal(choose.status, 200);
    assert.equal(htmlLang(browser.lastHtml), "es");
    assert.equal(heading(browser.lastHtml), "Elija cómo quiere recibir su pago");
    assert.match(browser.lastHtml, /<p>Acme Mutual le paga<\/p><p class="amount">\$75\.00<\/p>/);
    assert.match(browser.lastHtml, /<legend>¿Cómo quiere recibir su pago\?<\/legend>/);
    assert.match(browser.lastHtml, /Depósito directo en una cuenta bancaria \(ACH\)/);

    await browser.get(`${linkPath}/method?method=ach`);
    assert.equal(heading(browser.lastHtml), "Depósito directo en una cuenta bancaria (ACH)");
    assert.match(browser.lastHtml, /Número de ruta \(routing number\)/);
    assert.match(browser.lastHtml, /Escriba su nombre completo para firmar la autorización/);
    assert.match(
      browser.lastHtml,
      new RegExp(`<a href="${linkPath}/method\\?method=ach&amp;lang=en" lang="en"`),
      "the switch keeps the page it is on",
    );

    const refused = await browser.post(`${linkPath}/method`, {
      ...settlingAchForm,
      routing_number: "011000016",
      consent: "",
    });
    assert.equal(refused.status, 422);
    assert.equal(htmlLang(browser.lastHtml), "es");
    assert.match(
      browser.lastHtml,
      /<p class="error" id="routing_number-error">Este número de ruta no es válido: revise los nueve dígitos de la parte inferior izquierda de un cheque\.<\/p>/,
    );
    assert.match(browser.lastHtml, /Marque la casilla para autorizar el depósito\./);
    assert.doesNotMatch(browser.lastHtml, /routing number is not valid/);

    const chosen = await browser.post(`${linkPath}/method`, settlingAchForm);
    assert.equal(chosen.status, 303, browser.lastHtml);
    assert.equal(chosen.headers.get("Location"), `${linkPath}?confirmed=1`);
    // The payout.submit job queues it; the 10:30 New York cutoff's file sends it.
    await v1(f, "POST", "/v1/sandbox/clock/advance", { seconds: 30 * 60 });
    await browser.get(`${linkPath}?confirmed=1`);
    assert.equal(htmlLang(browser.lastHtml), "es");
    assert.equal(heading(browser.lastHtml), "Dinero enviado");
    assert.match(browser.lastHtml, /Gracias\. Su elección quedó confirmada\./);
    assert.match(
      browser.lastHtml,
      /<strong>Cómo recibe su pago:<\/strong> Cuenta de cheques que termina en 6789/,
    );
    assert.match(browser.lastHtml, /<h2>Lo que ha pasado hasta ahora<\/h2>/);
    // Sent by the 10:30 New York cutoff's file: Monday 5 January 2026, 15:30 UTC.
    assert.ok(
      browser.lastHtml.includes("<li>Dinero enviado — 5 ene 2026, 3:30 p.m. UTC</li>"),
      browser.lastHtml,
    );
    assert.doesNotMatch(browser.lastHtml, /\bGMT\b|Money sent|How you are paid/);
  }, inboxOn);
});

Deno.test("portal language: ?lang=en on a Spanish payee's link is remembered through a POST and its 303", async () => {
  await withHttpFixture(async (f) => {
    const linkPath = await spanishPayee(f);
    const browser = new PortalBrowser(f, spanishBrowser);

    const switched = await browser.get(`${linkPath}?lang=en`);
    assert.equal(switched.status, 200);
    assert.equal(htmlLang(browser.lastHtml), "en");
    assert.equal(heading(browser.lastHtml), "Confirm it is you");
    const cookie = switched.headers.getSetCookie().find((c) => c.startsWith("portal_lang="));
    assert.equal(cookie, `portal_lang=en; Path=${linkPath}; HttpOnly; SameSite=Lax`);

    const sent = await browser.post(`${linkPath}/code`, {});
    assert.equal(sent.status, 303);
    assert.equal(sent.headers.get("Location"), linkPath);
    await browser.get(linkPath);
    assert.equal(htmlLang(browser.lastHtml), "en");
    assert.match(browser.lastHtml, /Enter the 6-digit code/);
    const code = (await lastMessage(f, "rosa@example.test", /código de verificación/)).code!;
    assert.equal((await browser.post(`${linkPath}/verify`, { code })).status, 303);
    await browser.get(linkPath);
    assert.equal(htmlLang(browser.lastHtml), "en");
    assert.equal(heading(browser.lastHtml), "Choose how to be paid");
    await browser.get(`${linkPath}/method?method=ach`);
    assert.match(browser.lastHtml, /Routing number/);

    const refused = await browser.post(`${linkPath}/method`, {
      ...settlingAchForm,
      routing_number: "011000016",
    });
    assert.equal(refused.status, 422);
    assert.match(browser.lastHtml, /This routing number is not valid/);
    assert.match(
      browser.lastHtml,
      new RegExp(`<a href="${linkPath}\\?lang=es" lang="es"`),
      "a page answering a POST switches on the link's own page",
    );

    const back = await browser.get(`${linkPath}?lang=es`);
    assert.equal(
      back.headers.getSetCookie().find((c) => c.startsWith("portal_lang=")),
      `portal_lang=es; Path=${linkPath}; HttpOnly; SameSite=Lax`,
    );
    await browser.get(linkPath);
    assert.equal(htmlLang(browser.lastHtml), "es");
    assert.equal(heading(browser.lastHtml), "Elija cómo quiere recibir su pago");
  }, inboxOn);
});

Deno.test("portal language: a Surface A payee gets English even from a Spanish browser", async () => {
  await withHttpFixture(async (f) => {
    const { email, linkPath } = await offeredPayee(f, "pat");
    const browser = new PortalBrowser(f, spanishBrowser);
    const first = await browser.get(linkPath);
    assert.equal(first.status, 200);
    assert.equal(htmlLang(browser.lastHtml), "en");
    assert.equal(heading(browser.lastHtml), "Confirm it is you");
    await verify(browser, linkPath, email);
    await browser.get(linkPath);
    assert.equal(htmlLang(browser.lastHtml), "en");
    assert.equal(heading(browser.lastHtml), "Choose how to be paid");
    assert.match(browser.lastHtml, /<p>Acme Mutual is paying you<\/p>/);
  }, inboxOn);
});

Deno.test("portal language: an unknown link answers in the language the browser prefers", async () => {
  await withHttpFixture(async (f) => {
    const unknown = `/portal/${"A".repeat(43)}`;
    const cases: [Record<string, string>, string, string][] = [
      [spanishBrowser, "es", "Este enlace no funciona"],
      [englishBrowser, "en", "This link does not work"],
      [{ "Accept-Language": "es-US" }, "es", "Este enlace no funciona"],
      [{ "Accept-Language": "fr-CA,fr;q=0.9,es;q=0.5" }, "es", "Este enlace no funciona"],
      [{ "Accept-Language": "en-US,en;q=0.9,es;q=0.8" }, "en", "This link does not work"],
      [{ "Accept-Language": "es;q=0" }, "en", "This link does not work"],
      [{}, "en", "This link does not work"],
    ];
    for (const [headers, language, title] of cases) {
      const browser = new PortalBrowser(f, headers);
      const res = await browser.get(unknown);
      assert.equal(res.status, 404, JSON.stringify(headers));
      assert.equal(htmlLang(browser.lastHtml), language, JSON.stringify(headers));
      assert.equal(heading(browser.lastHtml), title, JSON.stringify(headers));
    }
  });
});

Deno.test("portal language: a portal_lang cookie or ?lang other than en or es is ignored", async () => {
  await withHttpFixture(async (f) => {
    const linkPath = await spanishPayee(f);
    for (const value of ["fr", "EN", "es;x", ""]) {
      const browser = new PortalBrowser(f, englishBrowser);
      browser.setCookie("portal_lang", value);
      const res = await browser.get(linkPath);
      assert.equal(res.status, 200);
      assert.equal(htmlLang(browser.lastHtml), "es", `cookie ${JSON.stringify(value)}`);
    }
    const asked = await new PortalBrowser(f, englishBrowser).get(`${linkPath}?lang=de`);
    assert.equal(asked.status, 200);
    assert.equal(asked.headers.getSetCookie().some((c) => c.startsWith("portal_lang=")), false);

    const unknown = `/portal/${"B".repeat(43)}`;
    const garbage = new PortalBrowser(f, spanishBrowser);
    garbage.setCookie("portal_lang", "xx");
    await garbage.get(unknown);
    assert.equal(htmlLang(garbage.lastHtml), "es", "the browser's language, not the cookie's");
    const chosen = new PortalBrowser(f, spanishBrowser);
    chosen.setCookie("portal_lang", "en");
    await chosen.get(unknown);
    assert.equal(htmlLang(chosen.lastHtml), "en", "a valid cookie is a choice made on the page");
  }, inboxOn);
});

Deno.test("payee_url: the landing page follows the browser, never the payee's language", async () => {
  await withHttpFixture(async (f) => {
    const { id } = await v1Disbursement(f, {
      id: "rosa",
      email: "rosa@example.test",
      language: "es",
    });
    const english = new PortalBrowser(f, englishBrowser);
    await english.get(`/pay/${id}`);
    assert.equal(htmlLang(english.lastHtml), "en");
    assert.equal(heading(english.lastHtml), "Your payment");

    const spanish = new PortalBrowser(f, spanishBrowser);
    await spanish.get(`/pay/${id}`);
    assert.equal(htmlLang(spanish.lastHtml), "es");
    assert.equal(heading(spanish.lastHtml), "Su pago");
    assert.match(spanish.lastHtml, /<button type="submit">Envíenme mi enlace<\/button>/);
    f.clock.advance(1000);
    const sent = await spanish.post(`/pay/${id}`, {});
    assert.equal(sent.status, 200);
    assert.equal(heading(spanish.lastHtml), "Revise sus mensajes");
    const [message] = await inbox(f);
    assert.match(message.subject!, /^Recordatorio: Acme Mutual tiene un pago para usted$/);

    const switched = await english.get(`/pay/${id}?lang=es`);
    assert.equal(htmlLang(english.lastHtml), "es");
    assert.equal(
      switched.headers.getSetCookie().find((c) => c.startsWith("portal_lang=")),
      `portal_lang=es; Path=/pay/${id}; HttpOnly; SameSite=Lax`,
    );
  }, inboxOn);
});

Deno.test("portal language: approvals and a party's page in Spanish after the switch", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000_00);
    const created = await api(f, "POST", "/api/disbursements", {
      disbursement_uuid: "CLM-ES-P",
      large_disbursement: false,
      payees: [payee("pat", 500, { permission_required_from: ["lienholder"] })],
      authorization_parties: [parties[0]],
    });
    assert.equal(created.status, 201, await created.text());
    await api(f, "POST", "/api/sandbox/clock/advance", { seconds: 1 });
    const linkPath = pathOf((await lastMessage(f, "pat@example.test", /needs approval/)).links[0]);
    const payeeBrowser = new PortalBrowser(f);
    await verify(payeeBrowser, linkPath, "pat@example.test");
    await payeeBrowser.get(`${linkPath}?lang=es`);
    assert.equal(heading(payeeBrowser.lastHtml), "Se necesitan aprobaciones");
    assert.match(payeeBrowser.lastHtml, /<p>Estado: Todavía no se ha solicitado<\/p>/);
    await payeeBrowser.post(`${linkPath}/parties/lienholder`, {});
    assert.match(
      payeeBrowser.lastHtml,
      /Le enviamos a Lee Holder un enlace para aprobar el pago\./,
    );

    const request = await lastMessage(f, "lien@example.test", /approval is needed/);
    const partyPath = pathOf(request.links[0]);
    const party = new PortalBrowser(f);
    await verify(party, partyPath, "lien@example.test");
    await party.get(`${partyPath}?lang=es`);
    assert.equal(heading(party.lastHtml), "Apruebe un pago");
    assert.match(party.lastHtml, /<p>Acme Mutual le paga a Pat Doe<\/p>/);
    const unticked = await party.post(`${partyPath}/endorse`, { typed_name: "Lee Holder" });
    assert.equal(unticked.status, 422);
    assert.match(party.lastHtml, /Marque la casilla para aprobar y firmar electrónicamente\./);
    await party.post(`${partyPath}/endorse`, { typed_name: "Lee Holder", consent: "yes" });
    await party.get(partyPath);
    assert.equal(heading(party.lastHtml), "Gracias");
    assert.match(party.lastHtml, /Usted aprobó el pago de \$500\.00 a Pat Doe\./);
  }, inboxOn);
});

Deno.test("acceptedLanguage: Spanish only when the browser ranks it above English", () => {
  const cases: [string | undefined, "en" | "es"][] = [
    [undefined, "en"],
    ["", "en"],
    ["es", "es"],
    ["es-US", "es"],
    ["es-MX;q=0.9", "es"],
    ["es-MX,es;q=0.9,en;q=0.8", "es"],
    ["es-MX;q=0.9,en;q=0.8", "es"],
    ["en-US,en;q=0.9,es;q=0.8", "en"],
    ["en;q=0.5,es;q=0.7", "es"],
    ["es;q=0.5,en;q=0.5", "es"],
    ["en;q=0.5,es;q=0.5", "en"],
    ["fr-FR,fr;q=0.9", "en"],
    ["es;q=0", "en"],
    ["es;q=abc", "en"],
    ["*", "en"],
    ["ES-mx", "es"],
    ["estonian", "en"],
  ];
  for (const [header, language] of cases) {
    assert.equal(acceptedLanguage(header), language, JSON.stringify(header));
  }
});

Deno.test("portal text: the Spanish table has the English table's entries, and translates them", () => {
  const shape = (value: unknown): unknown =>
    typeof value === "function"
      ? "function"
      : typeof value === "object" && value !== null
      ? Object.fromEntries(Object.entries(value).map(([key, v]) => [key, shape(v)]).sort())
      : typeof value;
  const english = portalText("en");
  const spanish = portalText("es");
  assert.deepEqual(shape(spanish), shape(english));
  const sentences: [string, string, string][] = [
    [english.choice.title, spanish.choice.title, "Elija cómo quiere recibir su pago"],
    [english.sign.nameLabel, spanish.sign.nameLabel, "Escriba su nombre completo para firmar"],
    [english.verify.title, spanish.verify.title, "Confirme su identidad"],
    [english.link.unknownTitle, spanish.link.unknownTitle, "Este enlace no funciona"],
    [english.status.labels.completed, spanish.status.labels.completed, "Pagado"],
    [
      english.page.footer,
      spanish.page.footer,
      "Esta página es solo para usted. No comparta el enlace.",
    ],
    [
      english.form.forged,
      spanish.form.forged,
      "No pudimos aceptar este formulario porque no se envió desde esta página. Inténtelo de nuevo.",
    ],
    [
      english.methodProblems.accountMismatch,
      spanish.methodProblems.accountMismatch,
      "Los dos números de cuenta no coinciden.",
    ],
    [
      english.choice.authorizationConsent("Acme"),
      spanish.choice.authorizationConsent("Acme"),
      "Autorizo a Acme a depositar este pago en la cuenta indicada arriba y acepto firmar electrónicamente.",
    ],
    [
      english.verify.wrongCode(1),
      spanish.verify.wrongCode(1),
      "Ese código no es correcto. Le queda 1 intento.",
    ],
  ];
  for (const [en, es, expected] of sentences) {
    assert.notEqual(es, en);
    assert.equal(es, expected);
  }
  assert.equal(spanish.status.time(Date.UTC(2026, 10, 23, 15, 4)), "23 nov 2026, 3:04 p.m. UTC");
  assert.equal(english.status.time(Date.UTC(2026, 10, 23, 15, 4)), "Nov 23, 2026, 3:04 PM UTC");
});

Deno.test("portal language: a payee offered again after a return reads why, from the failure catalogue, in their language", async () => {
  await withHttpFixture(async (f) => {
    const { email, linkPath } = await offeredPayee(f, "rex");
    const { rows } = await f.deps.databases.test.readClient.execute(
      "SELECT id FROM payouts WHERE payee_uuid = 'rex'",
    );
    const payoutId = String(rows[0].id);
    await f.deps.databases.test.writer.write(async (tx) => {
      for (
        const step of [
          { kind: "select", paymentMethodId: 1, fees: noFees },
          { kind: "send" },
          { kind: "fail", reason: "R03" },
          { kind: "reoffer", holdCents: 25_000 },
        ] as const
      ) {
        assert.equal((await applyMove(tx, payoutId, step, f.clock.now())).ok, true, step.kind);
      }
    });
    const browser = new PortalBrowser(f, englishBrowser);
    await verify(browser, linkPath, email);
    await browser.get(linkPath);
    assert.match(
      browser.lastHtml,
      /We could not pay you the way you chose before\. The bank returned the payment: no account matches the number, or the name does not match it\. Please choose again\./,
    );
    await browser.get(`${linkPath}?lang=es`);
    assert.match(
      browser.lastHtml,
      /No pudimos pagarle de la forma que eligió\. El banco devolvió el pago: ninguna cuenta corresponde al número, o el nombre no coincide\. Elija otra vez, por favor\./,
    );
  }, inboxOn);
});
