// @ts-check
/**
 * The chat pane: a run's conversation as a chat UI shows it, beside its
 * events. The messages are not this page's reading of the events: they are
 * what @ag-ui/client's own agent builds from them (`runAgent`'s verifier and
 * apply step, bundled at build time and served at `/sandbox/vendor/`), so
 * the pane shows what a user of a stock `HttpAgent` saw, pending interrupts
 * included, and where the client stopped applying a stream it refused.
 * Everything lands as text (`dom.js`): a message is never markup.
 */
import { h } from "./dom.js";

/** @typedef {{ id: string, role: string, content?: unknown, toolCalls?: { id: string, function: { name: string, arguments: string } }[], toolCallId?: string, activityType?: string, error?: string }} ChatMessage */
/** @typedef {{ id: string, reason?: string, message?: string, toolCallId?: string }} PendingInterrupt */
/** @typedef {{ messages: ChatMessage[], pendingInterrupts: PendingInterrupt[], error?: string }} ChatView */
/** @typedef {{ messagesOf(events: unknown[], inputMessages?: unknown[]): Promise<ChatView> }} AguiClient */

/** The bundle `npm run build` makes; a path held in a variable, so the page still loads (without the pane) where it was not built. */
const CLIENT_MODULE = "/sandbox/vendor/agui-client.js";

/** @type {Promise<AguiClient> | undefined} */
let client;
/** @returns {Promise<AguiClient>} */
const loadClient = () => (client ??= import(CLIENT_MODULE));

/** The messages @ag-ui/client builds from `events`, starting from `inputMessages`. @param {unknown[]} events @param {unknown[]} [inputMessages] */
export async function chatOf(events, inputMessages = []) {
  return (await loadClient()).messagesOf(events, inputMessages);
}

/** @typedef {{ element: HTMLElement, number: number, model: import("./run-model.js").RunModel }} View */

/** Every run given a pane, in page order: a chat UI shows a thread's whole conversation, so a run's goes on from the runs before it. @type {View[]} */
const runs = [];

/** @param {View} view */
const startOf = (view) => view.model.events.find((entry) => entry.event.type === "RUN_STARTED")?.event;

/**
 * The conversation before `view`'s run: the earlier runs on the page of
 * the same thread, each folded on top of the one before, as an agent that
 * ran them all holds it. A run seen twice (an observer's view of it, a copy
 * opened from disk) counts once, and a cleared page's runs not at all.
 * @param {View} view @returns {Promise<unknown[]>}
 */
async function conversationBefore(view) {
  const thread = startOf(view)?.threadId;
  if (typeof thread !== "string") return [];
  const seen = new Set([startOf(view)?.runId]);
  /** @type {unknown[]} */
  let messages = [];
  for (const earlier of runs.slice(0, runs.indexOf(view))) {
    const start = startOf(earlier);
    if (!earlier.element.isConnected || start?.threadId !== thread || seen.has(start.runId)) continue;
    seen.add(start.runId);
    messages = (
      await chatOf(
        earlier.model.events.map((entry) => entry.event),
        messages,
      )
    ).messages;
  }
  return messages;
}

/** JSON tool arguments and results read better pretty-printed; anything else is shown as it came. @param {unknown} value */
function pretty(value) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text ?? "";
  }
}

/** A message's text: a string, or the text parts of multimodal content. @param {unknown} content */
function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? "" : JSON.stringify(content);
  return content.map((part) => (typeof part?.text === "string" ? part.text : `[${part?.type ?? "part"}]`)).join("");
}

/** @param {ChatMessage} call @param {Map<string, ChatMessage>} results */
function toolCalls(call, results) {
  return (call.toolCalls ?? []).map((toolCall) => {
    const result = results.get(toolCall.id);
    return h(
      "div",
      { class: "chat-tool", "data-tool-call": toolCall.id },
      h("p", { class: "chat-tool-name" }, `tool call · ${toolCall.function.name}`),
      h("pre", { class: "chat-args", "aria-label": `Arguments of ${toolCall.function.name}` }, pretty(toolCall.function.arguments)),
      result === undefined
        ? h("p", { class: "chat-pending" }, "no result yet")
        : h(
            "pre",
            { class: `chat-result${result.error ? " failed" : ""}`, "aria-label": `Result of ${toolCall.function.name}` },
            pretty(result.content),
          ),
    );
  });
}

/** @param {ChatMessage} message @param {Map<string, ChatMessage>} results */
function messageItem(message, results) {
  const text = textOf(message.content);
  switch (message.role) {
    case "reasoning":
      return h(
        "li",
        { class: "chat-msg role-reasoning" },
        h("details", {}, h("summary", { class: "chat-who" }, "thinking"), h("p", { class: "chat-text" }, text)),
      );
    case "activity":
      return h(
        "li",
        { class: "chat-msg role-activity" },
        h("details", {}, h("summary", { class: "chat-who" }, `activity · ${message.activityType}`), h("pre", {}, pretty(message.content))),
      );
    case "tool":
      // Shown with the call it answers; only a result whose call this run never showed stands alone.
      return h(
        "li",
        { class: "chat-msg role-tool" },
        h("p", { class: "chat-who" }, `tool result · ${message.toolCallId}`),
        h("pre", { class: "chat-result" }, pretty(message.content)),
      );
    default:
      return h(
        "li",
        { class: `chat-msg role-${message.role}` },
        h("p", { class: "chat-who" }, message.role),
        text ? h("p", { class: "chat-text" }, text) : null,
        toolCalls(message, results),
      );
  }
}

/** The conversation as a list, in the order the client keeps it. @param {ChatView} chat */
export function chatList(chat) {
  const calls = new Set(chat.messages.flatMap((message) => (message.toolCalls ?? []).map((call) => call.id)));
  /** @type {Map<string, ChatMessage>} */
  const results = new Map();
  for (const message of chat.messages) if (message.role === "tool" && message.toolCallId) results.set(message.toolCallId, message);
  const items = chat.messages
    .filter((message) => !(message.role === "tool" && message.toolCallId && calls.has(message.toolCallId)))
    .map((message) => messageItem(message, results));
  const waiting = chat.pendingInterrupts.map((interrupt) =>
    h(
      "li",
      { class: "chat-msg chat-interrupt" },
      h("p", { class: "chat-who" }, `waiting for an answer · ${interrupt.reason ?? "interrupt"}`),
      interrupt.message ? h("p", { class: "chat-text" }, interrupt.message) : null,
      interrupt.toolCallId ? h("p", { class: "chat-note" }, `for tool call ${interrupt.toolCallId}`) : null,
    ),
  );
  return h("ol", { class: "chat-list", "aria-label": "Conversation as a chat UI shows it" }, items, waiting);
}

/**
 * Gives a run a **Chat** button that shows its thread's conversation up to
 * the end of this run beside its events, folded again as events come while
 * it is open (once a frame at most, one fold at a time).
 * @param {View} view
 */
export function chatPane(view) {
  // A cleared page's runs are gone from the DOM: forget them.
  runs.splice(0, runs.length, ...runs.filter((run) => run.element.isConnected), view);
  const body = h("div", { class: "chat-body" });
  const pane = h(
    "section",
    { class: "chat-pane", "aria-label": `Chat of run ${view.number}`, hidden: true },
    h("h3", {}, "Chat", h("span", { class: "chat-source" }, " · as @ag-ui/client applies it")),
    body,
  );
  const toggle = h("button", { type: "button", class: "small chat-toggle", "aria-pressed": "false" }, "Chat");
  let folded = -1;
  let folding = false;

  const fold = async () => {
    folding = true;
    const events = view.model.events.map((entry) => entry.event);
    try {
      const chat = await chatOf(events, await conversationBefore(view));
      folded = events.length;
      const counts = `${chat.messages.length} message${chat.messages.length === 1 ? "" : "s"}`;
      const count = h("p", { class: "chat-count" }, chat.pendingInterrupts.length > 0 ? `${counts} · waiting for an answer` : counts);
      body.replaceChildren(count, chatList(chat));
      if (chat.error) body.append(h("p", { class: "chat-error" }, `@ag-ui/client stopped applying the stream here: ${chat.error}`));
    } catch (error) {
      folded = events.length;
      body.replaceChildren(h("p", { class: "chat-error" }, `The chat view needs the build's client bundle (npm run build): ${error}`));
    } finally {
      folding = false;
    }
  };

  const follow = () => {
    if (pane.hidden) return;
    if (!folding && folded !== view.model.events.length) void fold();
    if (view.model.status === "streaming" || folding || folded !== view.model.events.length) requestAnimationFrame(follow);
  };

  toggle.addEventListener("click", () => {
    const open = pane.hidden;
    pane.hidden = !open;
    toggle.setAttribute("aria-pressed", String(open));
    view.element.classList.toggle("with-chat", open);
    if (!open) return;
    // The pane sticks under the run's sticky top, whose height is the chart's.
    const top = view.element.querySelector(".run-top");
    view.element.style.setProperty("--chat-top", `${top instanceof HTMLElement ? top.offsetHeight : 0}px`);
    folded = -1;
    follow();
  });
  view.element.querySelector("header")?.append(toggle);
  const list = view.element.querySelector(".events");
  if (list) list.after(pane);
  else view.element.append(pane);
  return { pane, toggle };
}
