import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import { withHttpFixture } from "./http_fixture.ts";

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
