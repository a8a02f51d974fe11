// @ts-check
/**
 * RFC 6902 JSON Patch, applied to a copy: what `STATE_DELTA` carries. A
 * patch that does not apply throws, and the caller keeps the state it had,
 * so a bad delta shows up as an error instead of as a quietly wrong state.
 */

/** @param {string} token */
const unescape = (token) => token.replace(/~1/g, "/").replace(/~0/g, "~");

/** @param {string} pointer @returns {string[]} */
function tokensOf(pointer) {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new Error(`"${pointer}" is not a JSON Pointer`);
  return pointer.slice(1).split("/").map(unescape);
}

/** @param {any} container @param {string} token @param {boolean} adding */
function indexIn(container, token, adding) {
  if (token === "-" && adding) return container.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new Error(`"${token}" is not an array index`);
  const index = Number(token);
  if (index > container.length || (!adding && index === container.length)) throw new Error(`index ${index} is out of range`);
  return index;
}

/** The parent of what `pointer` names, and the last token. @param {any} doc @param {string} pointer */
function parentOf(doc, pointer) {
  const tokens = tokensOf(pointer);
  const last = tokens.pop();
  if (last === undefined) return { parent: undefined, last: undefined };
  let parent = doc;
  for (const token of tokens) {
    if (parent === null || typeof parent !== "object" || !(token in parent)) throw new Error(`${pointer}: no such path`);
    parent = parent[token];
  }
  if (parent === null || typeof parent !== "object") throw new Error(`${pointer}: the parent is not a container`);
  return { parent, last };
}

/** @param {any} doc @param {string} pointer */
function get(doc, pointer) {
  let value = doc;
  for (const token of tokensOf(pointer)) {
    if (value === null || typeof value !== "object" || !(token in value)) throw new Error(`${pointer}: no such path`);
    value = value[token];
  }
  return value;
}

/** @param {any} doc @param {string} pointer @param {unknown} value */
function add(doc, pointer, value) {
  const { parent, last } = parentOf(doc, pointer);
  if (last === undefined) return value;
  if (Array.isArray(parent)) parent.splice(indexIn(parent, last, true), 0, value);
  else parent[last] = value;
  return doc;
}

/** @param {any} doc @param {string} pointer */
function remove(doc, pointer) {
  const { parent, last } = parentOf(doc, pointer);
  if (last === undefined) return undefined;
  if (Array.isArray(parent)) parent.splice(indexIn(parent, last, false), 1);
  else if (last in parent) delete parent[last];
  else throw new Error(`${pointer}: no such path`);
  return doc;
}

/**
 * @param {unknown} document
 * @param {Array<Record<string, any>>} patch
 * @returns {unknown} the patched copy
 */
export function applyPatch(document, patch) {
  if (!Array.isArray(patch)) throw new Error("a JSON Patch is an array of operations");
  let doc = structuredClone(document);
  for (const op of patch) {
    const path = String(op.path ?? "");
    switch (op.op) {
      case "add":
        doc = add(doc, path, structuredClone(op.value));
        break;
      case "remove":
        doc = remove(doc, path);
        break;
      case "replace":
        get(doc, path);
        doc = add(remove(doc, path) ?? doc, path, structuredClone(op.value));
        break;
      case "move": {
        const value = get(doc, String(op.from));
        doc = add(remove(doc, String(op.from)), path, value);
        break;
      }
      case "copy":
        doc = add(doc, path, structuredClone(get(doc, String(op.from))));
        break;
      case "test":
        if (JSON.stringify(get(doc, path)) !== JSON.stringify(op.value)) throw new Error(`test failed at ${path}`);
        break;
      default:
        throw new Error(`unknown JSON Patch op ${JSON.stringify(op.op)}`);
    }
  }
  return doc;
}
