/**
 * CopilotKit in front of the service, as an app deploys it, in Node: a real
 * CopilotRuntime (`@copilotkit/runtime/v2`) with the service registered as
 * an AG-UI `HttpAgent`, served on a loopback port, and CopilotKit's headless
 * client core (`@copilotkit/core`) driving it. No browser, no React.
 *
 * Two things are done here as CopilotKit does them in a browser, by other
 * means (see docs/clients.md, "Behind CopilotKit"):
 * - `CopilotKitCore` looks up the runtime's agents (`GET /info`) only where
 *   `window` exists. The agent is mounted with `registerProxiedAgent`, the
 *   core's public way to mount a runtime agent, which looks the runtime up
 *   itself on its first run.
 * - Interrupts are answered in a browser by `useInterrupt`
 *   (`@copilotkit/react-core`), a React hook around the core's
 *   framework-neutral `ɵInterruptState`. `interruptHandling` does what the
 *   hook does, around the same class.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { HttpAgent, type BaseEvent } from "@ag-ui/client";
import { quietCancelFetch } from "./http-agent.js";

// Before the runtime is loaded: its telemetry client reads this once, when it is created.
process.env.COPILOTKIT_TELEMETRY_DISABLED = "true";
const { CopilotRuntime, InMemoryAgentRunner } = await import("@copilotkit/runtime/v2");
const { createCopilotNodeListener } = await import("@copilotkit/runtime/v2/node");
const { CopilotKitCore, ɵInterruptState: InterruptState } = await import("@copilotkit/core");

type Core = InstanceType<typeof CopilotKitCore>;
type CoreConfig = NonNullable<ConstructorParameters<typeof CopilotKitCore>[0]>;
/** The agent a CopilotKit app talks to (a `ProxiedCopilotRuntimeAgent`, on CopilotKit's own `@ag-ui/client`). */
export type CopilotAgent = ReturnType<Core["registerProxiedAgent"]>["agent"];
export type CopilotMessage = CopilotAgent["messages"][number];
type AgentSubscriber = Parameters<CopilotAgent["subscribe"]>[0];
type RuntimeAgents = ConstructorParameters<typeof CopilotRuntime>[0]["agents"];

export interface CopilotKitClient {
  core: Core;
  /** The runtime's `default` agent, on a thread of its own. */
  agent: CopilotAgent;
  /** What CopilotKit reported through `onError`, as its messages. */
  errors: string[];
}

export interface CopilotKitApp {
  runtimeUrl: string;
  /**
   * Each run the service streamed to the runtime, as the runtime's HttpAgent
   * read it, by thread: what the stream checks (`expectValidRun`) look at.
   */
  serviceRuns(threadId: string): BaseEvent[][];
  /** A CopilotKit client as an app creates one: `properties` become forwardedProps, `tools` are its frontend actions. */
  client(config?: Pick<CoreConfig, "properties" | "tools">): CopilotKitClient;
  close(): Promise<void>;
}

/** A CopilotRuntime with the service at `serviceUrl` as its `default` agent, listening on loopback. */
export async function startCopilotKit(serviceUrl: string): Promise<CopilotKitApp> {
  const service = new HttpAgent({ url: serviceUrl, fetch: quietCancelFetch });
  const runs = new Map<string, BaseEvent[][]>();
  // The runtime clones the agent for each request, subscribers included.
  service.subscribe({
    onEvent: ({ event, input }) => {
      const thread = runs.get(input.threadId) ?? [];
      if (event.type === "RUN_STARTED" || thread.length === 0) thread.push([]);
      thread.at(-1)!.push(event);
      runs.set(input.threadId, thread);
    },
  });
  const runtime = new CopilotRuntime({
    // The runtime brings its own @ag-ui/client (0.0.59): the app's HttpAgent (1.0) is the same contract, another declaration.
    agents: { default: service as unknown as RuntimeAgents extends Record<string, infer A> ? A : never },
    runner: new InMemoryAgentRunner(),
  });
  const server = http.createServer(createCopilotNodeListener({ runtime, basePath: "/api/copilotkit" }));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const runtimeUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/copilotkit`;
  return {
    runtimeUrl,
    serviceRuns: (threadId) => runs.get(threadId) ?? [],
    client(config = {}) {
      const core = new CopilotKitCore({ runtimeUrl, ...config });
      const errors: string[] = [];
      core.subscribe({ onError: ({ error }) => void errors.push(error.message) });
      const { agent } = core.registerProxiedAgent({ agentId: `chat-${randomUUID()}`, runtimeAgentId: "default" });
      // CopilotKit's own @ag-ui/client cancels a broken stream's reader as 1.0's does (see `quietCancelFetch`).
      agent.fetch = quietCancelFetch;
      return { core, agent, errors };
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The user's next message, as CopilotKit's chat appends it. */
export const say = (agent: CopilotAgent, content: string) => agent.addMessage({ id: `msg-${randomUUID()}`, role: "user", content });

type Interrupts = Extract<Parameters<NonNullable<AgentSubscriber["onRunFinishedEvent"]>>[0], { outcome: "interrupt" }>["interrupts"];

export interface InterruptHandling {
  /** The interrupts the last run paused on, once it is over; empty when none wait. */
  readonly pending: readonly Interrupts[number][];
  /**
   * Answers one interrupt (`payload` to resolve it, `undefined` with
   * `cancel` to cancel it); once every open one is answered, resumes the
   * agent as `useInterrupt` does. Says what CopilotKit decided.
   */
  answer(interruptId: string, answer: { payload: unknown } | { cancel: true }): Promise<string>;
  stop(): void;
}

/**
 * CopilotKit's interrupt handling, without React: what `useInterrupt`
 * (`@copilotkit/react-core` 1.74, `v2/headless`) does around
 * `ɵInterruptState`. It keeps the run id each interrupt came from, resumes
 * with that run id and the spec `resume` array, and first adds a `tool`
 * message answering each `tool_call` interrupt's tool call.
 */
export function interruptHandling({ core, agent }: CopilotKitClient): InterruptHandling {
  const state = new InterruptState();
  const runIds = new Map<string, string>();
  let raised: Interrupts = [];
  const forget = () => {
    raised = [];
    runIds.clear();
    state.clear();
  };
  const subscription = agent.subscribe({
    onRunStartedEvent: forget,
    onRunFinishedEvent: (params) => {
      if (params.outcome !== "interrupt") return;
      raised = params.interrupts;
      for (const interrupt of params.interrupts) runIds.set(interrupt.id, params.input.runId);
    },
    onRunFinalized: () => {
      if (raised.length > 0) state.setStandard(raised);
      raised = [];
    },
    onRunFailed: forget,
  });
  return {
    get pending() {
      const pending = state.pending;
      return pending?.kind === "standard" ? pending.interrupts : [];
    },
    async answer(interruptId, answer) {
      const decision = "cancel" in answer ? state.cancel(interruptId) : state.resolve(answer.payload, interruptId);
      if (decision.kind !== "resume") return decision.kind;
      const runId = decision.resume.map((entry) => runIds.get(entry.interruptId)).find((id) => id !== undefined);
      for (const { toolCallId, content } of decision.toolResults) agent.addMessage({ id: randomUUID(), role: "tool", toolCallId, content });
      await core.runAgent({ agent, resume: decision.resume, ...(runId !== undefined ? { runId } : {}) });
      return "resumed";
    },
    stop: () => subscription.unsubscribe(),
  };
}

/** The text of each message, by role, and the tools an assistant message calls: a chat transcript, for assertions. */
export const transcriptOf = (messages: readonly CopilotMessage[]) =>
  messages.map((message) => ({
    role: message.role,
    ...("content" in message && typeof message.content === "string" ? { content: message.content } : {}),
    ...("toolCalls" in message && message.toolCalls?.length ? { toolCalls: message.toolCalls.map((call) => call.function.name) } : {}),
    ...("toolCallId" in message ? { toolCallId: message.toolCallId } : {}),
  }));
