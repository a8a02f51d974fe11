/**
 * What every ThreadStore promises, whatever holds the state: run by
 * `file-thread-store.spec.ts` against the file store and by
 * `redis-thread-store.spec.ts` against a real Redis. A store's own
 * promises (file modes, key layout, leases across instances) stay in its spec.
 */
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { KEPT_INPUT_FIELDS, type ThreadState } from "../../../lib/state/thread-state.js";
import { StatePersistenceError, StateUnavailableError, type ThreadStore } from "../../../lib/state/thread-store.js";
import { MAX_THREAD_STATE_BYTES } from "../../../lib/state/thread-state-codec.js";
import { pausedGraph, threadState, sha256 } from "./thread-state-fixture.js";

export interface StoreUnderTest {
  store: ThreadStore;
  /** Puts `content` where the store keeps the thread's state, bypassing the store (a corrupt or foreign document). */
  writeRaw(threadId: string, content: string | Buffer): Promise<void>;
  /** The stored text of the thread's state, undefined when there is none. */
  readRaw(threadId: string): Promise<string | undefined>;
  /** How the store's messages name the thread's state (a file name, a key). */
  where(threadId: string): string;
  remove(): Promise<void>;
}

/** A state with one pending question of `count` options. */
export function withOptions(threadId: string, count: number): ThreadState {
  const base = threadState(threadId);
  const options = Array.from({ length: count }, (_, i) => ({ id: `option-${i}`, label: `Option number ${i}` }));
  return {
    ...base,
    execution: {
      ...base.execution,
      pending: { "q-1": { value: { inputId: "q-1", kind: "ask_user_question", options, required: true }, sideband: false } },
    },
  };
}

/**
 * A state whose compact JSON is exactly `bytes` long: the question's last
 * label is padded (ASCII, one byte a character) to make up the rest.
 */
export function stateOfBytes(threadId: string, bytes: number): ThreadState {
  const state = withOptions(threadId, 40_000);
  const options = (state.execution.pending["q-1"]!.value as { options: Array<{ label: string }> }).options;
  options.at(-1)!.label += "x".repeat(bytes - Buffer.byteLength(JSON.stringify(state), "utf8"));
  return state;
}

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

export function describeThreadStoreContract(name: string, open: () => Promise<StoreUnderTest>): void {
  let under: StoreUnderTest;
  let store: ThreadStore;
  beforeEach(async () => {
    under = await open();
    store = under.store;
  });
  afterEach(() => under.remove());

  describe(`${name}: load and save`, () => {
    it("returns undefined for a thread never saved", async () => {
      expect(await store.load("never-seen")).toBeUndefined();
    });

    it("round-trips a state", async () => {
      const state = threadState("thread-1");
      await store.save(state);
      expect(await store.load("thread-1")).toEqual(state);
    });

    it("keeps ids that differ only in case apart", async () => {
      await store.save(threadState("abc", { cwd: "/lower" }));
      await store.save(threadState("ABC", { cwd: "/upper" }));
      expect((await store.load("abc"))?.cwd).toBe("/lower");
      expect((await store.load("ABC"))?.cwd).toBe("/upper");
    });

    it("keeps awkward ids (.., con.txt, unicode, 500 characters) apart", async () => {
      const ids = ["..", "con.txt", "A", "スレッド/1", "x".repeat(500), "{braces}", "a:b"];
      for (const id of ids) await store.save(threadState(id, { cwd: `/w/${id}` }));
      for (const id of ids) expect(await store.load(id)).toMatchObject({ threadId: id, cwd: `/w/${id}` });
    });

    it("replaces the whole state on each save, and the last save called wins", async () => {
      const saves = [1, 2, 3, 4, 5].map((n) =>
        store.save(threadState("t", { execution: { ...threadState("t").execution, pipelineSequence: n } })),
      );
      await Promise.all(saves);
      expect((await store.load("t"))?.execution.pipelineSequence).toBe(5);
    });

    it("puts a save given `after` in place only once that has settled, after it", async () => {
      const sequence = (n: number) => threadState("t", { execution: { ...threadState("t").execution, pipelineSequence: n } });
      let commitFirst!: () => void;
      const first = new Promise<void>((resolve) => (commitFirst = resolve)).then(() => store.save(sequence(1)));
      const second = store.save(sequence(2), undefined, { after: first });
      expect(await under.readRaw("t")).toBeUndefined();
      commitFirst();
      await second;
      expect((await store.load("t"))?.execution.pipelineSequence).toBe(2);
    });

    it("writes nothing for a save whose `after` fails, and fails with its error", async () => {
      await store.save(threadState("t", { cwd: "/before" }));
      const lost = new Error("the write before it failed");
      const failure = await failureOf(store.save(threadState("t", { cwd: "/after" }), undefined, { after: Promise.reject(lost) }));
      expect(failure).toBe(lost);
      expect((await store.load("t"))?.cwd).toBe("/before");
    });

    it("does not save changes the caller makes after calling save", async () => {
      const state = threadState("t");
      const saving = store.save(state);
      state.cwd = "/changed";
      await saving;
      expect((await store.load("t"))?.cwd).toBe("/workspace/project");
    });

    it("loads an older version-1 document without lastTaskId, as lastTaskId null", async () => {
      const { lastTaskId: _dropped, ...execution } = threadState("old").execution;
      await under.writeRaw("old", JSON.stringify({ ...threadState("old"), execution }));
      expect((await store.load("old"))?.execution.lastTaskId).toBeNull();
    });

    it("round-trips an execution fence, and loads a document without one as having none", async () => {
      const executionFence = {
        version: "session-handoff-v1",
        owner: { sandboxId: "sb-1", activationId: "act-1", leaseId: "l-1", runId: "r-1" },
      };
      await store.save(threadState("fenced", { executionFence }));
      expect((await store.load("fenced"))?.executionFence).toEqual(executionFence);
      await store.save(threadState("unfenced"));
      expect(await store.load("unfenced")).not.toHaveProperty("executionFence");
    });

    it("round-trips a paused execution's pipeline graph, and loads a document without one as having none", async () => {
      const paused = threadState("paused");
      await store.save({ ...paused, execution: { ...paused.execution, pipelineGraph: pausedGraph() } });
      expect((await store.load("paused"))?.execution.pipelineGraph).toEqual(pausedGraph());
      await store.save(threadState("older"));
      expect((await store.load("older"))?.execution).not.toHaveProperty("pipelineGraph");
    });

    it("keeps only the known fields of a pipeline graph, and refuses a stored graph node with any other", async () => {
      const graph = pausedGraph();
      const candidate = graph.steps[1]!.candidates[0]!;
      const withExtras = {
        ...graph,
        extra: 1,
        steps: [graph.steps[0]!, { ...graph.steps[1]!, candidates: [{ ...candidate, steps: [{ ...candidate.steps[0]!, secret: "x" }] }] }],
      };
      const state = threadState("extras");
      await store.save({ ...state, execution: { ...state.execution, pipelineGraph: withExtras } });
      const kept = (await store.load("extras"))?.execution.pipelineGraph;
      expect(kept).toEqual({ ...graph, steps: [graph.steps[0], { ...graph.steps[1], candidates: [candidate] }] });

      const stored = {
        ...state,
        execution: { ...state.execution, pipelineGraph: { ...graph, steps: [{ ...graph.steps[0]!, secret: "x" }] } },
      };
      await under.writeRaw("odd-graph", JSON.stringify({ ...stored, threadId: "odd-graph" }));
      await expect(store.load("odd-graph")).rejects.toThrow(/unevaluatedProperties/);
    });

    it("refuses a fence with a field that is not kept", async () => {
      await under.writeRaw("odd", JSON.stringify({ ...threadState("odd"), executionFence: { version: "v", owner: "o", secret: "x" } }));
      await expect(store.load("odd")).rejects.toThrow(/additionalProperties/);
    });
  });

  describe(`${name}: corrupt and invalid documents`, () => {
    const MARKER = "CONTENT-MARKER-7f3a";
    const valid = (id: string) => threadState(id) as unknown as Record<string, unknown>;
    const cases: Array<[string, (id: string) => string | Buffer, RegExp]> = [
      ["unparseable JSON", () => `{"threadId": "${MARKER}", oops`, /not valid UTF-8 JSON/],
      ["a truncated document", (id) => JSON.stringify(valid(id)).slice(0, 80), /not valid UTF-8 JSON/],
      ["invalid UTF-8", () => Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), /not valid UTF-8 JSON/],
      ["an empty document", () => "", /not valid UTF-8 JSON/],
      ["JSON null", () => "null", /does not hold a JSON object/],
      ["a JSON array", (id) => JSON.stringify([valid(id)]), /does not hold a JSON object/],
      ["schemaVersion 2", (id) => JSON.stringify({ ...valid(id), schemaVersion: 2 }), /schemaVersion 2 is not supported/],
      ["no schemaVersion", (id) => JSON.stringify({ ...valid(id), schemaVersion: undefined }), /no numeric schemaVersion/],
      ["another thread's document", () => JSON.stringify(valid(MARKER)), /belongs to another thread/],
      ["a missing field", (id) => JSON.stringify({ ...valid(id), execution: undefined }), /required/],
      [
        "a field of the wrong type",
        (id) => JSON.stringify({ ...valid(id), execution: { ...threadState(id).execution, pipelineSequence: "3" } }),
        /pipelineSequence\/type/,
      ],
      [
        "conversation text",
        (id) => JSON.stringify({ ...valid(id), messages: [{ role: "user", content: MARKER }] }),
        /additionalProperties/,
      ],
      [
        "a pending input with a field that is not kept",
        (id) => {
          const state = threadState(id);
          state.execution.pending["input-1"]!.value = { inputId: "input-1", llmApiKey: MARKER } as never;
          return JSON.stringify(state);
        },
        /inputProjection\/additionalProperties/,
      ],
      ["a digest that is not SHA-256 hex", (id) => JSON.stringify({ ...valid(id), runDigests: { r: MARKER } }), /digest\/pattern/],
    ];

    it.each(cases)("refuses %s with StateUnavailableError, naming the problem but not the content", async (_name, content, problem) => {
      await under.writeRaw("bad", content("bad"));
      await store.save(threadState("good"));
      const error = await failureOf(store.load("bad"));
      expect(error).toBeInstanceOf(StateUnavailableError);
      expect((error as Error).message).toMatch(problem);
      expect((error as Error).message).toContain(under.where("bad"));
      expect((error as Error).message).not.toContain(MARKER);
      expect(JSON.stringify(error)).not.toContain(MARKER);
      expect(String((error as Error).cause ?? "")).not.toContain(MARKER);
      // Only its own thread is blocked.
      expect(await store.load("good")).toEqual(threadState("good"));
    });

    it("replaces a corrupt document on save", async () => {
      await under.writeRaw("t", "{");
      await store.save(threadState("t"));
      expect(await store.load("t")).toEqual(threadState("t"));
    });
  });

  describe(`${name}: what is stored`, () => {
    it("stores only the known fields: extra properties and secrets passed to save are never stored", async () => {
      const state = threadState("t") as ThreadState & Record<string, unknown>;
      Object.assign(state, {
        messages: [{ role: "user", content: "please deploy the secret-project stack" }],
        llmApiKey: "sk-live-LLMKEY123",
        forwardedProps: { iacCode: { alibabaCloud: { accessKeySecret: "AKSECRET-456", securityToken: "STSTOKEN-789" } } },
      });
      Object.assign(state.execution, { accessKeySecret: "AKSECRET-456", lastText: "the assistant said hello" });
      Object.assign(state.execution.pending["input-1"]!, { rawInput: { securityToken: "STSTOKEN-789" } });
      Object.assign(state.execution.pending["input-1"]!.value, { llmApiKey: "sk-live-LLMKEY123", messages: ["conversation text"] });
      Object.assign(state.appliedResumeDigests[0]!, { payload: { freeText: "typed by the user" } });
      await store.save(state);

      const raw = (await under.readRaw("t"))!;
      for (const leaked of [
        "messages",
        "secret-project",
        "LLMKEY123",
        "llmApiKey",
        "AKSECRET",
        "accessKeySecret",
        "STSTOKEN",
        "securityToken",
        "forwardedProps",
        "lastText",
        "rawInput",
        "payload",
        "typed by the user",
        "conversation text",
        "the assistant said",
      ]) {
        expect(raw).not.toContain(leaked);
      }
      expect(await store.load("t")).toEqual(threadState("t"));
    });

    it("keeps exactly the kept projection fields of a pending input", async () => {
      const value = Object.fromEntries(
        KEPT_INPUT_FIELDS.map((field) => [field, field === "inputId" ? "in-1" : field === "kind" ? "question" : `v-${field}`]),
      );
      const state = threadState("t");
      state.execution.pending = { "in-1": { value: { ...value, inputId: "in-1", extra: "dropped" } as never, sideband: true } };
      await store.save(state);
      const saved = JSON.parse((await under.readRaw("t"))!) as ThreadState;
      expect(Object.keys(saved.execution.pending["in-1"]!.value).sort()).toEqual([...KEPT_INPUT_FIELDS].sort());
    });

    it("treats a key named __proto__ as data", async () => {
      const state = threadState("t");
      state.runDigests = JSON.parse(`{"__proto__": "${sha256("p")}"}`) as Record<string, string>;
      await store.save(state);
      expect(Object.keys((await store.load("t"))!.runDigests)).toEqual(["__proto__"]);
    });

    it.each<[string, (state: ThreadState) => void, RegExp]>([
      ["schemaVersion 2", (s) => void ((s as { schemaVersion: number }).schemaVersion = 2), /schemaVersion must be 1/],
      ["an empty threadId", (s) => void (s.threadId = ""), /threadId/],
      ["a threadId that is not a string", (s) => void ((s as { threadId: unknown }).threadId = 7), /threadId/],
      ["a negative pipelineSequence", (s) => void (s.execution.pipelineSequence = -1), /pipelineSequence\/minimum/],
      ["a NaN pipelineSequence", (s) => void (s.execution.pipelineSequence = Number.NaN), /pipelineSequence\/type/],
      ["a missing execution", (s) => void ((s as { execution?: unknown }).execution = undefined), /required/],
      ["a pending input without inputId", (s) => void (s.execution.pending["input-1"]!.value = {} as never), /inputId/],
    ])("refuses to save %s, with StatePersistenceError, and leaves the stored state as it was", async (_name, spoil, problem) => {
      await store.save(threadState("t"));
      const before = await under.readRaw("t");
      const state = threadState("t");
      spoil(state);
      const error = await failureOf(store.save(state));
      expect(error).toBeInstanceOf(StatePersistenceError);
      expect((error as Error).message).toMatch(problem);
      expect(await under.readRaw("t")).toBe(before);
    });

    it("refuses to save a state larger than the read cap, and leaves the stored one as it was", async () => {
      await store.save(threadState("t"));
      const before = await under.readRaw("t");
      const saving = store.save(withOptions("t", 100_000));
      await expect(saving).rejects.toThrow(StatePersistenceError);
      await expect(saving).rejects.toThrow(/larger than 4194304 bytes/);
      expect(await under.readRaw("t")).toBe(before);
      expect(await store.load("t")).toEqual(threadState("t"));
    });

    it("measures a state as its compact JSON, as every store does: the cap itself is kept, a byte more refused", async () => {
      const atCap = stateOfBytes("t", MAX_THREAD_STATE_BYTES);
      await store.save(atCap);
      expect(await store.load("t")).toEqual(atCap);
      const over = store.save(stateOfBytes("t", MAX_THREAD_STATE_BYTES + 1));
      await expect(over).rejects.toThrow(StatePersistenceError);
      await expect(over).rejects.toThrow(/larger than 4194304 bytes/);
      expect(await store.load("t")).toEqual(atCap);
    });

    it("saves a large state that fits, and loads it back", async () => {
      const large = withOptions("large", 20_000);
      await store.save(large);
      expect(await store.load("large")).toEqual(large);
    });

    it("fails a thread id with a lone surrogate as unavailable on load and as a persistence failure on save", async () => {
      await expect(store.load("bad\uD800")).rejects.toBeInstanceOf(StateUnavailableError);
      await expect(store.save(threadState("bad\uD800"))).rejects.toBeInstanceOf(StatePersistenceError);
      await expect(store.tryAcquire("bad\uD800")).rejects.toBeInstanceOf(StateUnavailableError);
    });
  });

  describe(`${name}: leases and fencing`, () => {
    it("gives at most one live lease per thread", async () => {
      const first = await store.tryAcquire("t");
      expect(first?.threadId).toBe("t");
      expect(await store.tryAcquire("t")).toBeUndefined();
      expect(await store.tryAcquire("other")).toBeDefined();
    });

    it("lets the next acquire succeed once the lease is released, with a greater fencing token", async () => {
      const first = await store.tryAcquire("t");
      await first!.release();
      const second = await store.tryAcquire("t");
      expect(second).toBeDefined();
      expect(second!.token).toBeGreaterThan(first!.token);
    });

    it("treats a second release as harmless: it does not free a lease taken since", async () => {
      const first = await store.tryAcquire("t");
      await first!.release();
      const second = await store.tryAcquire("t");
      await first!.release();
      expect(await store.tryAcquire("t")).toBeUndefined();
      await second!.release();
      await second!.release();
      expect(await store.tryAcquire("t")).toBeDefined();
    });

    it("saves under the lease that holds the thread", async () => {
      const lease = await store.tryAcquire("t");
      await store.save(threadState("t", { cwd: "/held" }), lease);
      expect((await store.load("t"))?.cwd).toBe("/held");
    });

    it("refuses a save under a lease that was released, and one taken since, leaving the stored state as it was", async () => {
      const first = await store.tryAcquire("t");
      await store.save(threadState("t", { cwd: "/first" }), first);
      await first!.release();
      await expect(store.save(threadState("t", { cwd: "/stale" }), first)).rejects.toThrow(StatePersistenceError);
      const second = await store.tryAcquire("t");
      await expect(store.save(threadState("t", { cwd: "/stale" }), first)).rejects.toThrow(/no longer holds the thread/);
      expect((await store.load("t"))?.cwd).toBe("/first");
      await store.save(threadState("t", { cwd: "/second" }), second);
      expect((await store.load("t"))?.cwd).toBe("/second");
    });

    it("refuses a save of one thread under the lease of another", async () => {
      const lease = await store.tryAcquire("other");
      await expect(store.save(threadState("t"), lease)).rejects.toThrow(StatePersistenceError);
      expect(await store.load("t")).toBeUndefined();
    });
  });
}
