import assert from "node:assert/strict";
import { SignJWT } from "jose";
import { basic, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

async function authenticate(
  f: HttpFixture,
  tin: string,
  key: string,
  headers: Record<string, string> = {},
) {
  return await f.app.request("/api/authenticate", {
    method: "POST",
    headers: { Authorization: basic(tin, key), ...headers },
  });
}

async function tokenFor(
  f: HttpFixture,
  tin: string,
  key: string,
  headers: Record<string, string> = {},
) {
  const res = await authenticate(f, tin, key, headers);
  assert.equal(res.status, 200);
  return ((await res.json()) as { access_token: string }).access_token;
}

const authFailure = (message: string, field = "Authorization") => ({
  name: "AUTHENTICATION_FAILURE",
  message,
  details: [{ Issue: message, Field: field, Location: "header" }],
});

Deno.test("POST /api/authenticate: TIN and user key give a one-hour bearer token", async () => {
  await withHttpFixture(async (f) => {
    const res = await authenticate(f, f.cast.acme.tin, f.cast.alice.keyTest);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const body = await res.json() as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ["access_token", "expires_in", "token_type"]);
    assert.equal(body.token_type, "Bearer");
    assert.equal(body.expires_in, 3600);
    const [header, payload] = String(body.access_token).split(".").slice(0, 2).map((part) =>
      JSON.parse(atob(part.replace(/-/g, "+").replace(/_/g, "/")))
    );
    assert.deepEqual(header, { alg: "HS256", typ: "JWT" });
    assert.equal(payload.sub, f.cast.alice.id);
    assert.equal(payload.cid, f.cast.acme.id);
    assert.equal(payload.env, "test");
    assert.equal(payload.exp - payload.iat, 3600);
  });
});

Deno.test("POST /api/authenticate refuses every bad credential with 401 in the seed's format", async () => {
  await withHttpFixture(async (f) => {
    const generic = "the TIN or the user API key is not valid";
    const cases: [string, Record<string, string>, unknown][] = [
      [
        "no header",
        {},
        authFailure(
          "HTTP Basic credentials are required: username is the company TIN, password the user API key",
        ),
      ],
      [
        "not basic",
        { Authorization: "Bearer x" },
        authFailure(
          "HTTP Basic credentials are required: username is the company TIN, password the user API key",
        ),
      ],
      [
        "wrong key",
        { Authorization: basic(f.cast.acme.tin, f.cast.bob.keyTest) },
        authFailure(generic),
      ],
      [
        "unknown tin",
        { Authorization: basic("999999999", f.cast.alice.keyTest) },
        authFailure(generic),
      ],
      [
        "malformed tin",
        { Authorization: basic("12-345", f.cast.alice.keyTest) },
        authFailure(generic),
      ],
      [
        "line key as user key",
        { Authorization: basic(f.cast.acme.tin, f.cast.acmeAutoKeyTest) },
        authFailure(generic),
      ],
      ["well-formed but unknown key", {
        Authorization: basic(f.cast.acme.tin, `uak_test_${"A".repeat(43)}`),
      }, authFailure(generic)],
    ];
    for (const [name, headers, expected] of cases) {
      const res = await f.app.request("/api/authenticate", { method: "POST", headers });
      assert.equal(res.status, 401, name);
      assert.deepEqual(await res.json(), expected, name);
    }
  });
});

Deno.test("a multi-company user chooses the company with CompanyApiKey; another company's key is 403", async () => {
  await withHttpFixture(async (f) => {
    const companyOf = (token: string) =>
      JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/"))).cid;
    // Morgan belongs to both: the header's company with the header, the TIN's without.
    const beaconToken = await tokenFor(f, f.cast.beacon.tin, f.cast.morgan.keyTest, {
      CompanyApiKey: f.cast.beacon.companyKey,
    });
    assert.equal(companyOf(beaconToken), f.cast.beacon.id);
    assert.equal(
      companyOf(await tokenFor(f, f.cast.acme.tin, f.cast.morgan.keyTest)),
      f.cast.acme.id,
    );
    // A TIN naming another company than the CompanyApiKey's is refused, never overridden.
    const disagree = await authenticate(f, f.cast.acme.tin, f.cast.morgan.keyTest, {
      CompanyApiKey: f.cast.beacon.companyKey,
    });
    assert.equal(disagree.status, 403);
    const disagreement =
      "the Basic TIN names another company than the CompanyApiKey: send the TIN of the CompanyApiKey's company";
    assert.deepEqual(await disagree.json(), {
      name: "NOT_AUTHORIZED",
      message: disagreement,
      details: [{ Issue: disagreement, Field: "CompanyApiKey", Location: "header" }],
    });

    // Alice belongs to Acme only: Beacon's key is refused at authenticate and on any request.
    const refused = await authenticate(f, f.cast.acme.tin, f.cast.alice.keyTest, {
      CompanyApiKey: f.cast.beacon.companyKey,
    });
    assert.equal(refused.status, 403);
    const message = "the user does not belong to the company of this CompanyApiKey";
    assert.deepEqual(await refused.json(), {
      name: "NOT_AUTHORIZED",
      message,
      details: [{ Issue: message, Field: "CompanyApiKey", Location: "header" }],
    });
    const aliceToken = await tokenFor(f, f.cast.acme.tin, f.cast.alice.keyTest);
    const onRequest = await f.app.request("/api/anything", {
      headers: { Authorization: `Bearer ${aliceToken}`, CompanyApiKey: f.cast.beacon.companyKey },
    });
    assert.equal(onRequest.status, 403);

    const unknown = await authenticate(f, f.cast.acme.tin, f.cast.alice.keyTest, {
      CompanyApiKey: "cak_nope",
    });
    assert.equal(unknown.status, 403);
    const unknownMessage = "CompanyApiKey is not a company key of this environment";
    assert.deepEqual(await unknown.json(), {
      name: "NOT_AUTHORIZED",
      message: unknownMessage,
      details: [{ Issue: unknownMessage, Field: "CompanyApiKey", Location: "header" }],
    });
  });
});

Deno.test("access tokens: expired by one second, alg none, other secret and garbage are 401", async () => {
  await withHttpFixture(async (f) => {
    const token = await tokenFor(f, f.cast.acme.tin, f.cast.alice.keyTest);
    const call = (t: string) =>
      f.app.request("/api/unknown-route", { headers: { Authorization: `Bearer ${t}` } });

    // A valid token reaches routing: an unknown /api route is a 404 in the seed's format.
    f.clock.advance(3599_000);
    const stillValid = await call(token);
    assert.equal(stillValid.status, 404);
    assert.equal((await stillValid.json() as { name: string }).name, "RESOURCE_NOT_FOUND");

    f.clock.advance(2_000); // one second past expiry
    const expired = await call(token);
    assert.equal(expired.status, 401);
    assert.deepEqual(
      await expired.json(),
      authFailure("the access token has expired; authenticate again"),
    );

    const payload = JSON.parse(atob(token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/")));
    payload.exp = Math.floor(f.clock.now() / 1000) + 600;
    const b64 = (o: unknown) =>
      btoa(JSON.stringify(o)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
    const algNone = `${b64({ alg: "none", typ: "JWT" })}.${b64(payload)}.`;
    const otherSecret = await new SignJWT(payload).setProtectedHeader({ alg: "HS256" })
      .sign(new TextEncoder().encode("another-secret-another-secret-xx"));
    for (const bad of [algNone, otherSecret, "not.a.jwt", "x"]) {
      const res = await call(bad);
      assert.equal(res.status, 401, bad);
      assert.deepEqual(await res.json(), authFailure("the access token is not valid"));
    }
    const missing = await f.app.request("/api/unknown-route");
    assert.equal(missing.status, 401);
    assert.equal(missing.headers.get("www-authenticate"), 'Bearer realm="disbursements"');
  });
});

Deno.test("Surface B: line keys authenticate /v1; bad keys are 401 problem+json", async () => {
  await withHttpFixture(async (f) => {
    const ok = await f.app.request("/v1/nothing-here", {
      headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
    });
    assert.equal(ok.status, 404);
    assert.equal(ok.headers.get("content-type"), "application/problem+json");
    assert.deepEqual(await ok.json(), {
      type: "/docs/errors#not_found",
      title: "Not Found",
      status: 404,
      detail: "no resource at GET /v1/nothing-here",
      code: "not_found",
    });
    const cases: [string, string | undefined, string][] = [
      ["missing", undefined, "a line key is required: Authorization: Bearer sk_…"],
      [
        "user key",
        `Bearer ${f.cast.alice.keyTest}`,
        "the bearer credential is not a line key (sk_test_… or sk_live_…)",
      ],
      ["unknown", `Bearer sk_test_${"B".repeat(43)}`, "the line key is not valid"],
    ];
    for (const [name, authorization, detail] of cases) {
      const res = await f.app.request("/v1/nothing-here", {
        headers: authorization ? { Authorization: authorization } : {},
      });
      assert.equal(res.status, 401, name);
      assert.equal(res.headers.get("content-type"), "application/problem+json");
      assert.deepEqual(await res.json(), {
        type: "/docs/errors#authentication_failed",
        title: "Unauthorized",
        status: 401,
        detail,
        code: "authentication_failed",
        errors: [{ param: "Authorization", message: detail }],
      }, name);
    }
  });
});

Deno.test("a live key is refused on the test host and a test key on the live host", async () => {
  await withHttpFixture(async (f) => {
    const call = (host: string, key: string) =>
      f.app.request(`http://${host}/v1/nothing-here`, {
        headers: { Authorization: `Bearer ${key}`, Host: host },
      });
    assert.equal((await call("sandbox.example.test", f.cast.acmeAutoKeyLive)).status, 401);
    assert.equal((await call("sandbox.example.test", f.cast.acmeAutoKeyTest)).status, 404);
    assert.equal((await call("api.example.test", f.cast.acmeAutoKeyTest)).status, 401);
    assert.equal((await call("api.example.test", f.cast.acmeAutoKeyLive)).status, 404);
    const res = await f.app.request("http://api.example.test/api/authenticate", {
      method: "POST",
      headers: {
        Host: "api.example.test",
        Authorization: basic(f.cast.acme.tin, f.cast.alice.keyTest),
      },
    });
    assert.equal(res.status, 401);
  }, { TEST_HOST: "sandbox.example.test", LIVE_HOST: "api.example.test" });
});
