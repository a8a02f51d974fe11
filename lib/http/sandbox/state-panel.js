// @ts-check
/**
 * What an attached view knows of the thread: the state, from `STATE_SNAPSHOT`
 * and each `STATE_DELTA` (a JSON Patch) applied to it in order, and the
 * conversation, from `MESSAGES_SNAPSHOT`, drawn as one.
 */
import { h } from "./dom.js";
import { applyPatch } from "./json-patch.js";

/** A message's content as text: AG-UI content is a string, or parts of which the text ones are what a person reads. @param {unknown} content */
function textOf(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content.map((part) => (part?.type === "text" ? String(part.text ?? "") : `[${String(part?.type ?? "part")}]`)).join("");
  return content === undefined || content === null ? "" : JSON.stringify(content);
}

export class StatePanel {
  /** @param {{ root: HTMLElement, title: HTMLElement, state: HTMLElement, conversation: HTMLElement, note: HTMLElement }} ui */
  constructor(ui) {
    this.ui = ui;
    /** @type {unknown} */
    this.state = undefined;
    this.deltas = 0;
  }

  /** A new attach: forget what the last one showed. @param {string} title */
  reset(title) {
    this.state = undefined;
    this.deltas = 0;
    this.ui.root.hidden = false;
    this.ui.title.textContent = title;
    this.ui.state.textContent = "(no STATE_SNAPSHOT yet)";
    this.ui.conversation.replaceChildren();
    this.ui.note.textContent = "";
  }

  /** @param {Record<string, any>} event */
  apply(event) {
    switch (event.type) {
      case "STATE_SNAPSHOT":
        this.state = event.snapshot;
        this.deltas = 0;
        return this.#showState();
      case "STATE_DELTA":
        try {
          this.state = applyPatch(this.state, event.delta);
          this.deltas += 1;
          this.#showState();
        } catch (error) {
          this.ui.note.textContent = `A STATE_DELTA did not apply, so the state shown is the one before it: ${error instanceof Error ? error.message : error}`;
        }
        return undefined;
      case "MESSAGES_SNAPSHOT":
        return this.#showMessages(Array.isArray(event.messages) ? event.messages : []);
      default:
        return undefined;
    }
  }

  #showState() {
    this.ui.state.textContent = JSON.stringify(this.state, null, 2);
    this.ui.state.dataset.deltas = String(this.deltas);
    this.ui.note.textContent = this.deltas ? `${this.deltas} STATE_DELTA applied to the snapshot.` : "As in the STATE_SNAPSHOT.";
  }

  /** @param {Record<string, any>[]} messages */
  #showMessages(messages) {
    this.ui.conversation.replaceChildren(
      ...messages.map((message) => {
        const role = String(message.role ?? "?");
        const calls = Array.isArray(message.toolCalls) ? message.toolCalls : [];
        return h(
          "li",
          { class: `bubble role-${role.replace(/[^a-z]/g, "")}` },
          h("span", { class: "who" }, role === "tool" ? `tool result · ${String(message.toolCallId ?? "")}` : role),
          textOf(message.content) ? h("span", { class: "said" }, textOf(message.content)) : null,
          ...calls.map((call) =>
            h("span", { class: "call" }, `calls ${String(call.function?.name ?? "?")}(${String(call.function?.arguments ?? "")})`),
          ),
        );
      }),
    );
  }
}
