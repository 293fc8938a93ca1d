/**
 * The sandbox's Lithic's side in the test database (sandbox_lithic_cards): each card it issued, as
 * Lithic reports it now, with the answer first given under its idempotency key, its transactions
 * and its card-level auth rules (Lithic's shapes, as JSON). Each write is its own unit: it is
 * Lithic's side of the seam, never part of a unit of ours.
 */
import type { Database } from "../../db/client.ts";
import type {
  LithicSimulatorStore,
  SimulatedAuthRule,
  SimulatedCard,
  SimulatedTransaction,
} from "./simulator.ts";

function parsed<T>(value: unknown): T {
  return JSON.parse(String(value)) as T;
}

/** The simulation's store on a test database. */
export function sandboxLithicStore(database: Database): LithicSimulatorStore {
  const reader = database.readClient;
  const column = async <T>(token: string, name: string): Promise<T | null> => {
    const { rows } = await reader.execute({
      sql: `SELECT ${name} AS value FROM sandbox_lithic_cards WHERE token = ?`,
      args: [token],
    });
    return rows[0] ? parsed<T>(rows[0].value) : null;
  };
  const ofAccount = async <T>(account: string, cardToken: string | null, name: string) => {
    const { rows } = await reader.execute({
      sql: `SELECT ${name} AS value FROM sandbox_lithic_cards
            WHERE company_id = ? AND (? IS NULL OR token = ?) ORDER BY created_at, token`,
      args: [account, cardToken, cardToken],
    });
    return rows.flatMap((row) => parsed<T[]>(row.value));
  };
  /** Rewrites one JSON column of a card, read and written in one unit. */
  const update = (token: string, name: string, change: (value: unknown) => unknown) =>
    database.writer.write(async (tx) => {
      const { rows } = await tx.execute({
        sql: `SELECT ${name} AS value FROM sandbox_lithic_cards WHERE token = ?`,
        args: [token],
      });
      if (!rows[0]) throw new Error(`the sandbox's Lithic has no card ${token}`);
      await tx.execute({
        sql: `UPDATE sandbox_lithic_cards SET ${name} = ? WHERE token = ?`,
        args: [JSON.stringify(change(parsed(rows[0].value))), token],
      });
    });
  return {
    async createdUnder(account, key) {
      const { rows } = await reader.execute({
        sql: `SELECT request, answer FROM sandbox_lithic_cards
              WHERE company_id = ? AND idempotency_key = ?`,
        args: [account, key],
      });
      return rows[0]
        ? { request: String(rows[0].request), answer: parsed<SimulatedCard>(rows[0].answer) }
        : null;
    },
    addCard: (card, key, request) =>
      database.writer.write(async (tx) => {
        const json = JSON.stringify(card);
        const added = await tx.execute({
          sql: `INSERT INTO sandbox_lithic_cards (token, company_id, idempotency_key, request,
                  answer, card, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (company_id, idempotency_key) DO NOTHING`,
          args: [
            card.token,
            card.account_token,
            key,
            request,
            json,
            json,
            Date.parse(card.created),
          ],
        });
        if (added.rowsAffected > 0) return card;
        const { rows } = await tx.execute({
          sql:
            `SELECT answer FROM sandbox_lithic_cards WHERE company_id = ? AND idempotency_key = ?`,
          args: [card.account_token, key],
        });
        return parsed<SimulatedCard>(rows[0].answer);
      }),
    card: (token) => column<SimulatedCard>(token, "card"),
    setState: (token, state) =>
      update(token, "card", (card) => ({ ...(card as SimulatedCard), state })),
    transactions: (account, cardToken) =>
      ofAccount<SimulatedTransaction>(account, cardToken, "transactions"),
    putTransaction: (transaction) =>
      update(transaction.card_token, "transactions", (value) => [
        ...(value as SimulatedTransaction[]).filter((t) => t.token !== transaction.token),
        transaction,
      ]),
    authRules: async (account, cardToken) => {
      const rules = await ofAccount<SimulatedAuthRule>(account, null, "auth_rules");
      const unique = [...new Map(rules.map((rule) => [rule.token, rule])).values()];
      return unique.filter((rule) => cardToken === null || rule.card_tokens.includes(cardToken));
    },
    async addAuthRule(account, rule) {
      for (const token of rule.card_tokens) {
        const card = await column<SimulatedCard>(token, "card");
        if (card?.account_token !== account) continue;
        await update(token, "auth_rules", (rules) => [...(rules as SimulatedAuthRule[]), rule]);
      }
    },
  };
}
