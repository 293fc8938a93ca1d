/**
 * PDFs built byte by byte for tests: the shapes pdf-lib opens but cannot stamp (no page tree, an
 * empty one) or refuses (encrypted), which pdf-lib itself would never write.
 */

/**
 * A PDF whose objects are `objects` (object 1 is the catalog), with a correct cross-reference
 * table; `trailerExtra` is appended inside the trailer dictionary.
 */
export function pdfOfObjects(objects: readonly string[], trailerExtra = ""): Uint8Array {
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${trailerExtra} >>\n` +
    `startxref\n${xref}\n%%EOF\n`;
  return new TextEncoder().encode(out);
}
