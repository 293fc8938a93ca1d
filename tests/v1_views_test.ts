import assert from "node:assert/strict";
import type { Database } from "../db/client.ts";
import { disbursementView } from "../routes/v1/schemas.ts";
import type { LinePrincipal } from "../routes/context.ts";

const principal: LinePrincipal = {
  environment: "test",
  database: {} as Database,
  keyId: "key_1",
  companyId: "co_1",
  lineId: "line_1",
  lineCode: "auto",
};

const at = (iso: string) => Date.parse(iso);

Deno.test("a disbursement's view shows each of its times as itself, however they alternate (a formatted time is kept)", () => {
  const view = (createdAt: number, steps: number[]) =>
    disbursementView(
      {
        id: "dsb_1",
        claimId: "C-1",
        metadata: {},
        createdAt,
        payoutId: "po_1",
        status: "modality_selected",
        amountCents: 100,
        allowedPaymentMethodIds: [1],
        paymentMethodId: 1,
        payeeExternalId: "p-1",
        payBy: null,
        network: null,
        timeline: steps.map((ms, i) => ({
          status: (["created", "modality_offered", "modality_selected"] as const)[i],
          at: ms,
          detail: null,
        })),
      },
      principal,
      "http://127.0.0.1:8000",
    );
  const [t0, t1, t2] = [
    "2026-01-05T15:00:00.000Z",
    "2026-01-05T15:00:01.000Z",
    "2026-01-06T09:30:00.250Z",
  ];
  const first = view(at(t0), [at(t0), at(t1), at(t2)]);
  assert.equal(first.created, t0);
  assert.deepEqual(first.timeline.map((step) => step.at), [t0, t1, t2]);
  const second = view(at(t2), [at(t0), at(t0), at(t2)]);
  assert.equal(second.created, t2);
  assert.deepEqual(second.timeline.map((step) => step.at), [t0, t0, t2]);
});
