/**
 * The check rail on the money fixture: a funded company in test (the sandbox check account) or
 * in live (bank settings with a check account and no SFTP target, so files wait for mark-sent,
 * and a loaded sanctions list), payouts whose payees chose a postal or digital check, and reads of
 * the register, the check files and their plain content.
 */
import { checkBankSettings } from "../lib/ach/bank_settings.ts";
import { saveBankSettings } from "../lib/ach/bank_store.ts";
import { openCheckFile } from "../lib/checks/files_store.ts";
import { receiveWire } from "../lib/funding/store.ts";
import { markCheckFileSent } from "../lib/checks/files_service.ts";
import type { Environment } from "../lib/platform/config.ts";
import { validSettingsJson } from "./bank_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import {
  FIXTURE_SETTINGS,
  moneyBatchDeps,
  type MoneyFixture,
  openMoneyFixture,
} from "./money_core_helpers.ts";
import type { CheckTransport } from "../lib/checks/rail.ts";
import type { Database } from "../db/client.ts";
import { jobHandlersOf } from "../lib/payouts/runtime.ts";

/** Payment method ids of the two check rails. */
export const POSTAL_CHECK = 2;
export const DIGITAL_CHECK = 5;

/** The live check account the fixture stores (first number 5001). */
export function liveCheckAccountJson(): Record<string, unknown> {
  return {
    routing_number: "011000015",
    account_number: "4455667788",
    first_check_number: 5001,
    payer_name: "Acme Mutual",
    payer_address: ["100 Insurance Plaza", "Hartford, CT 06103"],
    stale_days: 180,
    positive_pay: {
      columns: ["account", "check_number", "amount", "issue_date", "payee_name", "issue_void"],
      date_format: "MM/DD/YYYY",
      amount_format: "dollars",
      issue_letter: "I",
      void_letter: "V",
      header: true,
    },
  };
}

/** Stores bank settings with `checkAccount` for the fixture's company in its environment. */
export async function storeCheckSettings(
  m: MoneyFixture,
  environment: Environment,
  checkAccount: Record<string, unknown> = liveCheckAccountJson(),
  bankSettings: Record<string, unknown> = {},
): Promise<void> {
  const checked = checkBankSettings(
    { ...validSettingsJson(), ...bankSettings, check_account: checkAccount },
    environment,
  );
  if (!checked.ok) throw new Error(checked.message);
  await m.database.writer.write((tx) =>
    saveBankSettings(tx, testSecretBox, m.companyId, checked.value, null, m.now())
  );
}

/** A loaded (empty) sanctions list: live screens every payee before submission. */
export async function loadEmptySanctionsList(m: MoneyFixture): Promise<void> {
  await m.database.writer.write((tx) =>
    tx.execute({
      sql: `INSERT INTO sanctions_lists (id, sha256, entry_count, file_name, loaded_by, loaded_at,
              replaced_at) VALUES ('sdn_checks', ?, 0, 'sdn.csv', NULL, ?, NULL)`,
      args: ["00".repeat(32), m.now()],
    })
  );
}

export interface CheckFixture {
  readonly m: MoneyFixture;
  readonly environment: Environment;
}

/**
 * A funded money fixture paying checks: in test on the sandbox check account; in live with the
 * check account of `liveCheckAccountJson` (or `checkAccount`) and a loaded sanctions list.
 */
export async function withCheckFixture(
  environment: Environment,
  fn: (fixture: CheckFixture) => Promise<void>,
  options: {
    checkAccount?: Record<string, unknown>;
    /** Bank settings over `validSettingsJson()` (an SFTP target, say). */
    bankSettings?: Record<string, unknown>;
    /** How check files reach the bank (default: the environment's own). */
    checkTransport?: CheckTransport;
  } = {},
): Promise<void> {
  const { checkTransport } = options;
  const m = await openMoneyFixture({
    environment,
    ...(checkTransport
      ? {
        handlers: (database: Database) =>
          jobHandlersOf(
            environment,
            { ...FIXTURE_SETTINGS, rails: { checkTransport } },
            database,
            testSecretBox,
          ),
      }
      : {}),
  });
  try {
    if (environment === "live") {
      await storeCheckSettings(m, "live", options.checkAccount, options.bankSettings);
      await loadEmptySanctionsList(m);
    } else if (options.checkAccount) {
      await storeCheckSettings(m, "test", options.checkAccount);
    }
    const funding = await m.fund(10_000_000);
    if (environment === "live") {
      // A live wire waits for the operator to record its arrival.
      await m.database.writer.write((tx) => receiveWire(tx, funding, m.now()));
    }
    await fn({ m, environment });
  } finally {
    await m.close();
  }
}

/** The postal address a check payee enters; ZIP 00000 is the sandbox's undeliverable one. */
export const CHECK_ADDRESS = { zip: "73301" };

/**
 * Payouts of `amounts` whose payees chose a check (`method`: 2 postal, 5 digital) with `details`;
 * returns their ids, after the jobs due now ran.
 */
export async function chooseCheck(
  m: MoneyFixture,
  amounts: number[],
  options: { method?: number; details?: { zip?: string } } = {},
): Promise<string[]> {
  const created = await m.create(
    amounts.map((amountCents, i) => ({
      payeeUuid: `p${i}`,
      amountCents,
      allowedPaymentMethodIds: [POSTAL_CHECK, DIGITAL_CHECK],
    })),
  );
  if (!created.ok) throw new Error(created.message);
  await m.settle();
  const ids = created.value.payouts.map((payout) => payout.id);
  for (const id of ids) {
    const selected = await m.select(
      id,
      options.method ?? POSTAL_CHECK,
      options.details ?? CHECK_ADDRESS,
    );
    if (!selected.ok) throw new Error(selected.message);
  }
  await m.settle();
  return ids;
}

export async function rows(m: MoneyFixture, sql: string, ...args: (string | number)[]) {
  return (await m.database.readClient.execute({ sql, args })).rows.map((row) => ({ ...row }));
}

/** The register, in number order. */
export const registerOf = (m: MoneyFixture) =>
  rows(
    m,
    `SELECT check_number, payout_id, kind, amount_cents, status, issue_file_id, void_file_id,
       print_file_id, postage_code FROM checks ORDER BY check_number`,
  );

/** The check files with their batch status, oldest first. */
export const checkFilesOf = (m: MoneyFixture) =>
  rows(
    m,
    `SELECT f.batch_id, f.kind, f.positive_pay_file_id, f.issue_count, f.void_count, f.total_cents,
       f.file_name, f.sha256, b.status FROM check_files f JOIN rail_batches b ON b.id = f.batch_id
     ORDER BY f.created_at, b.rowid`,
  );

/** A check file's plain content. */
export async function checkFileContent(m: MoneyFixture, fileId: string): Promise<Uint8Array> {
  const [row] = await rows(m, "SELECT content_sealed FROM check_files WHERE batch_id = ?", fileId);
  return await openCheckFile(testSecretBox, String(row.content_sealed));
}

/** A positive-pay file's text. */
export async function positivePayText(m: MoneyFixture, fileId: string): Promise<string> {
  return new TextDecoder().decode(await checkFileContent(m, fileId));
}

/** An admin's mark-sent of a built check file (the service's own checks and audit). */
export async function markSent(m: MoneyFixture, environment: Environment, fileId: string) {
  const marked = await markCheckFileSent(
    moneyBatchDeps(m.database, environment),
    { operator: { id: "op_admin", email: "admin@example.test" }, origin: "cli" },
    fileId,
    m.now(),
  );
  await m.settle();
  return marked;
}
