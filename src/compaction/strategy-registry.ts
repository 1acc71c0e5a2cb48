/**
 * Dispatch by `type` over a list of strategy definitions: validate a spec given as data, run it, and
 * ask whether it fires or needs bodies, children included (each definition reaches its children
 * through callbacks that come back here). strategy-spec.ts builds the product's one registry from
 * strategies/index.ts; a test builds its own from the same list plus a strategy of its own.
 */
import { ValidationError } from '../model/errors.js';
import type { Metrics } from './metrics.js';
import type { StrategyContext, StrategyDefinition } from './strategy.js';

/** The spec a definition handles. */
export type SpecOf<D> = D extends StrategyDefinition<infer S> ? S : never;

/** The entry points over a list of definitions. */
export interface StrategyRegistry<S extends { type: string }> {
  /** The registered types, in the order of the list. */
  readonly types: readonly S['type'][];
  /** Validates a spec given as data. Throws a ValidationError (`invalid_option`) naming the bad field. */
  parse(input: unknown): S;
  /** Runs a (validated) spec. */
  run(spec: S, ctx: StrategyContext): Promise<void>;
  /** True if running `spec` may change the view given `metrics` (see {@link StrategyDefinition.fires}). */
  fires(spec: S, metrics: Metrics): boolean;
  /** True if running `spec` may create messages, so needs bodies and `countTokens`. */
  needsBodies(spec: S): boolean;
}

/**
 * Registers `definitions`.
 * @throws Error when two share a type (a programming error, caught when the module loads).
 */
export function strategyRegistry<D extends readonly StrategyDefinition<{ type: string }>[]>(
  definitions: D,
): StrategyRegistry<SpecOf<D[number]>> {
  type S = SpecOf<D[number]>;
  const byType = new Map<string, D[number]>();
  for (const d of definitions) {
    if (byType.has(d.type)) throw new Error(`strategy type ${JSON.stringify(d.type)} is registered twice`);
    byType.set(d.type, d);
  }
  const types = definitions.map((d) => d.type as S['type']);
  // Specs reaching run/fires/needsBodies were parsed, so an unknown type is a caller's bug.
  const definitionOf = (spec: { type: string }): D[number] => {
    const d = byType.get(spec.type);
    if (!d) throw new Error(`unknown strategy type ${JSON.stringify(spec.type)}: parse the spec first`);
    return d;
  };

  const parse = (input: unknown): S => {
    if (!input || typeof input !== 'object') {
      throw new ValidationError(
        'invalid_option',
        `strategy: expected an object, got ${JSON.stringify(input)}`,
      );
    }
    const fields = input as Record<string, unknown>;
    const d = typeof fields.type === 'string' ? byType.get(fields.type) : undefined;
    if (!d) {
      throw new ValidationError(
        'invalid_option',
        `strategy.type: expected one of ${types.join(', ')}, got ${JSON.stringify(fields.type)}`,
      );
    }
    return d.parse(fields, parse) as S;
  };
  const fires = (spec: S, metrics: Metrics): boolean =>
    definitionOf(spec).fires(spec, metrics, (child) => fires(child as S, metrics));
  const needsBodies = (spec: S): boolean =>
    definitionOf(spec).needsBodies?.(spec, (child) => needsBodies(child as S)) ?? false;
  const run = (spec: S, ctx: StrategyContext): Promise<void> => definitionOf(spec).apply(spec, ctx);

  return { types, parse, run, fires, needsBodies };
}
