/**
 * The baseline of issue 5 and issue 33: Hono and one INSERT per request in its own
 * synchronous=FULL write transaction through @libsql/client (`POST /rows`), and the primary-key
 * read of such a row (`GET /rows/:id`). Run as its own process:
 * `deno run -A bench/baseline.ts PORT DIR`; it prints `ready` once it listens.
 */
import { createClient } from "@libsql/client";
import { Hono } from "hono";

const [port, dir] = Deno.args;
const client = createClient({ url: `file:${dir}/baseline.db`, concurrency: 1, timeout: 5000 });
await client.execute("PRAGMA journal_mode=WAL");
await client.execute("PRAGMA synchronous=FULL");
await client.execute(
  "CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)",
);

const app = new Hono();
app.post("/rows", async (c) => {
  const body = await c.req.text();
  const tx = await client.transaction("write");
  try {
    await tx.execute({ sql: "INSERT INTO rows (body) VALUES (?)", args: [body] });
    await tx.commit();
  } finally {
    tx.close();
  }
  return c.json({ ok: true }, 201);
});
app.get("/rows/:id", async (c) => {
  const { rows } = await client.execute({
    sql: "SELECT id, body FROM rows WHERE id = ?",
    args: [Number(c.req.param("id"))],
  });
  if (rows.length === 0) return c.json({ error: "not found" }, 404);
  return c.json({ id: rows[0].id, body: rows[0].body });
});
Deno.serve(
  { hostname: "127.0.0.1", port: Number(port), onListen: () => console.log("ready") },
  app.fetch,
);
