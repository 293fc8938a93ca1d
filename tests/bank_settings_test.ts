import assert from "node:assert/strict";
import {
  type BankSettings,
  bankSettingsJson,
  checkBankSettings,
  maskedBankSettings,
  sandboxBankSettings,
} from "../lib/ach/bank_settings.ts";
import { hasAchRail, readBankSettings, saveBankSettings } from "../lib/ach/bank_store.ts";
import { isValidRoutingNumber } from "../lib/portal/method_details.ts";
import { openTempDatabase, testSecretBox, withTempDir } from "./helpers.ts";
import { validSettingsJson } from "./bank_helpers.ts";

const at = (path: string, value: unknown) => {
  const json = validSettingsJson();
  let node = json as Record<string, unknown>;
  const keys = path.split(".");
  for (const key of keys.slice(0, -1)) node = node[key] as Record<string, unknown>;
  node[keys[keys.length - 1]] = value;
  return json;
};

const sftp = {
  host: "sftp.bank.example",
  port: 22,
  username: "cedar",
  password: "s3cret-sftp-password",
  host_key_fingerprint: "SHA256:" + "A".repeat(43),
  outbound_dir: "/outbound",
  inbound_dir: "/inbound",
};

Deno.test("valid settings: defaults filled, cutoffs sorted", () => {
  const checked = checkBankSettings(validSettingsJson(), "live");
  assert.ok(checked.ok);
  assert.equal(checked.value.timeZone, "America/New_York");
  assert.equal(checked.value.transmitWindowMinutes, 30);
  assert.deepEqual(checked.value.cutoffs, [
    { time: "10:30", kind: "same_day" },
    { time: "16:00", kind: "next_day" },
  ]);
  assert.equal(checked.value.fundingAccount.accountNumber, "123456789012");
  assert.equal(checked.value.sftp, null);
});

Deno.test("a same_day cutoff must fall before the Fed's last same-day window, 16:45 New York, all year", () => {
  const settings = (time: string, timeZone: string) => ({
    ...validSettingsJson(),
    time_zone: timeZone,
    cutoffs: [{ time, kind: "same_day" }, { time: "09:00", kind: "next_day" }],
  });
  const refusals: [string, string, string][] = [
    ["18:22", "America/New_York", 'cutoffs[0].time "18:22": a same_day cutoff'],
    ["16:45", "America/New_York", 'cutoffs[0].time "16:45": a same_day cutoff'],
    ["15:45", "America/Chicago", 'cutoffs[0].time "15:45" (16:45 in New York): a same_day'],
    // Phoenix keeps no daylight-saving time: 14:00 there is 16:00 in New York in winter, 17:00 in summer.
    ["14:00", "America/Phoenix", 'cutoffs[0].time "14:00" (17:00 in New York): a same_day'],
  ];
  for (const [time, zone, start] of refusals) {
    const checked = checkBankSettings(settings(time, zone), "live");
    assert.equal(checked.ok, false, `${time} ${zone}`);
    if (checked.ok) continue;
    assert.equal(checked.field, "cutoffs[0].time");
    assert.ok(checked.message.startsWith(start), checked.message);
    assert.ok(
      checked.message.endsWith(
        "must fall before the Federal Reserve's last same-day window, 16:45 New York time; the bank may set an earlier one",
      ),
      checked.message,
    );
  }
  for (
    const [time, zone] of [["16:44", "America/New_York"], ["15:44", "America/Chicago"], [
      "13:44",
      "America/Phoenix",
    ]]
  ) {
    assert.equal(checkBankSettings(settings(time, zone), "live").ok, true, `${time} ${zone}`);
  }
  // A next_day cutoff may be as late as the bank likes.
  const lateNextDay = {
    ...validSettingsJson(),
    cutoffs: [{ time: "10:30", kind: "same_day" }, { time: "21:00", kind: "next_day" }],
  };
  assert.equal(checkBankSettings(lateNextDay, "live").ok, true);
});

Deno.test("each bad field is refused naming its path", () => {
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [at("odfi_routing", "021000022"), "odfi_routing", /check digit/],
    [at("immediate_destination", "02100002"), "immediate_destination", /9 digits/],
    [
      at("funding_account.routing_number", "011000016"),
      "funding_account.routing_number",
      /check digit/,
    ],
    [at("company_name", "CEDAR REINSURANCE"), "company_name", /1 to 16 characters, got 17/],
    [at("company_name", "Cedar Re"), "company_name", /uppercase ASCII/],
    [at("company_name", ""), "company_name", /1 to 16/],
    [at("company_identification", "155555555"), "company_identification", /exactly 10/],
    [at("immediate_origin", "15555555555"), "immediate_origin", /exactly 10/],
    [at("immediate_origin_name", "X".repeat(24)), "immediate_origin_name", /at most 23/],
    [
      at("settlement_account.account_number", "123"),
      "settlement_account.account_number",
      /4 to 17 digits/,
    ],
    [
      at("settlement_account.account_type", "money_market"),
      "settlement_account.account_type",
      /checking or savings/,
    ],
    [at("funding_account.name", "N".repeat(23)), "funding_account.name", /at most 22/],
    [at("balanced_file", "yes"), "balanced_file", /true or false/],
    [at("time_zone", "Mars/Olympus_Mons"), "time_zone", /IANA time zone/],
    [at("cutoffs", []), "cutoffs", /at least one/],
    [
      at("cutoffs", Array.from({ length: 9 }, (_, i) => ({ time: `1${i}:00`, kind: "next_day" }))),
      "cutoffs",
      /at most 8/,
    ],
    [
      at("cutoffs", [{ time: "10:30", kind: "same_day" }, { time: "25:00", kind: "next_day" }]),
      "cutoffs[1].time",
      /HH:MM/,
    ],
    [
      at("cutoffs", [{ time: "10:30", kind: "same_day" }, { time: "4pm", kind: "next_day" }]),
      "cutoffs[1].time",
      /HH:MM/,
    ],
    [
      at("cutoffs", [{ time: "10:30", kind: "same_day" }, { time: "17:00", kind: "tomorrow" }]),
      "cutoffs[1].kind",
      /same_day or next_day/,
    ],
    [
      at("cutoffs", [{ time: "17:00", kind: "same_day" }, { time: "17:00", kind: "next_day" }]),
      "cutoffs[1].time",
      /same time as cutoffs\[0\]/,
    ],
    [at("cutoffs", [{ time: "10:30", kind: "same_day" }]), "cutoffs", /next_day/],
    [at("transmit_window_minutes", 4), "transmit_window_minutes", /5 to 240/],
    [at("transmit_window_minutes", 241), "transmit_window_minutes", /5 to 240/],
    [at("odfi", "021000021"), "odfi", /not a bank setting/],
    [at("sftp", { ...sftp, port: 70000 }), "sftp.port", /1 to 65535/],
    [
      at("sftp", { ...sftp, private_key: "-----BEGIN OPENSSH PRIVATE KEY-----\n" }),
      "sftp",
      /exactly one/,
    ],
    [at("sftp", { ...sftp, password: null }), "sftp", /exactly one/],
    [
      at("sftp", { ...sftp, host_key_fingerprint: null }),
      "sftp.host_key_fingerprint",
      /required in live/,
    ],
    [
      at("sftp", { ...sftp, host_key_fingerprint: "MD5:aa" }),
      "sftp.host_key_fingerprint",
      /SHA256/,
    ],
  ];
  for (const [input, field, message] of cases) {
    const checked = checkBankSettings(input, "live");
    assert.equal(checked.ok, false, field);
    if (checked.ok) continue;
    assert.equal(checked.code, "invalid_input");
    assert.equal(checked.field, field, checked.message);
    assert.match(checked.message, message);
    assert.ok(checked.message.startsWith(field), checked.message);
  }
  const missing = { ...validSettingsJson() };
  delete missing.odfi_routing;
  const refused = checkBankSettings(missing, "live");
  assert.ok(!refused.ok);
  assert.equal(refused.field, "odfi_routing");
  assert.match(refused.message, /required/);
});

Deno.test("an SFTP target: taken in live, refused in test (files never leave the machine)", () => {
  const live = checkBankSettings(at("sftp", sftp), "live");
  assert.ok(live.ok);
  assert.deepEqual(live.value.sftp, {
    host: "sftp.bank.example",
    port: 22,
    username: "cedar",
    privateKey: null,
    password: "s3cret-sftp-password",
    hostKeyFingerprint: "SHA256:" + "A".repeat(43),
    outboundDir: "/outbound",
    inboundDir: "/inbound",
  });
  const test = checkBankSettings(at("sftp", sftp), "test");
  assert.ok(!test.ok);
  assert.equal(test.field, "sftp");
  assert.match(test.message, /test files never leave the machine/);
  assert.ok(checkBankSettings(validSettingsJson(), "test").ok);
});

Deno.test("sandbox settings: valid routing, 16-character uppercase name, the documented cutoffs", () => {
  const settings = sandboxBankSettings("Société Générale Insurance Holdings", "555555555");
  assert.equal(settings.companyName, "SOCIETE GENERALE");
  assert.equal(settings.companyIdentification, "1555555555");
  assert.ok(isValidRoutingNumber(settings.odfiRouting));
  assert.ok(isValidRoutingNumber(settings.immediateDestination));
  assert.deepEqual(settings.cutoffs, [
    { time: "10:30", kind: "same_day" },
    { time: "14:45", kind: "same_day" },
    { time: "17:00", kind: "next_day" },
  ]);
  assert.equal(settings.timeZone, "America/New_York");
  assert.equal(settings.balancedFile, false);
  assert.equal(settings.sftp, null);
  assert.equal(settings.transmitWindowMinutes, 30);
  // The sandbox's own settings pass the checks they stand in for.
  const again = checkBankSettings(bankSettingsJson(settings), "test");
  assert.ok(again.ok, again.ok ? "" : again.message);
  assert.deepEqual(again.value, settings);
  const noTin = sandboxBankSettings("Acme Mutual");
  assert.match(noTin.companyIdentification, /^1\d{9}$/);
  assert.equal(noTin.companyName, "ACME MUTUAL");
});

Deno.test("masked settings show last four only and no SFTP secret", () => {
  const checked = checkBankSettings(at("sftp", sftp), "live");
  assert.ok(checked.ok);
  const masked = maskedBankSettings(checked.value);
  const text = JSON.stringify(masked);
  assert.ok(!text.includes("123456789012"));
  assert.ok(!text.includes("9876543210"));
  assert.ok(!text.includes("s3cret-sftp-password"));
  assert.deepEqual(masked.funding_account, {
    routing_number: "011000015",
    account_number: "••••9012",
    account_type: "checking",
    name: "CEDAR RE OPERATING",
  });
  assert.deepEqual(masked.sftp, {
    host: "sftp.bank.example",
    port: 22,
    username: "cedar",
    auth: "password",
    configured: true,
    host_key_fingerprint: "SHA256:" + "A".repeat(43),
    outbound_dir: "/outbound",
    inbound_dir: "/inbound",
  });
});

Deno.test("the store seals settings; test falls back to the sandbox bank, live to nothing", async () => {
  await withTempDir(async (dir) => {
    for (const environment of ["test", "live"] as const) {
      const database = await openTempDatabase(dir, environment);
      try {
        await database.writer.write((tx) =>
          tx.execute({
            sql:
              "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_1', 'Cedar Re', '555555555', 0)",
          })
        );
        const reader = database.readClient;
        const none = await readBankSettings(reader, testSecretBox, environment, "co_1");
        if (environment === "test") {
          assert.deepEqual(none, sandboxBankSettings("Cedar Re", "555555555"));
        } else assert.equal(none, null);
        assert.equal(await hasAchRail(reader, environment, "co_1"), environment === "test");
        const checked = checkBankSettings(validSettingsJson(), environment);
        assert.ok(checked.ok);
        const saved = await database.writer.write((tx) =>
          saveBankSettings(tx, testSecretBox, "co_1", checked.value, "op_1", 1000)
        );
        assert.equal(saved.previousFingerprint, null);
        assert.match(saved.fingerprint, /^[0-9a-f]{64}$/);
        const read: BankSettings | null = await readBankSettings(
          reader,
          testSecretBox,
          environment,
          "co_1",
        );
        assert.deepEqual(read, checked.value);
        assert.equal(await hasAchRail(reader, environment, "co_1"), true);
        const raw = await reader.execute("SELECT * FROM bank_settings");
        const rawText = JSON.stringify(raw.rows);
        assert.ok(!rawText.includes("123456789012"), "the account number is sealed");
        assert.ok(!rawText.includes("CEDAR RE OPERATING"));
        assert.equal(raw.rows[0].updated_by, "op_1");
        const again = await database.writer.write((tx) =>
          saveBankSettings(tx, testSecretBox, "co_1", checked.value, "op_2", 2000)
        );
        assert.equal(again.previousFingerprint, saved.fingerprint);
        assert.equal(again.fingerprint, saved.fingerprint);
      } finally {
        database.close();
      }
    }
  });
});

Deno.test("provider_accounts: each provider settles from one of the statement accounts; shown masked; the sandbox's settle from its settlement account", () => {
  const named = checkBankSettings(
    at("provider_accounts", { lithic: "9876543210", increase: "9876543210" }),
    "live",
  );
  assert.ok(named.ok, named.ok ? "" : named.message);
  assert.deepEqual(named.value.providerAccounts, {
    lithic: "9876543210",
    increase: "9876543210",
  });
  assert.deepEqual(bankSettingsJson(named.value).provider_accounts, {
    lithic: "9876543210",
    increase: "9876543210",
  });
  assert.deepEqual(maskedBankSettings(named.value).provider_accounts, {
    lithic: "••••3210",
    increase: "••••3210",
  });
  const elsewhere = checkBankSettings(at("provider_accounts", { paypal: "123456789012" }), "live");
  assert.ok(!elsewhere.ok);
  assert.equal(elsewhere.field, "provider_accounts.paypal");
  assert.equal(
    elsewhere.message,
    "provider_accounts.paypal: ••••9012 is not one of the statement accounts (the settlement and check accounts unless statement_accounts names others)",
  );
  const unknown = checkBankSettings(at("provider_accounts", { stripe: "9876543210" }), "live");
  assert.ok(!unknown.ok);
  assert.equal(unknown.field, "provider_accounts.stripe");
  const sandbox = sandboxBankSettings("Acme Mutual");
  assert.deepEqual(sandbox.providerAccounts, {
    paypal: "000900000002",
    lithic: "000900000002",
    increase: "000900000002",
  });
});
