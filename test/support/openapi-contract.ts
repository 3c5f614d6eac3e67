import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { OpenAPIBackend, type Operation } from 'openapi-backend';

// Every public API response the tests receive is checked against docs/openapi.json by openapi-backend
// (a third-party OpenAPI router and validator) with Ajv's JSON Schema 2020-12 dialect, the one
// OpenAPI 3.1 schemas are written in. A response the document does not describe fails the test that
// received it, so the document cannot drift from the code.

/** The document the gateway serves at /api/v1/openapi.json. */
export const OPENAPI_DOCUMENT = path.resolve(import.meta.dirname, '../../docs/openapi.json');

/** One response as received: its status, headers (names in any case) and body text. */
export interface ReceivedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

let loading: Promise<OpenAPIBackend> | undefined;

/** The document, loaded and dereferenced once per test file (its webhook schema files included). */
export function openApi(): Promise<OpenAPIBackend> {
  loading ??= (async () => {
    const api = new OpenAPIBackend({
      definition: OPENAPI_DOCUMENT,
      apiRoot: '/api/v1',
      strict: true,
      // `quick` skips openapi-backend's own check of the document, which knows only OpenAPI 3.0's
      // schema; the document's validity is Redocly's job (test/http/openapi-document.test.ts).
      quick: true,
      ajvOpts: { allErrors: true },
      customizeAjv: (_ajv, options) => {
        const ajv = new Ajv2020({ ...options, strict: false });
        addFormats.default(ajv);
        return ajv;
      },
    });
    await api.init();
    // Compiled now rather than at the first response: a burst's first answers wait for nothing.
    api.validator.preCompileResponseValidators();
    api.validator.preCompileResponseHeaderValidators();
    return api;
  })();
  return loading;
}

/** The operation `method path` is, or undefined when the document has no such operation. */
export async function operationOf(method: string, url: string): Promise<Operation | undefined> {
  const api = await openApi();
  const pathname = new URL(url, 'http://gateway').pathname;
  return api.router.matchOperation({ method: method.toLowerCase(), path: pathname, headers: {} });
}

/**
 * What is wrong with `response` as an answer to `method url` according to the document: an empty
 * list when the document describes it exactly (the operation exists, it lists the status, the
 * media type, the headers it requires and their values, and the body's schema).
 */
export async function responseProblems(method: string, url: string, response: ReceivedResponse): Promise<string[]> {
  const api = await openApi();
  const operation = await operationOf(method, url);
  if (!operation)
    return [`docs/openapi.json has no operation for ${method} ${new URL(url, 'http://gateway').pathname}`];
  const described = operation.responses?.[String(response.status)];
  // openapi-backend passes a status it has no schema for; the document must list every status.
  if (!described || '$ref' in described)
    return [`${operation.operationId} does not describe status ${response.status}`];
  const headers = Object.fromEntries(
    Object.entries(response.headers).map(([name, value]) => [name.toLowerCase(), value]),
  );
  const problems: string[] = [];
  // SPEC: "No Retry-After header is ever sent", which a response object cannot say.
  if ('retry-after' in headers) problems.push('Retry-After is never sent');
  const mediaType = (headers['content-type'] ?? '').split(';')[0]!.trim();
  const mediaTypes = Object.keys(described.content ?? {});
  if (!mediaTypes.includes(mediaType))
    problems.push(`content-type ${mediaType || 'none'}, not ${mediaTypes.join(' or ')}`);
  // openapi-backend checks the values of the headers present ('any'); which must be present is the
  // header objects' `required` (its 'superset' mode would demand every header listed).
  const headerCheck = api.validator.validateResponseHeaders(headers, operation, {
    statusCode: response.status,
    setMatchType: 'any' as never,
  });
  problems.push(
    ...(headerCheck.errors ?? []).map((e) => `headers${e.instancePath.slice('/headers'.length)} ${e.message}`),
  );
  for (const [name, header] of Object.entries(described.headers ?? {})) {
    const required = !('$ref' in header) && header.required === true;
    if (required && !(name.toLowerCase() in headers)) problems.push(`header ${name} is required`);
  }
  let body: unknown;
  try {
    body = JSON.parse(response.body);
  } catch {
    return [...problems, `body is not JSON: ${response.body.slice(0, 80)}`];
  }
  const bodyCheck = api.validator.validateResponse(body, operation, response.status);
  problems.push(
    ...(bodyCheck.errors ?? []).map((e) => `body${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`),
  );
  return problems.map((problem) => `${operation.operationId} ${response.status}: ${problem}`);
}

/** Throws, naming each problem, unless the document describes `response` exactly. */
export async function assertDescribed(method: string, url: string, response: ReceivedResponse): Promise<void> {
  const problems = await responseProblems(method, url, response);
  if (problems.length > 0) {
    throw new Error(`${method} ${url}: the response does not match docs/openapi.json:\n  ${problems.join('\n  ')}`);
  }
}

/**
 * `fetch` for the public API: the response is checked against the document before it is handed
 * back (a Response with the same status, headers and body), and a mismatch throws.
 */
export async function apiFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(url, init);
  const body = await response.text();
  const headers = Object.fromEntries(response.headers);
  await assertDescribed(init.method ?? 'GET', url, { status: response.status, headers, body });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** A raw HTTP/1.1 response (as raw-http.ts reads it) as status, headers and body. */
export function parseRawResponse(raw: string): ReceivedResponse {
  const [head = '', body = ''] = raw.split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}
