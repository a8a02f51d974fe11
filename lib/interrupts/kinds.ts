/**
 * The interrupt kinds this adapter treats differently (contract §5 "Per
 * kind"). Every kernel kind not named here (`ask_user_question`,
 * `candidate_selection`, a missing kind, …) is a selection: options to pick
 * from, with free text when allowed. Switches over `InterruptKind` are
 * exhaustive, so a new kind fails to compile until every stage handles it.
 */
export type InterruptKind = "permission" | "cloud_resource_selection" | "deployment_confirmation" | "selection";

export function kindOf(projection: { kind?: unknown }): InterruptKind {
  switch (projection.kind) {
    case "permission":
    case "cloud_resource_selection":
    case "deployment_confirmation":
      return projection.kind;
    default:
      return "selection";
  }
}
