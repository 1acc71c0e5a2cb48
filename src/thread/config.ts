/**
 * A thread's configuration: its token budget, the model (which picks the tokenizer), and the
 * compaction strategy. Pure, so the workflow's update validator can use it.
 */
import { ValidationError } from '../model/errors.js';
import {
  MAX_AFTER_IDLE_MS,
  MAX_BUDGET,
  MAX_EXTRACT_EVERY_TURNS,
  MAX_IDLE_MS,
  MAX_JSON_DEPTH,
  MAX_MODEL_LENGTH,
  MAX_STRATEGY_DEPTH,
  MAX_RECALL_SHARE,
  characterCount,
} from '../model/limits.js';
import { firstBadChar, nestedDeeperThan } from '../model/validation.js';
import { SERVICE_KINDS, type ServiceKind } from '../model/service.js';
import { parseStrategy, unknownStrategyOption, type StrategySpec } from '../compaction/strategy-spec.js';
import { pipeline } from '../compaction/strategies/pipeline.js';
import { toolResultCollapse } from '../compaction/strategies/tool-result-collapse.js';
import { truncation } from '../compaction/strategies/truncation.js';
import { summarization } from '../compaction/strategies/summarization.js';
import { groupsExceed, not, tokensBelow, tokensExceed } from '../compaction/triggers.js';

/** A refused value as the caller gave it: a string in quotes (\"100\" is not 100), a number as is. */
function given(value: unknown): string {
  return typeof value === 'number' || value === undefined
    ? String(value)
    : (JSON.stringify(value) ?? String(value));
}

/**
 * The refusal of setting `field` (its path: `retention.deleteAfterIdleMs`), named in the message as
 * `configure.<field>` and in the error's `field`, as the HTTP API names it.
 */
function refused(field: string, message: string): ValidationError {
  return new ValidationError('invalid_option', `configure.${field}: ${message}`, { field });
}

/** Per-thread settings. Every field has a documented default. */
export interface ThreadConfig {
  /** Tokens of the context: summaries, view and blocks (the view compacts to {@link viewBudget}). Default 8,000. */
  budget: number;
  /** Model name; picks the tokenizer (o200k/cl100k, else chars/4). Default `gpt-4o`. */
  model: string;
  /**
   * Compaction strategy. Default {@link defaultStrategy}: when the view exceeds the budget, collapse
   * older tool results, then truncate, down to 75% of the budget (hysteresis: compaction is rare and
   * the prompt prefix stays stable between compactions).
   */
  strategy?: StrategySpec;
  /**
   * Background work after this long without a new message (one durable timer, re-armed lazily):
   * memory extraction of what is new, and compaction if due. Milliseconds; 0 disables. Default 10 min.
   */
  idleMs: number;
  /** Extract long-term memories after this many new user turns (threads with a userId). 0 disables. Default 5. */
  extractEveryTurns: number;
  /** Share of the budget that injected long-term memories may take in `context()`. Default 0.1. */
  memoryShare: number;
  /**
   * Share of the budget the pinned working memory may take in `context()`; over it, it is cut with a
   * marker. 0 leaves it out. Default 0.1.
   */
  workingMemoryShare: number;
  /**
   * Share of the budget that recalled history (src/recall) may take in `context()`; what it leaves
   * unused goes back to the view. 0 turns recall off. Default {@link DEFAULT_RECALL_SHARE}.
   */
  recallShare: number;
  /**
   * A provider-stored conversation the thread is bound to (docs/service-stored.md): `context({ service:
   * true })` then also answers the provider's last response id and the messages since it. Absent: none.
   */
  service?: ServiceBinding;
  /**
   * The thread's workflow ends after this long without an append or a command, once its background
   * work is done; the next append or command starts it again from the store (docs/configuration.md).
   * Milliseconds; 0: never. Absent: the worker's default (`DURABLE_MEMORY_CLOSE_AFTER_IDLE_MS`), else
   * {@link DEFAULT_CLOSE_AFTER_IDLE_MS}.
   */
  closeAfterIdleMs?: number;
  /** How long the thread is kept without an append or a command. Absent: the worker's default. */
  retention?: Retention;
}

/** How long a thread is kept (docs/configuration.md). */
export interface Retention {
  /**
   * The thread is erased, as by `delete()`, after this long without an append or a command.
   * Milliseconds; 0: kept for ever (also when the worker has a default).
   */
  deleteAfterIdleMs: number;
}

/** Default {@link ThreadConfig.closeAfterIdleMs}: three days. */
export const DEFAULT_CLOSE_AFTER_IDLE_MS = 3 * 24 * 60 * 60 * 1000;

/** The worker's defaults of the settings a thread may leave to the deployment (`undefined`: built in). */
export interface ThreadDefaults {
  closeAfterIdleMs?: number;
  deleteAfterIdleMs?: number;
}

/**
 * Validates a whole number of milliseconds from 0 to {@link MAX_AFTER_IDLE_MS} (`closeAfterIdleMs`,
 * `retention.deleteAfterIdleMs`, and their worker defaults). Throws ValidationError naming `field`.
 */
export function parseAfterIdleMs(field: string, value: unknown, key = field): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_AFTER_IDLE_MS)
    throw new ValidationError(
      'invalid_option',
      `${field}: expected a whole number of milliseconds from 0 to ${MAX_AFTER_IDLE_MS}, got ${given(value)}`,
      { field: key },
    );
  return value;
}

/** Validates `configure.retention`: `{ deleteAfterIdleMs }`, or null for the worker's default. */
export function parseRetention(value: unknown): Retention | null {
  if (value === null) return null;
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw refused('retention', 'expected { deleteAfterIdleMs } or null');
  const { deleteAfterIdleMs, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw refused(`retention.${extra}`, 'unknown setting (deleteAfterIdleMs)');
  return {
    deleteAfterIdleMs: parseAfterIdleMs(
      'configure.retention.deleteAfterIdleMs',
      deleteAfterIdleMs,
      'retention.deleteAfterIdleMs',
    ),
  };
}

/** A thread's binding to a provider-stored conversation. */
export interface ServiceBinding {
  /** `openai-responses`: OpenAI Responses with `store: true` and `previous_response_id`. */
  kind: ServiceKind;
  /**
   * A response older than this is not chained to (the provider forgets stored responses: OpenAI keeps
   * them 30 days). Milliseconds. Default {@link DEFAULT_SERVICE_MAX_AGE_MS}.
   */
  maxAgeMs?: number;
}

/** Default {@link ServiceBinding.maxAgeMs}: a day less than OpenAI's 30 days of stored responses. */
export const DEFAULT_SERVICE_MAX_AGE_MS = 29 * 24 * 60 * 60 * 1000;
/** Upper bound of {@link ServiceBinding.maxAgeMs}: a year. */
export const MAX_SERVICE_MAX_AGE_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * Validates `configure.service`: a binding, or null to unbind. Throws ValidationError
 * (`invalid_option`, or `unknown_service_kind` for a kind we do not speak).
 */
export function parseServiceBinding(value: unknown): ServiceBinding | null {
  if (value === null) return null;
  if (!value || typeof value !== 'object' || Array.isArray(value))
    throw refused('service', 'expected { kind } or null');
  const { kind, maxAgeMs, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw refused(`service.${extra}`, 'unknown setting (kind, maxAgeMs)');
  if (!SERVICE_KINDS.includes(kind as ServiceKind))
    throw new ValidationError(
      'unknown_service_kind',
      `configure.service.kind: expected one of ${SERVICE_KINDS.join(', ')}, got ${JSON.stringify(kind) ?? 'nothing'}`,
      { field: 'service.kind' },
    );
  const binding: ServiceBinding = { kind: kind as ServiceKind };
  if (maxAgeMs !== undefined) {
    if (
      typeof maxAgeMs !== 'number' ||
      !Number.isInteger(maxAgeMs) ||
      maxAgeMs < 1 ||
      maxAgeMs > MAX_SERVICE_MAX_AGE_MS
    )
      throw refused(
        'service.maxAgeMs',
        `expected a whole number from 1 to ${MAX_SERVICE_MAX_AGE_MS}, got ${given(maxAgeMs)}`,
      );
    binding.maxAgeMs = maxAgeMs;
  }
  return binding;
}

/** Default {@link ThreadConfig.recallShare} (chosen by `npm run bench:recall`, see BENCHMARKS.md). */
export const DEFAULT_RECALL_SHARE = 0.5;

/**
 * What `configure()` takes: any subset of the settings; `strategy: null` returns to the default
 * strategy, `service: null` unbinds, `closeAfterIdleMs: null` and `retention: null` return to the
 * worker's defaults.
 */
export type ConfigPatch = Partial<
  Omit<ThreadConfig, 'strategy' | 'service' | 'closeAfterIdleMs' | 'retention'>
> & {
  strategy?: StrategySpec | null;
  service?: ServiceBinding | null;
  closeAfterIdleMs?: number | null;
  retention?: Retention | null;
};

/** Defaults of {@link ThreadConfig}. */
export const DEFAULT_CONFIG: ThreadConfig = {
  budget: 8000,
  model: 'gpt-4o',
  idleMs: 600_000,
  extractEveryTurns: 5,
  memoryShare: 0.1,
  workingMemoryShare: 0.1,
  recallShare: DEFAULT_RECALL_SHARE,
};

/** Share of the budget that compaction brings the view down to. */
export const LOW_WATER_MARK = 0.75;

/**
 * The default strategy for a budget, gentlest first, with hysteresis (start above the budget, stop
 * below 75% of it): collapse old tool results, summarize the oldest groups into at most 20% of the
 * budget (an LLM when one is configured, else the labelled local extractive summarizer), and
 * truncate as the fallback.
 */
export function defaultStrategy(budget: number): StrategySpec {
  const trigger = tokensExceed(budget);
  const target = tokensBelow(Math.floor(budget * LOW_WATER_MARK) + 1);
  return pipeline(
    toolResultCollapse({ keepLastToolCallGroups: 2, trigger, target }),
    summarization({
      trigger,
      target,
      minimumPreserved: 4,
      maxSummaryTokens: Math.max(50, Math.floor(budget * 0.2)),
    }),
    truncation({ trigger, target, minimumPreserved: 1 }),
  ) as StrategySpec;
}

/**
 * The most groups a thread's view holds. The thread workflow carries the view's index (about
 * 110 bytes per message) across continue-as-new, and Temporal refuses payloads over 2 MB: past this
 * cap the oldest groups are truncated whatever the strategy, down to {@link VIEW_GROUPS_AFTER_CAP}.
 * No model's context window holds this many groups of a real conversation anyway.
 */
export const MAX_VIEW_GROUPS = 10_000;
/** Where the cap's truncation stops (hysteresis: it runs rarely). */
export const VIEW_GROUPS_AFTER_CAP = 9_000;

/**
 * The tokens a context's view has once recall takes its share (`recallShare` of the budget): what the
 * default strategy compacts to. Compacting at the budget instead left the view larger than any
 * context with recall sends, so reads trimmed it: the messages trimmed sat in neither the summaries
 * nor the context, and each step of trimming moved the cached prefix between compactions.
 */
export function viewBudget(config: Pick<ThreadConfig, 'budget' | 'recallShare'>): number {
  return Math.max(1, config.budget - Math.floor(config.budget * config.recallShare));
}

/**
 * The strategy a thread runs: its own, or the default for its view's budget ({@link viewBudget};
 * `atViewBudget` false: for the whole budget, as runs from before the patch `compact-at-view-budget`
 * compact). See {@link withViewCap}.
 */
export function strategyOf(config: ThreadConfig, atViewBudget = true): StrategySpec {
  return config.strategy ?? defaultStrategy(atViewBudget ? viewBudget(config) : config.budget);
}

/**
 * A thread's strategy followed by the view's hard cap of {@link MAX_VIEW_GROUPS} groups: what the
 * workflow evaluates and the compaction activity runs. Reports keep the thread's own strategy name.
 */
export function withViewCap(strategy: StrategySpec): StrategySpec {
  return pipeline(
    strategy,
    truncation({
      trigger: groupsExceed(MAX_VIEW_GROUPS),
      target: not(groupsExceed(VIEW_GROUPS_AFTER_CAP)),
      minimumPreserved: 1,
    }),
  ) as StrategySpec;
}

/**
 * A token budget, as `configure` and `context()` take it: a whole number from 1 to
 * {@link MAX_BUDGET}. Throws ValidationError naming `name` (its field: the name's last part).
 */
export function parseBudget(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_BUDGET) {
    throw new ValidationError(
      'invalid_option',
      `${name}: expected a whole number from 1 to ${MAX_BUDGET}, got ${JSON.stringify(value) ?? String(value)}`,
      { field: name.split('.').at(-1)! },
    );
  }
  return value;
}

/** A model name (it picks the tokenizer): 1–{@link MAX_MODEL_LENGTH} characters. As {@link parseBudget}. */
export function parseModel(name: string, value: unknown): string {
  if (typeof value !== 'string' || !value || characterCount(value) > MAX_MODEL_LENGTH) {
    throw new ValidationError(
      'invalid_option',
      `${name}: expected a model name of 1 to ${MAX_MODEL_LENGTH} characters`,
      { field: name.split('.').at(-1)! },
    );
  }
  return value;
}

/** Upper bounds of the whole-number settings (README "Limits"). */
const MAXIMA = { idleMs: MAX_IDLE_MS, extractEveryTurns: MAX_EXTRACT_EVERY_TURNS };

/** How deep strategies nest in `spec` (a pipeline holding a pipeline is 2); stops past `limit`. */
function strategyDepth(spec: unknown, limit: number): number {
  const children = (spec as { strategies?: unknown } | null)?.strategies;
  if (!Array.isArray(children) || limit <= 0) return 1;
  return 1 + Math.max(0, ...children.map((child) => strategyDepth(child, limit - 1)));
}

/**
 * Checks a strategy's shape before parsing it: parsing recurses through every level, so input nested
 * thousands deep must be refused first (it would overflow the stack, here and wherever it is stored).
 */
function checkStrategyShape(strategy: unknown): void {
  if (strategyDepth(strategy, MAX_STRATEGY_DEPTH) > MAX_STRATEGY_DEPTH)
    throw new ValidationError(
      'invalid_option',
      `configure.strategy: strategies nest at most ${MAX_STRATEGY_DEPTH} deep`,
      { field: 'strategy' },
    );
  if (nestedDeeperThan(strategy, MAX_JSON_DEPTH))
    throw new ValidationError(
      'too_deep',
      `configure.strategy: nested deeper than ${MAX_JSON_DEPTH} levels of JSON`,
      { field: 'strategy' },
    );
}

/**
 * The rules of what a store keeps of a configuration (JSON whose text has no NUL and no lone
 * surrogate, nested at most {@link MAX_JSON_DEPTH} deep), in one place: {@link mergeConfig}, and so
 * the workflow's update validator, checks them before a change is applied, and every store's
 * `setConfig` checks them again. Throws ValidationError naming the setting.
 */
export function assertStorableConfig(config: unknown): void {
  if (!config || typeof config !== 'object' || Array.isArray(config)) {
    throw new ValidationError('invalid_option', 'configure: expected an object');
  }
  for (const [key, value] of Object.entries(config)) {
    checkText(key, key);
    // Iterative, so a hostile nesting depth cannot overflow the stack before it is refused.
    const stack: [unknown, number][] = [[value, 1]];
    for (let item = stack.pop(); item; item = stack.pop()) {
      const [v, depth] = item;
      if (typeof v === 'string') checkText(v, key);
      else if (v !== null && typeof v === 'object') {
        if (depth > MAX_JSON_DEPTH) {
          throw new ValidationError(
            'too_deep',
            `configure.${key}: nested deeper than ${MAX_JSON_DEPTH} levels of JSON`,
            { field: key },
          );
        }
        for (const [k, inner] of Object.entries(v)) {
          if (!Array.isArray(v)) checkText(k, key);
          stack.push([inner, depth + 1]);
        }
      }
    }
  }
}

function checkText(s: string, field: string): void {
  const bad = firstBadChar(s);
  if (bad < 0) return;
  if (s.charCodeAt(bad) === 0)
    throw new ValidationError('nul_byte', `configure.${field}: text contains a NUL (U+0000)`, { field });
  throw new ValidationError('lone_surrogate', `configure.${field}: text contains a lone surrogate`, {
    field,
  });
}

/**
 * A strategy as `configure` takes it: the engine's refusal (which names the strategy's own field,
 * `trigger: …`) as a refusal of the setting `strategy`.
 */
function parsedStrategy(input: unknown): StrategySpec {
  try {
    return parseStrategy(input);
  } catch (err) {
    if (!(err instanceof ValidationError) || err.field !== undefined) throw err;
    throw new ValidationError(err.code, err.message, { field: 'strategy' });
  }
}

/**
 * Refuses an option of a strategy that no strategy or trigger takes (`keepTurn` for `keepTurns`, at
 * any depth), which parsing would drop so that something else is configured without a word: a
 * ValidationError (`invalid_option`) naming it (`strategy.keepTurn`). Not part of {@link mergeConfig},
 * which the workflow runs again on replay, where a configuration it once accepted must stay accepted;
 * the client library checks it before it sends a configuration.
 */
export function checkStrategyOptions(strategy: unknown): void {
  if (strategy === undefined || strategy === null) return;
  const option = unknownStrategyOption(strategy);
  if (option !== undefined) throw refused(`strategy.${option}`, 'unknown option');
}

/** Every setting of a thread's configuration, as `configure` takes them. */
export const CONFIG_KEYS = [
  'budget',
  'model',
  'strategy',
  'idleMs',
  'extractEveryTurns',
  'memoryShare',
  'workingMemoryShare',
  'recallShare',
  'service',
  'closeAfterIdleMs',
  'retention',
] as const satisfies readonly (keyof ThreadConfig)[];

/**
 * Validates a partial configuration and merges it over `base`; the result is one a store can keep
 * ({@link assertStorableConfig}). Throws ValidationError.
 */
export function mergeConfig(base: ThreadConfig, patch: unknown): ThreadConfig {
  if (!patch || typeof patch !== 'object' || Array.isArray(patch)) {
    throw new ValidationError('invalid_option', 'configure: expected an object');
  }
  const p = patch as Record<string, unknown>;
  // A strategy's own limits first (they name what is wrong), then what any store could keep.
  if (p['strategy'] !== undefined && p['strategy'] !== null) checkStrategyShape(p['strategy']);
  assertStorableConfig(p);
  const known: readonly string[] = CONFIG_KEYS;
  for (const key of Object.keys(p)) {
    if (!known.includes(key)) throw refused(key, `unknown setting (${known.join(', ')})`);
  }
  for (const key of ['idleMs', 'extractEveryTurns'] as const) {
    const v = p[key];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAXIMA[key]) {
      throw refused(key, `expected a whole number from 0 to ${MAXIMA[key]}, got ${given(v)}`);
    }
  }
  const share = p['memoryShare'];
  if (share !== undefined && (typeof share !== 'number' || !(share >= 0 && share <= 0.5))) {
    throw refused('memoryShare', `expected a number from 0 to 0.5, got ${given(share)}`);
  }
  const pinnedShare = p['workingMemoryShare'];
  if (
    pinnedShare !== undefined &&
    (typeof pinnedShare !== 'number' || !(pinnedShare >= 0 && pinnedShare <= 0.5))
  ) {
    throw refused('workingMemoryShare', `expected a number from 0 to 0.5, got ${given(pinnedShare)}`);
  }
  const recall = p['recallShare'];
  if (recall !== undefined && (typeof recall !== 'number' || !(recall >= 0 && recall <= MAX_RECALL_SHARE))) {
    throw refused('recallShare', `expected a number from 0 to ${MAX_RECALL_SHARE}, got ${given(recall)}`);
  }
  const out: ThreadConfig = { ...DEFAULT_CONFIG, ...base };
  if (recall !== undefined) out.recallShare = recall as number;
  if (p['idleMs'] !== undefined) out.idleMs = p['idleMs'] as number;
  if (p['extractEveryTurns'] !== undefined) out.extractEveryTurns = p['extractEveryTurns'] as number;
  if (share !== undefined) out.memoryShare = share as number;
  if (pinnedShare !== undefined) out.workingMemoryShare = pinnedShare as number;
  if (p['budget'] !== undefined) out.budget = parseBudget('configure.budget', p['budget']);
  if (p['model'] !== undefined) out.model = parseModel('configure.model', p['model']);
  if (p['service'] !== undefined) {
    const binding = parseServiceBinding(p['service']);
    if (binding) out.service = binding;
    else delete out.service;
  }
  const close = p['closeAfterIdleMs'];
  if (close === null) delete out.closeAfterIdleMs;
  else if (close !== undefined)
    out.closeAfterIdleMs = parseAfterIdleMs('configure.closeAfterIdleMs', close, 'closeAfterIdleMs');
  if (p['retention'] !== undefined) {
    const retention = parseRetention(p['retention']);
    if (retention) out.retention = retention;
    else delete out.retention;
  }
  if (p['strategy'] === null) delete out.strategy;
  else if (p['strategy'] !== undefined) out.strategy = parsedStrategy(p['strategy']);
  assertStorableConfig(out);
  return out;
}
