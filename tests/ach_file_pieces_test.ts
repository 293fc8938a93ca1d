/**
 * A built file's sealed content is kept a piece per write unit (ACH_FILE_PIECE_CHARS) before the
 * unit that records its ach_files row, so no commit writes a catastrophe day's megabyte at once;
 * every reader gets the content whole, and a build stopped between pieces and run again records a
 * file that reads the same as what the bank was handed.
 */
import assert from "node:assert/strict";
import { TransientJobError } from "../db/scheduler.ts";
import { CUTOFF_LEASE_MS } from "../lib/rails/cutoff.ts";
import {
  ACH_FILE_PIECE_CHARS,
  filePiecesOf,
  loadAchFile,
  openFileContent,
} from "../lib/ach/files_store.ts";
import { sha256Hex } from "../lib/platform/keys.ts";
import {
  batches,
  chooseAch,
  countingTurns,
  notingUnits,
  quietly,
  rows,
  seeingStatements,
  statuses,
  withScriptedBank,
} from "./ach_helpers.ts";
import { testSecretBox } from "./helpers.ts";
import type { MoneyFixture } from "./money_core_helpers.ts";
import type { ScriptedBank } from "./ach_helpers.ts";

const MINUTE_SECONDS = 60;
/** Enough entries for a sealed content of two pieces (about 95 characters an entry, sealed 4/3). */
const ENTRIES = 1_500;
const PIECE_INSERT = "INSERT OR REPLACE INTO ach_file_pieces";

/** The kept file of the only batch reads, opened, exactly what the bank was handed. */
async function assertKeptAsUploaded(m: MoneyFixture, bank: ScriptedBank): Promise<number> {
  const [batch] = await batches(m);
  const kept = await loadAchFile(m.database.readClient, String(batch.id));
  assert.ok(kept);
  const content = await openFileContent(testSecretBox, kept.contentSealed);
  assert.equal(bank.received.length, 1);
  assert.equal(content, bank.received[0].content);
  assert.equal(await sha256Hex(content), kept.sha256);
  const [row] = await rows(
    m,
    "SELECT content_sealed, content_pieces FROM ach_files WHERE batch_id = ?",
    String(batch.id),
  );
  assert.equal(row.content_sealed, "");
  const pieces = await rows(
    m,
    "SELECT part, length(content) AS chars FROM ach_file_pieces WHERE batch_id = ? ORDER BY part",
    String(batch.id),
  );
  assert.deepEqual(pieces.map((piece) => piece.part), pieces.map((_, i) => i));
  assert.equal(row.content_pieces, pieces.length);
  assert.equal(
    pieces.reduce((sum, piece) => sum + Number(piece.chars), 0),
    kept.contentSealed.length,
  );
  return pieces.length;
}

Deno.test("a catastrophe day's sealed content (10,000 entries) is cut in pieces of at most the piece size that join to it", async () => {
  const line = "6".padEnd(94, "0");
  const content = Array.from({ length: 10_000 }, () => line).join("\n");
  const sealed = await testSecretBox.sealText(content);
  const pieces = filePiecesOf(sealed);
  assert.equal(pieces.length, Math.ceil(sealed.length / ACH_FILE_PIECE_CHARS));
  assert.ok(pieces.length >= 9);
  assert.ok(pieces.every((piece) => piece.length <= ACH_FILE_PIECE_CHARS));
  assert.equal(pieces.join(""), sealed);
  assert.equal(await testSecretBox.openText(pieces.join("")), content);
  assert.deepEqual(filePiecesOf(""), [""]);
});

Deno.test("a file's pieces are written one per unit, at most the piece size each, the event loop turning between, before the recording unit; the file reads back as uploaded", async () => {
  const written: { chars: number; turn: number }[] = [];
  const units: string[][] = [];
  await countingTurns((turns) =>
    withScriptedBank(async ({ m, bank }) => {
      await m.fund(100_000_000);
      const ids = await chooseAch(m, Array.from({ length: ENTRIES }, () => 1_000));
      await m.advance(30 * MINUTE_SECONDS);
      assert.ok((await statuses(m, ids)).every((status) => status === "funds_sent"));
      assert.equal(await assertKeptAsUploaded(m, bank), written.length);
    }, {
      wrapDatabase: (database) =>
        seeingStatements(notingUnits(database, units), (sql, statement) => {
          if (!sql.startsWith(PIECE_INSERT) || typeof statement === "string") return;
          written.push({ chars: String((statement.args as unknown[])[2]).length, turn: turns() });
        }),
    })
  );
  assert.ok(written.length >= 2, `${written.length} pieces`);
  assert.ok(written.every((piece) => piece.chars <= ACH_FILE_PIECE_CHARS));
  for (let i = 1; i < written.length; i++) assert.ok(written[i].turn > written[i - 1].turn);
  const pieceUnits = units.filter((unit) => unit.some((sql) => sql.startsWith(PIECE_INSERT)));
  assert.equal(pieceUnits.length, written.length);
  assert.ok(
    pieceUnits.every((unit) => unit.filter((sql) => sql.startsWith(PIECE_INSERT)).length === 1),
  );
  // The recording unit comes after the last piece and keeps none.
  const recording = units.findIndex((unit) =>
    unit.some((sql) => /insert into "ach_files"/i.test(sql))
  );
  assert.ok(recording > units.indexOf(pieceUnits[pieceUnits.length - 1]));
  assert.ok(!units[recording].some((sql) => sql.startsWith(PIECE_INSERT)));
});

Deno.test("a build stopped between piece units is run again: its pieces replace the earlier run's, those beyond its count go, and the file reads as uploaded", async () => {
  const state = { pieces: 0 };
  await withScriptedBank(async ({ m, bank, clock }) => {
    await m.fund(100_000_000);
    const ids = await chooseAch(m, Array.from({ length: ENTRIES }, () => 1_000));
    await quietly(() => m.advance(30 * MINUTE_SECONDS));
    const [stopped] = await batches(m);
    assert.deepEqual([stopped.status, stopped.error], ["built", null]);
    assert.deepEqual(await rows(m, "SELECT batch_id FROM ach_files"), []);
    assert.deepEqual(await rows(m, "SELECT part FROM ach_file_pieces"), [{ part: 0 }]);
    assert.equal(bank.received.length, 0);
    // A piece an earlier, longer build left behind.
    await m.database.writer.write((tx) =>
      tx.execute({
        sql: "INSERT INTO ach_file_pieces (batch_id, part, content) VALUES (?, 40, 'stale')",
        args: [String(stopped.id)],
      })
    );

    clock.advance(CUTOFF_LEASE_MS);
    await m.advance(MINUTE_SECONDS);
    assert.deepEqual((await batches(m)).map((b) => [b.id, b.status]), [[
      stopped.id,
      "transmitted",
    ]]);
    assert.ok(await assertKeptAsUploaded(m, bank) >= 2);
    assert.ok((await statuses(m, ids)).every((status) => status === "funds_sent"));
  }, {
    wrapDatabase: (database) =>
      seeingStatements(database, (sql) => {
        if (sql.startsWith(PIECE_INSERT) && ++state.pieces === 2) {
          throw new TransientJobError("the process stopped between piece units");
        }
      }),
  });
});
