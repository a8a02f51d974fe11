import { describe, expect, it } from "@jest/globals";
import { lastValueFrom, Observable, take, toArray } from "rxjs";
import { timedMembers, type Outcome } from "../../../lib/metrics/timed-members.js";
import { synchronousSource } from "../../support/marbles.js";

/** A class with private fields, as `A2AClient` and `RedisThreadStore` are: a Proxy must call its methods on the instance. */
class Kernelish {
  readonly #secret = "token";
  readonly shared = true;
  async answer(value: string): Promise<string> {
    return `${value} with ${this.#secret}`;
  }
  async refuse(): Promise<never> {
    throw new Error(`refused by ${this.#secret}`);
  }
  stream(items: readonly number[]): Observable<number> {
    return synchronousSource(items).source;
  }
  plain(): string {
    return this.#secret;
  }
}

function recorded() {
  const calls: Array<{ method: string; outcome: Outcome; answer: unknown }> = [];
  return {
    calls,
    record: (method: string, outcome: Outcome, seconds: number, answer: unknown) => void calls.push({ method, outcome, answer }),
  };
}

describe("timedMembers", () => {
  it("times a promise until it settles, by method and outcome, and answers as the object does", async () => {
    const { calls, record } = recorded();
    const timed = timedMembers(new Kernelish(), record);
    expect(await timed.answer("hi")).toBe("hi with token");
    await expect(timed.refuse()).rejects.toThrow("refused by token");
    expect(calls).toEqual([
      { method: "answer", outcome: "ok", answer: "hi with token" },
      { method: "refuse", outcome: "error", answer: expect.any(Error) },
    ]);
    expect(timed.shared).toBe(true);
    expect(timed).toBeInstanceOf(Kernelish);
  });

  it("times a stream until its first item, once, and leaves a call that answers neither untimed", async () => {
    const { calls, record } = recorded();
    const timed = timedMembers(new Kernelish(), record);
    expect(await lastValueFrom(timed.stream([1, 2, 3]).pipe(toArray()))).toEqual([1, 2, 3]);
    expect(await lastValueFrom(timed.stream([]).pipe(toArray()))).toEqual([]);
    expect(timed.plain()).toBe("token");
    expect(calls).toEqual([
      { method: "stream", outcome: "ok", answer: 1 },
      { method: "stream", outcome: "ok", answer: undefined },
    ]);
  });

  it("stops a synchronous stream the moment its subscriber leaves", () => {
    const { record } = recorded();
    const { source, sent } = synchronousSource([1, 2, 3, 4]);
    const timed = timedMembers({ stream: () => source }, record);
    const seen: number[] = [];
    timed
      .stream()
      .pipe(take(2))
      .subscribe((item) => seen.push(item));
    expect(seen).toEqual([1, 2]);
    expect(sent).toEqual([1, 2]);
  });
});
