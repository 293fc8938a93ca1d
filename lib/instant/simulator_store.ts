/**
 * The Increase simulator's tables in the test database (the provider's side of the seam): the
 * cards its hosted card field tokenized, the objects its API made, and its Idempotency-Key
 * answers. Each creation commits in its own write unit, never in one of the job that called it,
 * so an answer given is kept even if the caller crashes before recording it.
 */
import type { SqlReader, WriteTx } from "../../db/writer.ts";

/** An object the simulator made, as its API answers it. */
export interface SimulatedObject {
  readonly id: string;
  readonly companyId: string;
  readonly type: string;
  readonly object: Record<string, unknown>;
}

export async function insertSimulatedCard(
  tx: WriteTx,
  card: { tokenId: string; cardNumber: string; expirationDate: string },
  now: number,
): Promise<void> {
  await tx.execute({
    sql: `INSERT INTO increase_simulator_cards (token_id, card_number, expiration_date, created_at)
          VALUES (?, ?, ?, ?)`,
    args: [card.tokenId, card.cardNumber, card.expirationDate, now],
  });
}

/** A card the vault keeps: the test card it behaves as, its expiry and when it was made. */
export interface SimulatedCard {
  readonly cardNumber: string;
  readonly expirationDate: string;
  readonly createdAt: number;
}

/** The card a token stands for, or null when the vault has no such token. */
export async function simulatedCard(
  reader: SqlReader,
  tokenId: string,
): Promise<SimulatedCard | null> {
  const { rows } = await reader.execute({
    sql: `SELECT card_number, expiration_date, created_at FROM increase_simulator_cards
          WHERE token_id = ?`,
    args: [tokenId],
  });
  return rows[0]
    ? {
      cardNumber: String(rows[0].card_number),
      expirationDate: String(rows[0].expiration_date),
      createdAt: Number(rows[0].created_at),
    }
    : null;
}

export async function findSimulatedObject(
  reader: SqlReader,
  id: string,
): Promise<SimulatedObject | null> {
  const { rows } = await reader.execute({
    sql: "SELECT id, company_id, type, object FROM increase_simulator_objects WHERE id = ?",
    args: [id],
  });
  const row = rows[0];
  return row
    ? {
      id: String(row.id),
      companyId: String(row.company_id),
      type: String(row.type),
      object: JSON.parse(String(row.object)),
    }
    : null;
}

export async function insertSimulatedObject(
  tx: WriteTx,
  made: SimulatedObject,
  now: number,
): Promise<void> {
  await tx.execute({
    sql: `INSERT INTO increase_simulator_objects (id, company_id, type, object, created_at)
          VALUES (?, ?, ?, ?, ?)`,
    args: [made.id, made.companyId, made.type, JSON.stringify(made.object), now],
  });
}

/** Replaces the object's JSON (its status moved on the sandbox clock). */
export async function updateSimulatedObject(
  tx: WriteTx,
  id: string,
  object: Record<string, unknown>,
): Promise<void> {
  await tx.execute({
    sql: "UPDATE increase_simulator_objects SET object = ? WHERE id = ?",
    args: [JSON.stringify(object), id],
  });
}

/** The first creation under `key`: the body it carried and the object it made; null when new. */
export async function findIdempotentCreation(
  tx: WriteTx,
  key: string,
): Promise<{ requestBody: string; objectId: string } | null> {
  const { rows } = await tx.execute({
    sql: "SELECT request_body, object_id FROM increase_simulator_idempotency WHERE key = ?",
    args: [key],
  });
  return rows[0]
    ? { requestBody: String(rows[0].request_body), objectId: String(rows[0].object_id) }
    : null;
}

export async function insertIdempotentCreation(
  tx: WriteTx,
  creation: { key: string; requestBody: string; objectId: string },
  now: number,
): Promise<void> {
  await tx.execute({
    sql: `INSERT INTO increase_simulator_idempotency (key, request_body, object_id, created_at)
          VALUES (?, ?, ?, ?)`,
    args: [creation.key, creation.requestBody, creation.objectId, now],
  });
}
