/**
 * Seeded long multi-session conversations with planted facts, for `npm run bench:recall`: the same
 * seed always gives the same sessions, facts and questions.
 *
 * Shape: `sessions` sessions a few days apart, each of user/assistant turns of everyday chat (work,
 * cooking, travel, family, books, sport…) drawn from shared word lists, so that the words a question
 * uses also turn up in unrelated turns. Facts are planted in user turns, each followed by an
 * assistant reply that echoes a detail. Three kinds, about a third each:
 * - `single`: stated once (evidence: that turn);
 * - `updated`: stated, then changed many sessions later (evidence: both turns, the answer is the second);
 * - `spread`: half said in one turn, the rest in a later session (evidence: both turns).
 * Questions paraphrase the fact, sharing only some of its words (a name, a thing), as people ask.
 */
import type { MessageInput } from '../src/model/message.js';
import { mulberry32 } from './synthetic-conversation.js';

/** A question whose answer needs every evidence message in the context. */
export interface RecallQuestion {
  question: string;
  kind: 'single' | 'updated' | 'spread';
  /** Ids of the messages holding the evidence. */
  evidence: string[];
}

/** One conversation: its messages (with createdAt) in order, and the questions about it. */
export interface RecallConversation {
  messages: MessageInput[];
  questions: RecallQuestion[];
}

const pick = <T>(rand: () => number, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;

const NAMES =
  'Ingrid Tomasz Amara Kenji Lucia Farid Mirela Osei Hanne Priya Dmitri Noor Elif Bastian Yara Corin'.split(
    ' ',
  );
const CITIES =
  'Trondheim Valencia Krakow Nagoya Porto Tbilisi Ghent Leipzig Bergen Dundee Lyon Tartu Bologna Graz'.split(
    ' ',
  );
const PETS = 'cat dog parrot rabbit tortoise hamster ferret'.split(' ');
const PET_NAMES = 'Biscuit Pepper Mochi Ziggy Clementine Waffles Juniper Nimbus Pickle Saffron'.split(' ');
const INSTRUMENTS = 'cello violin piano trumpet ukulele clarinet drums banjo'.split(' ');
const SPORTS = 'marathon triathlon cycling race swim meet climbing contest rowing regatta'.split(' ');
const DISHES = 'lasagne ramen paella goulash moussaka risotto dumplings curry'.split(' ');
const COMPANIES = 'Nordlys Hexaware Bluefin Corvid Lumenta Quarry Labs Fernhill Aldous'.split(' ');
const JOBS = 'data engineer nurse carpenter translator architect pharmacist teacher pilot'.split(' ');
const AIRLINES = 'Finnair Iberia Lufthansa Norwegian Aegean Wizz'.split(' ');
const MONTHS = 'January February March April May June July August September October November December'.split(
  ' ',
);

const TOPICS = [
  'work',
  'cooking',
  'travel',
  'family',
  'books',
  'sport',
  'garden',
  'music',
  'weather',
  'money',
  'health',
  'movies',
  'friends',
  'car',
  'house',
  'school',
  'shopping',
  'holiday',
  'sleep',
  'coffee',
];
const NOUNS = (
  'meeting deadline project report recipe oven pasta sauce train ticket hotel airport sister brother ' +
  'mother cousin novel chapter author library match team coach gym tomatoes roses soil guitar song ' +
  'concert rain umbrella budget rent bill doctor appointment film series neighbour party car engine ' +
  'kitchen roof exam homework groceries market beach tent alarm pillow espresso mug laptop email ' +
  'birthday dinner trip job name teacher lesson pet dog cat race city flight'
).split(' ');
const VERBS =
  'finished started planned missed cooked read watched fixed bought booked cleaned moved forgot tried enjoyed'.split(
    ' ',
  );
const ADJS = 'long busy quiet strange lovely noisy expensive cheap slow quick tiring relaxing new old'.split(
  ' ',
);

/** One line of everyday chat on `topic`, reusing words questions use too. */
function chat(rand: () => number, topic: string): string {
  const n = () => pick(rand, NOUNS);
  const templates = [
    () => `I ${pick(rand, VERBS)} the ${n()} today, it was a ${pick(rand, ADJS)} day for ${topic}.`,
    () => `Do you have any tips about ${topic}? My ${n()} keeps getting in the way of the ${n()}.`,
    () => `Yesterday my ${n()} and I ${pick(rand, VERBS)} a ${pick(rand, ADJS)} ${n()} near the ${n()}.`,
    () => `Thinking about ${topic} again: the ${n()} was ${pick(rand, ADJS)} and the ${n()} even more so.`,
    () => `Not much news. I ${pick(rand, VERBS)} my ${n()}, then ${pick(rand, VERBS)} the ${n()} before bed.`,
  ];
  return pick(rand, templates)();
}

/** An assistant reply to a chat line. */
function reply(rand: () => number, topic: string): string {
  const n = () => pick(rand, NOUNS);
  const templates = [
    () => `That sounds ${pick(rand, ADJS)}. For ${topic}, it can help to plan the ${n()} a day ahead.`,
    () => `Good to hear. A ${pick(rand, ADJS)} ${n()} is often the best part of ${topic}.`,
    () => `I see. Maybe try the ${n()} first and leave the ${n()} for the weekend?`,
    () => `Thanks for sharing! How did the ${n()} go in the end?`,
  ];
  return pick(rand, templates)();
}

interface Plant {
  kind: RecallQuestion['kind'];
  first: string;
  firstReply: string;
  second?: string;
  secondReply?: string;
  question: string;
}

/** A fact to plant, with its question; every slot value is drawn from the seeded generator. */
function plant(rand: () => number, kind: RecallQuestion['kind'], i: number): Plant {
  const name = pick(rand, NAMES);
  const city = pick(rand, CITIES);
  const city2 = pick(
    rand,
    CITIES.filter((c) => c !== city),
  );
  const month = pick(rand, MONTHS);
  const variant = i % 5;
  if (kind === 'single') {
    return [
      {
        kind,
        first: `Big news in the family: my sister ${name} just moved to ${city} for work.`,
        firstReply: `How exciting for ${name}! ${city} is a lovely place to live.`,
        question: `Where does my sister ${name} live these days?`,
      },
      {
        kind,
        first: `We adopted a ${pick(rand, PETS)} last weekend, and the kids named it ${pick(rand, PET_NAMES)}.`,
        firstReply: 'Congratulations on the new family member! What a cute name.',
        question: 'What did the kids name our new pet?',
      },
      {
        kind,
        first: `I finally signed up for ${pick(rand, INSTRUMENTS)} lessons with a teacher called ${name}.`,
        firstReply: `Learning an instrument is so rewarding. I hope ${name} is patient!`,
        question: 'Who is my music teacher again?',
      },
      {
        kind,
        first: `For my birthday in ${month} I booked a table at a ${pick(rand, DISHES)} place in ${city}.`,
        firstReply: 'That sounds like a delicious way to celebrate.',
        question: 'Where am I going for my birthday dinner?',
      },
      {
        kind,
        first: `I got the job! I start as a ${pick(rand, JOBS)} at ${pick(rand, COMPANIES)} next month.`,
        firstReply: 'Congratulations, that is wonderful news about the new job!',
        question: 'What job did I get, and at which company?',
      },
    ][variant]!;
  }
  if (kind === 'updated') {
    return [
      {
        kind,
        first: `My cousin ${name} lives in ${city} now, close to the old harbour.`,
        firstReply: `Nice, ${city} has a beautiful harbour.`,
        second: `Update on my cousin ${name}: she left ${city} and moved to ${city2}.`,
        secondReply: `Thanks for the update about ${name}.`,
        question: `Which city does my cousin ${name} live in now?`,
      },
      {
        kind,
        first: `My ${pick(rand, SPORTS)} is planned for ${month}, I am training every morning.`,
        firstReply: 'Good luck with the training!',
        second: `Change of plans: the ${pick(rand, SPORTS)} moved to ${pick(rand, MONTHS)} because of the weather.`,
        secondReply: 'More time to train, then.',
        question: 'When is my race now?',
      },
      {
        kind,
        first: `Our team lead is ${name}, who runs the weekly planning meeting.`,
        firstReply: `Weekly planning with ${name} sounds well organised.`,
        second: `${name} left the company, so ${pick(
          rand,
          NAMES.filter((x) => x !== name),
        )} is our team lead from now on.`,
        secondReply: 'Changes in a team take some getting used to.',
        question: 'Who is our team lead at the moment?',
      },
    ][variant % 3]!;
  }
  return [
    {
      kind,
      first: `I am planning a trip to ${city} with my brother.`,
      firstReply: `${city} is a great choice for a trip.`,
      second: `We booked the flights for the ${city} trip: ${pick(rand, AIRLINES)}, leaving on ${month} ${1 + Math.floor(rand() * 27)}.`,
      secondReply: 'Great, the trip is really happening!',
      question: `When do we fly to ${city}, and with which airline?`,
    },
    {
      kind,
      first: `My neighbour ${name} lent me a recipe for ${pick(rand, DISHES)}.`,
      firstReply: 'Borrowed recipes are often the best ones.',
      second: `The secret ingredient in ${name}'s recipe turned out to be smoked ${pick(rand, ['paprika', 'salt', 'chilli', 'garlic'])}.`,
      secondReply: 'Smoky flavours make all the difference.',
      question: `What dish is ${name}'s recipe for, and what is its secret ingredient?`,
    },
  ][variant % 2]!;
}

/**
 * A conversation of `sessions` × `turnsPerSession` turns (two messages each) with `facts` planted facts.
 * @param seed the generator's seed; the conversation's ids are prefixed with `c<seed>-`.
 */
export function recallConversation(
  seed: number,
  options: { sessions?: number; turnsPerSession?: number; facts?: number } = {},
): RecallConversation {
  const rand = mulberry32(seed);
  const sessions = options.sessions ?? 20;
  const perSession = options.turnsPerSession ?? 15;
  const factCount = options.facts ?? 12;
  const turns = sessions * perSession;
  // Facts are stated in the first two thirds, second halves and updates later, always apart.
  const kinds: RecallQuestion['kind'][] = ['single', 'updated', 'spread'];
  const slots = new Map<number, { plant: Plant; part: 1 | 2; index: number }>();
  const plants: Plant[] = [];
  for (let f = 0; f < factCount; f++) {
    const p = plant(rand, kinds[f % 3]!, Math.floor(f / 3));
    plants.push(p);
    let at: number;
    do at = Math.floor(rand() * turns * 0.6);
    while (slots.has(at));
    slots.set(at, { plant: p, part: 1, index: f });
    if (p.second) {
      let later: number;
      do later = at + perSession * 2 + Math.floor(rand() * (turns - at - perSession * 2 - 10));
      while (slots.has(later));
      slots.set(later, { plant: p, part: 2, index: f });
    }
  }
  const messages: MessageInput[] = [];
  const evidence = plants.map(() => [] as string[]);
  const start = Date.UTC(2024, 0, 8, 9, 0) + (seed % 30) * 86_400_000;
  for (let t = 0; t < turns; t++) {
    const session = Math.floor(t / perSession);
    const minute = (t % perSession) * 3;
    const at = (extra: number) =>
      new Date(start + session * 3 * 86_400_000 + (minute + extra) * 60_000).toISOString();
    const topic = pick(rand, TOPICS);
    const slot = slots.get(t);
    const userId = `c${seed}-u${t}`;
    const user = slot ? (slot.part === 1 ? slot.plant.first : slot.plant.second!) : chat(rand, topic);
    const assistant = slot
      ? slot.part === 1
        ? slot.plant.firstReply
        : slot.plant.secondReply!
      : reply(rand, topic);
    if (slot) evidence[slot.index]!.push(userId);
    messages.push({ id: userId, role: 'user', content: user, createdAt: at(0) });
    messages.push({ id: `c${seed}-a${t}`, role: 'assistant', content: assistant, createdAt: at(1) });
  }
  const questions = plants.map((p, i) => ({ question: p.question, kind: p.kind, evidence: evidence[i]! }));
  return { messages, questions };
}
