/**
 * Progress of long work on stderr. On a terminal: one line redrawn in place with `\r` (a bar, the
 * percentage, the count, the rate), at most ten times a second. Elsewhere (a pipe, a log file, CI):
 * plain lines such as `imported 2,000/10,000 messages (20%, 3,100/s)`, one per step the caller reports,
 * because a redrawn line is unreadable in a log.
 */
import { int } from './output.js';

/** Options of {@link Progress}. */
export interface ProgressOptions {
  /** Shown before the bar, e.g. `importing`. */
  label: string;
  /** Past tense for plain lines, e.g. `imported`. */
  done: string;
  /** What is counted, e.g. `messages`. */
  unit: string;
  total: number;
  /** Where to draw (default process.stderr); `isTTY` picks the mode. */
  stream?: NodeJS.WriteStream;
  /** Force a mode (default: the stream's `isTTY`). */
  tty?: boolean;
}

/** Minimum time between two redraws of the bar. */
const REDRAW_MS = 100;

/** A progress bar or plain progress lines; see the module comment. */
export class Progress {
  private count = 0;
  private readonly started = Date.now();
  private lastDraw = 0;
  private drawn = false;
  private readonly stream: NodeJS.WriteStream;
  private readonly tty: boolean;

  constructor(private readonly options: ProgressOptions) {
    this.stream = options.stream ?? process.stderr;
    this.tty = options.tty ?? Boolean(this.stream.isTTY);
  }

  /** Whether the bar is drawn in place (a terminal) rather than printed as plain lines. */
  get isTty(): boolean {
    return this.tty;
  }

  /** Sets the count; draws (throttled on a terminal) or prints a plain line. */
  update(count: number, detail = ''): void {
    this.count = count;
    if (!this.tty) {
      this.stream.write(`${this.plain()}${detail ? ` ${detail}` : ''}\n`);
      return;
    }
    const now = Date.now();
    if (now - this.lastDraw < REDRAW_MS && count < this.options.total) return;
    this.lastDraw = now;
    this.draw();
  }

  /** A line of its own (e.g. "thread x done") without breaking the bar: printed above it. */
  log(text: string): void {
    if (this.tty && this.drawn) this.stream.write('\r\x1b[2K');
    this.stream.write(`${text}\n`);
    if (this.tty && this.drawn) this.draw();
  }

  /** Draws the final state and ends the bar's line. */
  finish(): void {
    if (!this.tty) return;
    this.draw();
    this.stream.write('\n');
    this.drawn = false;
  }

  private rate(): string {
    const seconds = (Date.now() - this.started) / 1000;
    return seconds > 0 ? `${int(Math.round(this.count / seconds))}/s` : '';
  }

  private percent(): number {
    const { total } = this.options;
    return total > 0 ? Math.floor((this.count / total) * 100) : 100;
  }

  private plain(): string {
    const { done, unit, total } = this.options;
    return `${done} ${int(this.count)}/${int(total)} ${unit} (${this.percent()}%, ${this.rate()})`;
  }

  private draw(): void {
    const { label, unit, total } = this.options;
    const pct = this.percent();
    const tail = ` ${String(pct).padStart(3)}%  ${int(this.count)}/${int(total)} ${unit}  ${this.rate()}`;
    const columns = this.stream.columns || 80;
    // The bar takes what the label and figures leave, between 10 and 40 cells.
    const width = Math.max(10, Math.min(40, columns - label.length - tail.length - 4));
    const filled = Math.round((width * pct) / 100);
    const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
    this.stream.write(`\r\x1b[2K${label} [${bar}]${tail}`);
    this.drawn = true;
  }
}
