import assert from "node:assert/strict";
import { SecretBox } from "../lib/platform/crypto.ts";

Deno.test("a SecretBox's MAC is stable per key and purpose and differs across keys and purposes", async () => {
  const box = await SecretBox.fromBase64Key(btoa("e".repeat(32)));
  const again = await SecretBox.fromBase64Key(btoa("e".repeat(32)));
  const other = await SecretBox.fromBase64Key(btoa("f".repeat(32)));
  const mac = await box.mac("ach-correction-account", "000123456789");
  assert.match(mac, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(await again.mac("ach-correction-account", "000123456789"), mac);
  assert.notEqual(await box.mac("another-purpose", "000123456789"), mac);
  assert.notEqual(await other.mac("ach-correction-account", "000123456789"), mac);
  assert.notEqual(await box.mac("ach-correction-account", "000123456780"), mac);
});

Deno.test("a sealed value opens only under its key and refuses an altered one", async () => {
  const box = await SecretBox.fromBase64Key(btoa("e".repeat(32)));
  const other = await SecretBox.fromBase64Key(btoa("f".repeat(32)));
  const sealed = await box.sealText("000123456789");
  assert.equal(await box.openText(sealed), "000123456789");
  await assert.rejects(() => other.openText(sealed));
  const [version, iv, data] = sealed.split(".");
  const flipped = `${version}.${iv}.${data[0] === "A" ? "B" : "A"}${data.slice(1)}`;
  await assert.rejects(() => box.openText(flipped));
});

Deno.test("a sealed value of several megabytes (a large bank file) seals and opens", async () => {
  const box = await SecretBox.fromBase64Key(btoa("e".repeat(32)));
  const big = "6".repeat(94 * 50_000);
  assert.equal(await box.openText(await box.sealText(big)), big);
});
