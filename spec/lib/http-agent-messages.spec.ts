/**
 * What a chat UI shows (issue 12): @ag-ui/client's stock HttpAgent driven
 * against the service on every demo fixture, each interrupt answered, a
 * pipeline run twice on one thread and one whose stream dropped. The
 * assertions are on the `messages` the agent's own apply step builds: their
 * order, roles, text, and tool calls with their results.
 */
import os from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "@jest/globals";
import { EventType, type AGUIEvent, type Message } from "@ag-ui/core";
import { expectValidRun } from "../support/agui.js";
import { httpAgent, runHttpAgent, userMessage } from "../support/http-agent.js";
import { permissionProjection } from "../support/interrupt-scripts.js";
import { postRun, runInput, script, startHarness, uniqueId, type Harness } from "../support/service.js";

/** A message as a user sees it: who says what, which tools an assistant message calls, what each tool answered. */
type Seen =
  | { role: "user" | "assistant" | "reasoning"; text: string; calls?: string[] }
  | { role: "tool"; call: string; result: string }
  | { role: "activity"; activity: string };

function seen(messages: readonly Message[]): Seen[] {
  return messages.map((message): Seen => {
    switch (message.role) {
      case "tool":
        return { role: "tool", call: message.toolCallId, result: String(message.content) };
      case "activity":
        return { role: "activity", activity: message.activityType };
      case "assistant": {
        const calls = message.toolCalls?.map((call) => `${call.id} ${call.function.name}`);
        return { role: "assistant", text: message.content ?? "", ...(calls?.length ? { calls } : {}) };
      }
      case "user":
        return { role: "user", text: typeof message.content === "string" ? message.content : "" };
      case "reasoning":
        return { role: "reasoning", text: message.content };
      default:
        throw new Error(`unexpected ${message.role} message`);
    }
  });
}

const user = (text: string): Seen => ({ role: "user", text });
const assistant = (text: string | RegExp, ...calls: string[]): Seen =>
  ({ role: "assistant", text: typeof text === "string" ? text : expect.stringMatching(text), ...(calls.length ? { calls } : {}) }) as Seen;
const tool = (call: string, result: string | RegExp): Seen =>
  ({ role: "tool", call, result: typeof result === "string" ? result : expect.stringMatching(result) }) as Seen;
const reasoning = (text: RegExp): Seen => ({ role: "reasoning", text: expect.stringMatching(text) }) as unknown as Seen;
const activity: Seen = { role: "activity", activity: "iac-code.pipeline.v1" };

const PERMISSION_ASKED =
  "I'll deploy the stack `demo-vpc-ecs` to cn-hangzhou with the validated template: one VPC, a vSwitch and two ECS instances.";

/** What every run must be besides: valid, stamped, and with each tool call placed in an assistant message. */
async function expectWellFormed(events: AGUIEvent[]) {
  await expectValidRun(events);
  for (const event of events) expect(Number.isInteger(event.timestamp)).toBe(true);
  for (const event of events.filter((event) => event.type === EventType.TOOL_CALL_START)) {
    expect(event).toMatchObject({ parentMessageId: expect.any(String) });
  }
}

describe("the messages a stock HttpAgent ends with", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness.close());

  const forwardedProps = (iacCode: Record<string, unknown> = {}, display?: Record<string, unknown>) => ({
    iacCode: { schemaVersion: 1, rosInvocationId: "ros-1", cwd: os.tmpdir(), ...iacCode },
    ...(display ? { iacCodeDisplay: display } : {}),
  });

  /** A conversation on a thread of its own: each call runs one turn and, for an answer, resumes the pending interrupt. */
  function chat(text: string, iacCode: Record<string, unknown> = {}, display?: Record<string, unknown>) {
    const agent = httpAgent(harness.service.url, { messages: [userMessage(text)] });
    const props = forwardedProps(iacCode, display);
    return {
      agent,
      async run() {
        const run = await runHttpAgent(agent, { runId: uniqueId("run"), forwardedProps: props });
        expect(run.error).toBeUndefined();
        await expectWellFormed(run.events);
        return run;
      },
      async answer(payload: unknown) {
        const [interrupt] = agent.pendingInterrupts;
        expect(interrupt).toBeDefined();
        const resume = [{ interruptId: interrupt!.id, status: "resolved" as const, payload }];
        const run = await runHttpAgent(agent, { runId: uniqueId("run"), forwardedProps: props, resume });
        expect(run.error).toBeUndefined();
        await expectWellFormed(run.events);
        return run;
      },
      get seen() {
        return seen(agent.messages);
      },
    };
  }

  describe("normal mode", () => {
    it("chat: the answer", async () => {
      const c = chat("chat");
      await c.run();
      expect(c.seen).toEqual([
        user("chat"),
        assistant(/^Hi! This is the iac-code-agui demo kernel[^]*Anything else plays this message again\.$/),
      ]);
    });

    it("whole-text: the answer sent in one piece", async () => {
      const c = chat("whole-text");
      await c.run();
      expect(c.seen).toEqual([user("whole-text"), assistant(/^Here is the whole answer in one piece: .* complete assistant reply\.$/)]);
    });

    it("failing-run: the text before the failure, then the kernel's explanation", async () => {
      const c = chat("failing-run");
      await c.run();
      expect(c.seen).toEqual([
        user("failing-run"),
        assistant("Deploying the stack to cn-hangzhou now. Creating the VPC first…"),
        assistant("The model provider rejected the request: quota exceeded (HTTP 429). The run was stopped; nothing was deployed."),
      ]);
    });

    it("stream-error: the text that came before the break", async () => {
      const c = chat("stream-error");
      await c.run();
      expect(c.seen).toEqual([user("stream-error"), assistant("Checking the stack status in cn-hangzhou")]);
    });

    it("reasoning-tools: the thinking, each tool call in the assistant message of its turn and followed by its result, then the answer", async () => {
      const c = chat("reasoning-tools");
      await c.run();
      expect(c.seen).toEqual([
        user("reasoning-tools"),
        reasoning(/^The user wants the stack template checked/),
        assistant("", "toolu_01HqV3c9demoValidate mcp__ros__ValidateTemplate"),
        tool("toolu_01HqV3c9demoValidate", /"valid":true/),
        assistant("", "toolu_02Kp8x4sdemoPolicy Bash"),
        tool("toolu_02Kp8x4sdemoPolicy", /^ERROR: StackNotFound/),
        assistant(/^The template is valid: .* I saved the plan as `stack-plan\.md`\.$/),
      ]);
    });

    it("permission, allowed: the resumed run's answer is a message of its own, after the tool's result", async () => {
      const c = chat("permission");
      await c.run();
      expect(c.seen).toEqual([user("permission"), assistant(PERMISSION_ASKED, "toolu_deploy_1 ros_deploy_stack")]);
      await c.answer({ decision: "allow_once" });
      expect(c.seen).toEqual([
        user("permission"),
        assistant(PERMISSION_ASKED, "toolu_deploy_1 ros_deploy_stack"),
        tool("toolu_deploy_1", /"stackStatus":"CREATE_COMPLETE"|CREATE_COMPLETE/),
        assistant(/^The stack `demo-vpc-ecs` is deployed \(CREATE_COMPLETE after about 4 minutes\)\./),
      ]);
    });

    it("permission, denied: the failed tool, then the answer", async () => {
      const c = chat("permission");
      await c.run();
      await c.answer({ decision: "deny" });
      expect(c.seen).toEqual([
        user("permission"),
        assistant(PERMISSION_ASKED, "toolu_deploy_1 ros_deploy_stack"),
        tool("toolu_deploy_1", "Permission denied by user: ros_deploy_stack was not run."),
        assistant(/^Understood: I did not deploy anything\./),
      ]);
    });

    it("permission shown as a tool call too: the interrupt's call sits in the same assistant message, both answered", async () => {
      const c = chat("permission", {}, { interruptsAsTools: true });
      await c.run();
      const [interrupt] = c.agent.pendingInterrupts;
      await c.answer({ decision: "allow_once" });
      expect(c.seen).toEqual([
        user("permission"),
        assistant(PERMISSION_ASKED, "toolu_deploy_1 ros_deploy_stack", `${interrupt!.id} iac-code.interrupt.permission`),
        expect.objectContaining({ role: "tool" }),
        expect.objectContaining({ role: "tool" }),
        assistant(/^The stack `demo-vpc-ecs` is deployed/),
      ]);
      expect(
        c.seen
          .filter((message) => message.role === "tool")
          .map((message) => (message as { call: string }).call)
          .sort(),
      ).toEqual([interrupt!.id, "toolu_deploy_1"].sort());
    });

    it("question: the question's tool call answered with the chosen option, then the answer", async () => {
      const c = chat("question");
      await c.run();
      await c.answer({ selectedId: "cn-shanghai" });
      expect(c.seen).toEqual([
        user("question"),
        assistant(
          "The template works in more than one region, and your workspace has no default region set. Let me ask before I deploy.",
          "toolu_question_1 AskUserQuestion",
        ),
        tool("toolu_question_1", "Shanghai"),
        assistant("Deploying to Shanghai (cn-shanghai). I'll use the validated template and report back when the stack is ready."),
      ]);
    });

    it("deploy-confirm: the confirmation's tool call answered, then the answer", async () => {
      const c = chat("deploy-confirm");
      await c.run();
      await c.answer({ selectedId: "confirm" });
      expect(c.seen).toEqual([
        user("deploy-confirm"),
        assistant(
          "I've prepared the deployment of `demo-vpc-ecs` to cn-hangzhou. Please review the summary before I create anything.",
          "toolu_confirm_1 ConfirmDeployment",
        ),
        tool("toolu_confirm_1", '{"action": "confirm", "parameter_overrides": {}}'),
        assistant("Confirmed. Creating the stack `demo-vpc-ecs` in cn-hangzhou now; it usually takes about 4 minutes."),
      ]);
    });

    it("two turns on one thread: the second answer is a message of its own after the second question", async () => {
      const c = chat("whole-text");
      await c.run();
      c.agent.messages.push(userMessage("chat"));
      await c.run();
      expect(c.seen).toEqual([
        user("whole-text"),
        assistant(/^Here is the whole answer in one piece/),
        user("chat"),
        assistant(/^Hi! This is the iac-code-agui demo kernel/),
      ]);
    });
  });

  describe("pipeline mode", () => {
    const pipeline = { runMode: "pipeline", pipelineName: "demo" };
    const PIPELINE_RUN = [
      reasoning(/^The user wants a web tier on ECS/),
      assistant("", "toolu_plan_read_1 Read"),
      tool("toolu_plan_read_1", /^# Web tier/),
      assistant(/^The requirements ask for two ECS instances/),
      assistant(/^Candidate A keeps everything in zone cn-hangzhou-h/),
      assistant(/^Candidate B spreads the instances over cn-hangzhou-h and cn-hangzhou-i/),
    ];

    it("pipeline: the plan step's thinking, tool and text, then each candidate's text as a message of its own", async () => {
      const c = chat("pipeline", pipeline);
      await c.run();
      expect(c.seen).toEqual([user("pipeline"), ...PIPELINE_RUN]);
    });

    it("pipeline twice on one thread: the second run's text does not join the first run's messages", async () => {
      const c = chat("pipeline", pipeline);
      await c.run();
      c.agent.messages.push(userMessage("pipeline"));
      await c.run();
      // Tool call ids are the kernel's, and the fixture replays the same `toolUseId` each run: a client folds the
      // second call into the first. A model's ids are unique; what the service names (every message) is per run.
      const said = (messages: Seen[]) => messages.filter((message) => message.role !== "tool" && !("calls" in message && message.calls));
      expect(said(c.seen)).toEqual([user("pipeline"), ...said(PIPELINE_RUN), user("pipeline"), ...said(PIPELINE_RUN)]);
      const ids = c.agent.messages.map((message) => message.id);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it("pipeline-permission, allowed: the deploy step's answer comes after its tool's result", async () => {
      const c = chat("pipeline-permission", pipeline);
      await c.run();
      await c.answer({ decision: "allow_once" });
      expect(c.seen).toEqual([
        user("pipeline-permission"),
        assistant("", "toolu_pipeline_validate_1 mcp__ros__ValidateTemplate"),
        tool("toolu_pipeline_validate_1", /"valid":true/),
        assistant("The template is valid: one VPC, a vSwitch and two ECS instances."),
        assistant(
          "Deploying `demo-vpc-ecs` to cn-hangzhou creates billable resources, so I need your permission first.",
          "toolu_pipeline_deploy_1 ros_deploy_stack",
        ),
        tool("toolu_pipeline_deploy_1", /CREATE_COMPLETE|durationS/),
        activity,
        assistant("The stack `demo-vpc-ecs` is deployed (CREATE_COMPLETE). It created VPC `vpc-bp1demo7x0example` and two ECS instances."),
      ]);
    });

    it("pipeline-failed-step: text the step sends after its tool's result is a new message, after the result", async () => {
      const c = chat("pipeline-failed-step", pipeline);
      await c.run();
      expect(c.seen).toEqual([
        user("pipeline-failed-step"),
        assistant("Validating `/workspace/ros/vpc-ecs.yaml` against cn-hangzhou. ", "toolu_pipeline_validate_1 mcp__ros__ValidateTemplate"),
        tool("toolu_pipeline_validate_1", /^InvalidTemplate: /),
        assistant("The template does not validate: `ImageId` is used but never declared."),
        assistant(/^Pipeline ros-stack-deploy failed at step validate: .* Nothing was deployed\.$/),
      ]);
    });

    it("pipeline-cleanup: no message besides the user's", async () => {
      const c = chat("pipeline-cleanup", pipeline);
      await c.run();
      expect(c.seen).toEqual([user("pipeline-cleanup")]);
    });

    it("pipeline-drop: a step's text is one message before and after the re-attach", async () => {
      const c = chat("pipeline-drop", pipeline);
      const { events } = await c.run();
      expect(events.filter((event) => event.type === EventType.ACTIVITY_SNAPSHOT)).toHaveLength(1);
      expect(c.seen).toEqual([
        user("pipeline-drop"),
        assistant("A single VPC with one vSwitch and two ECS instances is enough here."),
        assistant("Writing `/workspace/ros/web.yaml`: the VPC, the vSwitch, a security group and the two instances."),
        activity,
      ]);
    });

    it("pipeline-sideband: a candidate's paragraph the answer interrupted stays one; text after a tool result starts below it", async () => {
      const c = chat("pipeline-sideband", pipeline);
      await c.run();
      await c.answer({ decision: "allow_once" });
      expect(c.seen).toEqual([
        user("pipeline-sideband"),
        assistant("Candidate A: one zone, two ECS instances behind an EIP. It survives an instance failure, not a zone failure."),
        assistant(
          "Candidate B: two zones behind an SLB; I'll load-test it on a throwaway stack. ",
          "toolu_candidate_b_create_1 ros_create_stack",
        ),
        tool("toolu_candidate_b_create_1", /"p95LatencyMs":84/),
        activity,
        assistant("The load test passed (p95 84 ms, no errors); it survives the loss of either zone."),
      ]);
    });
  });

  describe("RUN_STARTED", () => {
    it("declares protocol 1.0 and echoes the input, less its credentials", async () => {
      const input = runInput(
        "chat",
        {},
        {
          llmApiKey: "sk-secret",
          alibabaCloud: { accessKeyId: "AKID", accessKeySecret: "shh", securityToken: "tok", regionId: "cn-hangzhou" },
        },
      );
      const { events } = await postRun(harness.service.url, input);
      await expectValidRun(events);
      const started = events[0] as { protocolVersion?: string; input?: { forwardedProps: { iacCode: Record<string, unknown> } } };
      expect(started.protocolVersion).toBe("1.0");
      const { llmApiKey: _key, alibabaCloud: _cloud, ...kept } = input.forwardedProps.iacCode as Record<string, unknown>;
      expect(started.input).toEqual({
        ...input,
        forwardedProps: { iacCode: { ...kept, alibabaCloud: { accessKeyId: "AKID", regionId: "cn-hangzhou" } } },
      });
      expect(JSON.stringify(events)).not.toMatch(/sk-secret|shh|"tok"/);
    });
  });
});

describe("a resume under the interrupted run's id, as CopilotKit sends it", () => {
  let harness: Harness;
  // The answer's turn speaks before any tool result, so nothing but the run tells its message from the paused one's.
  const pausesThenSpeaks = (turn: { turnIndex: number }) =>
    turn.turnIndex === 0
      ? [
          script.task(),
          script.status("WORKING", { iacCodeSessionId: "sess-${contextId}" }, "May I deploy?"),
          script.status("INPUT_REQUIRED", { input: permissionProjection }),
        ]
      : [script.status("WORKING", undefined, "Deployed."), script.status("COMPLETED")];
  beforeAll(async () => {
    harness = await startHarness({ script: pausesThenSpeaks });
  });
  afterAll(() => harness.close());

  it("gives the resumed run's text a message of its own", async () => {
    const agent = httpAgent(harness.service.url, { messages: [userMessage("deploy")] });
    const forwardedProps = runInput("x").forwardedProps;
    const runId = uniqueId("run");
    const paused = await runHttpAgent(agent, { runId, forwardedProps });
    await expectWellFormed(paused.events);
    const resume = [{ interruptId: "perm-1", status: "resolved" as const, payload: { decision: "allow_once" } }];
    const resumed = await runHttpAgent(agent, { runId, forwardedProps, resume });
    expect(resumed.error).toBeUndefined();
    await expectWellFormed(resumed.events);
    expect(seen(agent.messages)).toEqual([user("deploy"), assistant("May I deploy?"), assistant("Deployed.")]);
  });
});

describe("observer streams", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness({ timeScale: 1 });
  });
  afterAll(() => harness.close());

  const textIds = (events: AGUIEvent[]) =>
    events.flatMap((event) =>
      event.type === EventType.TEXT_MESSAGE_START || event.type === EventType.TOOL_CALL_RESULT ? [event.messageId] : [],
    );

  it("name a pipeline run's messages as the run does, though the observer has a run id of its own", async () => {
    const input = runInput("pipeline", {}, { runMode: "pipeline", pipelineName: "demo" });
    const response = await fetch(harness.service.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify(input),
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let raw = "";
    while (!raw.includes("iac-code.session.v1")) raw += decoder.decode((await reader.read()).value, { stream: true });
    const session = raw.split("\n").find((line) => line.includes("iac-code.session.v1"))!;
    const { executionId } = (JSON.parse(session.slice("data: ".length)) as { value: { executionId: string } }).value;

    const observed = await postRun(`${harness.service.url}/extensions/iac-code/v1/executions/${executionId}/subscribe`, {
      threadId: input.threadId,
    });
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) raw += decoder.decode(chunk.value, { stream: true });
    const driven = raw
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice("data: ".length)) as AGUIEvent);

    await expectWellFormed(observed.events);
    expect(observed.events[0]).toMatchObject({ type: EventType.RUN_STARTED, runId: expect.stringMatching(/^observe-/) });
    const watched = textIds(observed.events);
    expect(watched.length).toBeGreaterThan(0);
    expect(textIds(driven)).toEqual(expect.arrayContaining(watched));
    // The run's own messages carry its id; the pipeline's, its execution's (one message across the runs that resume it).
    for (const id of watched) expect(id.startsWith(`${input.runId}:`) || id.startsWith(`${executionId}:pipeline-message:`)).toBe(true);
  });
});
