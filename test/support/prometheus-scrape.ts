/** One sample of a scrape: its name (with a histogram's `_bucket`, `_sum`, `_count`), labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed Prometheus text exposition: the families' types and every sample. */
export class Scrape {
  readonly types = new Map<string, string>();
  readonly samples: Sample[] = [];

  constructor(text: string) {
    for (const line of text.split('\n')) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) this.types.set(type[1]!, type[2]!);
      if (line === '' || line.startsWith('#')) continue;
      const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!sample) throw new Error(`not a sample line: ${line}`);
      this.samples.push({ name: sample[1]!, labels: parseLabels(sample[2] ?? ''), value: Number(sample[3]) });
    }
  }

  /** The value of the one sample with exactly these labels (`le` aside for buckets); undefined when none. */
  value(name: string, labels: Record<string, string> = {}): number | undefined {
    const wanted = JSON.stringify(sorted(labels));
    return this.samples.find((s) => s.name === name && JSON.stringify(sorted(s.labels)) === wanted)?.value;
  }

  /** The label sets of a family's samples (for a histogram, its `_count` samples), sorted. */
  labelSets(name: string): Array<Record<string, string>> {
    const sampleName = this.types.get(name) === 'histogram' ? `${name}_count` : name;
    return this.samples
      .filter((s) => s.name === sampleName)
      .map((s) => sorted(s.labels))
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  }

  /** Family names starting with `prefix`, sorted. */
  families(prefix: string): string[] {
    return [...this.types.keys()].filter((name) => name.startsWith(prefix)).sort();
  }
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const match of text.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
    labels[match[1]!] = match[2]!.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
  }
  return labels;
}

function sorted(labels: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));
}
