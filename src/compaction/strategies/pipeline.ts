/**
 * Pipeline: run strategies in order, gentlest first; each child checks its own trigger against the
 * metrics its predecessors left. The pipeline itself always runs.
 */
import type { StrategyContext, StrategyDefinition } from '../strategy.js';
import { ValidationError } from '../../model/errors.js';

/** A pipeline as data. Children are any strategy specs. */
export interface PipelineSpec {
  type: 'pipeline';
  strategies: unknown[];
}

/** Creates a pipeline of strategies (each already built with its own factory). */
export function pipeline(...strategies: unknown[]): PipelineSpec {
  if (strategies.length === 0)
    throw new ValidationError('invalid_option', 'pipeline: give at least one strategy');
  return { type: 'pipeline', strategies };
}

/** Runs the children in order. */
export async function applyPipeline(spec: PipelineSpec, ctx: StrategyContext): Promise<void> {
  for (const child of spec.strategies) await ctx.run(child);
}

/** The pipeline, as registered in strategies/index.ts. */
export const pipelineDefinition: StrategyDefinition<PipelineSpec> = {
  type: 'pipeline',
  parse(input, parseChild) {
    if (!Array.isArray(input.strategies))
      throw new ValidationError('invalid_option', 'pipeline.strategies: expected an array');
    return pipeline(...input.strategies.map((child) => parseChild(child)));
  },
  apply: applyPipeline,
  fires: (spec, _m, firesChild) => spec.strategies.some((child) => firesChild(child)),
  needsBodies: (spec, needsBodiesChild) => spec.strategies.some((child) => needsBodiesChild(child)),
};
