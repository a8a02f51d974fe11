import { describe, expect, it } from "@jest/globals";
import { AguiError } from "../../../lib/errors.js";
import { checkResumeEntries, resumeDigest } from "../../../lib/interrupts/check-resume.js";
import type { PendingInput } from "../../../lib/state/thread-state.js";
import { pendingOf, permission, question } from "./projections.js";

type Entry = { interruptId: string; status: "resolved" | "cancelled"; payload?: unknown };

const pending: Record<string, PendingInput> = { "perm-1": pendingOf(permission), "q-1": pendingOf(question) };
const allow: Entry = { interruptId: "perm-1", status: "resolved", payload: { decision: "allow_once" } };
const answer: Entry = { interruptId: "q-1", status: "resolved", payload: { selectedId: "hz" } };
const digestOf = (entry: Entry) => JSON.stringify({ status: entry.status, payload: entry.payload });
const noneApplied = () => undefined;

function failure(entries: Entry[], applied: (id: string) => string | undefined = noneApplied): AguiError {
  try {
    checkResumeEntries(pending, entries, applied, digestOf);
  } catch (error) {
    if (error instanceof AguiError) return error;
    throw error;
  }
  throw new Error("expected checkResumeEntries to throw");
}

describe("checkResumeEntries", () => {
  it("returns the entries in the order the interrupts were raised", () => {
    expect(checkResumeEntries(pending, [answer, allow], noneApplied, digestOf)).toEqual([allow, answer]);
  });

  it("rejects an id listed twice as INCOMPLETE_RESUME (duplicate)", () => {
    const error = failure([allow, answer, { ...allow, payload: { decision: "deny" } }]);
    expect([error.code, error.params.reason]).toEqual(["INCOMPLETE_RESUME", "duplicate"]);
  });

  it("rejects an id that is neither pending nor applied as UNKNOWN_INTERRUPT", () => {
    expect(failure([allow, answer, { interruptId: "nope", status: "cancelled" }]).code).toBe("UNKNOWN_INTERRUPT");
  });

  it("rejects an already applied id as RESUME_ALREADY_APPLIED, with the same answer or not", () => {
    const stored = digestOf(allow);
    const applied = (id: string) => (id === "perm-1" ? stored : undefined);
    const same = failure([allow, answer], applied);
    expect(same.code).toBe("RESUME_ALREADY_APPLIED");
    expect(same.params).toEqual({ detail: "/resume/0" });
    const different = failure([{ ...allow, payload: { decision: "deny" } }, answer], applied);
    expect(different.code).toBe("RESUME_ALREADY_APPLIED");
    expect(different.params).toEqual({ reason: "differentAnswer", detail: "/resume/0" });
  });

  it("reports an applied id that is no longer pending as RESUME_ALREADY_APPLIED, not UNKNOWN_INTERRUPT", () => {
    const applied = (id: string) => (id === "old" ? "digest" : undefined);
    expect(failure([allow, answer, { interruptId: "old", status: "cancelled" }], applied).code).toBe("RESUME_ALREADY_APPLIED");
  });

  it("rejects a resume that leaves a pending interrupt unanswered as INCOMPLETE_RESUME", () => {
    const error = failure([allow]);
    expect(error.code).toBe("INCOMPLETE_RESUME");
    expect(error.params.reason).toBeUndefined();
  });
});

describe("resumeDigest", () => {
  // Expected values: Python sha256(json.dumps({status, payload}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)).
  it("matches the reference's digest, an absent payload counting as None", () => {
    expect(resumeDigest({ interruptId: "x", status: "cancelled" })).toBe(
      "3902805a6bea7234d10c2f7eac2aadf4db6e27f87f95aeb0de62aa73bf902f22",
    );
    expect(resumeDigest(allow)).toBe("289281c743b2a91d60f25b59680f04683bd82766f7a9b2eb405975140373868e");
    expect(resumeDigest({ interruptId: "q", status: "resolved", payload: { freeText: "日本" } })).toBe(
      "82928b2f94d76c4a20bebb1fa807ab33250b291866c811eb898e97d6dc57e47e",
    );
  });

  it("is what checkResumeEntries compares with by default", () => {
    const applied = (id: string) => (id === "perm-1" ? resumeDigest(allow) : undefined);
    try {
      checkResumeEntries(pending, [allow, answer], applied);
      throw new Error("expected RESUME_ALREADY_APPLIED");
    } catch (error) {
      expect((error as AguiError).params).toEqual({ detail: "/resume/0" });
    }
  });
});
