import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

// The webhook payloads' JSON Schemas (docs/webhook-schemas/, draft 2020-12), compiled by Ajv as a
// receiver would use them: every delivery a test's receiver gets is checked against the envelope and
// its event's schema.

/** Where the schemas are kept; the OpenAPI document's `webhooks` reference them. */
export const WEBHOOK_SCHEMAS = path.resolve(import.meta.dirname, '../../docs/webhook-schemas');

let compiled: Map<string, ValidateFunction> | undefined;

/** Each schema file by its name without `.json` (`envelope`, `lead.captured`, …), compiled once. */
export function webhookSchemas(): Map<string, ValidateFunction> {
  if (compiled) return compiled;
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats.default(ajv);
  compiled = new Map(
    readdirSync(WEBHOOK_SCHEMAS)
      .filter((name) => name.endsWith('.json'))
      .map((name) => {
        const schema = JSON.parse(readFileSync(path.join(WEBHOOK_SCHEMAS, name), 'utf8')) as object;
        return [name.slice(0, -'.json'.length), ajv.compile(schema)];
      }),
  );
  return compiled;
}

/**
 * What is wrong with a delivery's raw body: an empty list when it is JSON, fits the envelope and
 * fits the schema of the event it names.
 */
export function webhookBodyProblems(raw: string): string[] {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    return [`not JSON: ${raw.slice(0, 80)}`];
  }
  const schemas = webhookSchemas();
  const event = (body as { event?: unknown } | null)?.event;
  const named = typeof event === 'string' ? schemas.get(event) : undefined;
  const problems: string[] = [];
  for (const [name, validate] of [['envelope', schemas.get('envelope')!] as const, [String(event), named] as const]) {
    if (!validate) {
      problems.push(`no schema for the event ${JSON.stringify(event)}`);
      continue;
    }
    if (!validate(body)) {
      problems.push(...validate.errors!.map((e) => `${name}: ${e.instancePath || '/'} ${e.message}`));
    }
  }
  return problems;
}
