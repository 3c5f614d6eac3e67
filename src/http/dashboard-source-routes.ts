import type { Request, Response, Server } from 'restify';
import type { Deleted } from '../contract/deleted.ts';
import type { KnowledgeStatus, RetrievedPassages } from '../contract/knowledge.ts';
import type { DashboardSource, NewSourceBody, SourcePatchBody, SyncStarted, TextSize } from '../contract/source.ts';
import { ValidationError } from '../errors.ts';
import { DASHBOARD_CONNECTOR_TYPES } from '../sources/connectors/connector.ts';
import { MAX_FILE_BYTES } from '../ingest/document-parser.ts';
import type { Source } from '../sources/source.ts';
import { embeddingStatusView, operatorSourceSyncView, retrievalView } from '../views.ts';
import { chatbotOf, DASHBOARD_API, ownerOf, param, type DashboardApi } from './dashboard-api.ts';
import { bodyOf, optionalString, requiredString } from './dashboard-body.ts';
import { IntegerQuery } from './integer-query.ts';
import { jsonBody, readBody } from './json-body.ts';

/** The header an upload names its file in (percent-encoded, as `encodeURIComponent` writes it). */
const FILENAME_HEADER = 'x-filename';
/** How many passages `retrieve` shows. */
const RETRIEVE_K = new IntegerQuery('k', { min: 1, max: 50, fallback: 10 });
/** Text sources whose size this process remembers (a text source's text never changes). */
const TEXT_SIZES_KEPT = 10_000;

/**
 * Training sources: the list with live status (the web app polls it while any source is still being
 * ingested), adding text or a URL, uploading a file (the raw bytes as the body, the name in
 * `X-Filename`, at most 20 MB), deleting one, a url or connector source's re-sync schedule
 * (`refresh`) and "Sync now", and `retrieve` (what the chatbot would find for a question, as the
 * CLI's `retrieve` shows it), and the re-embedding of every source into a new embedding space when
 * one is under way (`knowledge`). Each source comes with its syncs (see `operatorSourceSyncView`), a
 * text source with its text's size.
 */
export function registerDashboardSourceRoutes(server: Server, api: DashboardApi): void {
  const { services, owned, auth, chatbot: ownedChatbot } = api;
  const base = `${DASHBOARD_API}/chatbots/:chatbot_id`;
  const sizes = new Map<string, TextSize>();
  // Read once per process: the list is read every two seconds while a source is being ingested.
  const sizeOf = async (source: Source): Promise<TextSize | undefined> => {
    if (source.type !== 'text') return undefined;
    let size = sizes.get(source.id);
    if (!size) {
      size = textSize(((await services.sources.content(source)) ?? Buffer.alloc(0)).toString('utf8'));
      if (sizes.size >= TEXT_SIZES_KEPT) sizes.delete(sizes.keys().next().value!);
      sizes.set(source.id, size);
    }
    return size;
  };
  const withSync = async (source: Source, progress: string): Promise<DashboardSource> => {
    const [sync, size] = await Promise.all([services.intake.syncState(source), sizeOf(source)]);
    return { ...operatorSourceSyncView(source, sync), ...size, progress };
  };
  const view = async (source: Source) => withSync(source, await services.sources.progress(source));
  // Resolves `:source_id` to the owner's source before any body is read (404 before 400).
  const ownedSource = async (req: Request) => {
    (req as SourceRequest).source = await owned.source(ownerOf(req), param(req, 'source_id'));
  };
  const sourceOf = (req: Request) => (req as SourceRequest).source;

  server.get(`${base}/sources`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    const listed = await services.sources.listWithProgress(chatbot.id);
    const sources = await Promise.all(listed.map(({ source, progress }) => withSync(source, progress)));
    res.send(200, sources satisfies DashboardSource[]);
  });

  server.post(`${base}/sources`, auth, ownedChatbot, jsonBody(), async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    const body = bodyOf<NewSourceBody>(req);
    const type = body.type;
    const title = optionalString(body, 'title');
    const refresh = optionalString(body, 'refresh');
    let source: Source;
    if (type === 'text') {
      if (refresh !== undefined) throw new ValidationError('refresh applies to url and connector sources.');
      source = await services.intake.addText(chatbot.id, requiredString(body, 'text'), title);
    } else if (type === 'url') {
      source = await services.intake.addUrl(chatbot.id, requiredString(body, 'url'), title, refresh);
    } else if (typeof type === 'string' && (DASHBOARD_CONNECTOR_TYPES as readonly string[]).includes(type)) {
      source = await services.intake.addConnector(ownerOf(req), chatbot.id, {
        type,
        reference: requiredString(body, 'url'),
        connectionId: optionalString(body, 'connection_id'),
        title,
        refresh,
      });
    } else {
      throw new ValidationError(
        `type must be one of: text, url, ${DASHBOARD_CONNECTOR_TYPES.join(', ')} (files are uploaded to /files).`,
      );
    }
    res.send(201, (await view(source)) satisfies DashboardSource);
  });

  server.post(`${base}/files`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const chatbot = chatbotOf(req);
    const filename = uploadName(req);
    const bytes = await readBody(req, res, { limit: MAX_FILE_BYTES, tooLarge: 'file must be at most 20 MB.' });
    res.send(201, (await view(await services.intake.addFile(chatbot.id, filename, bytes))) satisfies DashboardSource);
  });

  server.get(`${base}/retrieve`, auth, ownedChatbot, async (req: Request, res: Response) => {
    const query = new URL(req.url ?? '/', 'http://gateway').searchParams;
    const question = (query.get('query') ?? '').trim();
    if (question === '' || question.length > 4000) throw new ValidationError('query must be 1 to 4000 characters.');
    const k = RETRIEVE_K.read(req);
    const hits = await api.retrieval.retriever.search(chatbotOf(req).id, question, k);
    res.send(200, retrievalView(api.retrieval.engine.name, hits) satisfies RetrievedPassages);
  });

  // The deployment's embedding space and a re-embedding under way: sources added meanwhile wait for it.
  server.get(`${DASHBOARD_API}/knowledge`, auth, async (_req: Request, res: Response) => {
    const [active, migration] = await Promise.all([services.spaces.active(), services.spaces.migration()]);
    res.send(200, embeddingStatusView(active, migration) satisfies KnowledgeStatus);
  });

  server.del(`${DASHBOARD_API}/sources/:source_id`, auth, ownedSource, async (req: Request, res: Response) => {
    const source = sourceOf(req);
    await services.intake.remove(source.id, api.retrieval.index);
    res.send(200, { id: source.id, deleted: true } satisfies Deleted);
  });

  server.patch(
    `${DASHBOARD_API}/sources/:source_id`,
    auth,
    ownedSource,
    jsonBody(),
    async (req: Request, res: Response) => {
      const source = sourceOf(req);
      const refresh = requiredString(bodyOf<SourcePatchBody>(req), 'refresh');
      const updated = await services.intake.setRefresh(source.id, refresh);
      res.send(200, (await view(updated)) satisfies DashboardSource);
    },
  );

  server.post(`${DASHBOARD_API}/sources/:source_id/sync`, auth, ownedSource, async (req: Request, res: Response) => {
    const source = sourceOf(req);
    const { source: synced, sync } = await services.intake.syncNow(source.id);
    res.send(202, { ...(await view(synced)), sync } satisfies SyncStarted);
  });
}

/** A request whose `:source_id` was resolved to the owner's source. */
interface SourceRequest extends Request {
  source: Source;
}

/** Characters (code points) and words (runs of non-space characters) of a text. */
export function textSize(text: string): TextSize {
  // Surrogate pairs (an emoji, a rare CJK character) are one character each.
  const pairs = text.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0;
  return { characters: text.length - pairs, words: text.match(/\S+/g)?.length ?? 0 };
}

function uploadName(req: Request): string {
  const header = req.headers[FILENAME_HEADER];
  if (typeof header !== 'string' || header === '') throw new ValidationError('X-Filename header is required.');
  try {
    return decodeURIComponent(header);
  } catch {
    throw new ValidationError('X-Filename must be percent-encoded.');
  }
}
