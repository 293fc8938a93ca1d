/**
 * The client of an embedded (`file:`) database, over Deno's built-in `node:sqlite` (SQLite 3.53,
 * past the WAL-reset fix) with its prepared statements kept and reused (contract §2: decided by
 * benchmark). `@libsql/client` prepares every statement afresh and builds each row with
 * Object.defineProperty per column; measured here, a kept `node:sqlite` statement costs 2–5 times
 * less than the `libsql` driver's and up to 10 times less than `@libsql/client`'s. This
 * implements `@libsql/client`'s Client over one connection, with the same rows, results and
 * errors, so drizzle and every store run unchanged, on the same files and schema. libSQL-server
 * URLs keep `@libsql/client`.
 */
import type {
  Client,
  InArgs,
  InStatement,
  Replicated,
  ResultSet,
  Row,
  Transaction,
  TransactionMode,
} from "@libsql/client";
// The class `@libsql/client` re-exports, from its light core: loading the client itself (its
// native driver and its network protocols) costs a cold start about as much as everything else.
import { LibsqlError } from "@libsql/core/api";
// node:sqlite is the only node: module here: most others (node:buffer too) load Deno's Node
// compatibility layer, about 20 ms of every cold start (issue 21). BLOBs are plain Uint8Arrays.
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { filePathOf } from "./file_url.ts";

export { filePathOf };

type SqlValue = string | number | bigint | Uint8Array | null;
type ArrayRows = StatementSync & { setReturnArrays(enabled: boolean): void };

/** Statements kept per connection; the SQL texts of this service number about two hundred. */
const KEPT_STATEMENTS_MAX = 1_000;

/** The values of a row by position, out of reach of Object.keys, spread and JSON. */
class RowValues {
  readonly #values: unknown[];
  constructor(values: unknown[]) {
    this.#values = values;
  }
  static of(row: RowValues): unknown[] {
    return row.#values;
  }
}

/**
 * A row class for one statement's columns: names are enumerable own properties (the first of
 * duplicate names wins), positions and length are read-only and hidden, as `@libsql/client` does.
 */
function rowClassFor(columns: readonly string[]): new (values: unknown[]) => Row {
  const RowClass = class extends RowValues {};
  Object.defineProperty(RowClass.prototype, "length", { get: () => columns.length });
  columns.forEach((_, index) => {
    Object.defineProperty(RowClass.prototype, index, {
      get(this: RowValues) {
        return RowValues.of(this)[index];
      },
    });
  });
  const named = columns
    .map((name, index) => ({ name, index }))
    .filter(({ name, index }) => name !== "length" && columns.indexOf(name) === index);
  return class extends RowClass {
    constructor(values: unknown[]) {
      super(values);
      for (const { name, index } of named) {
        (this as Record<string, unknown>)[name] = values[index];
      }
    }
  } as unknown as new (values: unknown[]) => Row;
}

interface KeptStatement {
  readonly statement: StatementSync;
  /** True when the statement returns rows (SELECT, RETURNING, some PRAGMAs). */
  readonly reader: boolean;
  readonly columns: string[];
  readonly columnTypes: string[];
  readonly RowClass: new (values: unknown[]) => Row;
  /** The connection's use count at this statement's last use: the least recent goes first. */
  usedAt: number;
}

class Result implements ResultSet {
  constructor(
    readonly columns: string[],
    readonly columnTypes: string[],
    readonly rows: Row[],
    readonly rowsAffected: number,
    readonly lastInsertRowid: bigint | undefined,
  ) {}

  toJSON() {
    return {
      columns: this.columns,
      columnTypes: this.columnTypes,
      rows: this.rows.map((row) => Array.prototype.map.call(row, jsonValue)),
      rowsAffected: this.rowsAffected,
      lastInsertRowid: this.lastInsertRowid === undefined ? null : String(this.lastInsertRowid),
    };
  }
}

function jsonValue(value: unknown): unknown {
  if (typeof value === "bigint") return String(value);
  if (value instanceof ArrayBuffer) return new Uint8Array(value).toBase64();
  return value;
}

const MIN_INTEGER = -9223372036854775808n;
const MAX_INTEGER = 9223372036854775807n;

function toSql(value: unknown): SqlValue {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) {
      throw new RangeError("Only finite numbers (not Infinity or NaN) can be passed as arguments");
    }
    return value;
  }
  if (typeof value === "bigint") {
    if (value < MIN_INTEGER || value > MAX_INTEGER) {
      throw new RangeError(
        "bigint is too large to be represented as a 64-bit integer and passed as argument",
      );
    }
    return value;
  }
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (value instanceof Date) return value.valueOf();
  if (value === undefined) {
    throw new TypeError("undefined cannot be passed as argument to the database");
  }
  return value as SqlValue;
}

/** A BLOB comes back as an ArrayBuffer of exactly its bytes, as from `@libsql/client`. */
function fromSql(value: unknown): unknown {
  if (value instanceof Uint8Array) {
    return value.byteOffset === 0 && value.byteLength === value.buffer.byteLength
      ? value.buffer
      : value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength);
  }
  return value;
}

function toArgs(args: InArgs | undefined): SqlValue[] | Record<string, SqlValue> {
  if (args === undefined) return [];
  if (Array.isArray(args)) return args.map(toSql);
  const named: Record<string, SqlValue> = {};
  for (const [name, value] of Object.entries(args)) {
    named["@$:".includes(name[0]) ? name.slice(1) : name] = toSql(value);
  }
  return named;
}

const SQLITE_ERROR_CODES = [
  "SQLITE_OK",
  "SQLITE_ERROR",
  "SQLITE_INTERNAL",
  "SQLITE_PERM",
  "SQLITE_ABORT",
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "SQLITE_NOMEM",
  "SQLITE_READONLY",
  "SQLITE_INTERRUPT",
  "SQLITE_IOERR",
  "SQLITE_CORRUPT",
  "SQLITE_NOTFOUND",
  "SQLITE_FULL",
  "SQLITE_CANTOPEN",
  "SQLITE_PROTOCOL",
  "SQLITE_EMPTY",
  "SQLITE_SCHEMA",
  "SQLITE_TOOBIG",
  "SQLITE_CONSTRAINT",
  "SQLITE_MISMATCH",
  "SQLITE_MISUSE",
  "SQLITE_NOLFS",
  "SQLITE_AUTH",
  "SQLITE_FORMAT",
  "SQLITE_RANGE",
  "SQLITE_NOTADB",
  "SQLITE_NOTICE",
  "SQLITE_WARNING",
];

/** SQLite's errors in `@libsql/client`'s shape: code SQLITE_CONSTRAINT, raw (extended) code. */
function asLibsqlError(error: unknown): unknown {
  const { code, errcode } = error as { code?: unknown; errcode?: unknown };
  if (!(error instanceof Error) || code !== "ERR_SQLITE_ERROR" || typeof errcode !== "number") {
    return error;
  }
  const base = errcode & 0xff;
  const name = SQLITE_ERROR_CODES[base] ?? `SQLITE_UNKNOWN_${base}`;
  return new LibsqlError(error.message, name, undefined, errcode, error);
}

function beginStatement(mode: TransactionMode): string {
  if (mode === "write") return "BEGIN IMMEDIATE";
  // A read transaction is a deferred one: the read connection itself is query_only.
  if (mode === "read") return "BEGIN DEFERRED";
  if (mode === "deferred") return "BEGIN DEFERRED";
  throw new RangeError(
    'Unknown transaction mode, supported values are "write", "read" and "deferred"',
  );
}

function normalize(statement: InStatement | [string, InArgs?], args?: InArgs) {
  if (typeof statement === "string") return { sql: statement, args };
  if (Array.isArray(statement)) return { sql: statement[0], args: statement[1] };
  return statement;
}

/** One connection with its kept statements. */
class Connection {
  readonly #path: string;
  readonly #timeoutMs: number;
  #database: DatabaseSync;
  readonly #kept = new Map<string, KeptStatement>();
  #uses = 0;

  constructor(path: string, timeoutMs: number) {
    this.#path = path;
    this.#timeoutMs = timeoutMs;
    this.#database = this.#open();
  }

  #open(): DatabaseSync {
    // SQLite's own default: foreign keys are checked where a connection turns them on.
    return new DatabaseSync(this.#path, {
      timeout: this.#timeoutMs,
      enableForeignKeyConstraints: false,
    });
  }

  get inTransaction(): boolean {
    return this.#database.isOpen && this.#database.isTransaction;
  }

  get open(): boolean {
    return this.#database.isOpen;
  }

  run(sql: string, args?: InArgs): ResultSet {
    try {
      const kept = this.#statement(sql);
      const bound = toArgs(args);
      const statement = kept.statement;
      if (!kept.reader) {
        const info = Array.isArray(bound) ? statement.run(...bound) : statement.run(bound);
        return new Result([], [], [], Number(info.changes), BigInt(info.lastInsertRowid));
      }
      const all = Array.isArray(bound) ? statement.all(...bound) : statement.all(bound);
      const rows = (all as unknown as unknown[][]).map((values) => {
        for (let i = 0; i < values.length; i++) values[i] = fromSql(values[i]);
        return new kept.RowClass(values);
      });
      return new Result(kept.columns, kept.columnTypes, rows, 0, undefined);
    } catch (error) {
      throw asLibsqlError(error);
    }
  }

  exec(sql: string): void {
    try {
      this.#database.exec(sql);
    } catch (error) {
      throw asLibsqlError(error);
    }
  }

  /**
   * The kept statement for `sql`, prepared on first use; the least recently used one goes. A use
   * only stamps its statement: moving it to the map's end cost about 0.6 µs per statement.
   */
  #statement(sql: string): KeptStatement {
    const found = this.#kept.get(sql);
    if (found) {
      found.usedAt = ++this.#uses;
      return found;
    }
    const statement = this.#database.prepare(sql);
    const described = statement.columns();
    const reader = described.length > 0;
    // Rows as arrays (Deno has it; its types do not name it yet): columns become properties here.
    if (reader) (statement as ArrayRows).setReturnArrays(true);
    const columns = described.map((column) => column.name);
    const kept: KeptStatement = {
      statement,
      reader,
      columns,
      columnTypes: described.map((column) => column.type ?? ""),
      RowClass: rowClassFor(columns),
      usedAt: ++this.#uses,
    };
    if (this.#kept.size >= KEPT_STATEMENTS_MAX) {
      let least: [string, KeptStatement] | null = null;
      for (const entry of this.#kept) {
        if (least === null || entry[1].usedAt < least[1].usedAt) least = entry;
      }
      this.#kept.delete(least![0]);
    }
    this.#kept.set(sql, kept);
    return kept;
  }

  reopen(): void {
    this.close();
    this.#database = this.#open();
  }

  close(): void {
    this.#kept.clear();
    if (this.#database.isOpen) this.#database.close();
  }
}

/** A transaction owns the connection until it commits, rolls back or closes. */
class EmbeddedTransaction implements Transaction {
  #connection: Connection | null;
  readonly #settled: () => void;

  constructor(connection: Connection, settled: () => void) {
    this.#connection = connection;
    this.#settled = settled;
  }

  get closed(): boolean {
    return this.#connection === null || !this.#connection.inTransaction;
  }

  #active(): Connection {
    if (this.closed) throw new LibsqlError("The transaction is closed", "TRANSACTION_CLOSED");
    return this.#connection!;
  }

  /** Gives the connection back, never inside a transaction (a failed COMMIT leaves one open). */
  #settle(): void {
    const connection = this.#connection;
    if (connection === null) return;
    this.#connection = null;
    try {
      if (connection.open && connection.inTransaction) connection.run("ROLLBACK");
    } finally {
      this.#settled();
    }
  }

  execute(statement: InStatement): Promise<ResultSet> {
    try {
      const { sql, args } = normalize(statement);
      return Promise.resolve(this.#active().run(sql, args));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  batch(statements: InStatement[]): Promise<ResultSet[]> {
    try {
      return Promise.resolve(statements.map((statement) => {
        const { sql, args } = normalize(statement);
        return this.#active().run(sql, args);
      }));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  executeMultiple(sql: string): Promise<void> {
    try {
      this.#active().exec(sql);
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  commit(): Promise<void> {
    try {
      this.#active().run("COMMIT");
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    } finally {
      this.#settle();
    }
  }

  rollback(): Promise<void> {
    try {
      this.#settle();
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  close(): void {
    this.#settle();
  }
}

/** `@libsql/client`'s Client over one embedded connection whose statements are kept. */
class EmbeddedClient implements Client {
  readonly protocol = "file";
  closed = false;
  readonly #connection: Connection;
  /** Settles when the open transaction ends; other calls wait for it, as a one-connection pool. */
  #transactionEnded: Promise<void> | null = null;

  constructor(connection: Connection) {
    this.#connection = connection;
  }

  async #idle(): Promise<Connection> {
    while (this.#transactionEnded) await this.#transactionEnded;
    if (this.closed) throw new LibsqlError("The client is closed", "CLIENT_CLOSED");
    return this.#connection;
  }

  execute(statement: InStatement): Promise<ResultSet>;
  execute(sql: string, args?: InArgs): Promise<ResultSet>;
  async execute(statement: InStatement, args?: InArgs): Promise<ResultSet> {
    const connection = await this.#idle();
    const normalized = normalize(statement, args);
    return connection.run(normalized.sql, normalized.args);
  }

  async batch(
    statements: Array<InStatement | [string, InArgs?]>,
    mode: TransactionMode = "deferred",
  ): Promise<ResultSet[]> {
    const connection = await this.#idle();
    connection.run(beginStatement(mode));
    try {
      const results = statements.map((statement) => {
        const { sql, args } = normalize(statement);
        return connection.run(sql, args);
      });
      connection.run("COMMIT");
      return results;
    } finally {
      if (connection.inTransaction) connection.run("ROLLBACK");
    }
  }

  async migrate(statements: InStatement[]): Promise<ResultSet[]> {
    const connection = await this.#idle();
    connection.run("PRAGMA foreign_keys=off");
    try {
      return await this.batch(statements, "deferred");
    } finally {
      connection.run("PRAGMA foreign_keys=on");
    }
  }

  async transaction(mode: TransactionMode = "write"): Promise<Transaction> {
    const connection = await this.#idle();
    connection.run(beginStatement(mode));
    let ended!: () => void;
    this.#transactionEnded = new Promise<void>((resolve) => ended = resolve);
    return new EmbeddedTransaction(connection, () => {
      this.#transactionEnded = null;
      ended();
    });
  }

  async executeMultiple(sql: string): Promise<void> {
    const connection = await this.#idle();
    try {
      connection.exec(sql);
    } finally {
      if (connection.inTransaction) connection.run("ROLLBACK");
    }
  }

  sync(): Promise<Replicated> {
    return Promise.reject(
      new LibsqlError("sync() is for embedded replicas of a libSQL server", "SYNC_NOT_SUPPORTED"),
    );
  }

  reconnect(): void {
    this.#connection.reopen();
    this.closed = false;
  }

  close(): void {
    this.closed = true;
    this.#connection.close();
  }
}

/** Opens one connection to an embedded database file; `timeoutMs` is SQLite's busy timeout. */
export function openEmbeddedClient(url: string, timeoutMs: number): Client {
  return new EmbeddedClient(new Connection(filePathOf(url), timeoutMs));
}
