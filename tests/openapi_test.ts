import assert from "node:assert/strict";
import { Ajv2020 } from "ajv/dist/2020.js";
import { Validator } from "@seriousme/openapi-schema-validator";
import { loadConfig } from "../lib/platform/config.ts";
import { openApiDocument } from "../routes/openapi/v1.ts";
import { withHttpFixture } from "./http_fixture.ts";
import { validatorFor } from "./response_validation.ts";

Deno.test("/openapi.json is a valid OpenAPI 3.1 document (independent validator) covering every /api and /v1 route", async () => {
  await withHttpFixture(async (f) => {
    const res = await f.app.request("/openapi.json");
    assert.equal(res.status, 200);
    const doc = await res.json() as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    };
    assert.equal(doc.openapi, "3.1.0");
    const result = await new Validator().validate(doc);
    assert.deepEqual(result, { valid: true });

    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, operations]) =>
        Object.keys(operations).map((m) => `${m.toUpperCase()} ${path}`)
      ),
    );
    const served = new Set(
      f.app.routes
        .filter((r) => /^\/(v1|api)\//.test(r.path) && r.method !== "ALL")
        .map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, "{$1}").replace(/\/$/, "")}`),
    );
    assert.ok(served.size >= 17 + 22, `found ${served.size} /api and /v1 routes`);
    for (const route of served) assert.ok(documented.has(route), `${route} is not documented`);
    for (const route of documented) {
      assert.ok(served.has(route), `${route} is documented but not served`);
    }
  });
});

Deno.test("request bodies in the document come from the validation schemas, limits included", async () => {
  await withHttpFixture(async (f) => {
    const doc = await (await f.app.request("/openapi.json")).json() as {
      paths: Record<
        string,
        {
          post: {
            requestBody: {
              content: {
                "application/json": {
                  schema: {
                    properties: Record<string, Record<string, unknown>>;
                    required: string[];
                  };
                };
              };
            };
          };
        }
      >;
    };
    const create =
      doc.paths["/v1/disbursements"].post.requestBody.content["application/json"].schema;
    assert.deepEqual(create.required.sort(), ["amount", "claim_id", "payee"]);
    assert.match(
      String(create.properties.modalities.description),
      /Left out, the payee's modality_defaults are offered; a 400 naming modalities/,
    );
    assert.equal(create.properties.amount.type, "number");
    assert.equal(create.properties.claim_id.maxLength, 255);
    const payee = doc.paths["/v1/payees"].post.requestBody.content["application/json"].schema;
    assert.deepEqual(payee.properties.language.enum, ["en", "es"]);

    const apiCreate =
      doc.paths["/api/disbursements"].post.requestBody.content["application/json"].schema;
    assert.deepEqual(apiCreate.required.sort(), [
      "disbursement_uuid",
      "large_disbursement",
      "payees",
    ]);
    const payees = apiCreate.properties.payees as {
      maxItems: number;
      items: { properties: Record<string, Record<string, unknown>> };
    };
    assert.equal(payees.maxItems, 500);
    // payment_method_settings may be null: an object or null.
    assert.deepEqual(
      (payees.items.properties.payment_method_settings as {
        anyOf: [{ properties: { check_postage_type: { anyOf: [{ enum: string[] }] } } }];
      }).anyOf[0].properties.check_postage_type.anyOf[0].enum,
      ["FC", "PR", "PRS", "SC", "FSO", "USPSIDAY", "USPSCERT", "FPO", "FFO", "FSD"],
    );
    assert.equal(
      (apiCreate.properties.authorization_parties as { maxItems: number }).maxItems,
      20,
    );
    const upload = doc.paths["/api/documents"].post.requestBody.content["application/json"].schema;
    assert.deepEqual(upload.required.sort(), ["doc_type_id", "name", "pdf_base64"]);
  }, { STRING_LENGTH_MAX: "255" });
});

Deno.test("every documented path answers an unsupported method with 405, an Allow header and its surface's error", async () => {
  await withHttpFixture(async (f) => {
    const doc = await (await f.app.request("/openapi.json")).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
    let checked = 0;
    for (const [template, operations] of Object.entries(doc.paths)) {
      const path = template.replace(/\{line\}/, "auto").replace(/\{[a-z_]+\}/g, "x1");
      const documented = Object.keys(operations).map((m) => m.toUpperCase());
      const allow = [...documented, ...(documented.includes("GET") ? ["HEAD"] : [])].sort();
      for (const method of methods.filter((m) => !documented.includes(m))) {
        const res = await f.app.request(path, { method });
        assert.equal(res.status, 405, `${method} ${path}`);
        assert.equal(res.headers.get("Allow"), allow.join(", "), `${method} ${path}`);
        const detail = `${path} does not answer ${method}; it answers ${allow.join(", ")}`;
        if (path.startsWith("/v1/")) {
          assert.equal(res.headers.get("Content-Type"), "application/problem+json");
          assert.deepEqual(await res.json(), {
            type: "/docs/errors#method_not_allowed",
            title: "Method Not Allowed",
            status: 405,
            detail,
            code: "method_not_allowed",
          });
        } else {
          assert.equal(res.headers.get("Content-Type"), "application/json");
          assert.deepEqual(await res.json(), {
            name: "METHOD_NOT_ALLOWED",
            message: detail,
            details: [],
          });
        }
        checked++;
      }
    }
    assert.ok(checked > 150, `checked ${checked} path and method pairs`);
    // A documented method still reaches its route, and HEAD follows GET.
    const head = await f.app.request("/v1/disbursements", {
      method: "HEAD",
      headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
    });
    assert.equal(head.status, 200);
    // An unknown path stays a 404.
    const unknown = await f.app.request("/v1/nothing-here", {
      method: "PUT",
      headers: { Authorization: `Bearer ${f.cast.acmeAutoKeyTest}` },
    });
    assert.equal(unknown.status, 404);
  }, { RATE_LIMIT_RPS: "0" });
});

Deno.test("the response check refuses an undocumented status, media type or field, a third decimal and a wrong type", async () => {
  const validator = validatorFor(JSON.stringify(openApiDocument(loadConfig({
    DATA_DIR: "/nonexistent",
    JWT_SECRET: "j".repeat(40),
    ENCRYPTION_KEY: btoa("e".repeat(32)),
  }))));
  const balance = {
    object: "balance",
    line: "auto",
    available: 10.07,
    pending: 0,
    reserved: 0.1,
    in_transit: 0,
    currency: "USD",
    livemode: false,
    as_of: "2026-01-05T15:00:00.000Z",
  };
  const answer = (body: unknown, status = 200, type = "application/json") =>
    new Response(JSON.stringify(body), { status, headers: { "Content-Type": type } });
  const check = (response: Response, method = "GET", path = "/v1/ledgers/auto/balance") =>
    validator.check(method, path, response);

  await check(answer(balance));
  await check(answer(balance, 200, "application/json; charset=UTF-8"));
  const refusals: [Response, RegExp][] = [
    [answer({ ...balance, extra: 1 }), /must NOT have additional properties/],
    [answer({ ...balance, available: 10.005 }), /\/available must be multiple of 0.01/],
    [answer({ ...balance, available: -1 }), /\/available must be >= 0/],
    [answer({ ...balance, as_of: "yesterday" }), /\/as_of must match format "date-time"/],
    [answer({ ...balance, livemode: "no" }), /\/livemode must be boolean/],
    [
      answer(balance, 201),
      /a status the document does not list \(it lists 200, 401, 404, 429, 500\)/,
    ],
    [answer(balance, 200, "text/plain"), /as "text\/plain"; the document lists application\/json/],
    [
      answer(
        { type: "/docs/errors#nope", title: "Not Found", status: 404, detail: "", code: "nope" },
        404,
        "application/problem+json",
      ),
      /\/code must be equal to one of the allowed values/,
    ],
  ];
  for (const [response, message] of refusals) {
    await assert.rejects(check(response), (error: Error) => {
      assert.equal(error.name, "ResponseMismatch");
      assert.match(
        error.message,
        /^GET \/v1\/ledgers\/auto\/balance \(\/v1\/ledgers\/\{line\}\/balance\) answered/,
      );
      assert.match(error.message, message);
      return true;
    });
  }
  // What the document does not describe is not judged: another path, or another method (405).
  await check(answer({ anything: true }), "GET", "/portal/abc");
  await check(answer({ anything: true }, 405), "PUT", "/v1/ledgers/auto/balance");
});

Deno.test("responses come from the valibot response schemas: no bare objects, integers, money with bounds and two decimals, the statuses each route can answer", async () => {
  await withHttpFixture(async (f) => {
    type Schema = Record<string, unknown> & { properties?: Record<string, Schema> };
    type Responses = Record<string, { content?: Record<string, { schema?: Schema }> }>;
    const doc = await (await f.app.request("/openapi.json")).json() as {
      paths: Record<string, Record<string, { parameters?: Schema[]; responses: Responses }>>;
      components: { schemas: Record<string, Schema> };
    };
    const schemas = doc.components.schemas;
    const resolve = (schema: Schema): Schema =>
      typeof schema.$ref === "string"
        ? schemas[schema.$ref.replace("#/components/schemas/", "")]
        : schema;
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        for (const [status, response] of Object.entries(operation.responses)) {
          for (const [type, media] of Object.entries(response.content ?? {})) {
            if (type === "application/pdf") continue;
            const schema = resolve(media.schema!);
            assert.ok(schema, `${where} ${status} has a schema`);
            const shape = schema.type === "array" ? resolve(schema.items as Schema) : schema;
            assert.equal(shape.additionalProperties, false, `${where} ${status} names every field`);
            assert.ok(Object.keys(shape.properties ?? {}).length > 0, `${where} ${status}`);
          }
        }
        const statuses = Object.keys(operation.responses);
        for (const status of ["401", "429", "500"]) {
          assert.ok(statuses.includes(status), `${where} documents ${status}`);
        }
        if (path.startsWith("/api/") && path !== "/api/authenticate") {
          assert.ok(statuses.includes("403"), `${where} documents 403 for a foreign CompanyApiKey`);
        }
        if (method === "post") {
          for (const status of ["408", "413"]) {
            assert.ok(statuses.includes(status), `${where} documents ${status}`);
          }
        }
        const key = operation.parameters?.find((p) => p.name === "Idempotency-Key");
        if (key) {
          assert.deepEqual(key.schema, {
            type: "string",
            minLength: 1,
            maxLength: 255,
            pattern: "^[\\x21-\\x7e]+$",
          });
          assert.ok(statuses.includes("409") && statuses.includes("422"), `${where} 409 and 422`);
        }
        const cursor = operation.parameters?.find((p) => p.name === "starting_after");
        if (cursor) assert.equal((cursor.schema as Schema).minLength, 1, `${where} starting_after`);
      }
    }
    // A repeated funding_uuid, disbursement_uuid or simple_payment_uuid answers 200.
    for (const path of ["/api/funds", "/api/disbursements", "/api/simple-payments"]) {
      assert.deepEqual(Object.keys(doc.paths[path].post.responses).slice(0, 2), ["200", "201"]);
    }
    const dollars = (schema: Schema, min: number | undefined, max: number | undefined) => {
      assert.equal(schema.type, "number");
      assert.equal(schema.multipleOf, undefined);
      assert.match(String(schema.description), /at most two decimals/);
      assert.equal(schema.minimum, min);
      assert.equal(schema.maximum, max);
    };
    dollars(schemas.Disbursement.properties!.amount, 0.01, 1_000_000);
    dollars(schemas.ApiPayee.properties!.amount, 0.01, 1_000_000);
    dollars(schemas.ApiFunding.properties!.amount, 0.01, 99_999_999.99);
    dollars(schemas.Balance.properties!.available, 0, undefined);
    dollars(schemas.TieOut.properties!.difference, undefined, undefined);
    const transaction = schemas.ApiTransaction.properties!;
    dollars(transaction.billed_amount, 0, undefined);
    assert.equal(transaction.retry_count.type, "integer");
    assert.equal(schemas.EventReplay.properties!.deliveries.type, "integer");
    assert.equal(schemas.Problem.properties!.status.type, "integer");
    assert.ok((schemas.Problem.properties!.code.enum as string[]).includes("method_not_allowed"));
    assert.deepEqual(schemas.DisbursementList.properties!.data, {
      type: "array",
      items: { $ref: "#/components/schemas/Disbursement" },
    });
    const apiCreate = doc.paths["/api/disbursements"].post as unknown as {
      description: string;
      requestBody: { content: { "application/json": { schema: Schema } } };
    };
    assert.match(apiCreate.description, /reachable on every channel its delivery_options turn on/);
    const payee = (apiCreate.requestBody.content["application/json"].schema.properties!
      .payees.items as Schema).properties!;
    assert.equal(payee.payee_type_id.type, "integer");
    assert.equal(payee.amount.multipleOf, undefined);
  });
});

Deno.test("money amounts pass stock validators: no fractional multipleOf, and 1234.56 accepted by Ajv with default options", () => {
  const doc = openApiDocument(loadConfig({
    DATA_DIR: "/nonexistent",
    JWT_SECRET: "j".repeat(40),
    ENCRYPTION_KEY: btoa("e".repeat(32)),
  })) as unknown as Record<string, unknown>;
  const amounts: Record<string, unknown>[] = [];
  const fractional: string[] = [];
  const walk = (node: unknown, path: string) => {
    if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${path}/${i}`));
    if (node === null || typeof node !== "object") return;
    const schema = node as Record<string, unknown>;
    if (typeof schema.multipleOf === "number" && !Number.isInteger(schema.multipleOf)) {
      fractional.push(path);
    }
    if (schema.type === "number" && /two decimals/.test(String(schema.description))) {
      amounts.push(schema);
    }
    for (const [key, value] of Object.entries(schema)) walk(value, `${path}/${key}`);
  };
  walk(doc, "#");
  assert.deepEqual(fractional, [], "a fractional multipleOf refuses valid cents in float math");
  assert.ok(amounts.length >= 20, `found ${amounts.length} amounts`);
  const ajv = new Ajv2020();
  for (const schema of amounts) {
    const validate = ajv.compile(schema);
    for (const cents of [1, 7, 1999, 123456, 9999999]) {
      const dollars = cents / 100;
      const inBounds = (schema.minimum === undefined || dollars >= Number(schema.minimum)) &&
        (schema.maximum === undefined || dollars <= Number(schema.maximum));
      if (inBounds) assert.ok(validate(dollars), `${dollars} in ${JSON.stringify(schema)}`);
    }
    assert.match(String(schema.description), /at most two decimals/);
  }
});
