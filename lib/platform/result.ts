/** Expected business outcomes: a value, or a refusal whose code reads as a sentence. */
export interface Refusal<C extends string = string> {
  readonly ok: false;
  readonly code: C;
  readonly message: string;
  /** The input field at fault, when one is. */
  readonly field?: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

export interface Ok<T> {
  readonly ok: true;
  readonly value: T;
}

export type Result<T, C extends string = string> = Ok<T> | Refusal<C>;

export function ok<T>(value: T): Ok<T> {
  return { ok: true, value };
}

export function refuse<C extends string>(
  code: C,
  message: string,
  extra: { field?: string; details?: Record<string, unknown> } = {},
): Refusal<C> {
  return { ok: false, code, message, ...extra };
}
