import assert from "node:assert/strict";
import { findKeyBySecret } from "../lib/identity/store.ts";
import {
  addMembership,
  createCompany,
  createLine,
  createUser,
  type Databases,
  listCompanies,
  revokeKey,
  rotateKey,
  setFees,
} from "../lib/identity/admin.ts";
import { keyState } from "../lib/identity/credentials.ts";
import { openTempDatabase, withTempDir } from "./helpers.ts";

const NOW = Date.UTC(2026, 0, 5, 12);

async function withDatabases(fn: (databases: Databases) => Promise<void>) {
  await withTempDir(async (dir) => {
    const databases = {
      test: await openTempDatabase(dir, "test"),
      live: await openTempDatabase(dir, "live"),
    };
    try {
      await fn(databases);
    } finally {
      await databases.test.close();
      await databases.live.close();
    }
  });
}

const count = async (databases: Databases, table: string) =>
  await Promise.all(
    (["live", "test"] as const).map(async (env) =>
      Number((await databases[env].readClient.execute(`SELECT count(*) n FROM ${table}`)).rows[0].n)
    ),
  );

Deno.test("createCompany mirrors the company and its key into both databases; refusals write nothing", async () => {
  await withDatabases(async (databases) => {
    const created = await createCompany(
      databases,
      { name: " Acme Mutual ", tin: "123456789" },
      NOW,
    );
    assert.ok(created.ok);
    assert.equal(created.value.company.name, "Acme Mutual");
    assert.match(created.value.companyApiKey, /^cak_[0-9A-Za-z]{32}$/);
    for (const env of ["live", "test"] as const) {
      const key = await findKeyBySecret(
        databases[env].readClient,
        created.value.companyApiKey,
        "company",
      );
      assert.equal(key?.companyId, created.value.company.id, env);
    }
    const refusals: [unknown, unknown, string, RegExp][] = [
      ["Acme again", "123456789", "duplicate_tin", /^a company with TIN 123456789 already exists$/],
      ["Short", "12345678", "invalid_input", /^tin "12345678": a TIN is exactly 9 digits$/],
      ["Letters", "12345678a", "invalid_input", /a TIN is exactly 9 digits/],
      ["", "987654321", "invalid_input", /^name "": a company name must not be empty$/],
      ["x".repeat(256), "987654321", "invalid_input", /at most 255 characters/],
    ];
    for (const [name, tin, code, message] of refusals) {
      const refused = await createCompany(databases, { name, tin }, NOW);
      assert.ok(!refused.ok);
      assert.equal(refused.code, code);
      assert.match(refused.message, message);
    }
    assert.deepEqual(await count(databases, "companies"), [1, 1]);
    assert.deepEqual(await count(databases, "api_keys"), [1, 1]);
  });
});

Deno.test("createUser: one key per environment, each stored only in its own database", async () => {
  await withDatabases(async (databases) => {
    const created = await createUser(databases, { email: "Pat@Example.test" }, NOW);
    assert.ok(created.ok);
    assert.equal(created.value.user.email, "pat@example.test");
    assert.match(created.value.apiKeyTest, /^uak_test_/);
    assert.match(created.value.apiKeyLive, /^uak_live_/);
    assert.ok(await findKeyBySecret(databases.test.readClient, created.value.apiKeyTest, "user"));
    assert.equal(
      await findKeyBySecret(databases.live.readClient, created.value.apiKeyTest, "user"),
      null,
    );
    assert.ok(await findKeyBySecret(databases.live.readClient, created.value.apiKeyLive, "user"));
    assert.equal(
      await findKeyBySecret(databases.test.readClient, created.value.apiKeyLive, "user"),
      null,
    );
    const duplicate = await createUser(databases, { email: "pat@example.test" }, NOW);
    assert.deepEqual(duplicate, {
      ok: false,
      code: "duplicate_email",
      message: "a user with e-mail pat@example.test already exists",
      field: "email",
    });
    const bad = await createUser(databases, { email: "not-an-email" }, NOW);
    assert.ok(!bad.ok && bad.code === "invalid_input");
  });
});

Deno.test("addMembership and createLine: natural keys, duplicates and unknowns refused", async () => {
  await withDatabases(async (databases) => {
    assert.ok((await createCompany(databases, { name: "Acme", tin: "123456789" }, NOW)).ok);
    assert.ok((await createUser(databases, { email: "pat@example.test" }, NOW)).ok);
    assert.ok(
      (await addMembership(databases, { email: "pat@example.test", tin: "123456789" }, NOW)).ok,
    );
    const again = await addMembership(
      databases,
      { email: "pat@example.test", tin: "123456789" },
      NOW,
    );
    assert.ok(!again.ok && again.code === "already_member");
    const noUser = await addMembership(databases, {
      email: "nobody@example.test",
      tin: "123456789",
    }, NOW);
    assert.ok(!noUser.ok && noUser.code === "user_not_found");
    const noCompany = await addMembership(databases, {
      email: "pat@example.test",
      tin: "999999999",
    }, NOW);
    assert.ok(!noCompany.ok && noCompany.code === "company_not_found");
    assert.deepEqual(await count(databases, "memberships"), [1, 1]);

    const line = await createLine(databases, { tin: "123456789", code: "auto" }, NOW);
    assert.ok(line.ok);
    assert.match(line.value.keyTest, /^sk_test_/);
    assert.match(line.value.keyLive, /^sk_live_/);
    const duplicate = await createLine(databases, { tin: "123456789", code: "auto" }, NOW);
    assert.ok(!duplicate.ok && duplicate.code === "duplicate_line");
    const badCode = await createLine(databases, { tin: "123456789", code: "Auto Line" }, NOW);
    assert.ok(!badCode.ok && badCode.code === "invalid_input" && badCode.field === "code");
    assert.deepEqual(await listCompanies(databases), [{
      id: line.value.company.id,
      name: "Acme",
      tin: "123456789",
      lines: ["auto"],
      users: ["pat@example.test"],
    }]);
  });
});

Deno.test("rotateKey keeps the old key 24 h; revokeKey stops a key at once; company keys change in both", async () => {
  await withDatabases(async (databases) => {
    const company = await createCompany(databases, { name: "Acme", tin: "123456789" }, NOW);
    assert.ok(company.ok);
    const line = await createLine(databases, { tin: "123456789", code: "auto" }, NOW);
    assert.ok(line.ok);

    const rotated = await rotateKey(databases, { key: company.value.companyApiKey }, {
      now: NOW,
      graceSeconds: 86_400,
    });
    assert.ok(rotated.ok);
    assert.equal(rotated.value.previousExpiresAt, NOW + 86_400_000);
    for (const env of ["live", "test"] as const) {
      const fresh = await findKeyBySecret(
        databases[env].readClient,
        rotated.value.secret,
        "company",
      );
      assert.equal(
        fresh?.companyId,
        company.value.company.id,
        `${env}: same new company key in both`,
      );
      const old = await findKeyBySecret(
        databases[env].readClient,
        company.value.companyApiKey,
        "company",
      );
      assert.equal(keyState(old!, NOW + 86_400_000 - 1000), "active");
      assert.equal(keyState(old!, NOW + 86_400_000 + 1000), "expired");
    }
    const twice = await rotateKey(databases, { key: company.value.companyApiKey }, {
      now: NOW,
      graceSeconds: 86_400,
    });
    assert.ok(!twice.ok && twice.code === "key_already_rotated");

    const revoked = await revokeKey(databases, { key: line.value.keyTest }, NOW + 5);
    assert.ok(revoked.ok);
    const stored = await findKeyBySecret(databases.test.readClient, line.value.keyTest, "line");
    assert.equal(keyState(stored!, NOW + 5), "revoked");
    const again = await revokeKey(databases, { key: line.value.keyTest }, NOW + 6);
    assert.ok(!again.ok && again.code === "key_not_active");
    const unknown = await rotateKey(databases, { key: "sk_test_" + "A".repeat(43) }, {
      now: NOW,
      graceSeconds: 1,
    });
    assert.ok(!unknown.ok && unknown.code === "key_not_found");
  });
});

Deno.test("setFees stores per-method fees in both environments and validates every value", async () => {
  await withDatabases(async (databases) => {
    assert.ok((await createCompany(databases, { name: "Acme", tin: "123456789" }, NOW)).ok);
    const input = {
      tin: "123456789",
      paymentMethodId: 1,
      payorFeeCents: 150,
      payeeFeeCents: 25,
      serviceFeeCents: 10,
    };
    assert.ok((await setFees(databases, input)).ok);
    assert.ok(
      (await setFees(databases, { ...input, payorFeeCents: 200 })).ok,
      "setting again replaces",
    );
    for (const env of ["live", "test"] as const) {
      const { rows } = await databases[env].readClient.execute("SELECT * FROM fee_schedules");
      assert.deepEqual(
        rows.map((
          r,
        ) => [r.payment_method_id, r.payor_fee_cents, r.payee_fee_cents, r.service_fee_cents]),
        [[1, 200, 25, 10]],
      );
    }
    const badMethod = await setFees(databases, { ...input, paymentMethodId: 8 });
    assert.ok(!badMethod.ok && badMethod.field === "method");
    const negative = await setFees(databases, { ...input, payeeFeeCents: -1 });
    assert.ok(!negative.ok && negative.field === "payee");
  });
});
