/**
 * Every requirement id (`R-…`) and contract section (`§n`) the sources cite
 * resolves inside the repository: an id to a definition in
 * `docs/requirements.md`, a section to a heading of `docs/a2a-contract.md`.
 * A comment that cites something nobody can look up is a comment that
 * misleads, and the documents it pointed at used to live outside the repo.
 *
 * Scanned: code, specs, docs and the README (text files only; fixtures and
 * other data files are not comments). Every `§n` counts as a contract
 * section: the contract is the only numbered document the code cites.
 */
import { describe, expect, it } from "@jest/globals";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { PROJECT_ROOT } from "../lib/paths.js";

const SCANNED = ["lib", "operators", "spec", "bench", "soak", "examples", "docs", "README.md"];
const SKIPPED_DIRS = new Set(["node_modules", "dist"]);
const TEXT_FILE = /\.(?:[cm]?[jt]s|md|html)$/;

const REQUIREMENTS = "docs/requirements.md";
const CONTRACT = "docs/a2a-contract.md";

/** `R-SIB-5/6` is shorthand for R-SIB-5 and R-SIB-6, so the `/n` tails are part of a citation. */
const CITED_ID = /\bR-[A-Z]+(?:-[A-Z0-9]+)*(?:\/\d+)*/g;
const CITED_SECTION = /§\s*(\d+)/g;

/** A numbered requirement is a list item starting with its id in bold; a group's id stands in its heading. */
const DEFINED_ITEM = /^- \*\*(R-[A-Z]+(?:-[A-Z0-9]+)*)\*\*/;
const HEADING = /^#{1,6} /;
const SECTION_HEADING = /^## (\d+)\. /;

interface Citation {
  file: string;
  line: number;
  cited: string;
}

/** The requirement ids a text cites, shorthand expanded. */
function citedIds(text: string): string[] {
  return [...text.matchAll(CITED_ID)].flatMap(([match]) => {
    const [id, ...more] = match.split("/") as [string, ...string[]];
    const numbered = /^(.*-)\d+$/.exec(id);
    return numbered ? [id, ...more.map((n) => `${numbered[1]}${n}`)] : [id];
  });
}

function citedSections(text: string): number[] {
  return [...text.matchAll(CITED_SECTION)].map((match) => Number(match[1]));
}

function definedIds(requirements: string): string[] {
  return requirements.split("\n").flatMap((line) => {
    if (HEADING.test(line)) return citedIds(line);
    const item = DEFINED_ITEM.exec(line);
    return item ? [item[1]!] : [];
  });
}

function contractSections(contract: string): number[] {
  return contract.split("\n").flatMap((line) => {
    const heading = SECTION_HEADING.exec(line);
    return heading ? [Number(heading[1])] : [];
  });
}

/** The citations of `files` that `requirements` and `contract` do not define, as `file:line`. */
function unresolved(
  files: ReadonlyArray<{ file: string; text: string }>,
  requirements: string,
  contract: string,
): { ids: Citation[]; sections: Citation[] } {
  const ids = new Set(definedIds(requirements));
  const sections = new Set(contractSections(contract));
  const found = { ids: [] as Citation[], sections: [] as Citation[] };
  for (const { file, text } of files) {
    text.split("\n").forEach((content, index) => {
      const line = index + 1;
      for (const id of citedIds(content)) if (!ids.has(id)) found.ids.push({ file, line, cited: id });
      for (const section of citedSections(content)) {
        if (!sections.has(section)) found.sections.push({ file, line, cited: `§${section}` });
      }
    });
  }
  return found;
}

function textFilesUnder(relative: string): string[] {
  const absolute = path.join(PROJECT_ROOT, relative);
  if (TEXT_FILE.test(relative)) return [relative];
  return readdirSync(absolute, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name.startsWith(".") || SKIPPED_DIRS.has(entry.name)) return [];
    const child = path.join(relative, entry.name);
    if (entry.isDirectory()) return textFilesUnder(child);
    return entry.isFile() && TEXT_FILE.test(entry.name) ? [child] : [];
  });
}

const read = (relative: string) => readFileSync(path.join(PROJECT_ROOT, relative), "utf8");

describe("references to the docs", () => {
  const requirements = read(REQUIREMENTS);
  const contract = read(CONTRACT);
  const files = SCANNED.flatMap(textFilesUnder).map((file) => ({ file, text: read(file) }));

  it("scans the code, the specs and the README", () => {
    const scanned = files.map(({ file }) => file);
    expect(scanned).toEqual(
      expect.arrayContaining(["README.md", path.join("lib", "run.ts"), path.join("spec", "docs-references.spec.ts")]),
    );
    expect(files.some(({ text }) => citedIds(text).length > 0)).toBe(true);
    expect(files.some(({ text }) => citedSections(text).length > 0)).toBe(true);
  });

  it("finds every cited requirement id defined in docs/requirements.md", () => {
    expect(unresolved(files, requirements, contract).ids).toEqual([]);
  });

  it("finds a heading in docs/a2a-contract.md for every cited section", () => {
    expect(unresolved(files, requirements, contract).sections).toEqual([]);
  });

  it("defines each requirement id once, each in a group that has a heading", () => {
    const defined = definedIds(requirements);
    expect(defined.filter((id, index) => defined.indexOf(id) !== index)).toEqual([]);
    const groups = new Set(defined.filter((id) => !/-\d+$/.test(id)));
    expect(defined.filter((id) => !groups.has(id.replace(/-\d+$/, "")))).toEqual([]);
  });

  it("numbers the contract's sections once each, in order", () => {
    const sections = contractSections(contract);
    expect(sections).toEqual([...sections].sort((a, b) => a - b));
    expect(new Set(sections).size).toBe(sections.length);
  });
});

describe("the citation matcher", () => {
  // Built at run time, so that this file's own text cites nothing undefined.
  const SECTION_SIGN = "\u00a7";
  const unknownId = ["R", "NOPE", "1"].join("-");
  const group = "R-" + "TOP";

  it("reads ids, group ids and the n/m shorthand", () => {
    expect(citedIds("(R-PER-4, R-MAP-3; R-RES) and R-SIB-5/6.")).toEqual(["R-PER-4", "R-MAP-3", "R-RES", "R-SIB-5", "R-SIB-6"]);
    expect(citedIds("ERR-1 or R-… or XR-HTTP-1")).toEqual([]);
  });

  it("reads every section of a citation", () => {
    expect(citedSections(`wire contract ${SECTION_SIGN}1, ${SECTION_SIGN}6 and ${SECTION_SIGN}3/${SECTION_SIGN}4`)).toEqual([1, 6, 3, 4]);
  });

  it("reports an id nobody defines and a section the contract lacks, with file and line", () => {
    const requirements = `## Group (${group})\n- **${group}-1** defined.\n`;
    const contract = "## 1. Only section\n";
    const files = [
      { file: "lib/x.ts", text: `// ${group}-1, ${group} (contract ${SECTION_SIGN}1)\n// ${unknownId} (contract ${SECTION_SIGN}2)` },
    ];
    expect(unresolved(files, requirements, contract)).toEqual({
      ids: [{ file: "lib/x.ts", line: 2, cited: unknownId }],
      sections: [{ file: "lib/x.ts", line: 2, cited: `${SECTION_SIGN}2` }],
    });
  });

  it("does not count an id mentioned in a requirement's text as defined", () => {
    expect(definedIds(`- **${group}-1** unlike ${group}-2.\n`)).toEqual([`${group}-1`]);
  });
});
