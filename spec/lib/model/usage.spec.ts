import { describe, expect, it } from "@jest/globals";
import { tokenUsageOf } from "../../../lib/model/usage.js";

describe("tokenUsageOf", () => {
  it("reads provider, model and the four counts, float-written counts as whole tokens", () => {
    expect(
      tokenUsageOf({
        provider: "dashscope",
        model: "qwen",
        inputTokens: 6497.0,
        outputTokens: 12.9,
        totalTokens: 6509,
        cachedInputTokens: 0,
      }),
    ).toEqual({ provider: "dashscope", model: "qwen", inputTokens: 6497, outputTokens: 12, totalTokens: 6509, cachedInputTokens: 0 });
  });

  it("leaves out what is not a name or a finite number", () => {
    expect(
      tokenUsageOf({ provider: "", model: 7, inputTokens: "12", outputTokens: Number.NaN, totalTokens: Infinity, cachedInputTokens: null }),
    ).toEqual({});
  });

  it("ignores fields it does not know", () => {
    expect(tokenUsageOf({ outputTokens: 3, reasoningTokens: 9 })).toEqual({ outputTokens: 3 });
  });
});
