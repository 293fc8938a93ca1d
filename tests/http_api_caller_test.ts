/**
 * Who a Surface A request acts as, read in one statement with the request's credentials: the
 * company (the token's, or the CompanyApiKey's), the user's membership of it, and its first line.
 */
import assert from "node:assert/strict";
import { newId } from "../lib/platform/keys.ts";
import { basic, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

/** Morgan (of Acme and Beacon) signs in with Acme's TIN: the token is Acme's. */
async function morganToken(f: HttpFixture): Promise<string> {
  const login = await f.app.request("/api/authenticate", {
    method: "POST",
    headers: { Authorization: basic(f.cast.acme.tin, f.cast.morgan.keyTest) },
  });
  assert.equal(login.status, 200);
  return ((await login.json()) as { access_token: string }).access_token;
}

function balance(f: HttpFixture, token: string, query = "", companyApiKey?: string) {
  return f.app.request(`/api/balance${query}`, {
    headers: {
      Authorization: `Bearer ${token}`,
      ...(companyApiKey === undefined ? {} : { CompanyApiKey: companyApiKey }),
    },
  });
}

async function removeMembership(f: HttpFixture, userId: string, companyId: string) {
  await f.deps.databases.test.writer.write((tx) =>
    tx.execute({
      sql: "DELETE FROM memberships WHERE user_id = ? AND company_id = ?",
      args: [userId, companyId],
    })
  );
}

Deno.test("Surface A line: none named is the company's first, named by code any line, unknown 400", async () => {
  await withHttpFixture(async (f) => {
    await f.deps.databases.test.writer.write((tx) =>
      tx.execute({
        sql:
          "INSERT INTO business_lines (id, company_id, code, created_at) VALUES (?, ?, 'home', ?)",
        args: [newId("line"), f.cast.acme.id, f.clock.now() + 1],
      })
    );
    const token = await morganToken(f);
    const cases: [string, string | undefined, string][] = [
      ["", undefined, "auto"],
      ["?line=auto", undefined, "auto"],
      ["?line=home", undefined, "home"],
      ["", f.cast.beacon.companyKey, "default"],
      ["?line=default", f.cast.beacon.companyKey, "default"],
    ];
    for (const [query, companyApiKey, line] of cases) {
      const res = await balance(f, token, query, companyApiKey);
      assert.equal(res.status, 200, `${query} ${companyApiKey}`);
      assert.equal((await res.json() as { line: string }).line, line, `${query} ${companyApiKey}`);
    }
    // Acme's line is not Beacon's.
    const unknown = await balance(f, token, "?line=home", f.cast.beacon.companyKey);
    assert.equal(unknown.status, 400);
    assert.deepEqual((await unknown.json() as { details: unknown[] }).details, [
      { Issue: 'the company has no line "home"', Field: "line", Location: "query" },
    ]);
  });
});

Deno.test("membership is read on every request: removed from the CompanyApiKey's company 403, from the token's 401", async () => {
  await withHttpFixture(async (f) => {
    const token = await morganToken(f);
    assert.equal((await balance(f, token, "", f.cast.beacon.companyKey)).status, 200);

    await removeMembership(f, f.cast.morgan.id, f.cast.beacon.id);
    const notMember = "the user does not belong to the company of this CompanyApiKey";
    const forbidden = await balance(f, token, "", f.cast.beacon.companyKey);
    assert.equal(forbidden.status, 403);
    assert.deepEqual(await forbidden.json(), {
      name: "NOT_AUTHORIZED",
      message: notMember,
      details: [{ Issue: notMember, Field: "CompanyApiKey", Location: "header" }],
    });
    assert.equal((await balance(f, token)).status, 200, "still a member of the token's company");

    await removeMembership(f, f.cast.morgan.id, f.cast.acme.id);
    const removed = "the user of this access token no longer belongs to its company";
    const unauthorized = await balance(f, token);
    assert.equal(unauthorized.status, 401);
    assert.equal(unauthorized.headers.get("www-authenticate"), 'Bearer realm="disbursements"');
    assert.deepEqual(await unauthorized.json(), {
      name: "AUTHENTICATION_FAILURE",
      message: removed,
      details: [{ Issue: removed, Field: "Authorization", Location: "header" }],
    });
  });
});
