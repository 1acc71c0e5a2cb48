/**
 * Time expressions in a recall query ("in May 2023", "last week", "two weeks ago", "before 8 May
 * 2023", "the week before 8 May 2023") resolved to a window of message dates, relative to an
 * anchor: the newest message's date, never the clock, so the same history and query give the same
 * window. Pure.
 */

/** A window of message dates, epoch milliseconds, inclusive; an open side is ±Infinity. */
export interface TimeWindow {
  since: number;
  until: number;
}

const DAY = 86_400_000;

/** English month names, January first (also read by the LoCoMo loader in bench/). */
export const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const MONTH = `(${MONTHS.join('|')}|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)`;
const SEASONS: Record<string, [number, number]> = {
  spring: [2, 4],
  summer: [5, 7],
  autumn: [8, 10],
  fall: [8, 10],
  winter: [11, 13],
};
const NUMBERS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  few: 3,
  couple: 2,
};

const UNITS = { day: DAY, week: 7 * DAY, month: 30 * DAY, year: 365 * DAY };
const COUNT = '(\\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|couple)';
/**
 * "two weeks before X", "the week before X", "last weekend before X": a span ending at X. What
 * happened then may be told on X itself ("I got a puppy two weeks ago!"), so the window runs from
 * about that far before X (half a unit more) through X.
 */
const SPAN_BEFORE = new RegExp(
  `\\b(?:${COUNT}(?: of)? (day|week|month|year)s?|the (day|week|weekend|month|year)|(?:last|that) (week|weekend))\\s+before\\s+$`,
  'u',
);

const monthIndex = (name: string) => MONTHS.findIndex((m) => m.startsWith(name.slice(0, 3)));
const utc = (y: number, m: number, d = 1) => Date.UTC(y, m, d);
const monthWindow = (y: number, m: number): TimeWindow => ({ since: utc(y, m), until: utc(y, m + 1) - 1 });
const dayWindow = (at: number): TimeWindow => {
  const start = Math.floor(at / DAY) * DAY;
  return { since: start, until: start + DAY - 1 };
};

/**
 * The dates `text` names, as a window, or undefined when it names none. The first expression found
 * wins; "before X" / "after X" open the window on one side ("by X" keeps X in it); "two weeks before
 * X" runs from about two weeks before X through X ({@link SPAN_BEFORE}).
 * @param anchor epoch milliseconds the relative expressions count from (the newest message's date).
 */
export function timeWindow(text: string, anchor: number): TimeWindow | undefined {
  const q = text.toLowerCase();
  const side = /\b(before|until)\s+$/u;
  const by = /\bby\s+$/u;
  const after = /\b(after|since)\s+$/u;
  const open = (w: TimeWindow, at: number): TimeWindow => {
    const lead = q.slice(0, at);
    const span = SPAN_BEFORE.exec(lead);
    if (span) {
      const n = span[1] ? (NUMBERS[span[1]] ?? +span[1]) : 1;
      const unit = UNITS[(span[2] ?? span[3] ?? span[4])!.replace('weekend', 'week') as keyof typeof UNITS];
      return { since: w.since - (n + 0.5) * unit, until: w.until };
    }
    if (by.test(lead)) return { since: -Infinity, until: w.until };
    if (side.test(lead)) return { since: -Infinity, until: w.since - 1 };
    if (after.test(lead)) return { since: w.until + 1, until: Infinity };
    return w;
  };
  const rules: [RegExp, (m: RegExpExecArray) => TimeWindow | undefined][] = [
    // on 8 May 2023, 8th of May 2023
    [
      new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?(?: of)? ${MONTH},? (\\d{4})\\b`, 'u'),
      (m) => dayWindow(utc(+m[3]!, monthIndex(m[2]!), +m[1]!)),
    ],
    // May 8, 2023
    [
      new RegExp(`\\b${MONTH} (\\d{1,2})(?:st|nd|rd|th)?,? (\\d{4})\\b`, 'u'),
      (m) => dayWindow(utc(+m[3]!, monthIndex(m[1]!), +m[2]!)),
    ],
    // (mid-|early |late )May 2023
    [new RegExp(`\\b${MONTH},? (\\d{4})\\b`, 'u'), (m) => monthWindow(+m[2]!, monthIndex(m[1]!))],
    // summer 2023
    [
      /\b(spring|summer|autumn|fall|winter),? (?:of )?(\d{4})\b/u,
      (m) => {
        const [from, to] = SEASONS[m[1]!]!;
        return { since: utc(+m[2]!, from), until: utc(+m[2]!, to + 1) - 1 };
      },
    ],
    // in 2023
    [/(?<=\b(?:in|during|of|since|before|after|until) )((?:19|20)\d{2})\b/u, (m) => yearWindow(+m[1]!)],
    [/\byesterday\b/u, () => dayWindow(anchor - DAY)],
    [/\btoday\b/u, () => dayWindow(anchor)],
    [/\blast (week|weekend)\b/u, () => ({ since: anchor - 14 * DAY, until: anchor })],
    [/\blast month\b/u, () => ({ since: anchor - 62 * DAY, until: anchor })],
    [/\blast year\b/u, () => yearWindow(new Date(anchor).getUTCFullYear() - 1)],
    [
      new RegExp(`\\blast ${MONTH}\\b`, 'u'),
      (m) => {
        const now = new Date(anchor);
        const month = monthIndex(m[1]!);
        const y = now.getUTCFullYear() - (month >= now.getUTCMonth() ? 1 : 0);
        return monthWindow(y, month);
      },
    ],
    // two weeks ago, a few days ago, 3 months ago
    [
      new RegExp(`\\b${COUNT}(?: of)? (day|week|month|year)s? ago\\b`, 'u'),
      (m) => {
        const n = NUMBERS[m[1]!] ?? +m[1]!;
        const unit = UNITS[m[2] as keyof typeof UNITS];
        // About n units back: half a unit either side.
        return { since: anchor - (n + 0.5) * unit, until: anchor - Math.max(0, n - 0.5) * unit };
      },
    ],
  ];
  for (const [re, window] of rules) {
    const m = re.exec(q);
    if (!m) continue;
    const w = window(m);
    if (w && Number.isFinite(w.since + w.until) && w.since <= w.until) return open(w, m.index);
  }
  return undefined;
}

function yearWindow(y: number): TimeWindow {
  return { since: utc(y, 0), until: utc(y + 1, 0) - 1 };
}
