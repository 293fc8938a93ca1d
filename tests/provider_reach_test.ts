/**
 * Which provider a company is paid through is one decision of the composition root, the same for
 * Lithic, PayPal and Increase in both environments: a company with its own settings goes to its
 * own provider; without them, a test company goes to the sandbox's simulator and a live company
 * to none (its payouts by that provider are refused `rail_not_configured`).
 */
import assert from "node:assert/strict";
import { testSecretBox } from "./helpers.ts";
import { MONEY_SETTINGS, openMoneyFixture, START } from "./money_core_helpers.ts";
import { composeRails } from "../lib/payouts/runtime.ts";
import { lithicSettingsStore } from "../lib/cards/store.ts";
import { increaseSettingsStore } from "../lib/instant/store.ts";
import { SIMULATOR_SETTINGS } from "../lib/instant/simulator.ts";
import { savePaypalSettings } from "../lib/paypal/settings_store.ts";
import { PAYPAL_SIMULATOR_BASE_URL } from "../lib/paypal/simulator.ts";
import { SANDBOX_LITHIC_PATH } from "../lib/cards/sandbox_lithic.ts";
import type { Environment } from "../lib/platform/config.ts";
import type { ModalityCode } from "../lib/payouts/states.ts";
import type { EnvironmentRails } from "../lib/payouts/runtime.ts";
import type { Database } from "../db/client.ts";
import { increaseSignature } from "../lib/instant/client.ts";
import { withHttpFixture } from "./http_fixture.ts";

/** The host each provider's own settings name in this test (never called). */
const OWN = {
  lithic: "https://api.lithic.test",
  paypal: "https://api-m.paypal.test",
  increase: "https://api.increase.test",
} as const;

type Provider = keyof typeof OWN;

interface ProviderCase {
  readonly modality: ModalityCode;
  /** Stores the company's own settings of the provider. */
  save(database: Database, companyId: string): Promise<unknown>;
  /** Where the company's reach sends its calls: own, simulator, or none. */
  reached(rails: EnvironmentRails, database: Database, companyId: string): Promise<string>;
}

const PROVIDERS: Readonly<Record<Provider, ProviderCase>> = {
  lithic: {
    modality: "vcc",
    save: (database, companyId) =>
      database.writer.write((tx) =>
        lithicSettingsStore.save(
          tx,
          testSecretBox,
          companyId,
          {
            apiKey: "own_lithic_key",
            baseUrl: OWN.lithic,
            webhookSecret: "whsec_b3du",
            cardValidDays: 30,
            allowedMccs: [],
          },
          null,
          START,
        )
      ),
    async reached(rails, database, companyId) {
      const reach = await rails.reaches.lithic.read(database.readClient, companyId);
      if (reach === null) return "none";
      if (reach.settings.baseUrl.endsWith(SANDBOX_LITHIC_PATH)) return "simulator";
      return reach.settings.baseUrl === OWN.lithic ? "own" : reach.settings.baseUrl;
    },
  },
  paypal: {
    modality: "paypal",
    save: (database, companyId) =>
      database.writer.write((tx) =>
        savePaypalSettings(
          tx,
          testSecretBox,
          companyId,
          {
            clientId: "own_client",
            clientSecret: "own_secret",
            baseUrl: OWN.paypal,
            webhookId: "WH-OWN",
          },
          null,
          START,
        )
      ),
    async reached(rails, database, companyId) {
      const reach = await rails.reaches.paypal.read(database.readClient, companyId);
      if (reach === null) return "none";
      if (reach.settings.baseUrl === PAYPAL_SIMULATOR_BASE_URL) return "simulator";
      return reach.settings.baseUrl === OWN.paypal ? "own" : reach.settings.baseUrl;
    },
  },
  increase: {
    modality: "instant_deposit",
    save: (database, companyId) =>
      database.writer.write((tx) =>
        increaseSettingsStore.save(
          tx,
          testSecretBox,
          companyId,
          {
            ...SIMULATOR_SETTINGS,
            apiKey: "own_increase_key",
            baseUrl: OWN.increase,
          },
          null,
          START,
        )
      ),
    async reached(rails, database, companyId) {
      const reach = await rails.reaches.increase.read(database.readClient, companyId);
      if (reach === null) return "none";
      if (reach.simulated) return "simulator";
      return reach.settings.baseUrl === OWN.increase ? "own" : reach.settings.baseUrl;
    },
  },
};

/** What each environment decides for a company without, then with, its own settings. */
const DECISIONS: readonly {
  readonly environment: Environment;
  readonly without: "simulator" | "none";
}[] = [
  { environment: "test", without: "simulator" },
  { environment: "live", without: "none" },
];

for (const { environment, without } of DECISIONS) {
  for (const [provider, c] of Object.entries(PROVIDERS)) {
    Deno.test(`provider reach, ${provider} in ${environment}: without settings ${without}, with its own settings its own provider`, async () => {
      const m = await openMoneyFixture({ environment });
      try {
        const compose = () => composeRails(environment, MONEY_SETTINGS, m.database, testSecretBox);
        const rail = compose().directory.forModality(c.modality);
        const configured = () => m.database.writer.write((tx) => rail.configured!(tx, m.companyId));

        assert.equal(await c.reached(compose(), m.database, m.companyId), without);
        assert.equal(await configured(), without === "simulator");
        if (without === "none" && rail.shape === "per_payout") {
          const refused = await rail.submit({
            reference: "po_reach-1",
            companyId: m.companyId,
            payoutId: "po_reach",
            modality: c.modality,
            amountCents: 1_000,
            attempt: 0,
            submittedAt: START,
            details: {},
          });
          assert.equal(refused.kind === "refused" && refused.reason, "rail_not_configured");
        }

        await c.save(m.database, m.companyId);
        assert.equal(await c.reached(compose(), m.database, m.companyId), "own");
        assert.equal(await configured(), true);
      } finally {
        await m.close();
      }
    });
  }
}

Deno.test("provider reach over HTTP: a provider's webhook for a test company without its own settings is 404 (lithic, paypal, increase), even one the Increase simulator signed: the simulators deliver theirs in process", async () => {
  await withHttpFixture(async (f) => {
    const body = JSON.stringify({
      id: "increase_event_x",
      category: "card_push_transfer.updated",
      associated_object_id: "card_push_transfer_x",
    });
    const signed = await increaseSignature(
      SIMULATOR_SETTINGS.webhookSecret,
      body,
      new Date(f.clock.now()),
    );
    for (const provider of ["lithic", "paypal", "increase"]) {
      const response = await f.app.request(`/rails/${provider}/${f.cast.acme.id}/test/webhook`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "Increase-Webhook-Signature": signed },
        body,
      });
      assert.deepEqual([response.status, (await response.json()).error.code], [
        404,
        `${provider}_not_configured`,
      ], provider);
    }
  });
});
