/**
 * Issue 5's scale check: balance reads at 10,000 and at 1,000,000 ledger entries, and the
 * service's resident memory with 1,000,000 stored disbursements. Rows are bulk-inserted while the
 * service is stopped (balanced transfers bank → available of one cent each, the materialized
 * balances moved by the same total), then the service is started on them and loaded with wrk.
 */
import { DatabaseSync } from "node:sqlite";
import { type RunningService, startService } from "./service.ts";
import { type LoadResult, runLoad } from "./wrk.ts";

export interface ScaleResult {
  readonly small: { entries: number; balance: LoadResult };
  readonly large: {
    entries: number;
    disbursements: number;
    balance: LoadResult;
    /** The same disbursement every time: the read cache answers. */
    byId: LoadResult;
    /** A random one of the million each time: nearly every read misses the cache. */
    byRandomId: LoadResult;
    residentMiB: number;
  };
}

const BATCH = 50_000;

/** Adds disbursements (each one completed payout) and one-cent transfers until the counts are reached. */
function grow(path: string, target: { entries: number; disbursements: number }): void {
  const db = new DatabaseSync(path);
  try {
    const line = db.prepare(
      "SELECT l.id, l.company_id FROM business_lines l WHERE l.code = 'auto' ORDER BY l.rowid LIMIT 1",
    ).get() as { id: string; company_id: string };
    const account = (code: string) =>
      (db.prepare("SELECT id FROM ledger_accounts WHERE line_id = ? AND code = ?").get(
        line.id,
        code,
      ) as { id: string }).id;
    const [bank, available] = [account("bank"), account("available")];
    const count = (table: string) =>
      Number((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n);
    const insertDisbursement = db.prepare(
      `INSERT INTO disbursements (id, company_id, line_id, kind, external_uuid, request_fingerprint, created_at)
         VALUES (?, ?, ?, 'v1', ?, 'bench', ?)`,
    );
    const insertPayout = db.prepare(
      `INSERT INTO payouts (id, disbursement_id, company_id, line_id, payee_uuid, amount_cents, status,
         created_at, updated_at) VALUES (?, ?, ?, ?, 'bench', 100, 'completed', ?, ?)`,
    );
    const insertTransaction = db.prepare(
      `INSERT INTO ledger_transactions (id, company_id, line_id, kind, posted_at)
         VALUES (?, ?, ?, 'bench.transfer', ?)`,
    );
    const insertEntry = db.prepare(
      "INSERT INTO ledger_entries (transaction_id, account_id, amount_cents) VALUES (?, ?, ?)",
    );
    const now = Date.now();
    let disbursements = count("disbursements");
    let entries = count("ledger_entries");
    while (disbursements < target.disbursements || entries < target.entries) {
      db.exec("BEGIN");
      let transfers = 0;
      for (let i = 0; i < BATCH; i++) {
        if (disbursements < target.disbursements) {
          const id = `dsb_bench_${disbursements}`;
          insertDisbursement.run(id, line.company_id, line.id, id, now);
          insertPayout.run(`po_bench_${disbursements}`, id, line.company_id, line.id, now, now);
          disbursements++;
        }
        if (entries < target.entries) {
          const id = `ltx_bench_${entries}`;
          insertTransaction.run(id, line.company_id, line.id, now);
          insertEntry.run(id, bank, -1);
          insertEntry.run(id, available, 1);
          entries += 2;
          transfers++;
        }
      }
      db.prepare("UPDATE ledger_accounts SET balance_cents = balance_cents + ? WHERE id = ?")
        .run(transfers, available);
      db.prepare("UPDATE ledger_accounts SET balance_cents = balance_cents - ? WHERE id = ?")
        .run(transfers, bank);
      db.exec("COMMIT");
    }
  } finally {
    db.close();
  }
}

async function balanceLoad(service: RunningService, connections: number, seconds: number) {
  const acme = service.credentials.companies[0];
  const options = {
    url: `${service.baseUrl}/v1/ledgers/${acme.lines[0].line}/balance`,
    headers: { Authorization: `Bearer ${acme.lines[0].key_test}` },
    connections,
  };
  await runLoad({ ...options, durationSeconds: 2 });
  return await runLoad({ ...options, durationSeconds: seconds });
}

/** The faster of two runs: on a shared machine one run alone can be off by a third. */
const faster = (a: LoadResult, b: LoadResult) => a.requestsPerSecond >= b.requestsPerSecond ? a : b;

export async function measureAtScale(
  options: { connections: number; seconds: number },
): Promise<ScaleResult> {
  const smallDir = await Deno.makeTempDir({ prefix: "disbursement-bench-scale-small-" });
  const largeDir = await Deno.makeTempDir({ prefix: "disbursement-bench-scale-large-" });
  try {
    // The first start creates and seeds each pair of databases.
    for (const dir of [smallDir, largeDir]) await (await startService({}, { dataDir: dir })).stop();
    grow(`${smallDir}/test.db`, { entries: 10_000, disbursements: 0 });
    grow(`${largeDir}/test.db`, { entries: 1_000_000, disbursements: 1_000_000 });
    // The two sizes take turns, twice, so a noisy moment cannot favour one of them.
    const balanceOf = async (dataDir: string) => {
      const service = await startService({}, { dataDir });
      try {
        return await balanceLoad(service, options.connections, options.seconds);
      } finally {
        await service.stop();
      }
    };
    let smallBalance = await balanceOf(smallDir);
    let largeBalance = await balanceOf(largeDir);
    smallBalance = faster(smallBalance, await balanceOf(smallDir));
    const service = await startService({}, { dataDir: largeDir });
    try {
      largeBalance = faster(
        largeBalance,
        await balanceLoad(service, options.connections, options.seconds),
      );
      const acme = service.credentials.companies[0];
      const auth = { Authorization: `Bearer ${acme.lines[0].key_test}` };
      const byId = await runLoad({
        url: `${service.baseUrl}/v1/disbursements/dsb_bench_500000`,
        headers: auth,
        connections: options.connections,
        durationSeconds: options.seconds,
      });
      const script = await Deno.makeTempFile({ suffix: ".lua" });
      await Deno.writeTextFile(
        script,
        `function request()
  return wrk.format("GET", "/v1/disbursements/dsb_bench_" .. math.random(0, 999999),
    {["Authorization"] = "${auth.Authorization}"})
end
`,
      );
      const byRandomId = await runLoad({
        url: `${service.baseUrl}/`,
        script,
        connections: options.connections,
        durationSeconds: options.seconds,
      }).finally(() => Deno.remove(script));
      return {
        small: { entries: 10_000, balance: smallBalance },
        large: {
          entries: 1_000_000,
          disbursements: 1_000_000,
          balance: largeBalance,
          byId,
          byRandomId,
          residentMiB: await service.residentMiB(),
        },
      };
    } finally {
      await service.stop();
    }
  } finally {
    await Deno.remove(smallDir, { recursive: true });
    await Deno.remove(largeDir, { recursive: true });
  }
}
