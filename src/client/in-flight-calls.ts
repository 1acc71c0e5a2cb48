/**
 * Tracks the Temporal gRPC calls a client has in flight, so that `close()` can let them end first.
 *
 * Why: the SDK retries an UNAVAILABLE call after a backoff timer. If the connection is closed while
 * such a timer is pending (a query abandoned after a Temporal outage, say), the retry throws
 * "Channel has been shut down" from inside the timer: an uncaught exception in the caller's process.
 * This interceptor sits outside the retry interceptor, so a call counts as in flight until its last
 * attempt has ended.
 */
import { createRequire } from 'node:module';
import type * as Grpc from '@grpc/grpc-js';
import type { Interceptor } from '@grpc/grpc-js';
import { retryInterceptor } from './hand-over-retry.js';

/**
 * grpc-js's InterceptingCall, required at the first call rather than imported: a process that never
 * calls Temporal (a CLI read) never loads grpc-js (see temporalSdk()).
 */
let interceptingCall: typeof Grpc.InterceptingCall | undefined;
const grpcInterceptingCall = () =>
  (interceptingCall ??= (createRequire(import.meta.url)('@grpc/grpc-js') as typeof Grpc).InterceptingCall);

/** Counts calls from start to final status; {@link idle} waits for none to be left. */
export class InFlightCalls {
  private count = 0;
  private waiters: (() => void)[] = [];

  /** Calls started and not yet ended (retries included). */
  get size(): number {
    return this.count;
  }

  /** The interceptors to give `Connection.connect`: this tracker, then the retries. */
  interceptors(): Interceptor[] {
    return [this.interceptor, retryInterceptor()];
  }

  private readonly interceptor: Interceptor = (options, nextCall) =>
    new (grpcInterceptingCall())(nextCall(options), {
      start: (metadata, _listener, next) => {
        let ended = false;
        const end = () => {
          if (ended) return;
          ended = true;
          this.release();
        };
        this.count++;
        try {
          // A partial listener: grpc-js passes every other event through unchanged.
          next(metadata, {
            onReceiveStatus: (status, nextStatus) => {
              end();
              nextStatus(status);
            },
          });
        } catch (err) {
          end();
          throw err;
        }
      },
    });

  private release(): void {
    this.count--;
    if (this.count === 0) for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves when no call is in flight, or after `timeoutMs` (true if idle). */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      // A ref'd timer: close() is awaited, and the process must live until the grace period ends.
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
