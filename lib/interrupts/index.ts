/** Interrupts: kernel input projections in, AG-UI interrupts out, answers back to the kernel (contract §5). */
export {
  answerMessage,
  RESOURCE_SELECTION_QUERY_PREFIX,
  type A2aDataPart,
  type AnswerContext,
  type AnswerDelivery,
  type ResumeMessage,
} from "./answer-message.js";
export { checkResumeEntries, resumeDigest } from "./check-resume.js";
export {
  DEPLOYMENT_ACTIONS,
  deploymentOptions,
  parameterOverrides,
  type DeploymentAction,
  type DeploymentOptions,
} from "./deployment-options.js";
export { inputsOf, isRequiredInput, keepInput, type FoundInput, type RawProjection } from "./keep-input.js";
export { kindOf, type InterruptKind } from "./kinds.js";
export { selectionMessage, standardOptions, type StandardOption } from "./options.js";
export { pythonJsonDumps, pythonStr, pythonTruthy, type PythonJsonOptions } from "./python-json.js";
export { INTERRUPT_SCHEMAS_DIR, responseSchemaFor, type JsonSchema } from "./response-schemas.js";
export { INTERRUPT_METADATA_SCHEMA_VERSION, toInterrupt } from "./to-interrupt.js";
export { validateAnswer, type ResumeAnswer, type ValidAnswer } from "./validate-answer.js";
