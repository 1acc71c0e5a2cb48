/**
 * LoCoMo conversations (the long-term conversational memory benchmark, ACL 2024) as messages and
 * questions, for `npm run bench:recall -- --dataset DIR`. The data is public research data read from
 * DIR at run time (../shared/recall-dev: five conversations); none of it is in this repository.
 *
 * A file holds `speaker_a`, `speaker_b`, `session_N` (turns `{speaker, dia_id, text, blip_caption?}`)
 * with `session_N_date_time` ("1:56 pm on 8 May, 2023"), and `qa` (`question`, `category`,
 * `evidence`: the dia_ids of the turns that hold the answer).
 *
 * Each turn becomes one message: speaker_a's as `user`, speaker_b's as `assistant`, the content
 * `Speaker: text` (questions name the speakers, so the names must be searchable text) plus
 * ` [shared a photo of …]` for a turn that shared one (its caption; some questions ask about them).
 * A session's turns are dated its date and time, one minute apart, so they stay in order.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { MessageInput } from '../src/model/message.js';
import { MONTHS } from '../src/recall/time-expressions.js';

/** LoCoMo's question categories, by number. */
export const CATEGORIES: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
};

/** One turn as a message, with where it came from. */
export interface LocomoTurn {
  /** The LoCoMo turn id (`D3:12`: session 3, turn 12); also the message id. */
  diaId: string;
  session: number;
  message: MessageInput & { id: string; content: string; createdAt: string };
}

/** A question whose answer needs every evidence turn in the context. */
export interface LocomoQuestion {
  question: string;
  category: string;
  /** dia_ids (= message ids) of the evidence turns. */
  evidence: string[];
}

/** One conversation: turns in order and the questions about it. */
export interface LocomoConversation {
  /** The file's name without `.json` (`26`). */
  name: string;
  turns: LocomoTurn[];
  questions: LocomoQuestion[];
  /** Questions left out: no evidence, or evidence naming a turn the conversation does not have. */
  skipped: number;
}

/**
 * `1:56 pm on 8 May, 2023` as a UTC Date (the data gives no time zone).
 * @throws Error for any other shape.
 */
export function parseSessionDate(text: string): Date {
  const m = /^(\d{1,2}):(\d{2}) (am|pm) on (\d{1,2}) ([A-Za-z]+),? (\d{4})$/.exec(text.trim());
  const month = m ? MONTHS.indexOf(m[5]!.toLowerCase()) : -1;
  if (!m || month < 0) throw new Error(`unreadable session date: ${JSON.stringify(text)}`);
  const hour = (Number(m[1]) % 12) + (m[3] === 'pm' ? 12 : 0);
  return new Date(Date.UTC(Number(m[6]), month, Number(m[4]), hour, Number(m[2])));
}

/**
 * The dia_ids of an evidence list. A few entries in the data are malformed: several ids in one
 * string (`D8:6; D9:17`, `D9:1 D4:4`) or an extra colon (`D:11:26`); they are read as meant.
 */
export function parseEvidence(evidence: readonly string[]): string[] {
  return evidence
    .flatMap((e) => e.split(/[;,\s]+/))
    .filter((e) => e !== '')
    .map((e) => e.replace(/^D:(\d+):/, 'D$1:'));
}

interface RawTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}

interface RawQuestion {
  question: string;
  category: number;
  evidence?: string[];
}

/** One conversation file. */
export function readConversation(name: string, raw: Record<string, unknown>): LocomoConversation {
  const speakerA = raw['speaker_a'];
  const sessions = Object.keys(raw)
    .map((k) => /^session_(\d+)$/.exec(k))
    .filter((m): m is RegExpExecArray => m !== null && Array.isArray(raw[m[0]]))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  const turns: LocomoTurn[] = [];
  for (const session of sessions) {
    const start = parseSessionDate(String(raw[`session_${session}_date_time`])).getTime();
    (raw[`session_${session}`] as RawTurn[]).forEach((t, i) => {
      const photo = t.blip_caption ? ` [shared ${t.blip_caption}]` : '';
      turns.push({
        diaId: t.dia_id,
        session,
        message: {
          id: t.dia_id,
          role: t.speaker === speakerA ? 'user' : 'assistant',
          content: `${t.speaker}: ${t.text}${photo}`,
          createdAt: new Date(start + i * 60_000).toISOString(),
        },
      });
    });
  }
  const ids = new Set(turns.map((t) => t.diaId));
  const questions: LocomoQuestion[] = [];
  let skipped = 0;
  for (const q of raw['qa'] as RawQuestion[]) {
    const evidence = parseEvidence(q.evidence ?? []);
    if (evidence.length === 0 || !evidence.every((id) => ids.has(id))) {
      skipped++;
      continue;
    }
    questions.push({
      question: q.question,
      category: CATEGORIES[q.category] ?? `category ${q.category}`,
      evidence: [...new Set(evidence)],
    });
  }
  return { name, turns, questions, skipped };
}

/** Every `*.json` conversation in `dir`, by name. */
export async function readDataset(dir: string): Promise<LocomoConversation[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  if (files.length === 0) throw new Error(`no conversations (*.json) in ${dir}`);
  const out: LocomoConversation[] = [];
  for (const file of files) {
    const raw = JSON.parse(await readFile(path.join(dir, file), 'utf8')) as Record<string, unknown>;
    out.push(readConversation(file.replace(/\.json$/, ''), raw));
  }
  return out;
}
