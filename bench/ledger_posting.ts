/**
 * Ledger posting rate through the group-commit writer: concurrent callers each post balanced
 * transactions (available → reserved, one per call) on a durable (synchronous=FULL) database file.
 */
import { openDatabase } from "../db/client.ts";
import { postTransaction } from "../lib/ledger/store.ts";

export interface PostingResult {
  readonly transactions: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly groups: number;
}

export async function measureLedgerPosting(
  options: { transactions: number; concurrency: number },
): Promise<PostingResult> {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-bench-ledger-" });
  const database = await openDatabase({
    environment: "test",
    url: `file:${dir}/test.db`,
    busyTimeoutMs: 5000,
    unitsPerGroupMax: 512,
    readCacheEntries: 0,
  });
  const perWorker = Math.ceil(options.transactions / options.concurrency);
  const transactions = perWorker * options.concurrency;
  try {
    await database.writer.write(async (tx) => {
      await tx.execute(
        "INSERT INTO companies (id, name, tin, created_at) VALUES ('co_b', 'Bench', '123456789', 0)",
      );
      await tx.execute(
        "INSERT INTO business_lines (id, company_id, code, created_at) VALUES ('line_b', 'co_b', 'auto', 0)",
      );
      await postTransaction(tx, {
        companyId: "co_b",
        lineId: "line_b",
        kind: "funding.wire_received",
        transfers: [{ from: "bank", to: "available", amountCents: transactions * 100 }],
        postedAt: 0,
      });
    });
    const groupsBefore = database.writer.stats.groups;
    const started = performance.now();
    await Promise.all(Array.from({ length: options.concurrency }, async () => {
      for (let i = 0; i < perWorker; i++) {
        const posted = await database.writer.write((tx) =>
          postTransaction(tx, {
            companyId: "co_b",
            lineId: "line_b",
            kind: "payout.hold",
            transfers: [{ from: "available", to: "reserved", amountCents: 100 }],
            postedAt: 0,
          })
        );
        if (!posted.ok) throw new Error(posted.message);
      }
    }));
    const seconds = (performance.now() - started) / 1000;
    return {
      transactions,
      seconds,
      perSecond: transactions / seconds,
      groups: database.writer.stats.groups - groupsBefore,
    };
  } finally {
    await database.close();
    await Deno.remove(dir, { recursive: true });
  }
}
