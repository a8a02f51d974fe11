/**
 * Python's `json.dumps(value, ensure_ascii=False)` and `str()` as the kernel
 * and the reference adapter produce them. The kernel parses some answers as
 * text it expects in exactly that spelling (contract §5), so the separators,
 * key order, escapes and number forms are reproduced rather than borrowed
 * from `JSON.stringify`, which differs on separators and lone surrogates.
 */

export interface PythonJsonOptions {
  /** `separators=(",", ":")` instead of Python's default `", "` and `": "`. */
  compact?: boolean;
  /** `sort_keys=True`: keys ordered by code point, as Python compares strings. */
  sortKeys?: boolean;
}

// Python escapes exactly `"`, `\` and U+0000–U+001F, with the short forms for five of them.
const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\b": "\\b",
  "\f": "\\f",
};

function pythonString(text: string): string {
  const escaped = text.replace(
    /[\u0000-\u001f"\\]/g,
    (char) => SHORT_ESCAPES[char] ?? `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return `"${escaped}"`;
}

/**
 * `JSON.parse` has erased the difference between `1` and `1.0`, so a number
 * is written as Python would write what Python's `json.loads` makes of
 * `JSON.stringify(value)`: plain digits (`1`, `1e20` written out) are an int;
 * anything with a fraction or an exponent (`1.5`, `1e21`) is a float, in
 * `repr` form: exponent notation below 1e-4 and from 1e16, the exponent at
 * least two digits (`1e-05`, `1.5e+300`).
 */
function pythonNumber(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "Infinity" : "-Infinity";
  const javascript = String(value);
  if (/^-?\d+$/.test(javascript)) return javascript;
  const [mantissa = "", exponentText = "0"] = value.toExponential().split("e");
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 16) {
    return `${mantissa}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
  }
  return javascript;
}

function byCodePoint(a: string, b: string): number {
  const left = [...a];
  const right = [...b];
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const difference = left[i]!.codePointAt(0)! - right[i]!.codePointAt(0)!;
    if (difference !== 0) return difference;
  }
  return left.length - right.length;
}

export function pythonJsonDumps(value: unknown, options: PythonJsonOptions = {}): string {
  const itemSeparator = options.compact ? "," : ", ";
  const keySeparator = options.compact ? ":" : ": ";
  const dump = (item: unknown): string => {
    if (item === null) return "null";
    switch (typeof item) {
      case "string":
        return pythonString(item);
      case "number":
        return pythonNumber(item);
      case "boolean":
        return item ? "true" : "false";
      case "object": {
        if (Array.isArray(item)) return `[${item.map(dump).join(itemSeparator)}]`;
        // An absent optional field, as JSON.stringify treats it; Python would never see it.
        const entries = Object.entries(item).filter(([, v]) => v !== undefined);
        if (options.sortKeys) entries.sort(([a], [b]) => byCodePoint(a, b));
        return `{${entries.map(([k, v]) => pythonString(k) + keySeparator + dump(v)).join(itemSeparator)}}`;
      }
      default:
        throw new TypeError(`Object of type ${typeof item} is not JSON serializable`);
    }
  };
  return dump(value);
}

/** Python truthiness of a JSON value: `""`, `0`, `false`, `null`, `[]` and `{}` are false. */
export function pythonTruthy(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === "object") return Object.keys(value).length > 0;
  return Boolean(value) || Number.isNaN(value);
}

/** Python `str()` of a JSON value, close enough for ids and titles (containers become JSON). */
export function pythonStr(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  return pythonJsonDumps(value);
}
