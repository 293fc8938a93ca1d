/**
 * The console's payee search over its trigram index (migration 0012): the index follows every
 * write to payouts (insert, a name or e-mail change, delete), a database migrated before the index
 * has every payout indexed when it migrates, a page is exactly the one an ASCII-case-insensitive
 * substring match picks (a fragment matching few payouts and one matching more than the search
 * sorts itself alike), and a fragment shorter than three characters is refused with its length.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import type { Database } from "../db/client.ts";
import { migrationJournal, migrationsFolder } from "../db/client.ts";
import { drizzle } from "../db/drizzle.ts";
import { openEmbeddedClient } from "../db/embedded_client.ts";
import {
  PAYEE_MATCHES_SORTED_MAX,
  type PayoutListRow,
  payoutSorts,
  searchPayouts,
} from "../lib/console/payouts.ts";
import type { PageWindow } from "../lib/console/paging.ts";
import { consoleAs, createPayout, fundLine, textOf } from "./console_helpers.ts";
import { openTempDatabase } from "./helpers.ts";
import { withHttpFixture } from "./http_fixture.ts";

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

/** The company, line and disbursement the payouts of these tests belong to. */
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

const INSERT_PAYOUT = `INSERT INTO payouts (id, disbursement_id, company_id, line_id, payee_uuid,
  first_name, last_name, email, amount_cents, status, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'created', ?, ?)`;

const payoutArgs = (row: PayeeRow) => [
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
];

async function insertPayouts(database: Database, rows: readonly PayeeRow[]): Promise<void> {
  await database.writer.write(async (tx) => {
    for (const row of rows) await tx.execute({ sql: INSERT_PAYOUT, args: payoutArgs(row) });
  });
}

/**
 * The payout ids the index itself holds for a fragment, whatever LIKE would say; an entry left
 * behind by a payout that is gone shows as its rowid.
 */
async function indexed(database: Database, fragment: string): Promise<string[]> {
  const { rows } = await database.readClient.execute({
    sql: `SELECT coalesce(p.id, 'rowid ' || s.rowid) AS id FROM payee_search s
            LEFT JOIN payouts p ON p.rowid = s.rowid
          WHERE payee_search MATCH ? ORDER BY 1`,
    args: [`"${fragment}"`],
  });
  return rows.map((row) => String(row.id));
}

async function withSearchDatabase(run: (database: Database) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-payee-search-" });
  const database = await openTempDatabase(dir);
  try {
    await seedCompany(database);
    await run(database);
  } finally {
    await database.close();
    await Deno.remove(dir, { recursive: true });
  }
}

const rita: PayeeRow = {
  id: "po_rita",
  firstName: "Rita",
  lastName: "Rivers",
  email: "rita.rivers@example.test",
  amountCents: 1_250,
  createdAt: CREATED_MS,
};

Deno.test("payee index: follows each insert, name and e-mail change, and delete of a payout", async () => {
  await withSearchDatabase(async (database) => {
    const write = (sql: string, args: (string | null)[]) =>
      database.writer.write((tx) => tx.execute({ sql, args }));
    const steps: [string, () => Promise<unknown>, Record<string, string[]>][] = [
      ["insert", () => insertPayouts(database, [rita]), {
        "rivers": ["po_rita"],
        "ta Ri": ["po_rita"],
        "rita.rivers@": ["po_rita"],
        "stone": [],
      }],
      [
        "last name changed",
        () => write("UPDATE payouts SET last_name = ? WHERE id = ?", ["Stone", rita.id]),
        {
          "rivers": ["po_rita"],
          "ta St": ["po_rita"],
          "ta Ri": [],
        },
      ],
      [
        "e-mail changed",
        () => write("UPDATE payouts SET email = ? WHERE id = ?", ["rs@example.test", rita.id]),
        {
          "rivers": [],
          "rs@example": ["po_rita"],
        },
      ],
      [
        "first name cleared",
        () => write("UPDATE payouts SET first_name = NULL WHERE id = ?", [rita.id]),
        {
          "rita": [],
          " Stone": ["po_rita"],
        },
      ],
      [
        "status changed",
        () => write("UPDATE payouts SET status = 'canceled' WHERE id = ?", [rita.id]),
        {
          "stone": ["po_rita"],
        },
      ],
      ["deleted", () => write("DELETE FROM payouts WHERE id = ?", [rita.id]), {
        "stone": [],
        "example": [],
      }],
    ];
    for (const [step, act, expected] of steps) {
      await act();
      for (const [fragment, ids] of Object.entries(expected)) {
        assert.deepEqual(await indexed(database, fragment), ids, `${step}: ${fragment}`);
      }
    }
  });
});

Deno.test("payee index: a database migrated before it has every payout indexed once it migrates", async () => {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-payee-migrate-" });
  try {
    // The committed migrations up to the index's, applied by drizzle's own migrator.
    const journal = await migrationJournal();
    const index = journal.findIndex((entry) => entry.tag === "0012_console_payee_search");
    assert.ok(index > 0, "the journal holds 0012_console_payee_search");
    const before = `${dir}/migrations`;
    await Deno.mkdir(`${before}/meta`, { recursive: true });
    const raw = JSON.parse(await Deno.readTextFile(`${migrationsFolder}/meta/_journal.json`));
    raw.entries = raw.entries.slice(0, index);
    await Deno.writeTextFile(`${before}/meta/_journal.json`, JSON.stringify(raw));
    for (const entry of journal.slice(0, index)) {
      await Deno.copyFile(`${migrationsFolder}/${entry.tag}.sql`, `${before}/${entry.tag}.sql`);
    }
    const client = openEmbeddedClient(`file:${dir}/test.db`, 5_000);
    const { migrate } = await import("drizzle-orm/libsql/migrator");
    await migrate(drizzle(client), { migrationsFolder: before });
    client.close();
    const sqlite = new DatabaseSync(`${dir}/test.db`);
    assert.equal(
      sqlite.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'payee_search'").get()
        ?.n,
      0,
    );
    sqlite.exec(`INSERT INTO companies (id, name, tin, created_at)
                   VALUES ('${COMPANY}', 'Search Mutual', '333333333', ${CREATED_MS});
                 INSERT INTO business_lines (id, company_id, code, created_at)
                   VALUES ('${LINE}', '${COMPANY}', 'auto', ${CREATED_MS});
                 INSERT INTO disbursements (id, company_id, line_id, kind, external_uuid,
                   request_fingerprint, created_at)
                   VALUES ('${DISBURSEMENT}', '${COMPANY}', '${LINE}', 'v1', 'x', 'x', ${CREATED_MS})`);
    const sam = { ...rita, id: "po_sam", firstName: "Sam", lastName: "Stone", email: null };
    for (const row of [rita, sam]) sqlite.prepare(INSERT_PAYOUT).run(...payoutArgs(row));
    sqlite.close();

    const database = await openTempDatabase(dir);
    try {
      assert.deepEqual(await indexed(database, "rivers"), ["po_rita"]);
      assert.deepEqual(await indexed(database, "m Sto"), ["po_sam"]);
      assert.deepEqual(await indexed(database, "example"), ["po_rita"]);
      await insertPayouts(database, [{ ...rita, id: "po_ria", lastName: "Riverside" }]);
      assert.deepEqual(await indexed(database, "rivers"), ["po_ria", "po_rita"]);
    } finally {
      await database.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
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

function expectedPage(rows: PayeeRow[], fragment: string, window: PageWindow): string[] {
  const wanted = asciiLower(fragment);
  const has = (text: string | null) => text !== null && asciiLower(text).includes(wanted);
  const key = (row: PayeeRow) => window.sort === "amount" ? row.amountCents : row.createdAt;
  const sign = window.direction === "asc" ? 1 : -1;
  return rows
    .filter((row) =>
      has(row.firstName) || has(row.lastName) || has(row.email) ||
      (fragment.includes(" ") && has(`${row.firstName ?? ""} ${row.lastName ?? ""}`))
    )
    .sort((a, b) => sign * (key(a) - key(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
    .slice(window.offset, window.offset + window.limit + 1)
    .map((row) => row.id);
}

Deno.test("payee search: each page is the one a case-insensitive substring match picks", async () => {
  await withSearchDatabase(async (database) => {
    const rows = manyPayees();
    await insertPayouts(database, rows);
    const common = expectedPage(rows, "EXAMPLE.test", {
      sort: "created",
      direction: "desc",
      limit: MANY,
      offset: 0,
    });
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
    ];
    const windows: PageWindow[] = [
      { sort: "created", direction: "desc", limit: 50, offset: 0 },
      { sort: "created", direction: "asc", limit: 50, offset: 50 },
      { sort: "amount", direction: "desc", limit: 25, offset: 100 },
    ];
    for (const fragment of fragments) {
      for (const window of windows) {
        assert.ok(window.sort in payoutSorts);
        const expected = expectedPage(rows, fragment, window);
        const page = await searchPayouts(
          database.readClient,
          [COMPANY],
          { payee: fragment },
          window,
        );
        const label = `${fragment} by ${window.sort} ${window.direction} from ${window.offset}`;
        assert.deepEqual(
          page.data.map((row: PayoutListRow) => row.id),
          expected.slice(0, window.limit),
          label,
        );
        assert.equal(page.hasMore, expected.length > window.limit, label);
      }
    }
    // No fragment matches nothing by accident: each one finds a page but "zzz" and "ZOË".
    for (const fragment of fragments.filter((f) => f !== "zzz" && f !== "ZOË")) {
      assert.ok(expectedPage(rows, fragment, windows[0]).length > 0, fragment);
    }
  });
});

Deno.test("console payouts: a payee fragment under three characters is refused with its length", async () => {
  await withHttpFixture(async (f) => {
    const acme = { companyId: f.cast.acme.id, lineId: f.cast.acme.autoLineId };
    await fundLine(f, acme, 1_000_000);
    await createPayout(f, {
      key: f.cast.acmeAutoKeyTest,
      payeeId: "sam",
      email: "sam.stone@example.test",
      name: "Sam Stone",
      claimId: "CLM-2002",
      amount: 80.25,
    });
    const { browser } = await consoleAs(f, { email: "vic@ops.test", role: "viewer" });
    const cases: [string, number, string][] = [
      ["sam", 200, "Sam Stone"],
      ["m S", 200, "Sam Stone"],
      ["sa", 400, "got 2"],
      [" s ", 400, "got 1"],
      // Three UTF-16 units, two characters.
      ["é😀", 400, "got 2"],
    ];
    for (const [payee, status, seen] of cases) {
      const page = await browser.get(`/console/payouts?payee=${encodeURIComponent(payee)}`);
      assert.equal(page.status, status, payee);
      if (status === 200) {
        assert.match(page.html, new RegExp(`>${seen}</a>`), payee);
      } else {
        assert.ok(
          textOf(page.html).includes(
            `Payee name or e-mail: at least 3 characters, ${seen}`,
          ),
          payee,
        );
        assert.match(page.html, /name="payee" value="[^"]*"[^>]*aria-invalid="true"/, payee);
        assert.doesNotMatch(page.html, />Sam Stone<\/a>/, payee);
      }
    }
  }, { RATE_LIMIT_RPS: "0" });
});
