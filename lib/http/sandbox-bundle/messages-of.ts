/**
 * The sandbox's chat pane folds a run's events into messages with
 * @ag-ui/client's own code, not a copy of it: this module is the one entry
 * `scripts/bundle-sandbox.mjs` bundles for the browser (the package is a
 * dev dependency and is not imported by the service itself).
 *
 * An agent whose `run` replays the recorded events goes through the whole of
 * `AbstractAgent.runAgent`: chunk expansion, the event verifier, the apply
 * step and its mutations. So the pane's messages are the ones a stock
 * `HttpAgent` ends with for the same stream, and a stream the verifier
 * refuses (one cut short, say) still shows what was applied before it.
 */
import { AbstractAgent, type BaseEvent, type Interrupt, type Message, type RunAgentInput } from "@ag-ui/client";
import { Observable, of } from "rxjs";

class ReplayedAgent extends AbstractAgent {
  /** Why the client stopped applying the stream, if it did. */
  failure: string | undefined;

  constructor(private readonly events: readonly unknown[]) {
    super({ debug: false });
  }

  // A stream the verifier refuses is a finding to show, not a page error: kept, neither logged nor thrown.
  protected override onError(_input: RunAgentInput, error: Error): ReturnType<AbstractAgent["onError"]> {
    this.failure = error.message;
    // One empty mutation, as the stock handler ends with: runAgent waits for a last value.
    return of({}) as unknown as ReturnType<AbstractAgent["onError"]>;
  }

  // @ag-ui/client has its own copy of rxjs; its operators take any rxjs 7 Observable, so one of ours serves.
  override run(_input: RunAgentInput): ReturnType<AbstractAgent["run"]> {
    const events = this.events;
    return new Observable<BaseEvent>((subscriber) => {
      for (const event of events) subscriber.next(structuredClone(event) as BaseEvent);
      subscriber.complete();
    }) as unknown as ReturnType<AbstractAgent["run"]>;
  }
}

export interface ChatView {
  messages: Message[];
  pendingInterrupts: Interrupt[];
  /** Why the client stopped applying the stream early, if it did. */
  error?: string;
}

/** What a chat UI built on @ag-ui/client shows after `events`, starting from the conversation `inputMessages`. */
export async function messagesOf(events: readonly unknown[], inputMessages: readonly Message[] = []): Promise<ChatView> {
  const agent = new ReplayedAgent(events);
  agent.messages = structuredClone([...inputMessages]);
  await agent.runAgent();
  const error = agent.failure;
  return { messages: agent.messages, pendingInterrupts: agent.pendingInterrupts, ...(error === undefined ? {} : { error }) };
}
