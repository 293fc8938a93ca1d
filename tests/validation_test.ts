/** The shared free-text rule of both surfaces: what it refuses, how it says so, and what it lets by. */
import assert from "node:assert/strict";
import * as v from "valibot";
import {
  forbiddenCharacter,
  freeText,
  normalizePhone,
  stringRecord,
} from "../routes/validation.ts";

Deno.test("forbiddenCharacter: names, addresses and memos in any script pass; tab is text", () => {
  const accepted = [
    "",
    "Pat O'Neil-Smith",
    "José Núñez",
    "Zoë Łukasiewicz",
    "محمد",
    "李小龙",
    "Payment for claim #12 💸",
    "col\tumn",
    "\u200F", // a right-to-left mark is a mark, not an override
  ];
  for (const text of accepted) assert.equal(forbiddenCharacter(text), null, JSON.stringify(text));
});

Deno.test("forbiddenCharacter: C0 and C1 controls, DEL, bidirectional overrides and isolates, lone surrogates", () => {
  const refused: [string, string][] = [
    ["\u0000", "U+0000 (a control character) at character 1"],
    ["Pat\u0000", "U+0000 (a control character) at character 4"],
    ["a\u0001b", "U+0001 (a control character) at character 2"],
    ["line\nbreak", "U+000A (a control character) at character 5"],
    ["cr\r", "U+000D (a control character) at character 3"],
    ["esc\u001b[31m", "U+001B (a control character) at character 4"],
    ["del\u007f", "U+007F (a control character) at character 4"],
    ["next\u0085line", "U+0085 (a control character) at character 5"],
    ["\u202Aleft", "U+202A (a bidirectional override) at character 1"],
    ["invoice\u202Efdp.exe", "U+202E (a bidirectional override) at character 8"],
    ["\u2066isolate", "U+2066 (a bidirectional override) at character 1"],
    ["x\u2069", "U+2069 (a bidirectional override) at character 2"],
    ["high\uD800", "U+D800 (a lone surrogate) at character 5"],
    ["\uDC00low", "U+DC00 (a lone surrogate) at character 1"],
    ["\uD800\uD800\uDC00", "U+D800 (a lone surrogate) at character 1"],
    ["💸\u0000", "U+0000 (a control character) at character 2"],
  ];
  for (const [text, found] of refused) {
    assert.equal(forbiddenCharacter(text), found, JSON.stringify(text));
  }
});

Deno.test("freeText: the rule and the length limit, each message naming the field", () => {
  const name = freeText("first_name", 5);
  assert.deepEqual(v.safeParse(name, "Pat").output, "Pat");
  const issue = (input: unknown) => v.safeParse(name, input).issues?.map((i) => i.message);
  assert.deepEqual(issue("P\u0000t"), [
    "first_name must not hold control characters (tab aside), bidirectional overrides or lone surrogates: U+0000 (a control character) at character 2",
  ]);
  assert.deepEqual(issue("Patrick"), ["first_name is at most 5 characters"]);
  assert.deepEqual(issue(5), ["first_name must be a string"]);
});

Deno.test("stringRecord: __proto__, constructor and prototype are refused by name, never dropped", () => {
  const metadata = stringRecord("metadata", { keysMax: 3, keyLengthMax: 10, valueLengthMax: 10 });
  const problems = (json: string) =>
    v.safeParse(metadata, JSON.parse(json)).issues?.map((i) => [
      (i.path ?? []).map((item) => String(item.key)).join("."),
      i.message,
    ]);
  for (const key of ["__proto__", "constructor", "prototype"]) {
    assert.deepEqual(problems(`{"ok": "1", "${key}": "x"}`), [[
      key,
      `metadata key ${key} is reserved: __proto__, constructor and prototype cannot be stored`,
    ]], key);
  }
  assert.deepEqual(problems('{"a\\u202eb": "x"}'), [[
    "",
    "metadata keys must not hold control characters (tab aside), bidirectional overrides or lone surrogates: key 1 has U+202E (a bidirectional override) at character 2",
  ]]);
  assert.deepEqual(problems('{"a": "x\\ud800"}'), [[
    "a",
    "metadata values must not hold control characters (tab aside), bidirectional overrides or lone surrogates: U+D800 (a lone surrogate) at character 2",
  ]]);
  assert.deepEqual(problems('{"a": "1", "b": "2", "c": "3", "d": "4"}'), [[
    "",
    "metadata has at most 3 keys",
  ]]);
  const stored = v.safeParse(metadata, JSON.parse('{"adjuster": "A-9", "note": "tab\\tok"}'));
  assert.deepEqual(stored.output, { adjuster: "A-9", note: "tab\tok" });
  assert.equal(Object.getPrototypeOf(stored.output), Object.prototype);
});

Deno.test("normalizePhone: the usual US forms and international numbers become E.164; others are null", () => {
  const accepted: [string, string][] = [
    ["5125550100", "+15125550100"],
    ["512-555-0100", "+15125550100"],
    ["(512) 555-0100", "+15125550100"],
    ["512.555.0100", "+15125550100"],
    ["512 555 0100", "+15125550100"],
    ["1-512-555-0100", "+15125550100"],
    ["1 (512) 555-0100", "+15125550100"],
    ["+1 512 555 0100", "+15125550100"],
    ["+1 (512) 555-0100", "+15125550100"],
    ["+15125550100", "+15125550100"],
    [" 512-555-0100 ", "+15125550100"],
    ["+44 20 7946 0958", "+442079460958"],
    ["+52 55 1234 5678", "+525512345678"],
    ["+683 4002", "+6834002"],
  ];
  for (const [text, e164] of accepted) assert.equal(normalizePhone(text), e164, text);
  const refused = [
    "",
    "12",
    "555-0100",
    "512-555-010",
    "512-555-01000",
    "(012) 555-0100",
    "(512) 155-0100",
    "+1 512 555 010",
    "512-555-0100 x12",
    "512-555-0100 ext. 12",
    "call me",
    "+0 123 4567",
    "+44 20 7946 0958 1234 5",
    "512+555+0100",
    "++15125550100",
    "512\u0000555-0100",
  ];
  for (const text of refused) assert.equal(normalizePhone(text), null, JSON.stringify(text));
});
