// The measurement library behind `acp simulate` (definitions: docs/simulate.md).
export { loadSession, loadSessions, parseSession, stripCompactedMarks, type Session } from "./load.js";
export {
  renderPrompt,
  renderMessage,
  lastUserIndex,
  promptTokens,
  unitTokens,
  toolCallText,
  toolResultText,
  isSkippedAssistant,
  SYSTEM_UNIT_ID,
  type Unit,
} from "../graph/prompt.js";
export { QuoteTracker, PromptText, indexedLine, writtenLines, MIN_QUOTE_CHARS, type QuoteEvent } from "./quotes.js";
export { replaySession, comparePrompts, sessionIdOf, deepCopy, type ReplayOptions, type ReplayedCall, type PromptMismatch } from "./replay.js";
export {
  measureSession,
  measureSessions,
  totalOf,
  relativeTo,
  sessionsOverLimit,
  RECOVERY_LIMIT_PCT,
  cacheCost,
  commonPrefixLength,
  timingOf,
  percentile,
  ANTHROPIC_CACHE,
  OPENAI_CACHE,
  UNEXPLAINED,
  type CallFigures,
  type Figures,
  type SessionFigures,
  type CorpusFigures,
  type RelativeFigures,
  type OverLimit,
  type RuleFigures,
  type QuoteLoss,
  type TimingFigures,
} from "./metrics.js";
