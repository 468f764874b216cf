/**
 * A lean Prometheus text registry. Counters and histograms are created once with their label
 * values fixed, so updating one on the hot path is an index increment, no allocation.
 */
type Labels = Record<string, string>;

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return parts.length ? `{${parts.join(',')}}` : '';
}

interface Metric {
  render(): string;
}

export class Counter {
  private value = 0;
  constructor(private readonly labels: string) {}
  inc(by = 1): void {
    this.value += by;
  }
  get(): number {
    return this.value;
  }
  line(name: string): string {
    return `${name}${this.labels} ${this.value}`;
  }
}

export class Histogram {
  private readonly counts: Float64Array;
  private sum = 0;
  private total = 0;
  constructor(
    private readonly labels: Labels,
    private readonly buckets: readonly number[],
  ) {
    this.counts = new Float64Array(buckets.length);
  }
  /** Counts v in the first bucket that holds it only; lines() sums them into Prometheus's cumulative buckets. */
  observe(v: number): void {
    this.sum += v;
    this.total++;
    const buckets = this.buckets;
    for (let i = 0; i < buckets.length; i++)
      if (v <= buckets[i]!) {
        this.counts[i]!++;
        return;
      }
  }
  lines(name: string): string[] {
    let cumulative = 0;
    const out = this.buckets.map(
      (b, i) => `${name}_bucket${labelText({ ...this.labels, le: String(b) })} ${(cumulative += this.counts[i]!)}`,
    );
    out.push(`${name}_bucket${labelText({ ...this.labels, le: '+Inf' })} ${this.total}`);
    out.push(
      `${name}_sum${labelText(this.labels)} ${this.sum}`,
      `${name}_count${labelText(this.labels)} ${this.total}`,
    );
    return out;
  }
}

class CounterFamily implements Metric {
  private readonly children = new Map<string, Counter>();
  constructor(
    private readonly name: string,
    private readonly help: string,
  ) {}
  with(labels: Labels = {}): Counter {
    const text = labelText(labels);
    let c = this.children.get(text);
    if (!c) this.children.set(text, (c = new Counter(text)));
    return c;
  }
  render(): string {
    return [
      `# HELP ${this.name} ${this.help}`,
      `# TYPE ${this.name} counter`,
      ...[...this.children.values()].map((c) => c.line(this.name)),
    ].join('\n');
  }
}

class GaugeFunc implements Metric {
  constructor(
    private readonly name: string,
    private readonly help: string,
    private readonly read: () => number,
  ) {}
  render(): string {
    return `# HELP ${this.name} ${this.help}\n# TYPE ${this.name} gauge\n${this.name} ${this.read()}`;
  }
}

class CounterFuncs implements Metric {
  constructor(
    private readonly name: string,
    private readonly help: string,
    private readonly children: ReadonlyArray<readonly [Labels, () => number]>,
  ) {}
  render(): string {
    return [
      `# HELP ${this.name} ${this.help}`,
      `# TYPE ${this.name} counter`,
      ...this.children.map(([labels, read]) => `${this.name}${labelText(labels)} ${read()}`),
    ].join('\n');
  }
}

class HistogramFamily implements Metric {
  private readonly children = new Map<string, Histogram>();
  constructor(
    private readonly name: string,
    private readonly help: string,
    private readonly buckets: readonly number[],
  ) {}
  with(labels: Labels = {}): Histogram {
    const text = labelText(labels);
    let h = this.children.get(text);
    if (!h) this.children.set(text, (h = new Histogram(labels, this.buckets)));
    return h;
  }
  render(): string {
    return [
      `# HELP ${this.name} ${this.help}`,
      `# TYPE ${this.name} histogram`,
      ...[...this.children.values()].flatMap((h) => h.lines(this.name)),
    ].join('\n');
  }
}

export class Registry {
  private readonly metrics = new Map<string, Metric>();

  counter(name: string, help: string): CounterFamily {
    return this.register(name, () => new CounterFamily(name, help)) as CounterFamily;
  }
  histogram(
    name: string,
    help: string,
    buckets: readonly number[] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  ): HistogramFamily {
    return this.register(name, () => new HistogramFamily(name, help, buckets)) as HistogramFamily;
  }
  gauge(name: string, help: string, read: () => number): void {
    this.metrics.set(name, new GaugeFunc(name, help, read));
  }
  /** Counters whose values are kept elsewhere (a pure module's plain numbers), read when scraped. */
  counterFuncs(name: string, help: string, children: ReadonlyArray<readonly [Labels, () => number]>): void {
    this.metrics.set(name, new CounterFuncs(name, help, children));
  }
  render(): string {
    return [...this.metrics.values()].map((m) => m.render()).join('\n') + '\n';
  }
  private register(name: string, make: () => Metric): Metric {
    let m = this.metrics.get(name);
    if (!m) this.metrics.set(name, (m = make()));
    return m;
  }
}
