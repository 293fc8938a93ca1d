/**
 * Checks a response against the OpenAPI document the app serves, with an independent JSON Schema
 * validator (Ajv, draft 2020-12, with ajv-formats): a documented path and method must answer a
 * documented status, in a documented media type, with a body its schema accepts. The shared HTTP
 * fixture runs every `app.request` of the tests through it, so coverage grows with the tests.
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

type JsonObject = Record<string, unknown>;

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: JsonObject }> }>;
}

interface Route {
  readonly template: string;
  readonly pattern: RegExp;
  /** Literal segments: the most specific template wins where several match. */
  readonly literals: number;
  readonly operations: Record<string, Operation>;
}

/** Where a response broke the document: the request, the status, and what was wrong. */
export class ResponseMismatch extends Error {
  override name = "ResponseMismatch";
}

/** The document's routes and a validator per response schema, compiled on first use. */
export class ResponseValidator {
  readonly #routes: Route[];
  readonly #ajv: Ajv2020;
  readonly #compiled = new Map<string, ValidateFunction>();

  constructor(document: { paths: Record<string, Record<string, Operation>> }) {
    // Two decimals are checked as a multiple of 0.01 within 1e-9 (0.07 / 0.01 is not exact).
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, multipleOfPrecision: 9 });
    addFormats.default(this.#ajv);
    this.#ajv.addFormat("binary", true);
    this.#ajv.addSchema(withCents(document) as JsonObject, "openapi.json");
    this.#routes = Object.entries(document.paths).map(([template, operations]) => {
      const segments = template.split("/");
      return {
        template,
        pattern: new RegExp(
          "^" + segments.map((s) => (/^\{.+\}$/.test(s) ? "[^/]+" : escape(s))).join("/") + "$",
        ),
        literals: segments.filter((s) => !s.startsWith("{")).length,
        operations,
      };
    });
  }

  /** Throws a ResponseMismatch when the response breaks the document; passes what it omits. */
  async check(method: string, path: string, response: Response): Promise<void> {
    if (method === "HEAD") return;
    const route = this.#routes
      .filter((r) => r.pattern.test(path))
      .sort((a, b) => b.literals - a.literals)[0];
    const operation = route?.operations[method.toLowerCase()];
    if (!route || !operation) return;
    const where = `${method} ${path} (${route.template}) answered ${response.status}`;
    const documented = operation.responses[String(response.status)];
    if (!documented) {
      throw new ResponseMismatch(
        `${where}, a status the document does not list (it lists ${
          Object.keys(operation.responses).join(", ")
        }): ${(await response.clone().text()).slice(0, 500)}`,
      );
    }
    if (!documented.content) return;
    const mediaType = (response.headers.get("Content-Type") ?? "").split(";")[0].trim();
    const media = documented.content[mediaType];
    if (!media) {
      throw new ResponseMismatch(
        `${where} as ${JSON.stringify(mediaType)}; the document lists ${
          Object.keys(documented.content).join(", ")
        }`,
      );
    }
    if (!media.schema || !mediaType.endsWith("json")) return;
    const text = await response.clone().text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ResponseMismatch(`${where} with a body that is not JSON: ${text.slice(0, 200)}`);
    }
    const validate = this.#validatorOf(
      `${route.template} ${method} ${response.status}`,
      media.schema,
    );
    if (!validate(body)) {
      const problems = (validate.errors ?? [])
        .map((e) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`)
        .join("; ");
      throw new ResponseMismatch(
        `${where} with a body the document refuses: ${problems}\n${text.slice(0, 1500)}`,
      );
    }
  }

  #validatorOf(key: string, schema: JsonObject): ValidateFunction {
    let validate = this.#compiled.get(key);
    if (!validate) {
      validate = this.#ajv.compile(withCents(rebase(schema)) as JsonObject);
      this.#compiled.set(key, validate);
    }
    return validate;
  }
}

const escape = (segment: string) => segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The schema with its local references pointed into the document registered as openapi.json. */
function rebase(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (schema === null || typeof schema !== "object") return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === "$ref" && typeof value === "string" && value.startsWith("#/")
        ? `openapi.json${value}`
        : rebase(value),
    ]),
  );
}

/**
 * The document says "at most two decimals" of money in words (a fractional `multipleOf` would
 * refuse valid amounts in other validators); the tests hold the service to it with one.
 */
function withCents(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withCents);
  if (schema === null || typeof schema !== "object") return schema;
  const walked: JsonObject = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, withCents(value)]),
  );
  const money = walked.type === "number" && /two decimals/.test(String(walked.description));
  return money ? { ...walked, multipleOf: 0.01 } : walked;
}

const validators = new Map<string, ResponseValidator>();

/** One validator per distinct document (limits in the configuration change it). */
export function validatorFor(documentText: string): ResponseValidator {
  let validator = validators.get(documentText);
  if (!validator) {
    validator = new ResponseValidator(JSON.parse(documentText));
    validators.set(documentText, validator);
  }
  return validator;
}
