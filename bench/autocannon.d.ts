/** The part of autocannon's API the benchmarks use (the package ships no types). */
declare module 'autocannon' {
  interface Histogram {
    p50: number;
    p99: number;
    average: number;
  }
  interface Result {
    requests: Histogram & { total: number };
    latency: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    timeout?: number;
    headers?: Record<string, string>;
    requests?: { setupRequest?: (req: Record<string, unknown>) => Record<string, unknown> }[];
  }
  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
