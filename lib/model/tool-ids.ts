/**
 * Ids of tool calls on the AG-UI side. A call keeps the kernel's
 * `toolUseId`; one the kernel sent without an id is given `tool-<32 hex>`
 * here, whichever path read it (the live stream, a pipeline envelope,
 * recovery or a resume), so every such id has the same form.
 */
export const newToolCallId = (): string => `tool-${crypto.randomUUID().replaceAll("-", "")}`;
