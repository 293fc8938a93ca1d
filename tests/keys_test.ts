import assert from "node:assert/strict";
import { newId } from "../lib/platform/keys.ts";

const BASE62_DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

Deno.test("object ids: prefix, 8 characters of time that sort as text, 14 random", () => {
  const earlier = newId("po");
  const later = [1, 2, 3].map(() => newId("po"));
  for (const id of [earlier, ...later]) assert.match(id, /^po_[0-9A-Za-z]{22}$/);
  const stamp = (id: string) =>
    [...id.slice(3, 11)].reduce((ms, ch) => ms * 62 + BASE62_DIGITS.indexOf(ch), 0);
  assert.ok(Math.abs(stamp(earlier) - Date.now()) < 5_000, "the time part is the creation time");
  assert.equal(new Set(later.map((id) => id.slice(11))).size, 3, "the random parts differ");
  const years = [Date.UTC(2026, 0, 1), Date.UTC(2027, 0, 1), Date.UTC(2100, 0, 1)];
  const spy = (ms: number) => {
    const realNow = Date.now;
    Date.now = () => ms;
    try {
      return newId("po");
    } finally {
      Date.now = realNow;
    }
  };
  const ids = years.map(spy);
  assert.deepEqual([...ids].sort(), ids, "later ids sort later");
});
