/**
 * Speakers a query names. Transcripts and imported multi-party chats label each turn with its
 * speaker ("Melanie: We went camping last week."); a question about a person ("What activities does
 * Melanie partake in?") is answered mostly by that person's own turns. On the LoCoMo dev set, of the
 * evidence turns of questions naming one of the two speakers, 82.5% are that speaker's (half the
 * turns are), and 95% of the evidence turns recall missed at 4,000 tokens were a named speaker's.
 * Full text cannot use it: the name is in every turn of the speaker, so it is too common to count
 * (src/store/postgres: words in more than 100 messages are left out beside rarer ones), and by
 * meaning the name is one word of many. So the fusion lifts a candidate whose speaker the query
 * names by {@link SPEAKER_BOOST} (src/recall/fuse.ts): enough to pass hits close to it, not to bury
 * a better hit of the other speaker (putting such turns first lost about 5 points at 4k: the names-weighted
 * try in docs/memory-and-recall.md). Pure.
 */

/**
 * What a candidate whose speaker the query names adds to its fused score (the rankers' weighted
 * scaled scores sum to at most 1).
 */
export const SPEAKER_BOOST = 0.15;

/** A speaker label at the start of a turn: one or two capitalized words, then a colon and a space. */
const LABEL = /^(\p{Lu}[\p{L}\p{M}'’-]*(?: \p{Lu}[\p{L}\p{M}'’-]*)?):\s/u;

/** A capitalized word: where a query names someone. */
const NAME = /\p{Lu}[\p{L}\p{M}'’-]*/gu;

/** The speaker a turn's text names at its start (`Name: …`), or undefined. */
export function speakerOf(text: string): string | undefined {
  return LABEL.exec(text)?.[1];
}

/** The capitalized words of a query (a possessive's `'s` dropped): the names it may mention. */
export function namesIn(query: string): Set<string> {
  return new Set((query.match(NAME) ?? []).map((w) => w.replace(/['’]s$/u, '')));
}

/** Whether a query naming `names` names `speaker` (each word of a two-word speaker counts). */
export function namesSpeaker(names: ReadonlySet<string>, speaker: string | undefined): boolean {
  return speaker !== undefined && speaker.split(' ').some((w) => names.has(w));
}
