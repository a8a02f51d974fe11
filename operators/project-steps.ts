/**
 * Step signals → `STEP_STARTED` / `STEP_FINISHED {stepName}`, balanced
 * within the run and across runs (contract §6 Steps, R-MAP-2).
 *
 * A pipeline step may outlive an AG-UI run: it opens before an interrupt and
 * finishes in the resume run. Two sets keep that legal. The durable set
 * (keys; from `durableOpen`, handed back on `run-end` as `openSteps`) is
 * what the pipeline has open; the run set is what this run's stream has
 * open. On subscription every durable step is reopened, sorted by key —
 * `runAgent` puts RUN_STARTED in front later in the pipe, so they follow it.
 *
 *   started   → STEP_STARTED, unless this run already has it open
 *   finished  → nothing if the pipeline has no such step open (an
 *               observer, which may have missed the start: as if open); else
 *               STEP_FINISHED if this run has it open, else a zero-length
 *               STEP_STARTED + STEP_FINISHED pair, never a bare finish
 *
 *   durableOpen [step:plan]:  (finished step:plan) run-end
 *     → STEP_STARTED(plan) STEP_FINISHED(plan) run-end{openSteps: []}
 *
 * Every step event carries the step's facts in `metadata["iac-code"].step`
 * (`lib/model/step-facts.ts`, docs/pipeline-feed.md): the kernel's, a
 * reopened span only its key (an observer's, what its status snapshot
 * knew), `reopened: true`; a zero-length pair's start the finish's, less
 * its end. A finish carries the start's time when this run saw the start
 * or was told it, and then the step's duration (`withStart`).
 *
 * Steps still open at the run's end are closed by `closeSpans`, not here:
 * they stay in the durable set, to be reopened by the next run.
 */
import { EventType, type AGUIEvent } from "@ag-ui/core";
import { defer, startWith, type OperatorFunction } from "rxjs";
import { emitEach, emitEachPer } from "./emit-each.js";
import { isSignal, type RunItem, type SignalOf } from "../lib/model/kernel-signal.js";
import { stepNameOf } from "../lib/model/pipeline-ids.js";
import { keyOnlyFacts, reopenedFrom, stepMetadata, withStart, type StepFacts } from "../lib/model/step-facts.js";

export interface ProjectStepsOptions {
  /** The pipeline steps open when the run starts, by key (`execution.pipelineOpenSteps`). */
  durableOpen: readonly string[];
  /**
   * Whether to reopen them at the start. Default true. An observation
   * stream (contract §10 subscribe) shows what the kernel does next without
   * reopening; a finish of a step it never opened then goes out as a
   * zero-length pair.
   */
  reopen?: boolean;
  /**
   * An observer's view of the steps open as it attaches (its status
   * snapshot's graph), with what it knows of each. They are open too, and
   * reopened with these facts, so a finish carries the start's time. Given,
   * the stream is an observer's, whose history is partial: a finish of a
   * step it knows nothing of goes out as a zero-length pair, not dropped.
   */
  observedOpen?: readonly StepFacts[];
}

const started = (stepName: string, facts: StepFacts): AGUIEvent => ({
  type: EventType.STEP_STARTED,
  stepName,
  metadata: stepMetadata(facts),
});
const finished = (stepName: string, facts: StepFacts): AGUIEvent => ({
  type: EventType.STEP_FINISHED,
  stepName,
  metadata: stepMetadata(facts),
});

/** A span open in this run: the name it opened under, so the finish names the same span, and when the step started. */
interface OpenSpan {
  name: string;
  startedAt: string | undefined;
}

export function projectSteps(options: ProjectStepsOptions): OperatorFunction<RunItem, RunItem> {
  /** A subscription's state: the spans it reopens first, and its projection. */
  const stepsOfRun = () => {
    const observed = new Map((options.observedOpen ?? []).map((facts) => [facts.key, facts]));
    const durable = new Set([...options.durableOpen, ...observed.keys()]);
    const openInRun = new Map<string, OpenSpan>();

    const reopened =
      options.reopen === false
        ? []
        : [...durable].sort().map((key) => {
            const known = observed.get(key);
            openInRun.set(key, { name: stepNameOf(key), startedAt: known?.startedAt });
            return started(stepNameOf(key), { ...(known ?? keyOnlyFacts(key)), reopened: true });
          });

    const project = ({ phase, key, name, facts = keyOnlyFacts(key) }: SignalOf<"step">): AGUIEvent[] => {
      if (phase === "started") {
        durable.add(key);
        if (openInRun.has(key)) return [];
        openInRun.set(key, { name, startedAt: facts.startedAt });
        return [started(name, facts)];
      }
      if (!durable.delete(key) && options.observedOpen === undefined) return [];
      const open = openInRun.get(key);
      if (open === undefined) return [started(name, reopenedFrom(facts)), finished(name, facts)];
      openInRun.delete(key);
      const startedAt = facts.startedAt ?? open.startedAt;
      return [finished(open.name, startedAt === undefined ? facts : withStart(facts, startedAt))];
    };

    const projectItem = (item: RunItem): RunItem | RunItem[] => {
      if (!isSignal(item)) return item;
      if (item.kind === "step") return project(item);
      if (item.kind === "run-end") return [{ ...item, openSteps: [...durable].sort() }];
      return item;
    };
    return { reopened, projectItem };
  };

  // Most runs reopen nothing: the stage is then a plain `emitEach`, one subscriber with the pipeline stages before it.
  const reopens = options.reopen !== false && (options.durableOpen.length > 0 || (options.observedOpen?.length ?? 0) > 0);
  if (!reopens) return emitEachPer(() => stepsOfRun().projectItem);
  return (source) =>
    defer(() => {
      const { reopened, projectItem } = stepsOfRun();
      return source.pipe(emitEach(projectItem), startWith(...reopened));
    });
}
