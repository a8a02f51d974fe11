// @ts-check
/**
 * Elements are built from data, never from markup: every string lands as a
 * text node, so nothing a kernel streams can become HTML on this page.
 */

/** @typedef {string | number | Node | null | undefined | false} Child */
/** @typedef {Record<string, string | number | boolean | null | undefined | EventListener | Record<string, string>>} Attrs */

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs} [attrs] `on*` keys add listeners; `style` takes custom properties and is set through the CSSOM, which the page's CSP allows where a style attribute would be refused.
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (typeof value === "function") element.addEventListener(key.slice(2), value);
    else if (typeof value === "object") for (const [name, v] of Object.entries(value)) element.style.setProperty(name, v);
    else if (key === "class") element.className = String(value);
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(typeof child === "number" ? String(child) : child);
  }
  return element;
}

/**
 * @template {Element} T
 * @param {string} selector
 * @param {new (...args: any[]) => T} type
 * @returns {T}
 */
export function $(selector, type) {
  const element = document.querySelector(selector);
  if (!(element instanceof type)) throw new Error(`the page has no ${type.name} ${selector}`);
  return element;
}

/**
 * Ids for threads and runs. `crypto.randomUUID` exists only in secure contexts, and the page may be opened over plain http on a LAN address.
 * @param {string} prefix
 */
export function randomId(prefix) {
  const bytes = crypto.getRandomValues(new Uint8Array(6));
  return `${prefix}-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
