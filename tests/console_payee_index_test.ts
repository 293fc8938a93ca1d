/**
 * The console's payee index (`payee_search`), filled by the scheduler's sweep rather than on the
 * create path: a new payout is found before the index has it (the search scans the payouts past
 * the index's progress mark), the sweep indexes payouts a unit at a time and a failing upkeep step
 * does not stop the sweep, and every page of a search by payee fragment or by the one search box
 * is the one a case-insensitive substring match picks, with the index caught up, half caught up
 * or empty, for fragments matching few payouts, more than the search sorts itself, or too short
 * for the index.
 */
import assert from "node:assert/strict";
import type { Database } from "../db/client.ts";
import { Scheduler } from "../db/scheduler.ts";
import {
  catchUpPayeeIndex,
  indexNextPayees,
  PAYEE_INDEX_ROWS_PER_UNIT,
  payeesNotIndexed,
} from "../lib/console/payee_index.ts";
import {
  PAYEE_MATCHES_SORTED_MAX,
  type PayoutFilter,
  searchPayouts,
} from "../lib/console/payouts.ts";
import type { PageWindow } from "../lib/console/paging.ts";
import { FakeClock } from "../lib/platform/clock.ts";
import { openTempDatabase, statementTexts } from "./helpers.ts";

const COMPANY = "co_search";
const LINE = "line_search";
const DISBURSEMENT = "dsb_search";
const CREATED_MS = 1_767_625_200_000;

interface PayeeRow {
  readonly id: string;
  readonly firstName: string | null;
  readonly lastName: string | null;
  readonly email: string | null;
  readonly amountCents: number;
  readonly createdAt: number;
}

async function seedCompany(database: Database): Promise<void> {
  await database.writer.write(async (tx) => {
    await tx.execute({
      sql: "INSERT INTO companies (id, name, tin, created_at) VALUES (?, 'Search Mutual', ?, ?)",
      args: [COMPANY, "333333333", CREATED_MS],
    });
    await tx.execute({
      sql: "INSERT INTO business_lines (id, company_id, code, created_at) VALUES (?, ?, 'auto', ?)",
      args: [LINE, COMPANY, CREATED_MS],
    });
    await tx.execute({
      sql: `INSERT INTO disbursements (id, company_id, line_id, kind, external_uuid,
              request_fingerprint, created_at) VALUES (?, ?, ?, 'v1', ?, 'search', ?)`,
      args: [DISBURSEMENT, COMPANY, LINE, DISBURSEMENT, CREATED_MS],
    });
  });
}

async function insertPayouts(database: Database, rows: readonly PayeeRow[]): Promise<void> {
  await database.writer.write(async (tx) => {
    for (const row of rows) {
      await tx.execute({
        sql: `INSERT INTO payouts (id, disbursement_id, company_id, line_id, payee_uuid,
                first_name, last_name, email, amount_cents, status, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'created', ?, ?)`,
        args: [
          row.id,
          DISBURSEMENT,
          COMPANY,
          LINE,
          `payee-${row.id}`,
          row.firstName,
          row.lastName,
          row.email,
          row.amountCents,
          row.createdAt,
          row.createdAt,
        ],
      });
    }
  });
}

/** The payout ids the index itself holds for a fragment, whatever LIKE would say. */
async function indexed(database: Database, fragment: string): Promise<string[]> {
  const { rows } = await database.readClient.execute({
    sql: `SELECT p.id FROM payee_search s JOIN payouts p ON p.rowid = s.rowid
          WHERE payee_search MATCH ? ORDER BY 1`,
    args: [`"${fragment}"`],
  });
  return rows.map((row) => String(row.id));
}

async function withSearchDatabase(run: (database: Database) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-payee-index-" });
  const database = await openTempDatabase(dir);
  try {
    await seedCompany(database);
    await run(database);
  } finally {
    await database.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const FIRST_PAGE: PageWindow = { sort: "created", direction: "desc", limit: 50, offset: 0 };

async function found(database: Database, filter: PayoutFilter): Promise<string[]> {
  const page = await searchPayouts(database.readClient, [COMPANY], filter, FIRST_PAGE);
  return page.data.map((row) => row.id).sort();
}

const rita: PayeeRow = {
  id: "po_rita",
  firstName: "Rita",
  lastName: "Rivers",
  email: "rita.rivers@example.test",
  amountCents: 1_250,
  createdAt: CREATED_MS,
};

Deno.test("payee index: a payout is found before the sweep indexes it, and after", async () => {
  await withSearchDatabase(async (database) => {
    await insertPayouts(database, [rita]);
    assert.equal(await payeesNotIndexed(database), 1);
    assert.deepEqual(await indexed(database, "rivers"), []);
    for (const filter of [{ payee: "rivers" }, { text: "ta Ri" }, { text: "rita.rivers@" }]) {
      assert.deepEqual(await found(database, filter), ["po_rita"], JSON.stringify(filter));
    }

    assert.equal(await catchUpPayeeIndex(database), 1);
    assert.equal(await payeesNotIndexed(database), 0);
    assert.deepEqual(await indexed(database, "rivers"), ["po_rita"]);
    assert.deepEqual(await indexed(database, "ta Ri"), ["po_rita"]);
    assert.deepEqual(await indexed(database, "rita.rivers@"), ["po_rita"]);
    // Nothing left: the sweep reads and writes nothing more.
    assert.equal(await catchUpPayeeIndex(database), 0);

    const sam = { ...rita, id: "po_sam", firstName: "Sam", lastName: "Rivers", email: null };
    await insertPayouts(database, [sam]);
    assert.deepEqual(await indexed(database, "rivers"), ["po_rita"]);
    assert.deepEqual(await found(database, { payee: "RIVERS" }), ["po_rita", "po_sam"]);
    assert.deepEqual(await found(database, { payee: "m Riv" }), ["po_sam"]);
    assert.deepEqual(await found(database, { payee: "stone" }), []);
  });
});

Deno.test("payee index: the sweep indexes a unit at a time from its mark; a failing upkeep step does not stop it", async () => {
  await withSearchDatabase(async (database) => {
    const count = PAYEE_INDEX_ROWS_PER_UNIT * 2 + 7;
    await insertPayouts(
      database,
      Array.from({ length: count }, (_, i) => ({
        ...rita,
        id: `po_${String(i).padStart(5, "0")}`,
        lastName: `Rivers${i}`,
      })),
    );
    assert.equal(await database.writer.write((tx) => indexNextPayees(tx, 10)), 10);
    assert.deepEqual(await indexed(database, "rivers9"), ["po_00009"]);
    assert.equal(await payeesNotIndexed(database), count - 10);

    const failures: string[] = [];
    const error = console.error;
    console.error = (line: string) => failures.push(line);
    try {
      const scheduler = new Scheduler(
        { test: database, live: database },
        { test: {}, live: {} },
        new FakeClock(CREATED_MS),
        {
          upkeep: [
            {
              name: "broken",
              run: () => Promise.reject(new Error("the index is out of reach")),
            },
            { name: "payee index", run: catchUpPayeeIndex },
          ],
        },
      );
      await scheduler.sweep();
    } finally {
      console.error = error;
    }
    assert.equal(await payeesNotIndexed(database), 0);
    assert.deepEqual(await indexed(database, "rivers1006"), ["po_01006"]);
    // Each row indexed once: a fragment of every name matches each payout once.
    assert.equal((await indexed(database, "rivers")).length, count);
    assert.equal(failures.length, 2);
    assert.deepEqual(JSON.parse(failures[0]), {
      level: "error",
      msg: "upkeep step failed",
      step: "broken",
      environment: "test",
      error: "the index is out of reach",
    });
  });
});

Deno.test("payee index: a unit indexes its payouts in three statements, however many they are", async () => {
  await withSearchDatabase(async (database) => {
    await insertPayouts(
      database,
      Array.from({ length: 40 }, (_, i) => ({ ...rita, id: `po_${i}`, lastName: `Stone${i}` })),
    );
    const { value: first, texts } = await statementTexts(() =>
      database.writer.write((tx) => indexNextPayees(tx, 25))
    );
    // Besides the writer's own (BEGIN, the unit's savepoint, COMMIT): 27 before, one a payout.
    assert.equal(texts.filter((sql) => /payee_search|payouts/.test(sql)).length, 3);
    assert.equal(first, 25);
    assert.equal(await database.writer.write((tx) => indexNextPayees(tx, 25)), 15);
    assert.equal(await database.writer.write((tx) => indexNextPayees(tx, 25)), 0);
    assert.equal(await payeesNotIndexed(database), 0);
    assert.equal((await indexed(database, "stone")).length, 40);
    assert.deepEqual(await indexed(database, "stone39"), ["po_39"]);
  });
});

const SURNAMES = ["Rivers", "Stone", "Garcia", "Nguyen", "Okafor", "Schmidt", "Kowalski", "Haddad"];
/** More payouts than the search sorts itself, so a common fragment takes the other way. */
const MANY = PAYEE_MATCHES_SORTED_MAX + 200;

/** Payouts with every shape of name: no first name, no e-mail, non-ASCII, a quote, ties. */
function manyPayees(): PayeeRow[] {
  return Array.from({ length: MANY }, (_, i) => ({
    id: `po_${String(i).padStart(5, "0")}`,
    firstName: i % 97 === 0
      ? null
      : i % 13 === 0
      ? "Zoë"
      : i % 500 === 7
      ? 'Dee "Dot"'
      : i % 3 === 0
      ? "Ann"
      : "Pat",
    lastName: `${SURNAMES[i % SURNAMES.length]}${i}`,
    email: i % 100 === 0 ? null : `payee${i}@example.test`,
    amountCents: 100 + (i * 7_919) % 50_000,
    // Two payouts share each creation time: the id orders them.
    createdAt: CREATED_MS - Math.floor(i / 2) * 1_000,
  }));
}

/** SQLite's LIKE: a substring, ASCII letters in any case, every other character as it is. */
const asciiLower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

function expectedPage(
  rows: PayeeRow[],
  fragment: string,
  window: PageWindow,
  also: (row: PayeeRow) => boolean = () => false,
): string[] {
  const wanted = asciiLower(fragment);
  const has = (text: string | null) => text !== null && asciiLower(text).includes(wanted);
  const key = (row: PayeeRow) => window.sort === "amount" ? row.amountCents : row.createdAt;
  const sign = window.direction === "asc" ? 1 : -1;
  return rows
    .filter((row) =>
      has(row.firstName) || has(row.lastName) || has(row.email) ||
      (fragment.includes(" ") && has(`${row.firstName ?? ""} ${row.lastName ?? ""}`)) ||
      also(row)
    )
    .sort((a, b) => sign * (key(a) - key(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
    .slice(window.offset, window.offset + window.limit + 1)
    .map((row) => row.id);
}

Deno.test("payee search: each page is the one a case-insensitive substring match picks, however far the index has come", async () => {
  await withSearchDatabase(async (database) => {
    const rows = manyPayees();
    await insertPayouts(database, rows);
    const common = expectedPage(rows, "EXAMPLE.test", { ...FIRST_PAGE, limit: MANY });
    assert.ok(common.length > PAYEE_MATCHES_SORTED_MAX, `${common.length} match "EXAMPLE.test"`);
    const fragments = [
      "EXAMPLE.test",
      "pat",
      "stone1",
      "GARCIA42",
      "t Rivers1",
      "n Stone3",
      "Zoë",
      "ZOË",
      '"Dot"',
      'e "Do',
      "e50@",
      "zzz",
      "A",
      "e5",
      // Longer than the index is asked for: a superset is looked up, LIKE decides.
      "payee4321@example.test",
      "Stone1001",
    ];
    const windows: PageWindow[] = [
      FIRST_PAGE,
      { sort: "created", direction: "asc", limit: 50, offset: 50 },
      { sort: "amount", direction: "desc", limit: 25, offset: 100 },
    ];
    const stages: [string, () => Promise<unknown>][] = [
      ["index empty", () => Promise.resolve()],
      ["index half caught up", () => database.writer.write((tx) => indexNextPayees(tx, MANY / 2))],
      ["index caught up", () => catchUpPayeeIndex(database)],
    ];
    for (const [stage, reach] of stages) {
      await reach();
      for (const fragment of fragments) {
        for (const window of windows) {
          const label =
            `${stage}: ${fragment} by ${window.sort} ${window.direction} from ${window.offset}`;
          const expected = expectedPage(rows, fragment, window);
          for (const filter of [{ payee: fragment }, { text: fragment }]) {
            const page = await searchPayouts(database.readClient, [COMPANY], filter, window);
            assert.deepEqual(
              page.data.map((row) => row.id),
              expected.slice(0, window.limit),
              `${label} as ${Object.keys(filter)[0]}`,
            );
            assert.equal(page.hasMore, expected.length > window.limit, label);
          }
        }
      }
    }
    // No fragment matches nothing by accident: each one finds a page but "zzz" and "ZOË".
    for (const fragment of fragments.filter((f) => f !== "zzz" && f !== "ZOË")) {
      assert.ok(expectedPage(rows, fragment, windows[0]).length > 0, fragment);
    }
  });
});

Deno.test("search box: a name fragment and an amount or id together find both, through the index", async () => {
  await withSearchDatabase(async (database) => {
    const rows = manyPayees();
    await insertPayouts(database, rows);
    await catchUpPayeeIndex(database);
    // "1250" is an amount ($1,250.00) as well as a fragment of names and e-mails.
    const rowsAt = rows.map((row, i) => i === 4_321 ? { ...row, amountCents: 125_000 } : row);
    await database.writer.write((tx) =>
      tx.execute({ sql: "UPDATE payouts SET amount_cents = 125000 WHERE id = 'po_04321'" })
    );
    const page = await searchPayouts(database.readClient, [COMPANY], { text: "1250" }, FIRST_PAGE);
    const expected = expectedPage(rowsAt, "1250", FIRST_PAGE, (row) => row.amountCents === 125_000);
    assert.ok(expected.includes("po_04321") && expected.includes("po_01250"));
    assert.deepEqual(page.data.map((row) => row.id), expected);
    assert.deepEqual(
      await found(database, { text: "po_00042" }),
      ["po_00042"],
    );
  });
});
