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
 *
 * The same holds for links: every relative link of the README and of
 * `docs/` names a file that exists and, into a Markdown file, a heading it
 * has. The README stays a front page: short, with every doc on its map.
 */
import { describe, expect, it } from "@jest/globals";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { PROJECT_ROOT } from "../lib/paths.js";

const SCANNED = ["lib", "operators", "spec", "bench", "soak", "examples", "docs", "README.md"];
const SKIPPED_DIRS = new Set(["node_modules", "dist"]);
const TEXT_FILE = /\.(?:[cm]?[jt]s|md|html)$/;

const REQUIREMENTS = "docs/requirements.md";
const CONTRACT = "docs/a2a-contract.md";
const FRONT_PAGE = "README.md";
const DOCS = "docs";
/** Past this the README is no longer a page a newcomer reads to the end; the rest belongs in docs/. */
const FRONT_PAGE_MAX_LINES = 300;

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

/** A link of a Markdown file to something in the repository: where it stands and what it names. */
interface Link {
  file: string;
  line: number;
  target: string;
}

const FENCE = /^\s*(?:```|~~~)/;
/** The target of a link or an image, whose text may run over several lines. */
const LINK_TARGET = /\]\(([^)\s]+)\)/g;
/** `https:`, `mailto:` and the like lead out of the repository. */
const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;
/** What GitHub drops from a heading to make its anchor: all but letters, digits, `_`, `-` and spaces. */
const NOT_IN_ANCHOR = /[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu;

/** The text with its fenced code blocks blanked, lines kept: a `#` or a `](` in code is no heading and no link. */
function proseOf(markdown: string): string {
  let inFence = false;
  return markdown
    .split("\n")
    .map((line) => {
      if (FENCE.test(line)) {
        inFence = !inFence;
        return "";
      }
      return inFence ? "" : line;
    })
    .join("\n");
}

/** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces to hyphens, a repeat numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseOf(markdown).split("\n")) {
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (!heading) continue;
    const anchor = heading[1]!.trim().toLowerCase().replace(NOT_IN_ANCHOR, "").replace(/ /g, "-");
    const repeats = seen.get(anchor) ?? 0;
    seen.set(anchor, repeats + 1);
    anchors.add(repeats === 0 ? anchor : `${anchor}-${repeats}`);
  }
  return anchors;
}

/** The links of a Markdown file into the repository (a bare `#anchor` is into the file itself). */
function linksOf(file: string, markdown: string): Link[] {
  const prose = proseOf(markdown);
  return [...prose.matchAll(LINK_TARGET)].flatMap((match) => {
    const target = match[1]!;
    if (EXTERNAL.test(target)) return [];
    return [{ file, line: prose.slice(0, match.index).split("\n").length, target }];
  });
}

/** Where a link leads, relative to the repository: the file (the linking one for a bare anchor) and the anchor. */
function destinationOf({ file, target }: Link): { file: string; anchor: string | undefined } {
  const [pathPart, anchor] = target.split("#", 2) as [string, string | undefined];
  return { file: pathPart === "" ? file : path.join(path.dirname(file), decodeURIComponent(pathPart)), anchor };
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

describe("links in the README and docs/", () => {
  const markdown = [
    FRONT_PAGE,
    ...readdirSync(path.join(PROJECT_ROOT, DOCS)).flatMap((name) => (name.endsWith(".md") ? [path.join(DOCS, name)] : [])),
  ];
  const links = markdown.flatMap((file) => linksOf(file, read(file)));
  const exists = (relative: string) => existsSync(path.join(PROJECT_ROOT, relative));

  it("finds the links, the README's map among them", () => {
    expect(links.filter((link) => link.file === FRONT_PAGE).length).toBeGreaterThan(10);
    expect(links.some((link) => link.file !== FRONT_PAGE && link.target.includes("#"))).toBe(true);
  });

  it("names files that exist", () => {
    const missing = links.filter((link) => !exists(destinationOf(link).file));
    expect(missing.map(({ file, line, target }) => `${file}:${line} ${target}`)).toEqual([]);
  });

  it("names headings that exist, in the Markdown file linked", () => {
    const anchors = new Map<string, Set<string>>();
    const anchorsIn = (file: string) => anchors.get(file) ?? anchors.set(file, anchorsOf(read(file))).get(file)!;
    const unknown = links.filter((link) => {
      const { file, anchor } = destinationOf(link);
      return anchor !== undefined && file.endsWith(".md") && exists(file) && !anchorsIn(file).has(anchor);
    });
    expect(unknown.map(({ file, line, target }) => `${file}:${line} ${target}`)).toEqual([]);
  });

  it("keeps the README a front page: under 300 lines, with every doc of docs/ on its map", () => {
    expect(read(FRONT_PAGE).split("\n").length).toBeLessThan(FRONT_PAGE_MAX_LINES);
    const mapped = new Set(links.filter((link) => link.file === FRONT_PAGE).map((link) => destinationOf(link).file));
    expect(markdown.filter((file) => file !== FRONT_PAGE && !mapped.has(file))).toEqual([]);
  });
});

describe("the link matcher", () => {
  it("gives headings GitHub's anchors, numbering a repeat, and skips code", () => {
    const markdown =
      "# Top\n## `forwardedProps.iacCode`\n## 6. Spans; recovery\n## Coverage of AG-UI's types\n## Top\n```sh\n# a comment\n```\n";
    expect([...anchorsOf(markdown)]).toEqual(["top", "forwardedpropsiaccode", "6-spans-recovery", "coverage-of-ag-uis-types", "top-1"]);
  });

  it("reads links over line breaks, with the line they end on, and leaves out external ones and code", () => {
    const markdown =
      "See [the\nsandbox](docs/sandbox.md#run), [AG-UI](https://docs.ag-ui.com)\nand [here](#top).\n```\n[x](nowhere.md)\n```\n![shot](images/a.png)";
    expect(linksOf("docs/x.md", markdown)).toEqual([
      { file: "docs/x.md", line: 2, target: "docs/sandbox.md#run" },
      { file: "docs/x.md", line: 3, target: "#top" },
      { file: "docs/x.md", line: 7, target: "images/a.png" },
    ]);
    expect(destinationOf({ file: "docs/x.md", line: 1, target: "../lib/run.ts" })).toEqual({ file: "lib/run.ts", anchor: undefined });
    expect(destinationOf({ file: "docs/x.md", line: 1, target: "#top" })).toEqual({ file: "docs/x.md", anchor: "top" });
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
