/**
 * What a request body must be before any route reads it. Every body is UTF-8 text, byte for
 * byte: a body holding an invalid sequence is refused (400), never decoded with U+FFFD in its
 * place, since a payee's name in a bank file must be what was sent, not a guess. The JSON APIs
 * (/api and /v1) take `application/json` only, with no parameter but `charset=utf-8` (415
 * otherwise, once the credential was checked), so a form or `text/plain` is never read as JSON.
 * Both run after the body has arrived whole (routes/body_timeout.ts) and before a route, an
 * idempotency key or a write.
 */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.ts";
import { errorResponse, surfaceOf } from "./errors.ts";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * The byte offset of the first byte that does not begin a well-formed UTF-8 sequence (overlong
 * forms, surrogates and code points past U+10FFFF included), or -1 when every byte does.
 */
export function invalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i];
    if (lead < 0x80) {
      i++;
      continue;
    }
    let length: number;
    let min: number;
    let max: number;
    if (lead >= 0xc2 && lead <= 0xdf) [length, min, max] = [2, 0x80, 0xbf];
    else if (lead === 0xe0) [length, min, max] = [3, 0xa0, 0xbf];
    else if (lead === 0xed) [length, min, max] = [3, 0x80, 0x9f];
    else if (lead >= 0xe1 && lead <= 0xef) [length, min, max] = [3, 0x80, 0xbf];
    else if (lead === 0xf0) [length, min, max] = [4, 0x90, 0xbf];
    else if (lead === 0xf4) [length, min, max] = [4, 0x80, 0x8f];
    else if (lead >= 0xf1 && lead <= 0xf3) [length, min, max] = [4, 0x80, 0xbf];
    else return i;
    if (i + length > bytes.length) return i;
    if (bytes[i + 1] < min || bytes[i + 1] > max) return i;
    for (let k = 2; k < length; k++) {
      if (bytes[i + k] < 0x80 || bytes[i + k] > 0xbf) return i;
    }
    i += length;
  }
  return -1;
}

/**
 * The dotted path (`payee.name`, `payees.0.email`) of the JSON value that holds character
 * `position` of `text`, as far as the text up to it tells; "" at the top level. A lenient walk:
 * the text may be invalid JSON, and then the path is a best guess or "".
 */
export function jsonPathAt(text: string, position: number): string {
  const frames: { kind: "object" | "array"; key: string; index: number; expectKey: boolean }[] = [];
  let lastString = "";
  let i = 0;
  while (i < position && i < text.length) {
    const char = text[i];
    if (char === '"') {
      let end = i + 1;
      while (end < text.length && text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
      if (end >= position) break;
      lastString = text.slice(i + 1, end);
      const top = frames.at(-1);
      if (top?.kind === "object" && top.expectKey) top.key = lastString;
      i = end + 1;
      continue;
    }
    const top = frames.at(-1);
    if (char === "{") frames.push({ kind: "object", key: "", index: 0, expectKey: true });
    else if (char === "[") frames.push({ kind: "array", key: "", index: 0, expectKey: false });
    else if (char === "}" || char === "]") frames.pop();
    else if (char === ":" && top?.kind === "object") top.expectKey = false;
    else if (char === "," && top?.kind === "object") [top.expectKey, top.key] = [true, ""];
    else if (char === "," && top?.kind === "array") top.index++;
    i++;
  }
  return frames.map((frame) => frame.kind === "object" ? frame.key : String(frame.index))
    .filter((part) => part !== "").join(".");
}

/** Refuses a body that is not UTF-8 with 400, naming the field of a JSON body that holds it. */
export function utf8Bodies(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.raw.body === null) return await next();
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    let text: string | null = null;
    try {
      text = strictUtf8.decode(bytes);
    } catch {
      // Found below, with where it is.
    }
    if (text !== null) {
      // Kept for requestText: Hono decodes the body again at each c.req.text().
      c.set("bodyText", text);
      return await next();
    }
    const offset = invalidUtf8Offset(bytes);
    const before = strictUtf8.decode(bytes.subarray(0, offset));
    const isJson = /^application\/json\b/i.test(c.req.header("Content-Type") ?? "");
    const field = (isJson ? jsonPathAt(before, before.length) : "") || "body";
    const byte = bytes[offset].toString(16).toUpperCase().padStart(2, "0");
    const message = `${field === "body" ? "the body" : field} is not valid UTF-8: byte 0x${byte} ` +
      `at byte offset ${offset} of the body does not begin a UTF-8 character`;
    return errorResponse(c, {
      status: 400,
      code: "validation_error",
      message,
      issues: [{ field, location: "body", message }],
    });
  };
}

/**
 * The request's body as text: as utf8Bodies decoded it, or decoded now (a body it did not see).
 */
export async function requestText(c: Context<AppEnv>): Promise<string> {
  return c.get("bodyText") ?? await c.req.text();
}

/** `application/json`, optionally with `charset=utf-8` (any case, quoted or not), and nothing else. */
const JSON_MEDIA_TYPE = /^application\/json\s*(;\s*charset\s*=\s*("utf-8"|utf-8)\s*)?$/i;

/** Refuses a non-empty body of /api or /v1 that is not declared `application/json` with 415. */
export function jsonBodiesOnly(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (surfaceOf(c.req.path) === "other" || c.req.raw.body === null) return await next();
    if ((await c.req.arrayBuffer()).byteLength === 0) return await next();
    const declared = c.req.header("Content-Type");
    if (declared !== undefined && JSON_MEDIA_TYPE.test(declared.trim())) return await next();
    const message = declared === undefined
      ? "the body has no Content-Type: send it as application/json"
      : `Content-Type ${JSON.stringify(declared)} is not accepted: send application/json ` +
        "(charset=utf-8 is the only parameter allowed)";
    return errorResponse(c, {
      status: 415,
      code: "unsupported_media_type",
      message,
      issues: [{ field: "Content-Type", location: "header", message }],
    });
  };
}
