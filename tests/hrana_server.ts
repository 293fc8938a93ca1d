/**
 * A Hrana contract server for tests: the libSQL remote protocol over HTTP (docs/HRANA_3_SPEC.md
 * and HRANA_2_SPEC.md of the libSQL repository) on one SQLite file through `node:sqlite`, so the
 * service's remote-database path runs in CI without a libSQL server. It serves the version probes
 * (`/v2`, `/v3`; `/v3-protobuf` is answered 404, unsupported), `/v2/pipeline`, `/v3/pipeline` and
 * `/v3/cursor` in JSON. Each stream is its own connection, held between requests by a baton that
 * changes at every response; an abandoned baton expires after `batonTtlMs` and its connection is
 * closed, which rolls back its transaction. A statement that finds the database locked is retried
 * until `busyTimeoutMs` (asynchronously: a blocking busy wait would stall the process that also
 * runs the lock's holder), then fails SQLITE_BUSY, as a libSQL server's connection does.
 *
 * Small and strict: a request it does not understand is an error, never a guess. Errors follow
 * the server the spec describes: a malformed body or baton is 400 text, an expired stream is 500
 * with a JSON error `STREAM_EXPIRED`, a failed statement is an `error` result with a `SQLITE_*`
 * code. `describe` is refused (node:sqlite cannot tell whether a statement is read-only).
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { Buffer } from "node:buffer";

export interface HranaServerOptions {
  /** The SQLite file every stream opens. */
  readonly path: string;
  /** Added before every HTTP request is handled: a network round trip. Default 0. */
  readonly delayMs?: number;
  /** An idle stream's baton expires after this long. Default 10 000 (the libSQL server's). */
  readonly batonTtlMs?: number;
  /** When set, every request must carry `Authorization: Bearer <authToken>`. */
  readonly authToken?: string;
  /** How long a statement waits for a locked database. Default 5 000. */
  readonly busyTimeoutMs?: number;
}

export interface HranaServer {
  /** `http://127.0.0.1:<port>`, for `DATABASE_URL_*` or `createClient`. */
  readonly url: string;
  /** HTTP requests received since start or the last reset, probes and refusals included. */
  requestCount(): number;
  /**
   * Milliseconds streams spent inside transactions since start or the last reset (summed over
   * streams; the service opens only write transactions, so this is the write lock's busy time).
   */
  transactionMs(): number;
  /** Resets both the request count and the transaction time. */
  resetCount(): void;
  setDelay(ms: number): void;
  /** Stops listening, closes every stream (open transactions roll back). */
  close(): Promise<void>;
}

type Version = 2 | 3;
type Value = null | bigint | number | string | Uint8Array;

interface Stmt {
  readonly sql: string | null;
  readonly sqlId: number | null;
  readonly args: readonly Value[];
  readonly namedArgs: readonly { name: string; value: Value }[];
  readonly wantRows: boolean;
}

type BatchCond =
  | { type: "ok" | "error"; step: number }
  | { type: "not"; cond: BatchCond }
  | { type: "and" | "or"; conds: BatchCond[] }
  | { type: "is_autocommit" };

interface BatchStep {
  readonly condition: BatchCond | null;
  readonly stmt: Stmt;
}

type StreamRequest =
  | { type: "close" }
  | { type: "execute"; stmt: Stmt }
  | { type: "batch"; steps: BatchStep[] }
  | { type: "sequence" | "describe"; sql: string | null; sqlId: number | null }
  | { type: "store_sql"; sqlId: number; sql: string }
  | { type: "close_sql"; sqlId: number }
  | { type: "get_autocommit" };

interface ProtoError {
  message: string;
  code: string;
}

interface StmtResult {
  cols: { name: string | null; decltype: string | null }[];
  rows: unknown[][];
  affected_row_count: number;
  last_insert_rowid: string | null;
}

/** The client broke the protocol: 400, and the stream (if it was taken) is closed. */
class ProtocolError extends Error {
  override name = "ProtocolError";
}

/** A statement failed: the request's result (or the batch step's) is this error. */
class StmtError extends Error {
  override name = "StmtError";
  constructor(readonly code: string, message: string) {
    super(message);
  }
  toProto(): ProtoError {
    return { message: this.message, code: this.code };
  }
}

/** The stream's baton was valid once but the stream has expired: 500 STREAM_EXPIRED. */
class StreamExpired extends Error {
  override name = "StreamExpired";
  constructor() {
    super("The stream has expired due to inactivity");
  }
}

/** The libSQL server's limits on stored SQL texts per stream. */
const STORED_SQL_COUNT_MAX = 50;
const STORED_SQL_BYTES_MAX = 5_000;
/** Expired batons remembered (to answer STREAM_EXPIRED rather than an invalid baton). */
const EXPIRED_BATONS_MAX = 10_000;
/** How often a statement that found the database locked tries again. */
const BUSY_RETRY_INTERVAL_MS = 2;

const SQLITE_BUSY = 5;
const SQLITE_BUSY_SNAPSHOT = 517;
const SQLITE_PRIMARY_CODES: Record<number, string> = {
  1: "SQLITE_ERROR",
  2: "SQLITE_INTERNAL",
  3: "SQLITE_PERM",
  4: "SQLITE_ABORT",
  5: "SQLITE_BUSY",
  6: "SQLITE_LOCKED",
  7: "SQLITE_NOMEM",
  8: "SQLITE_READONLY",
  9: "SQLITE_INTERRUPT",
  10: "SQLITE_IOERR",
  11: "SQLITE_CORRUPT",
  12: "SQLITE_NOTFOUND",
  13: "SQLITE_FULL",
  14: "SQLITE_CANTOPEN",
  15: "SQLITE_PROTOCOL",
  17: "SQLITE_SCHEMA",
  18: "SQLITE_TOOBIG",
  19: "SQLITE_CONSTRAINT",
  20: "SQLITE_MISMATCH",
  21: "SQLITE_MISUSE",
  22: "SQLITE_NOLFS",
  23: "SQLITE_AUTH",
  25: "SQLITE_RANGE",
  26: "SQLITE_NOTADB",
};

// ---- decoding: every field checked, every unknown type refused --------------------------------

function fail(path: string, expected: string): never {
  throw new ProtocolError(`${path}: expected ${expected}`);
}

function object(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) fail(path, "an object");
  return value as Record<string, unknown>;
}

function array(value: unknown, path: string): unknown[] {
  if (!Array.isArray(value)) fail(path, "an array");
  return value;
}

function optionalArray(value: unknown, path: string): unknown[] {
  return value === undefined || value === null ? [] : array(value, path);
}

function string(value: unknown, path: string): string {
  if (typeof value !== "string") fail(path, "a string");
  return value;
}

function optionalString(value: unknown, path: string): string | null {
  return value === undefined || value === null ? null : string(value, path);
}

function int32(value: unknown, path: string): number {
  if (!Number.isInteger(value) || (value as number) < -(2 ** 31) || (value as number) >= 2 ** 31) {
    fail(path, "a 32-bit integer");
  }
  return value as number;
}

function optionalInt32(value: unknown, path: string): number | null {
  return value === undefined || value === null ? null : int32(value, path);
}

function uint32(value: unknown, path: string): number {
  if (!Number.isInteger(value) || (value as number) < 0 || (value as number) >= 2 ** 32) {
    fail(path, "an unsigned 32-bit integer");
  }
  return value as number;
}

const INTEGER_TEXT = /^-?[0-9]{1,19}$/;
const INTEGER_MIN = -(2n ** 63n);
const INTEGER_MAX = 2n ** 63n - 1n;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeValue(raw: unknown, path: string): Value {
  const value = object(raw, path);
  const type = string(value.type, `${path}.type`);
  switch (type) {
    case "null":
      return null;
    case "integer": {
      const text = string(value.value, `${path}.value`);
      if (!INTEGER_TEXT.test(text)) fail(`${path}.value`, "a decimal 64-bit integer");
      const integer = BigInt(text);
      if (integer < INTEGER_MIN || integer > INTEGER_MAX) fail(`${path}.value`, "a 64-bit integer");
      return integer;
    }
    case "float":
      if (typeof value.value !== "number") fail(`${path}.value`, "a number");
      return value.value;
    case "text":
      return string(value.value, `${path}.value`);
    case "blob": {
      const base64 = string(value.base64, `${path}.base64`);
      // The client writes base64 without padding; the alphabet is checked, padding optional.
      if (!BASE64.test(base64)) fail(`${path}.base64`, "base64 text");
      return new Uint8Array(Buffer.from(base64, "base64"));
    }
    default:
      fail(`${path}.type`, "null, integer, float, text or blob");
  }
}

function decodeStmt(raw: unknown, path: string): Stmt {
  const stmt = object(raw, path);
  const wantRows = stmt.want_rows;
  if (wantRows !== undefined && wantRows !== null && typeof wantRows !== "boolean") {
    fail(`${path}.want_rows`, "a boolean");
  }
  return {
    sql: optionalString(stmt.sql, `${path}.sql`),
    sqlId: optionalInt32(stmt.sql_id, `${path}.sql_id`),
    args: optionalArray(stmt.args, `${path}.args`).map((arg, i) =>
      decodeValue(arg, `${path}.args[${i}]`)
    ),
    namedArgs: optionalArray(stmt.named_args, `${path}.named_args`).map((arg, i) => {
      const named = object(arg, `${path}.named_args[${i}]`);
      return {
        name: string(named.name, `${path}.named_args[${i}].name`),
        value: decodeValue(named.value, `${path}.named_args[${i}].value`),
      };
    }),
    wantRows: wantRows ?? true,
  };
}

function decodeCond(raw: unknown, path: string, stepIndex: number, version: Version): BatchCond {
  const cond = object(raw, path);
  const type = string(cond.type, `${path}.type`);
  switch (type) {
    case "ok":
    case "error": {
      const step = uint32(cond.step, `${path}.step`);
      if (step >= stepIndex) fail(`${path}.step`, `a step before step ${stepIndex}`);
      return { type, step };
    }
    case "not":
      return { type, cond: decodeCond(cond.cond, `${path}.cond`, stepIndex, version) };
    case "and":
    case "or":
      return {
        type,
        conds: array(cond.conds, `${path}.conds`).map((c, i) =>
          decodeCond(c, `${path}.conds[${i}]`, stepIndex, version)
        ),
      };
    case "is_autocommit":
      if (version < 3) fail(`${path}.type`, "a condition of Hrana 2 (is_autocommit is Hrana 3)");
      return { type };
    default:
      fail(`${path}.type`, "ok, error, not, and, or or is_autocommit");
  }
}

function decodeBatch(raw: unknown, path: string, version: Version): BatchStep[] {
  const batch = object(raw, path);
  return array(batch.steps, `${path}.steps`).map((rawStep, i) => {
    const step = object(rawStep, `${path}.steps[${i}]`);
    const condition = step.condition === undefined || step.condition === null
      ? null
      : decodeCond(step.condition, `${path}.steps[${i}].condition`, i, version);
    return { condition, stmt: decodeStmt(step.stmt, `${path}.steps[${i}].stmt`) };
  });
}

function decodeRequest(raw: unknown, path: string, version: Version): StreamRequest {
  const request = object(raw, path);
  const type = string(request.type, `${path}.type`);
  switch (type) {
    case "close":
      return { type };
    case "execute":
      return { type, stmt: decodeStmt(request.stmt, `${path}.stmt`) };
    case "batch":
      return { type, steps: decodeBatch(request.batch, `${path}.batch`, version) };
    case "sequence":
    case "describe":
      return {
        type,
        sql: optionalString(request.sql, `${path}.sql`),
        sqlId: optionalInt32(request.sql_id, `${path}.sql_id`),
      };
    case "store_sql":
      return {
        type,
        sqlId: int32(request.sql_id, `${path}.sql_id`),
        sql: string(request.sql, `${path}.sql`),
      };
    case "close_sql":
      return { type, sqlId: int32(request.sql_id, `${path}.sql_id`) };
    case "get_autocommit":
      if (version < 3) fail(`${path}.type`, "a request of Hrana 2 (get_autocommit is Hrana 3)");
      return { type };
    default:
      fail(
        `${path}.type`,
        "close, execute, batch, sequence, describe, store_sql, close_sql or get_autocommit",
      );
  }
}

function decodeBaton(raw: unknown): string | null {
  return optionalString(raw, "baton");
}

// ---- SQL text: one statement, its parameters ---------------------------------------------------

/** The text with comments, whitespace and semicolons removed: empty when there is no statement. */
function withoutFiller(sql: string): string {
  return sql.replace(/--[^\n]*(\n|$)|\/\*[\s\S]*?(\*\/|$)|[\s;]+/g, "");
}

interface Parameters {
  /** The highest parameter index: how many values a positional binding needs. */
  readonly count: number;
  /** Named parameters with their prefix (`:a`, `@a`, `$a`). */
  readonly names: ReadonlySet<string>;
}

/** The parameters of one statement, found outside its strings, identifiers and comments. */
function parametersOf(sql: string): Parameters {
  const names = new Set<string>();
  const indexOfName = new Map<string, number>();
  let count = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '"' || c === "`") {
      const end = sql.indexOf(c, i + 1);
      i = end < 0 ? sql.length : end + 1; // a doubled quote is two quoted runs: same effect
    } else if (c === "[") {
      const end = sql.indexOf("]", i + 1);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === "?") {
      const digits = /^[0-9]*/.exec(sql.slice(i + 1))![0];
      count = digits === "" ? count + 1 : Math.max(count, Number(digits));
      i += 1 + digits.length;
    } else if ((c === ":" || c === "@" || c === "$") && /[A-Za-z0-9_]/.test(sql[i + 1] ?? "")) {
      const name = c + /^[A-Za-z0-9_]+/.exec(sql.slice(i + 1))![0];
      if (!indexOfName.has(name)) indexOfName.set(name, ++count);
      names.add(name);
      i += name.length;
    } else {
      i += 1;
    }
  }
  return { count, names };
}

// ---- streams -----------------------------------------------------------------------------------

interface Stream {
  db: DatabaseSync | null;
  readonly sqls: Map<number, string>;
  expiry: ReturnType<typeof setTimeout> | null;
  readonly changes: StatementSync;
  /** When its open transaction began (performance.now()), or null outside one. */
  transactionSince: number | null;
}

function sqliteError(error: unknown): StmtError | null {
  if (!(error instanceof Error) || !("errcode" in error)) return null;
  const errcode = Number((error as { errcode: unknown }).errcode);
  const code = SQLITE_PRIMARY_CODES[errcode & 0xff] ?? "SQLITE_UNKNOWN";
  return new StmtError(code, `SQLite error: ${error.message}`);
}

function isBusy(error: unknown): boolean {
  if (!(error instanceof Error) || !("errcode" in error)) return false;
  const errcode = Number((error as { errcode: unknown }).errcode);
  // BUSY_SNAPSHOT: the transaction read a snapshot another commit replaced; waiting cannot help.
  return (errcode & 0xff) === SQLITE_BUSY && errcode !== SQLITE_BUSY_SNAPSHOT;
}

function encodeValue(value: unknown): Record<string, unknown> {
  if (value === null) return { type: "null" };
  if (typeof value === "bigint") return { type: "integer", value: String(value) };
  if (typeof value === "number") return { type: "float", value };
  if (typeof value === "string") return { type: "text", value };
  if (value instanceof Uint8Array) {
    return { type: "blob", base64: Buffer.from(value).toString("base64") };
  }
  throw new Error(`node:sqlite returned a value of type ${typeof value}`);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Starts a contract server on 127.0.0.1 and an ephemeral port, over the file at `path`. */
export function startHranaServer(options: HranaServerOptions): Promise<HranaServer> {
  // Everything up to listening is synchronous; a failure still reaches the caller as a rejection.
  try {
    return Promise.resolve(serve(options));
  } catch (error) {
    return Promise.reject(error);
  }
}

function serve(options: HranaServerOptions): HranaServer {
  const batonTtlMs = options.batonTtlMs ?? 10_000;
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  let delayMs = options.delayMs ?? 0;
  let requests = 0;
  let transactionMs = 0;
  let closed = false;

  /** Accounts for the stream's transaction time after each statement (and at its close). */
  const noteTransaction = (stream: Stream) => {
    const inside = stream.db?.isTransaction ?? false;
    if (inside && stream.transactionSince === null) stream.transactionSince = performance.now();
    if (!inside && stream.transactionSince !== null) {
      transactionMs += performance.now() - stream.transactionSince;
      stream.transactionSince = null;
    }
  };

  // WAL once for the file, as a libSQL server keeps it: readers do not block the writer.
  const setup = new DatabaseSync(options.path);
  setup.exec("PRAGMA journal_mode=WAL");
  setup.close();

  const available = new Map<string, Stream>();
  const expired = new Set<string>();
  const streams = new Set<Stream>();

  const closeStream = (stream: Stream) => {
    if (stream.expiry !== null) clearTimeout(stream.expiry);
    stream.expiry = null;
    // Closing the connection rolls back a transaction it left open.
    stream.db?.close();
    stream.db = null;
    noteTransaction(stream);
    streams.delete(stream);
  };

  const openStream = (): Stream => {
    const db = new DatabaseSync(options.path, { timeout: 0 });
    db.exec("PRAGMA foreign_keys=ON; PRAGMA synchronous=FULL");
    const changes = db.prepare("SELECT total_changes(), changes(), last_insert_rowid()");
    changes.setReadBigInts(true);
    (changes as StatementSync & { setReturnArrays(on: boolean): void }).setReturnArrays(true);
    const stream: Stream = { db, sqls: new Map(), expiry: null, changes, transactionSince: null };
    streams.add(stream);
    return stream;
  };

  const acquire = (baton: string | null): Stream => {
    if (baton === null) return openStream();
    const stream = available.get(baton);
    if (stream === undefined) {
      if (expired.has(baton)) throw new StreamExpired();
      throw new ProtocolError("The baton is invalid (unknown, or already used)");
    }
    available.delete(baton);
    if (stream.expiry !== null) clearTimeout(stream.expiry);
    stream.expiry = null;
    return stream;
  };

  /** Gives the stream a fresh baton, or none once it is closed. */
  const release = (stream: Stream): string | null => {
    if (stream.db === null) {
      closeStream(stream);
      return null;
    }
    const baton = crypto.randomUUID() + crypto.randomUUID();
    available.set(baton, stream);
    stream.expiry = setTimeout(() => {
      available.delete(baton);
      if (expired.size >= EXPIRED_BATONS_MAX) expired.delete(expired.values().next().value!);
      expired.add(baton);
      closeStream(stream);
    }, batonTtlMs);
    return baton;
  };

  const dbOf = (stream: Stream): DatabaseSync => {
    if (stream.db === null) throw new ProtocolError("The stream is closed");
    return stream.db;
  };

  const sqlOf = (stream: Stream, sql: string | null, sqlId: number | null): string => {
    if (sql !== null && sqlId !== null) {
      throw new ProtocolError("Both sql and sql_id were given; exactly one must be");
    }
    if (sql !== null) return sql;
    if (sqlId === null) throw new ProtocolError("Neither sql nor sql_id was given");
    const stored = stream.sqls.get(sqlId);
    if (stored === undefined) throw new ProtocolError(`SQL text ${sqlId} is not stored`);
    return stored;
  };

  /** Runs `attempt` again while the database is locked, up to the busy timeout. */
  const whileBusy = async <T>(attempt: () => T): Promise<T> => {
    const started = Date.now();
    for (;;) {
      try {
        return attempt();
      } catch (error) {
        if (!isBusy(error) || Date.now() - started >= busyTimeoutMs || closed) throw error;
        await delay(BUSY_RETRY_INTERVAL_MS);
      }
    }
  };

  const prepareOne = (db: DatabaseSync, sql: string): StatementSync => {
    // node:sqlite cannot prepare an empty text (it crashes), nor say what follows the statement
    // but by its sourceSQL: the first statement, whatever came after left out.
    if (withoutFiller(sql) === "") {
      throw new StmtError("SQL_NO_STATEMENT", "SQL string does not contain any statement");
    }
    const statement = db.prepare(sql);
    if (!sql.startsWith(statement.sourceSQL)) {
      throw new Error("node:sqlite's sourceSQL is not a prefix of the text it prepared");
    }
    if (withoutFiller(sql.slice(statement.sourceSQL.length)) !== "") {
      throw new StmtError("SQL_MANY_STATEMENTS", "SQL string contains more than one statement");
    }
    return statement;
  };

  const bindingsOf = (
    sql: string,
    stmt: Stmt,
  ): [Record<string, Value>] | Value[] => {
    const parameters = parametersOf(sql);
    if (stmt.args.length > 0 && stmt.namedArgs.length > 0) {
      throw new StmtError(
        "ARGS_BOTH_POSITIONAL_AND_NAMED",
        "Specifying both positional and named arguments is not supported",
      );
    }
    if (stmt.namedArgs.length === 0) {
      if (stmt.args.length !== parameters.count) {
        throw new StmtError(
          "ARGS_INVALID",
          `Arguments do not match SQL parameters: the statement takes ${parameters.count}, ` +
            `${stmt.args.length} were given`,
        );
      }
      return [...stmt.args];
    }
    const named: Record<string, Value> = {};
    for (const { name, value } of stmt.namedArgs) {
      const full = /^[:@$]/.test(name)
        ? name
        : [":", "@", "$"].map((prefix) => prefix + name).find((n) => parameters.names.has(n));
      if (full === undefined || !parameters.names.has(full)) {
        throw new StmtError(
          "ARGS_INVALID",
          `Arguments do not match SQL parameters: ${name} is not a parameter of the statement`,
        );
      }
      named[full] = value;
    }
    for (const name of parameters.names) {
      if (!(name in named)) {
        throw new StmtError(
          "ARGS_INVALID",
          `Arguments do not match SQL parameters: ${name} was not given`,
        );
      }
    }
    if (parameters.count !== parameters.names.size) {
      throw new StmtError(
        "ARGS_INVALID",
        "Arguments do not match SQL parameters: positional parameters need positional arguments",
      );
    }
    return [named];
  };

  const executeStmt = async (stream: Stream, stmt: Stmt): Promise<StmtResult> => {
    try {
      return await runStmt(stream, stmt);
    } finally {
      noteTransaction(stream);
    }
  };

  const runStmt = (stream: Stream, stmt: Stmt): Promise<StmtResult> => {
    const db = dbOf(stream);
    const sql = sqlOf(stream, stmt.sql, stmt.sqlId);
    return whileBusy(() => {
      let statement: StatementSync;
      try {
        statement = prepareOne(db, sql);
      } catch (error) {
        if (isBusy(error)) throw error;
        throw sqliteError(error) ?? error;
      }
      const bindings = bindingsOf(statement.sourceSQL, stmt);
      statement.setReadBigInts(true);
      (statement as StatementSync & { setReturnArrays(on: boolean): void }).setReturnArrays(true);
      const [before] = stream.changes.get() as unknown as [bigint];
      let rows: unknown[][];
      try {
        rows = statement.all(...(bindings as never[])) as unknown as unknown[][];
      } catch (error) {
        if (isBusy(error)) throw error;
        throw sqliteError(error) ?? error;
      }
      const [after, changes, lastRowid] = stream.changes.get() as unknown as [
        bigint,
        bigint,
        bigint,
      ];
      const changed = after !== before;
      return {
        cols: statement.columns().map((c) => ({ name: c.name, decltype: c.type })),
        rows: stmt.wantRows ? rows.map((row) => row.map(encodeValue)) : [],
        affected_row_count: changed ? Number(changes) : 0,
        last_insert_rowid: changed ? String(lastRowid) : null,
      };
    });
  };

  const evalCond = (
    cond: BatchCond,
    outcomes: ("ok" | "error" | "skipped")[],
    db: DatabaseSync,
  ): boolean => {
    switch (cond.type) {
      case "ok":
        return outcomes[cond.step] === "ok";
      case "error":
        return outcomes[cond.step] === "error";
      case "not":
        return !evalCond(cond.cond, outcomes, db);
      case "and":
        return cond.conds.every((c) => evalCond(c, outcomes, db));
      case "or":
        return cond.conds.some((c) => evalCond(c, outcomes, db));
      case "is_autocommit":
        return !db.isTransaction;
    }
  };

  type StepOutcome =
    | { step: number; result: StmtResult }
    | { step: number; error: ProtoError }
    | { step: number; skipped: true };

  const executeBatch = async (stream: Stream, steps: BatchStep[]): Promise<StepOutcome[]> => {
    const db = dbOf(stream);
    const outcomes: ("ok" | "error" | "skipped")[] = [];
    const results: StepOutcome[] = [];
    for (const [i, step] of steps.entries()) {
      if (step.condition !== null && !evalCond(step.condition, outcomes, db)) {
        outcomes.push("skipped");
        results.push({ step: i, skipped: true });
        continue;
      }
      try {
        results.push({ step: i, result: await executeStmt(stream, step.stmt) });
        outcomes.push("ok");
      } catch (error) {
        if (!(error instanceof StmtError)) throw sqliteError(error) ?? error;
        results.push({ step: i, error: error.toProto() });
        outcomes.push("error");
      }
    }
    return results;
  };

  const executeSequence = async (stream: Stream, sql: string): Promise<void> => {
    const db = dbOf(stream);
    let rest = sql;
    while (withoutFiller(rest) !== "") {
      const source = await whileBusy(() => {
        let statement: StatementSync;
        try {
          statement = db.prepare(rest);
          statement.all();
        } catch (error) {
          if (isBusy(error)) throw error;
          throw sqliteError(error) ?? error;
        }
        return statement.sourceSQL;
      });
      if (source === "" || !rest.startsWith(source)) {
        throw new Error("node:sqlite's sourceSQL is not a prefix of the text it prepared");
      }
      rest = rest.slice(source.length);
    }
  };

  const handleRequest = async (
    stream: Stream,
    request: StreamRequest,
  ): Promise<Record<string, unknown>> => {
    switch (request.type) {
      case "close":
        stream.db?.close();
        stream.db = null;
        noteTransaction(stream);
        return { type: "close" };
      case "execute":
        return { type: "execute", result: await executeStmt(stream, request.stmt) };
      case "batch": {
        const outcomes = await executeBatch(stream, request.steps);
        return {
          type: "batch",
          result: {
            step_results: outcomes.map((o) => "result" in o ? o.result : null),
            step_errors: outcomes.map((o) => "error" in o ? o.error : null),
          },
        };
      }
      case "sequence":
        try {
          await executeSequence(stream, sqlOf(stream, request.sql, request.sqlId));
        } finally {
          noteTransaction(stream);
        }
        return { type: "sequence" };
      case "describe":
        throw new ProtocolError("describe is not supported by this contract server");
      case "store_sql":
        if (stream.sqls.has(request.sqlId)) {
          throw new ProtocolError(`SQL text ${request.sqlId} is already stored`);
        }
        if (stream.sqls.size >= STORED_SQL_COUNT_MAX) {
          throw new StmtError(
            "SQL_STORE_TOO_MANY",
            `The server already stores ${stream.sqls.size} SQL texts, it cannot store more`,
          );
        }
        if (new TextEncoder().encode(request.sql).length > STORED_SQL_BYTES_MAX) {
          throw new StmtError("SQL_STORE_TOO_LARGE", "The statement is too large to be stored");
        }
        stream.sqls.set(request.sqlId, request.sql);
        return { type: "store_sql" };
      case "close_sql":
        stream.sqls.delete(request.sqlId);
        return { type: "close_sql" };
      case "get_autocommit":
        return { type: "get_autocommit", is_autocommit: !dbOf(stream).isTransaction };
    }
  };

  const pipeline = async (body: unknown, version: Version): Promise<Response> => {
    const parsed = object(body, "body");
    const baton = decodeBaton(parsed.baton);
    const requestsOf = array(parsed.requests, "requests").map((r, i) =>
      decodeRequest(r, `requests[${i}]`, version)
    );
    const stream = acquire(baton);
    const results: Record<string, unknown>[] = [];
    try {
      for (const request of requestsOf) {
        try {
          results.push({ type: "ok", response: await handleRequest(stream, request) });
        } catch (error) {
          if (!(error instanceof StmtError)) throw error;
          results.push({ type: "error", error: error.toProto() });
        }
      }
    } catch (error) {
      closeStream(stream);
      throw error;
    }
    return Response.json({ baton: release(stream), base_url: null, results });
  };

  const cursor = async (body: unknown): Promise<Response> => {
    const parsed = object(body, "body");
    const baton = decodeBaton(parsed.baton);
    const steps = decodeBatch(parsed.batch, "batch", 3);
    const stream = acquire(baton);
    const lines: unknown[] = [];
    try {
      for (const outcome of await executeBatch(stream, steps)) {
        if ("result" in outcome) {
          const { cols, rows, affected_row_count, last_insert_rowid } = outcome.result;
          lines.push({ type: "step_begin", step: outcome.step, cols });
          for (const row of rows) lines.push({ type: "row", row });
          lines.push({ type: "step_end", affected_row_count, last_insert_rowid });
        } else if ("error" in outcome) {
          lines.push({ type: "step_error", step: outcome.step, error: outcome.error });
        }
      }
    } catch (error) {
      closeStream(stream);
      throw error;
    }
    const head = { baton: release(stream), base_url: null };
    const text = [head, ...lines].map((line) => JSON.stringify(line) + "\n").join("");
    return new Response(text, { headers: { "content-type": "text/plain" } });
  };

  const text = (status: number, body: string) =>
    new Response(body, { status, headers: { "content-type": "text/plain" } });

  const route = async (request: Request): Promise<Response> => {
    const path = new URL(request.url).pathname;
    if (options.authToken !== undefined) {
      if (request.headers.get("authorization") !== `Bearer ${options.authToken}`) {
        await request.body?.cancel();
        return text(401, "Unauthorized: the bearer token is missing or not accepted");
      }
    }
    const probe = {
      "/": "Hrana contract server",
      "/v2": "Hrana 2 over HTTP",
      "/v3": "Hrana 3 over HTTP (JSON)",
    }[path];
    if (probe !== undefined) {
      if (request.method !== "GET") return text(405, `${path} takes GET`);
      return text(200, probe);
    }
    if (path === "/v3-protobuf" || path.startsWith("/v3-protobuf/")) {
      await request.body?.cancel();
      return text(404, "The Protobuf encoding is not supported by this server");
    }
    const endpoint = { "/v2/pipeline": 2, "/v3/pipeline": 3, "/v3/cursor": "cursor" }[path];
    if (endpoint === undefined) {
      await request.body?.cancel();
      return text(404, `No endpoint ${path}`);
    }
    if (request.method !== "POST") return text(405, `${path} takes POST`);
    let body: unknown;
    try {
      body = await request.json();
    } catch (error) {
      return text(400, `Could not deserialize JSON request body: ${(error as Error).message}`);
    }
    try {
      return endpoint === "cursor" ? await cursor(body) : await pipeline(body, endpoint as Version);
    } catch (error) {
      if (error instanceof ProtocolError || error instanceof StmtError) {
        return text(400, error.message);
      }
      if (error instanceof StreamExpired) {
        return Response.json({ message: error.message, code: "STREAM_EXPIRED" }, { status: 500 });
      }
      return Response.json({ message: String(error), code: "INTERNAL" }, { status: 500 });
    }
  };

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      requests += 1;
      if (delayMs > 0) await delay(delayMs);
      return await route(request);
    },
  );
  const { port } = server.addr as Deno.NetAddr;

  return {
    url: `http://127.0.0.1:${port}`,
    requestCount: () => requests,
    transactionMs: () => transactionMs,
    resetCount: () => {
      requests = 0;
      transactionMs = 0;
    },
    setDelay: (ms) => {
      delayMs = ms;
    },
    async close() {
      if (closed) return;
      closed = true;
      await server.shutdown();
      for (const stream of [...streams]) closeStream(stream);
      available.clear();
      expired.clear();
    },
  };
}
