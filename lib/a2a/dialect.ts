/**
 * Which A2A dialect the agent speaks, and who it is: read from its agent
 * card, once, and again whenever the agent may have changed (a kernel
 * restart, a connection that failed). `IAC_CODE_AGUI_A2A_DIALECT` can name
 * the dialect instead; the card is still read for `/health`'s name.
 *
 *   card {supportedInterfaces:[{protocolVersion:"1.0"}]} → 1.0
 *   card {protocolVersion:"0.3.0"}                        → 0.3
 *   no card, or neither                                   → 1.0 (the iac-code kernel's)
 */
import { kernelFetch, readAnswer } from "./kernel-fetch.js";
import { isJsonObject, nonEmptyString, type JsonObject } from "../model/json.js";

export type A2aDialect = "1.0" | "0.3";
export const DIALECT_SETTINGS = ["auto", "1.0", "0.3"] as const;
export type DialectSetting = (typeof DIALECT_SETTINGS)[number];

/** Where agents publish their card (RFC 8615): A2A 0.3 and 1.0's name first, then the one older agents use. */
export const AGENT_CARD_PATHS = ["/.well-known/agent-card.json", "/.well-known/agent.json"] as const;

/** An agent card is a few KiB; a kernel that answers with more is read no further. */
const MAX_CARD_BYTES = 1024 * 1024;
const CARD_TIMEOUT_MS = 5000;

/** Who the service is in front of, as `/health` says it. */
export interface KernelAgent {
  dialect: A2aDialect;
  /** The card's `name` and `version`; absent when the agent has no card or the card does not say. */
  name?: string;
  version?: string;
}

/** The dialect a card declares: a 1.0 interface wins, since a 1.0 agent may list its 0.3 interface beside it. */
export function dialectOfCard(card: unknown): A2aDialect {
  if (!isJsonObject(card)) return "1.0";
  const interfaces = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces.filter(isJsonObject) : [];
  const versions = [...interfaces.map((entry) => entry.protocolVersion), card.protocolVersion].filter(
    (version): version is string => typeof version === "string",
  );
  if (versions.some((version) => /^1(\.|$)/.test(version))) return "1.0";
  if (versions.some((version) => /^0\./.test(version))) return "0.3";
  return "1.0";
}

export function agentOfCard(card: unknown, setting: DialectSetting): KernelAgent {
  const fields: JsonObject = isJsonObject(card) ? card : {};
  const name = nonEmptyString(fields.name);
  const version = nonEmptyString(fields.version);
  return {
    dialect: setting === "auto" ? dialectOfCard(card) : setting,
    ...(name === undefined ? {} : { name }),
    ...(version === undefined ? {} : { version }),
  };
}

/** The card, from the first path that answers 2xx JSON; undefined when none does (a 404 is an agent without a card). */
export async function readAgentCard(kernelUrl: string, { token }: { token?: string | undefined } = {}): Promise<unknown> {
  let lastFailure: unknown;
  for (const cardPath of AGENT_CARD_PATHS) {
    try {
      const response = await kernelFetch(
        new URL(cardPath, kernelUrl).toString(),
        {
          method: "GET",
          headers: { Accept: "application/json", ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }) },
          signal: AbortSignal.timeout(CARD_TIMEOUT_MS),
        },
        MAX_CARD_BYTES,
      );
      // Read whole either way, so the kept-alive connection is free for the next request.
      const text = await readAnswer(response);
      if (response.ok) return JSON.parse(text) as unknown;
    } catch (error) {
      lastFailure = error;
    }
  }
  // No answer at all is not "no card": the caller must ask again later.
  if (lastFailure !== undefined) throw lastFailure;
  return undefined;
}

export interface AgentCardSourceOptions {
  kernelUrl: string;
  token?: string | undefined;
  setting?: DialectSetting;
  /** Tests: another way to read the card. */
  read?: (kernelUrl: string) => Promise<unknown>;
}

/**
 * The agent as its card says, read once and shared by every caller. An
 * agent that could not be reached is not remembered (the next call asks
 * again) and counts as 1.0 meanwhile unless the setting names a dialect.
 */
export class AgentCardSource {
  readonly #kernelUrl: string;
  readonly #setting: DialectSetting;
  readonly #read: (kernelUrl: string) => Promise<unknown>;
  #known: Promise<KernelAgent> | undefined;
  #last: KernelAgent | undefined;
  /** The dialect `#known` gave, once it has: undefined while the card is read, after a failed read, and after `forget`. */
  #settled: A2aDialect | undefined;

  constructor({ kernelUrl, token, setting = "auto", read }: AgentCardSourceOptions) {
    this.#kernelUrl = kernelUrl;
    this.#setting = setting;
    this.#read = read ?? ((url) => readAgentCard(url, { token }));
  }

  /** The agent, read from its card when not known yet. Never rejects. */
  agent(): Promise<KernelAgent> {
    if (this.#known !== undefined) return this.#known;
    const read: Promise<KernelAgent> = this.#read(this.#kernelUrl).then(
      (card) => {
        const agent = (this.#last = agentOfCard(card, this.#setting));
        // Only the read that is still the current one settles the dialect: a `forget` may have come meanwhile.
        if (this.#known === read) this.#settled = agent.dialect;
        return agent;
      },
      () => {
        this.#known = undefined;
        return this.#last ?? { dialect: this.#setting === "auto" ? "1.0" : this.#setting };
      },
    );
    this.#known = read;
    return read;
  }

  async dialect(): Promise<A2aDialect> {
    if (this.#setting !== "auto") return this.#setting;
    return (await this.agent()).dialect;
  }

  /**
   * The dialect `dialect()` would answer, when it can tell without waiting: the setting, or the card already
   * read (and not forgotten since). A stream then starts at once, not a turn of the event loop later.
   */
  settled(): A2aDialect | undefined {
    return this.#setting !== "auto" ? this.#setting : this.#settled;
  }

  /** The agent as last read, without asking it: what `/health` says, never waiting on the kernel. */
  known(): KernelAgent | undefined {
    return this.#last;
  }

  /** The agent may have changed (a restart): its card is read again on the next call. */
  forget(): void {
    this.#known = undefined;
    this.#settled = undefined;
  }

  /** The agent has changed, or may have (a restart): its card is read again now, so `/health` names the new one. */
  refresh(): void {
    this.forget();
    void this.agent();
  }
}
