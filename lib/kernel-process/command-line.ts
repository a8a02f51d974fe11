/**
 * `IAC_CODE_AGUI_KERNEL_COMMAND` as the argv the service spawns, without a
 * shell: words split on spaces, `'…'` taken literally, `"…"` with `\"` and
 * `\\` escapes, a backslash outside quotes escaping the next character.
 * Nothing is expanded. A character only a shell gives meaning to (`|`, `&`,
 * `;`, `<`, `>`, `(`, `)`, `$`, a backquote), unquoted, is refused rather
 * than passed on as a word: an operator who wrote `a && b` or `$HOME`
 * expects a shell, and a silent literal would fail far from the setting.
 * Whoever needs one writes it: `sh -c '…'`.
 *
 * `{port}` in any word is replaced by the loopback port the service chose
 * for the kernel (see `supervisor.ts`); the command must name it, since the
 * service has no other way to know where the kernel listens.
 */

export const PORT_PLACEHOLDER = "{port}";

/** Thrown for a command the service cannot run; `config.ts` reports it as a setting error. */
export class CommandLineError extends Error {
  override name = "CommandLineError";
}

const SHELL_ONLY = new Set(["|", "&", ";", "<", ">", "(", ")", "$", "`"]);

/** The words of a command line, as described above. */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  // `inWord` tells an empty quoted word ('') from no word at all.
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else word += char;
      continue;
    }
    if (quote === '"') {
      if (char === '"') quote = undefined;
      else if (char === "\\" && (line[i + 1] === '"' || line[i + 1] === "\\")) word += line[++i];
      else word += char;
      continue;
    }
    if (/\s/.test(char)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
      continue;
    }
    inWord = true;
    if (char === "'" || char === '"') quote = char;
    else if (char === "\\") {
      if (i + 1 >= line.length) throw new CommandLineError("ends with a lone backslash");
      word += line[++i];
    } else if (SHELL_ONLY.has(char)) {
      throw new CommandLineError(
        `has an unquoted "${char}", which only a shell understands; the command runs without one (quote it, or write sh -c '…')`,
      );
    } else word += char;
  }
  if (quote) throw new CommandLineError(`has an unclosed ${quote}`);
  if (inWord) words.push(word);
  if (words.length === 0) throw new CommandLineError("is empty");
  if (!words.some((each) => each.includes(PORT_PLACEHOLDER))) {
    throw new CommandLineError(`does not name ${PORT_PLACEHOLDER}, the port the service gives the kernel to listen on`);
  }
  return words;
}

/** The argv to spawn: every `{port}` replaced. */
export function withPort(argv: readonly string[], port: number): string[] {
  return argv.map((word) => word.replaceAll(PORT_PLACEHOLDER, String(port)));
}
