import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "@jest/globals";
import { FileThreadStore, threadFileStem } from "../../../lib/state/file-thread-store.js";
import { KEPT_INPUT_FIELDS, type ThreadState } from "../../../lib/state/thread-state.js";
import { StatePersistenceError, StateUnavailableError } from "../../../lib/state/thread-store.js";
import { THREAD_STATE_SCHEMA_FILE } from "../../../lib/state/thread-state-document.js";
import { scratchDir, sha256, threadState, type ScratchDir } from "./thread-state-fixture.js";

const POSIX = process.platform !== "win32";
const itPosix = POSIX ? it : it.skip;

let scratch: ScratchDir;
let store: FileThreadStore;
const threadsDir = () => path.join(scratch.path, "threads");
const fileOf = (threadId: string) => path.join(threadsDir(), `${threadFileStem(threadId)}.json`);
const writeRaw = (threadId: string, content: string | Buffer) => {
  mkdirSync(threadsDir(), { recursive: true });
  writeFileSync(fileOf(threadId), content);
};
const modeOf = (file: string) => statSync(file).mode & 0o777;

beforeEach(() => {
  scratch = scratchDir();
  store = new FileThreadStore({ stateDir: scratch.path });
});
afterEach(() => scratch.remove());

describe("FileThreadStore: load and save", () => {
  it("returns undefined for a thread never saved, without creating anything", async () => {
    expect(await store.load("never-seen")).toBeUndefined();
    expect(readdirSync(scratch.path)).toEqual([]);
  });

  it("round-trips a state through its own file", async () => {
    const state = threadState("thread-1");
    await store.save(state);
    expect(readdirSync(threadsDir())).toEqual(["thread-1.json"]);
    expect(await store.load("thread-1")).toEqual(state);
  });

  it("keeps ids that differ only in case in separate files", async () => {
    await store.save(threadState("abc", { cwd: "/lower" }));
    await store.save(threadState("ABC", { cwd: "/upper" }));
    expect((await store.load("abc"))?.cwd).toBe("/lower");
    expect((await store.load("ABC"))?.cwd).toBe("/upper");
    expect(readdirSync(threadsDir()).sort()).toEqual(["abc.json", "aguiid~414243.json"]);
  });

  it("stores awkward ids (.., con.txt, unicode, 500 characters) under safe names", async () => {
    const ids = ["..", "con.txt", "A", "スレッド/1", "x".repeat(500)];
    for (const id of ids) await store.save(threadState(id));
    for (const id of ids) expect((await store.load(id))?.threadId).toBe(id);
    expect(readdirSync(scratch.path)).toEqual(["threads"]);
    expect(readdirSync(threadsDir())).toHaveLength(ids.length);
  });

  it("replaces the whole file on each save, and the last save called wins", async () => {
    const saves = [1, 2, 3, 4, 5].map((n) =>
      store.save(threadState("t", { execution: { ...threadState("t").execution, pipelineSequence: n } })),
    );
    await Promise.all(saves);
    expect((await store.load("t"))?.execution.pipelineSequence).toBe(5);
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
    writeRaw("old", JSON.stringify({ ...threadState("old"), execution }));
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

  it("refuses a fence with a field that is not kept", async () => {
    writeRaw("odd", JSON.stringify({ ...threadState("odd"), executionFence: { version: "v", owner: "o", secret: "x" } }));
    await expect(store.load("odd")).rejects.toThrow(/additionalProperties/);
  });

  it("leaves no temp files behind after saves", async () => {
    for (let i = 0; i < 20; i++) await store.save(threadState(`t${i % 3}`, { cwd: `/w/${i}` }));
    expect(readdirSync(threadsDir()).sort()).toEqual(["t0.json", "t1.json", "t2.json"]);
  });
});

describe("FileThreadStore: corrupt and invalid documents", () => {
  const MARKER = "CONTENT-MARKER-7f3a";
  const valid = (id: string) => threadState(id) as unknown as Record<string, unknown>;
  const cases: Array<[string, (id: string) => string | Buffer, RegExp]> = [
    ["unparseable JSON", () => `{"threadId": "${MARKER}", oops`, /not valid UTF-8 JSON/],
    ["a truncated document", (id) => JSON.stringify(valid(id)).slice(0, 80), /not valid UTF-8 JSON/],
    ["invalid UTF-8", () => Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), /not valid UTF-8 JSON/],
    ["an empty file", () => "", /not valid UTF-8 JSON/],
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
    ["conversation text", (id) => JSON.stringify({ ...valid(id), messages: [{ role: "user", content: MARKER }] }), /additionalProperties/],
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
    writeRaw("bad", content("bad"));
    await store.save(threadState("good"));
    const error = await store.load("bad").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StateUnavailableError);
    expect((error as Error).message).toMatch(problem);
    expect((error as Error).message).toContain("bad.json");
    expect((error as Error).message).not.toContain(MARKER);
    expect(JSON.stringify(error)).not.toContain(MARKER);
    expect(String((error as Error).cause ?? "")).not.toContain(MARKER);
    // Only its own thread is blocked.
    expect(await store.load("good")).toEqual(threadState("good"));
  });

  it("refuses a directory at the thread's path", async () => {
    mkdirSync(fileOf("dir"), { recursive: true });
    await expect(store.load("dir")).rejects.toThrow(/not a regular file/);
  });

  it("loads one thread without reading its corrupt neighbours", async () => {
    await store.save(threadState("good"));
    writeRaw("bad", "{");
    writeFileSync(path.join(threadsDir(), "not-a-thread.txt"), "garbage");
    mkdirSync(path.join(threadsDir(), "some-dir.json"));
    expect(await store.load("good")).toEqual(threadState("good"));
    await expect(store.load("bad")).rejects.toBeInstanceOf(StateUnavailableError);
  });

  it("replaces a corrupt file on save", async () => {
    writeRaw("t", "{");
    await store.save(threadState("t"));
    expect(await store.load("t")).toEqual(threadState("t"));
  });
});

describe("FileThreadStore: what reaches the disk", () => {
  it("writes only the known fields: extra properties and secrets passed to save never reach the file", async () => {
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

    const raw = readFileSync(fileOf("t"), "utf8");
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
    const saved = JSON.parse(readFileSync(fileOf("t"), "utf8")) as ThreadState;
    expect(Object.keys(saved.execution.pending["in-1"]!.value).sort()).toEqual([...KEPT_INPUT_FIELDS].sort());
  });

  it("keeps the schema's kept fields equal to KEPT_INPUT_FIELDS", () => {
    const schema = JSON.parse(readFileSync(THREAD_STATE_SCHEMA_FILE, "utf8")) as { $defs: { inputProjection: { properties: object } } };
    expect(Object.keys(schema.$defs.inputProjection.properties).sort()).toEqual([...KEPT_INPUT_FIELDS].sort());
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
  ])("refuses to save %s, with StatePersistenceError, and leaves the file as it was", async (_name, spoil, problem) => {
    await store.save(threadState("t"));
    const before = readFileSync(fileOf("t"), "utf8");
    const state = threadState("t");
    spoil(state);
    const error = await store.save(state).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StatePersistenceError);
    expect((error as Error).message).toMatch(problem);
    expect(readFileSync(fileOf("t"), "utf8")).toBe(before);
  });

  it("reports a write failure as StatePersistenceError", async () => {
    writeFileSync(path.join(scratch.path, "threads"), "a file where the directory should be");
    await expect(store.save(threadState("t"))).rejects.toBeInstanceOf(StatePersistenceError);
  });
});

describe("FileThreadStore: file modes and symlinks", () => {
  itPosix("creates the directories 0700 and the files 0600", async () => {
    const nested = path.join(scratch.path, "config", "agui");
    const nestedStore = new FileThreadStore({ stateDir: nested });
    const umask = process.umask(0o000);
    try {
      await nestedStore.save(threadState("t"));
    } finally {
      process.umask(umask);
    }
    expect(modeOf(nested)).toBe(0o700);
    expect(modeOf(path.join(nested, "threads"))).toBe(0o700);
    expect(modeOf(path.join(nested, "threads", "t.json"))).toBe(0o600);
  });

  itPosix(
    "tightens an existing threads directory open to group or others, and leaves an existing state dir as the operator made it",
    async () => {
      mkdirSync(path.join(scratch.path, "threads"));
      chmodSync(scratch.path, 0o755);
      chmodSync(path.join(scratch.path, "threads"), 0o777);
      await store.save(threadState("t"));
      expect(modeOf(threadsDir())).toBe(0o700);
      expect(modeOf(scratch.path)).toBe(0o755);
      expect(modeOf(fileOf("t"))).toBe(0o600);
    },
  );

  itPosix("makes a replaced file 0600 even if the old one was looser", async () => {
    await store.save(threadState("t"));
    chmodSync(fileOf("t"), 0o644);
    await store.save(threadState("t"));
    expect(modeOf(fileOf("t"))).toBe(0o600);
  });

  itPosix("refuses to load through a symlink at the thread's path", async () => {
    const outside = scratchDir("agui-outside-");
    try {
      const target = path.join(outside.path, "planted.json");
      writeFileSync(target, JSON.stringify(threadState("t")));
      mkdirSync(threadsDir());
      symlinkSync(target, fileOf("t"));
      await expect(store.load("t")).rejects.toThrow(StateUnavailableError);
      await expect(store.load("t")).rejects.toThrow(/symbolic link/);
    } finally {
      outside.remove();
    }
  });

  itPosix("does not write through a symlink at the thread's path: it replaces the link and the target stays untouched", async () => {
    const outside = scratchDir("agui-outside-");
    try {
      const target = path.join(outside.path, "victim.txt");
      writeFileSync(target, "original");
      chmodSync(target, 0o644);
      mkdirSync(threadsDir());
      symlinkSync(target, fileOf("t"));
      await store.save(threadState("t"));
      expect(readFileSync(target, "utf8")).toBe("original");
      expect(modeOf(target)).toBe(0o644);
      expect(lstatSync(fileOf("t")).isFile()).toBe(true);
      expect(await store.load("t")).toEqual(threadState("t"));
    } finally {
      outside.remove();
    }
  });

  itPosix("refuses a threads directory that is a symlink", async () => {
    const outside = scratchDir("agui-outside-");
    try {
      symlinkSync(outside.path, threadsDir());
      await expect(store.save(threadState("t"))).rejects.toThrow(/not a directory/);
      expect(readdirSync(outside.path)).toEqual([]);
    } finally {
      outside.remove();
    }
  });
});

describe("FileThreadStore: stray temp files", () => {
  const strayName = "~tmp-4242-0123456789abcdef.tmp";

  it("never reads a stray temp file as state", async () => {
    mkdirSync(threadsDir());
    writeFileSync(path.join(threadsDir(), strayName), JSON.stringify(threadState("t")).slice(0, 40));
    expect(await store.load("t")).toBeUndefined();
  });

  it("sweeps stray temp files older than the grace period, and only those", async () => {
    await store.save(threadState("t"));
    await store.backgroundSweep;
    const old = path.join(threadsDir(), strayName);
    const fresh = path.join(threadsDir(), "~tmp-4242-fedcba9876543210.tmp");
    const lookalike = path.join(threadsDir(), "~tmp-notours.tmp");
    for (const file of [old, fresh, lookalike]) writeFileSync(file, "partial");
    const longAgo = new Date(Date.now() - 3_600_000);
    utimesSync(old, longAgo, longAgo);
    utimesSync(lookalike, longAgo, longAgo);
    expect(await store.sweepStrayTempFiles()).toBe(1);
    expect(readdirSync(threadsDir()).sort()).toEqual(["t.json", "~tmp-4242-fedcba9876543210.tmp", "~tmp-notours.tmp"]);
  });

  it("sweeps old stray temp files in the background after the first save", async () => {
    mkdirSync(threadsDir());
    const old = path.join(threadsDir(), strayName);
    writeFileSync(old, "partial");
    const longAgo = new Date(Date.now() - 3_600_000);
    utimesSync(old, longAgo, longAgo);
    expect(store.backgroundSweep).toBeUndefined();
    await store.load("t");
    expect(store.backgroundSweep).toBeUndefined();
    await store.save(threadState("t"));
    expect(await store.backgroundSweep).toBe(1);
    expect(readdirSync(threadsDir())).toEqual(["t.json"]);
  });

  it("sweeps nothing, and does not fail, before the threads directory exists", async () => {
    expect(await store.sweepStrayTempFiles(0)).toBe(0);
  });
});

describe("FileThreadStore: leases", () => {
  it("gives at most one live lease per thread", async () => {
    const first = await store.tryAcquire("t");
    expect(first?.threadId).toBe("t");
    expect(await store.tryAcquire("t")).toBeUndefined();
    expect(await store.tryAcquire("other")).toBeDefined();
  });

  it("lets the next acquire succeed once the lease is released", async () => {
    const first = await store.tryAcquire("t");
    await first!.release();
    expect(await store.tryAcquire("t")).toBeDefined();
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

  it("keeps leases per store instance, independent of the files", async () => {
    await store.tryAcquire("t");
    await store.save(threadState("t"));
    expect(await store.load("t")).toBeDefined();
    expect(await new FileThreadStore({ stateDir: scratch.path }).tryAcquire("t")).toBeDefined();
  });
});

describe("FileThreadStore: ids without a file name", () => {
  it("fails a thread id with a lone surrogate as unavailable on load and as a persistence failure on save", async () => {
    await expect(store.load("bad\uD800")).rejects.toBeInstanceOf(StateUnavailableError);
    await expect(store.save(threadState("bad\uD800"))).rejects.toBeInstanceOf(StatePersistenceError);
  });
});
