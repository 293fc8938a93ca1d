/**
 * Typed rows of raw SQL. Hot paths keep raw SQL (the embedded client reuses prepared statements;
 * drizzle's query builder costs more per call), and every row they read is mapped once, here: a
 * table's column types come from db/schema.ts, each column's runtime value is checked once, a
 * nullable column reads null, a boolean reads from 0/1 and a JSON column is parsed in one place.
 * A value that is not what the schema says is a programmer error (a query and the schema
 * disagree): it throws a RowTypeError naming the table and the column, never a refusal.
 */
import { getTableColumns, getTableName } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { InStatement, InValue } from "@libsql/client";

const MISMATCH: unique symbol = Symbol("column value of the wrong type");
type Mismatch = typeof MISMATCH;

/** How one result column is read: where it comes from, what it must hold, and its conversion. */
export interface ColumnReader<T> {
  /** The table the column belongs to (or what a computed column is computed from). */
  readonly table: string;
  /** The column's name in the schema, or the computed column's name. */
  readonly column: string;
  /** The column's name in the result row, when the query renames it (`AS`). */
  readonly resultName: string;
  /** What the column must hold, for the error. */
  readonly expected: string;
  /** True when the column holds codes (never personal data or secrets): errors may show them. */
  readonly holdsCodes: boolean;
  readonly convert: (value: unknown) => T | Mismatch;
}

/** A result row whose column does not hold what the schema says: a query is wrong. */
export class RowTypeError extends Error {
  constructor(reader: ColumnReader<unknown>, value: unknown) {
    const renamed = reader.resultName === reader.column ? "" : ` (as ${reader.resultName})`;
    const where = `${reader.table}.${reader.column}${renamed}`;
    super(
      value === undefined
        ? `${where} is not in the row: the query does not select it`
        : `${where} holds ${describe(value, reader.holdsCodes)}, expected ${reader.expected}`,
    );
    this.name = "RowTypeError";
  }
}

/** Error messages show at most this much of a code column's value. */
const SHOWN_CODE_LENGTH_MAX = 40;

/** The value's type, and the value itself only when it cannot be personal data or a secret. */
function describe(value: unknown, isCode: boolean): string {
  if (value === null) return "null";
  if (typeof value === "number" || typeof value === "bigint") return `${typeof value} ${value}`;
  if (typeof value === "string") {
    if (isCode) return JSON.stringify(value.slice(0, SHOWN_CODE_LENGTH_MAX));
    return `a string of ${value.length} character${value.length === 1 ? "" : "s"}`;
  }
  if (value instanceof ArrayBuffer) return `a blob of ${value.byteLength} bytes`;
  return `a ${typeof value}`;
}

function reader<T>(
  table: string,
  column: string,
  expected: string,
  convert: (value: unknown) => T | Mismatch,
): ColumnReader<T> {
  return { table, column, resultName: column, expected, holdsCodes: false, convert };
}

const asText = (value: unknown): string | Mismatch => typeof value === "string" ? value : MISMATCH;
const asInteger = (value: unknown): number | Mismatch =>
  typeof value === "number" && Number.isSafeInteger(value) ? value : MISMATCH;
const asBoolean = (value: unknown): boolean | Mismatch =>
  value === 1 ? true : value === 0 ? false : MISMATCH;
// Both clients return a BLOB as an ArrayBuffer of exactly its bytes.
const asBlob = (value: unknown): Uint8Array | Mismatch =>
  value instanceof ArrayBuffer ? new Uint8Array(value) : MISMATCH;

/** A text column that is not in the schema (a computed or JSON-built one). */
export const text = (table: string, column: string): ColumnReader<string> =>
  reader(table, column, "text", asText);

/** An integer column that is not in the schema (count, sum, rowid). */
export const integer = (table: string, column: string): ColumnReader<number> =>
  reader(table, column, "an integer", asInteger);

/** A 0/1 column that is not in the schema (EXISTS). */
export const boolean = (table: string, column: string): ColumnReader<boolean> =>
  reader(table, column, "0 or 1", asBoolean);

/** The same column read from null too: a LEFT JOIN's side may be absent. */
export function nullable<T>(column: ColumnReader<T>): ColumnReader<T | null> {
  const convert = column.convert;
  return {
    ...column,
    expected: `${column.expected} or null`,
    convert: (value) => value === null ? null : convert(value),
  };
}

/** A nullable column that the query guarantees is set (its WHERE excludes null). */
export function notNull<T>(column: ColumnReader<T | null>): ColumnReader<T> {
  const convert = column.convert;
  return {
    ...column,
    expected: `${column.expected.replace(/ or null$/, "")}, not null`,
    convert: (value) => value === null ? MISMATCH : convert(value) as T | Mismatch,
  };
}

/** A nullable column read as `fallback()` where it is null (a fresh value for every row). */
export function orDefault<T>(column: ColumnReader<T | null>, fallback: () => T): ColumnReader<T> {
  const convert = column.convert;
  return {
    ...column,
    convert: (value) => value === null ? fallback() : convert(value) as T | Mismatch,
  };
}

/** A text column narrowed to the values its owner allows (a union the schema does not carry). */
export function oneOf<const V extends string>(
  column: ColumnReader<string>,
  values: readonly V[],
): ColumnReader<V> {
  const allowed = new Set<string>(values);
  const convert = column.convert;
  return {
    ...column,
    expected: `one of ${values.join(", ")}`,
    holdsCodes: true,
    convert: (value) => {
      const read = convert(value);
      return read !== MISMATCH && allowed.has(read) ? read as V : MISMATCH;
    },
  };
}

/** A column the query renames with `AS`; errors still name the table's own column. */
export function renamed<T>(column: ColumnReader<T>, resultName: string): ColumnReader<T> {
  return { ...column, resultName };
}

/**
 * A text column holding JSON of one shape, parsed here; null stays null. `T` is what the writers
 * of the column store (checked where they validate it); here the shape is checked.
 */
export function json<T, R extends string | null = string>(
  column: ColumnReader<R>,
  shape: "array" | "object",
): ColumnReader<T | Exclude<R, string>> {
  const convert = column.convert;
  return {
    ...column,
    expected: `JSON ${shape} text`,
    convert: (value) => {
      const read = convert(value);
      if (read === MISMATCH || read === null) return read as Mismatch | Exclude<R, string>;
      let parsed: unknown;
      try {
        parsed = JSON.parse(read);
      } catch {
        return MISMATCH;
      }
      const isArray = Array.isArray(parsed);
      const fits = shape === "array"
        ? isArray
        : typeof parsed === "object" && parsed !== null && !isArray;
      return fits ? parsed as T : MISMATCH;
    },
  };
}

/** What a schema column holds as read from the driver: a blob is a Uint8Array. */
type Stored<V> = V extends Uint8Array ? Uint8Array : V;

/** A reader for every column of a table, typed as drizzle infers the table's select type. */
export type TableColumns<T extends SQLiteTable> = {
  readonly [K in keyof T["$inferSelect"]]-?: ColumnReader<Stored<T["$inferSelect"][K]>>;
};

function schemaReader(table: string, column: SQLiteColumn): ColumnReader<unknown> {
  let read: ColumnReader<unknown>;
  switch (column.columnType) {
    case "SQLiteText":
      read = column.enumValues
        ? oneOf(text(table, column.name), column.enumValues)
        : text(table, column.name);
      break;
    case "SQLiteInteger":
      read = integer(table, column.name);
      break;
    case "SQLiteBoolean":
      read = boolean(table, column.name);
      break;
    case "SQLiteBlobBuffer":
      read = reader(table, column.name, "a blob", asBlob);
      break;
    default:
      throw new Error(`columnsOf: ${table}.${column.name} is ${column.columnType}, not mapped`);
  }
  return column.notNull ? read : nullable(read);
}

const tableReaders = new WeakMap<SQLiteTable, Record<string, ColumnReader<unknown>>>();

/** The one set of column readers of a schema table (built once, shared by every store). */
export function columnsOf<T extends SQLiteTable>(table: T): TableColumns<T> {
  let readers = tableReaders.get(table);
  if (!readers) {
    const name = getTableName(table);
    readers = Object.fromEntries(
      Object.entries(getTableColumns(table)).map(([key, column]) => [
        key,
        schemaReader(name, column as SQLiteColumn),
      ]),
    );
    tableReaders.set(table, readers);
  }
  return readers as TableColumns<T>;
}

/** The fields a mapper of these readers produces. */
export type MappedRow<S extends Record<string, ColumnReader<unknown>>> = {
  readonly [K in keyof S]: S[K] extends ColumnReader<infer T> ? T : never;
};

/** Maps one result row to a typed object; `columns` are the result names it reads, in order. */
export interface RowMapper<T> {
  (row: Readonly<Record<string, unknown>>): T;
  readonly columns: readonly string[];
}

/**
 * A mapper from result rows to objects with one field per reader, each value checked once. The
 * mapper is one function compiled for its readers: a call site per column and a fixed-shape
 * object literal keep it as cheap as a hand-written mapper (a 21-column payout row: 0.8 µs,
 * against 3.3 µs for a loop over the readers). Field and column names come from code, never
 * from input, and enter the source only as JSON string literals.
 */
export function rowMapper<S extends Record<string, ColumnReader<unknown>>>(
  spec: S,
): RowMapper<MappedRow<S>> {
  const fields = Object.keys(spec);
  const readers = fields.map((field) => spec[field]);
  const names = readers.map((r) => r.resultName);
  const checks = names.map((name, i) =>
    `const v${i} = row[${JSON.stringify(name)}];
     const r${i} = v${i} === undefined ? mismatch : convert[${i}](v${i});
     if (r${i} === mismatch) refuse(${i}, v${i});`
  );
  const source = `return function mapRow(row) {
    ${checks.join("\n")}
    return { ${fields.map((field, i) => `${JSON.stringify(field)}: r${i}`).join(", ")} };
  };`;
  const refuse = (index: number, value: unknown): never => {
    throw new RowTypeError(readers[index], value);
  };
  const map = new Function("convert", "mismatch", "refuse", source)(
    readers.map((r) => r.convert),
    MISMATCH,
    refuse,
  ) as (row: Readonly<Record<string, unknown>>) => MappedRow<S>;
  return Object.assign(map, { columns: names });
}

/** Parameters one statement binds at most (SQLite's limit is 32,766). */
const STATEMENT_PARAMETERS_MAX = 32_000;

/** Rows per statement up to which a statement's text is built once and kept (see keptText). */
const KEPT_TEXT_ROWS_MAX = 64;

/**
 * Texts of statements of a few rows, by what they are built from (a row's width, or an INSERT's
 * head, which names its columns) and their row count. Building a create's texts again at each call
 * cost it about 8 µs, and a new string is hashed whole when the embedded client looks its kept
 * statement up; a kept string carries its hash. Larger pages are built each time: their texts are
 * long and seldom the same length twice.
 */
const keptTexts = new Map<string | number | object, string[]>();

/**
 * The text of a statement over `count` rows or values, built by `build` once per count up to
 * KEPT_TEXT_ROWS_MAX and kept by `from`: a constant of the code (a module's text, head or object)
 * naming which statement it is.
 */
export function keptText(
  from: string | number | object,
  count: number,
  build: () => string,
): string {
  if (count > KEPT_TEXT_ROWS_MAX) return build();
  let texts = keptTexts.get(from);
  if (texts === undefined) keptTexts.set(from, texts = []);
  return texts[count] ??= build();
}

/** `(?, ?, …)` for each of `count` rows of `width` values. */
export const valuesPlaceholders = (width: number, count: number): string =>
  keptText(
    width,
    count,
    () => Array.from({ length: count }, () => `(${Array(width).fill("?").join(", ")})`).join(", "),
  );

/**
 * The statements that write `rows` (each of the same width) as `head` (an INSERT naming its
 * columns, a constant of the code: the texts of few rows are kept by it) followed by `VALUES`: one
 * statement per page of rows, as many rows as the parameter limit allows, rather than one per row.
 */
export function multiRowInserts(
  head: string,
  rows: readonly (readonly InValue[])[],
  tail = "",
): InStatement[] {
  if (rows.length === 0) return [];
  const width = rows[0].length;
  const perStatement = Math.max(1, Math.floor(STATEMENT_PARAMETERS_MAX / width));
  const statements: InStatement[] = [];
  for (let at = 0; at < rows.length; at += perStatement) {
    const page = rows.slice(at, at + perStatement);
    statements.push({
      sql: keptText(
        head,
        page.length,
        () => `${head} VALUES ${valuesPlaceholders(width, page.length)}${tail}`,
      ),
      args: page.flat(),
    });
  }
  return statements;
}
