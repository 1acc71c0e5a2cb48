/**
 * The client's Temporal connection, made on first need: reads (history, export, listing, context)
 * go to the store alone and work while Temporal is down; a command that needs Temporal connects
 * then, and says so plainly when it cannot. A failed connect is not remembered: the next call tries
 * again. The address can be moved (a local stack restarted on other ports): calls in flight finish
 * on the old connection, which is closed once they have.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Client } from '@temporalio/client';
import { BackendUnavailableError } from '../settings/errors.js';
import type { Setting } from '../settings/origin.js';
import { ensureTemporalClient, lazyTemporalClient } from '../settings/temporal-connection.js';
import { InFlightCalls } from './in-flight-calls.js';
import { GRPC_UNAVAILABLE, grpcCodeIn } from './typed-errors.js';

/** How long a retired connection's calls may run before it is closed anyway. */
const RETIRE_GRACE_MS = 10_000;

/** One connection: its client (dialled on first call), the calls in flight, whether it was checked. */
interface Link {
  client: Client;
  calls: InFlightCalls;
  ready?: Promise<void>;
}

/** A lazily connected, re-targetable Temporal client; see the module comment. */
export class TemporalLink {
  /** The connection, made on first need (making one loads the Temporal SDK; reads never do). */
  private made?: Link;
  private readonly retiring = new Set<Promise<void>>();
  private readonly deadlines = new AsyncLocalStorage<number>();

  constructor(
    private target: Setting,
    private readonly namespace: string,
    /** Asked after an "unavailable": true when the address moved (then the call is tried once more). */
    private readonly moved: () => Promise<boolean> = async () => false,
  ) {}

  private get link(): Link {
    return (this.made ??= this.make());
  }

  private make(): Link {
    const calls = new InFlightCalls();
    const client = lazyTemporalClient(this.target, {
      namespace: this.namespace,
      interceptors: calls.interceptors(),
    });
    return { client, calls };
  }

  /** The Temporal address in use (named in errors). */
  get address(): string {
    return this.target.shown;
  }

  /** The address and where it came from. */
  get setting(): Setting {
    return this.target;
  }

  /** The current client, not yet checked: its first call dials (see {@link client}). */
  get current(): Client {
    return this.link.client;
  }

  /**
   * The client, once its server answered (checked on first need, at most 5 s).
   * @throws BackendUnavailableError naming the address and its origin
   */
  async client(): Promise<Client> {
    const link = this.link;
    link.ready ??= ensureTemporalClient(this.target, link.client);
    try {
      await link.ready;
    } catch (err) {
      // The SDK remembers a failed check: the next call gets a fresh connection.
      if (this.made === link) {
        this.made = undefined;
        this.retire(link, 0);
      }
      throw err;
    }
    return link.client;
  }

  /**
   * Runs `fn` with a gRPC deadline on every Temporal call made inside it through this link (also on
   * a connection made later). Nested deadlines keep the earliest.
   */
  withDeadline<T>(deadline: number, fn: () => Promise<T>): Promise<T> {
    const outer = this.deadlines.getStore();
    return this.deadlines.run(outer === undefined ? deadline : Math.min(outer, deadline), fn);
  }

  /**
   * Calls Temporal: connects if needed, applies the deadline (and any from {@link withDeadline}),
   * and when the server is unavailable and the address has moved meanwhile, tries once more there.
   */
  async call<T>(fn: (client: Client) => Promise<T>, deadline?: number): Promise<T> {
    try {
      return await this.once(fn, deadline);
    } catch (err) {
      const unavailable = err instanceof BackendUnavailableError || grpcCodeIn(err) === GRPC_UNAVAILABLE;
      if (!unavailable || !(await this.moved())) throw err;
      return this.once(fn, deadline);
    }
  }

  private async once<T>(fn: (client: Client) => Promise<T>, deadline?: number): Promise<T> {
    const outer = this.deadlines.getStore();
    const bound = deadline === undefined ? outer : outer === undefined ? deadline : Math.min(outer, deadline);
    const client = await this.client();
    return bound === undefined ? fn(client) : client.connection.withDeadline(bound, () => fn(client));
  }

  /** Points the link at another address; the old connection closes once its calls have ended. */
  retarget(target: Setting): void {
    this.target = target;
    const old = this.made;
    this.made = undefined;
    if (old) this.retire(old, RETIRE_GRACE_MS);
  }

  private retire(link: Link, graceMs: number): void {
    const done = (async () => {
      await link.calls.idle(graceMs);
      await link.client.connection.close().catch(() => undefined);
    })().finally(() => this.retiring.delete(done));
    this.retiring.add(done);
  }

  /** Closes the connection once calls in flight have ended (at most `graceMs`). */
  async close(graceMs: number): Promise<void> {
    if (this.made) this.retire(this.made, graceMs);
    await Promise.all([...this.retiring]);
  }
}
