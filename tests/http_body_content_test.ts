/** Bodies byte for byte: UTF-8 only (400 naming the field), and JSON only on /api and /v1 (415). */
import assert from "node:assert/strict";
import { invalidUtf8Offset, jsonPathAt } from "../routes/body_content.ts";
import { basic, fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const encoder = new TextEncoder();

/** `prefix`, the raw bytes, then `suffix`: a body no JSON.stringify could produce. */
function withRawBytes(prefix: string, bytes: number[], suffix: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array([...encoder.encode(prefix), ...bytes, ...encoder.encode(suffix)]);
}

function v1(f: HttpFixture, path: string, body: BodyInit, contentType?: string) {
  return f.app.request(path, {
    method: "POST",
    headers: {
      Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
      ...(contentType === undefined ? {} : { "Content-Type": contentType }),
    },
    body,
  });
}

async function apiToken(f: HttpFixture): Promise<string> {
  const login = await f.app.request("/api/authenticate", {
    method: "POST",
    headers: { Authorization: basic(f.cast.acme.tin, f.cast.alice.keyTest) },
  });
  return (await login.json() as { access_token: string }).access_token;
}

const simplePayment = {
  simple_payment_uuid: "SP-UTF8",
  amount: 42.5,
  first_name: "Sam",
  last_name: "Payee",
  email: "sam@example.test",
  delivery_options: { email: true, sms: false },
  allowed_payment_method_ids: [6, 7],
};

Deno.test("invalidUtf8Offset: well-formed text passes; each ill-formed sequence is found where it starts", () => {
  const table: [string, number[], number][] = [
    ["ASCII", [0x41, 0x42], -1],
    ["two, three and four bytes", [0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80], -1],
    ["U+10FFFF, the last code point", [0xf4, 0x8f, 0xbf, 0xbf], -1],
    ["a lone continuation byte", [0x41, 0x80], 1],
    ["0xFF", [0x41, 0xff, 0xfe, 0x42], 1],
    ["an overlong two-byte form", [0xc0, 0x80], 0],
    ["an overlong three-byte form", [0xe0, 0x80, 0x80], 0],
    ["a UTF-8 encoded surrogate", [0x41, 0xed, 0xa0, 0x80], 1],
    ["past U+10FFFF", [0xf4, 0x90, 0x80, 0x80], 0],
    ["a sequence cut short by the end", [0x41, 0x42, 0xe2, 0x82], 2],
    ["a sequence cut short by ASCII", [0xe2, 0x41, 0x42], 0],
  ];
  for (const [name, bytes, expected] of table) {
    assert.equal(invalidUtf8Offset(new Uint8Array(bytes)), expected, name);
  }
});

Deno.test("jsonPathAt names the value a position falls in, keys and array indexes alike", () => {
  const cases: [string, string][] = [
    ['{"name": "A', "name"],
    ['{"payee": {"id": "x", "name": "A', "payee.name"],
    ['{"payees": [{"a": 1}, {"email": "b', "payees.1.email"],
    ['{"we\\"ird": "', 'we\\"ird'],
    ['{"a": "done", "', ""],
    ["", ""],
  ];
  for (const [text, expected] of cases) assert.equal(jsonPathAt(text, text.length), expected, text);
});

Deno.test("/v1: a payee name holding invalid UTF-8 is 400 naming `name`, and nothing is stored", async () => {
  await withHttpFixture(async (f) => {
    const body = withRawBytes('{"id": "utf8-payee", "name": "A', [0xff, 0xfe], 'B"}');
    const refused = await v1(f, "/v1/payees", body, "application/json");
    assert.equal(refused.status, 400);
    const message =
      "name is not valid UTF-8: byte 0xFF at byte offset 31 of the body does not begin a UTF-8 character";
    assert.deepEqual(await refused.json(), {
      type: "/docs/errors#validation_error",
      title: "Bad Request",
      status: 400,
      detail: message,
      code: "validation_error",
      errors: [{ param: "name", message }],
    });
    const read = await f.app.request("/v1/payees/utf8-payee", {
      headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
    });
    assert.equal(read.status, 404, "the payee was not created");
  });
});

Deno.test("/api: a first_name holding invalid UTF-8 is 400 VALIDATION_ERROR naming first_name", async () => {
  await withHttpFixture(async (f) => {
    const json = JSON.stringify({ ...simplePayment, first_name: "@@" });
    const [before, after] = json.split("@@");
    const token = await apiToken(f);
    const refused = await f.app.request("/api/simple-payments", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: withRawBytes(before + "A", [0xff, 0xfe], "B" + after),
    });
    assert.equal(refused.status, 400);
    const offset = encoder.encode(before).length + 1;
    const message =
      `first_name is not valid UTF-8: byte 0xFF at byte offset ${offset} of the body does not begin a UTF-8 character`;
    assert.deepEqual(await refused.json(), {
      name: "VALIDATION_ERROR",
      message,
      details: [{ Issue: message, Field: "first_name", Location: "body" }],
    });
  });
});

Deno.test("a lone surrogate escape is still refused by the field's rule, in well-formed UTF-8", async () => {
  await withHttpFixture(async (f) => {
    const refused = await v1(
      f,
      "/v1/payees",
      '{"id": "surrogate-payee", "name": "A\\ud800B"}',
      "application/json",
    );
    assert.equal(refused.status, 400);
    const body = await refused.json() as { errors: { param: string; message: string }[] };
    assert.equal(body.errors[0].param, "name");
    assert.match(body.errors[0].message, /U\+D800 \(a lone surrogate\) at character 2/);
  });
});

Deno.test("a portal form holding raw invalid UTF-8 is refused before it is read", async () => {
  await withHttpFixture(async (f) => {
    const refused = await f.app.request("/pay/anything", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: withRawBytes("email=", [0xc0, 0xaf], "x"),
    });
    assert.equal(refused.status, 400);
    const message =
      "the body is not valid UTF-8: byte 0xC0 at byte offset 6 of the body does not begin a UTF-8 character";
    assert.deepEqual(await refused.json(), { error: { code: "validation_error", message } });
  });
});

Deno.test("/v1 and /api take application/json only: text/plain, a form or no type is 415", async () => {
  await withHttpFixture(async (f) => {
    const payee = JSON.stringify({ id: "typed-payee", name: "Pat Doe", email: "pat@example.test" });
    for (const contentType of ["text/plain", "application/x-www-form-urlencoded", undefined]) {
      const refused = await v1(f, "/v1/payees", payee, contentType);
      assert.equal(refused.status, 415, String(contentType));
      const body = await refused.json() as { code: string; errors: { param: string }[] };
      assert.equal(body.code, "unsupported_media_type");
      assert.equal(body.errors[0].param, "Content-Type");
    }
    const latin1 = await v1(f, "/v1/payees", payee, "application/json; charset=iso-8859-1");
    assert.equal(latin1.status, 415);
    assert.equal(
      (await latin1.json() as { detail: string }).detail,
      'Content-Type "application/json; charset=iso-8859-1" is not accepted: send application/json (charset=utf-8 is the only parameter allowed)',
    );
    const read = await f.app.request("/v1/payees/typed-payee", {
      headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
    });
    assert.equal(read.status, 404, "no refused body was stored");

    const withCharset = await v1(f, "/v1/payees", payee, "Application/JSON; Charset=UTF-8");
    assert.equal(withCharset.status, 201);
    // A POST without a body needs no Content-Type.
    const rotate = await v1(f, "/v1/keys/rotate", "");
    assert.equal(rotate.status, 201);

    const token = await apiToken(f);
    const api = await f.app.request("/api/simple-payments", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "text/plain" },
      body: JSON.stringify(simplePayment),
    });
    assert.equal(api.status, 415);
    const message =
      'Content-Type "text/plain" is not accepted: send application/json (charset=utf-8 is the only parameter allowed)';
    assert.deepEqual(await api.json(), {
      name: "UNSUPPORTED_MEDIA_TYPE",
      message,
      details: [{ Issue: message, Field: "Content-Type", Location: "header" }],
    });
  });
});

Deno.test("a keyed /v1 create decodes its body once, when it is checked to be UTF-8", async () => {
  await withHttpFixture(async (f) => {
    await fundAcmeAuto(f, 100_000);
    const payee = await v1(
      f,
      "/v1/payees",
      JSON.stringify({ id: "once", email: "once@example.test" }),
      "application/json",
    );
    assert.equal(payee.status, 201);
    const proto = Response.prototype as unknown as { text: () => Promise<string> };
    const original = proto.text;
    let decodedAgain = 0;
    proto.text = function (this: Response) {
      decodedAgain++;
      return original.call(this);
    };
    let created: Response;
    try {
      created = await f.app.request("/v1/disbursements", {
        method: "POST",
        headers: {
          Authorization: `Bearer ${f.cast.acmeAutoKeyTest}`,
          "Content-Type": "application/json",
          "Idempotency-Key": "decoded-once",
        },
        body: JSON.stringify({
          amount: 5,
          claim_id: "C-1",
          payee: { id: "once" },
          modalities: ["ach"],
        }),
      });
    } finally {
      proto.text = original;
    }
    assert.equal(created.status, 201, await created.text());
    // The fixture's check of the answer against the OpenAPI document reads it once. Before, the
    // body's validation and the key's fingerprint each decoded the request's body again (3).
    assert.equal(decodedAgain, 1);
  });
});
