import t from 'tap';
import { FakeYouTube } from '../fakes/fake-youtube.ts';
import { fakeOpenAi } from '../fakes/fake-llm-server.ts';
import { cliFailure as failure, runCli, runCliJson } from '../support/cli.ts';
import { scaleAccount, startGateway } from '../support/gateway.ts';

// Every connector source type ingested end to end: added through the CLI (`source add --type …
// --wait`, which only follows a gateway's ingestion), read by the gateway through the service's real
// client library from a loopback fake, chunked with its document in the chunk ids, and answered from.
const youtube = await new FakeYouTube().start();
const openai = await fakeOpenAi().start();
openai.behaviour = () => ({ text: 'answered' });

const SECRET_KEY = '7c'.repeat(32);
const gw = await startGateway({
  SECRET_KEY,
  CRAWL_ALLOW_PRIVATE: '1',
  SEARCH_ENGINE: 'in-process',
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: `${openai.url}/v1`,
  YOUTUBE_BASE_URL: youtube.url,
});
t.teardown(async () => {
  await gw.stop();
  await youtube.stop();
  await openai.stop();
});
const env = { REDIS_URL: gw.redis.url, SECRET_KEY, PATH: process.env.PATH ?? '' };
const ok = (args: string[]) => runCliJson(args, env);
const { services } = gw.app;

/** The chunk ids of a source, as stored. */
async function chunkIds(chatbotId: string, sourceId: string): Promise<string[]> {
  return (await gw.app.retrieval.chunks.forSource(chatbotId, sourceId)).map((chunk) => chunk.id).sort();
}

t.test('youtube: a video transcript, through the CLI', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Videos' });
  youtube.videos.set('dQw4w9WgXcQ', {
    title: 'Setting up the Acme router',
    captions: [
      {
        languageCode: 'en',
        name: 'English',
        lines: [
          [0, 3, 'Welcome to the Acme router setup.'],
          [3, 4, 'Plug the blue cable into the WAN port.'],
          [12, 4, 'Then hold the reset button for ten seconds.'],
        ],
      },
    ],
  });
  const source = await ok([
    'source', 'add', '--bot', bot.id, '--type', 'youtube', '--url', 'https://youtu.be/dQw4w9WgXcQ?t=30', '--wait',
  ]); // prettier-ignore
  t.same(source, {
    id: source.id,
    type: 'youtube',
    title: 'Setting up the Acme router',
    url: '',
    status: 'done',
    page_count: 0,
    created_at: source.created_at,
    chatbot_id: bot.id,
    error: '',
    reference: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
    connection_id: '',
  });
  t.same(await chunkIds(bot.id, source.id), [`${source.id}:dQw4w9WgXcQ:0`]);
  const documents = await services.sources.documents(await services.sources.get(source.id));
  t.same([...documents.keys()], ['dQw4w9WgXcQ']);
  t.match(documents.get('dQw4w9WgXcQ'), { title: 'Setting up the Acme router', chunks: 1, change_token: /^.+$/ });
  const hits = await gw.app.retrieval.retriever.search(bot.id, 'which port does the blue cable go in', 1);
  t.equal(
    hits[0]!.chunk.content,
    'Setting up the Acme router\n\n[0:00] Welcome to the Acme router setup. Plug the blue cable into the WAN port.\n\n' +
      '[0:12] Then hold the reset button for ten seconds.',
  );
  t.equal(hits[0]!.chunk.url, 'https://www.youtube.com/watch?v=dQw4w9WgXcQ');
  // SPEC's source object: the reference is not the `url` of a non-URL type.
  const listed = await fetch(`${gw.baseUrl}/api/v1/chatbots/${bot.id}/sources`, {
    headers: { authorization: `Bearer ${(await services.apiKeys.create(user.id, 'k')).key}` },
  });
  t.same(await listed.json(), [
    {
      id: source.id,
      type: 'youtube',
      title: 'Setting up the Acme router',
      url: '',
      status: 'done',
      page_count: 0,
      created_at: source.created_at,
    },
  ]);
});

t.test('youtube: a video without captions fails with a reason, and --wait exits 1 with it', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Silent' });
  youtube.videos.set('aaaaaaaaaaa', { title: 'No words', captions: 'absent' });
  const result = await runCli(
    [
      'source',
      'add',
      '--bot',
      bot.id,
      '--type',
      'youtube',
      '--url',
      'https://www.youtube.com/watch?v=aaaaaaaaaaa',
      '--wait',
    ],
    env,
  );
  const reason =
    'This video has no captions, or its owner turned them off. Upload a .vtt or .srt file of its subtitles instead.';
  t.same(result, failure(`source add: ${reason}`));
  const [source] = await services.sources.listForChatbot(bot.id);
  t.match(source, { status: 'failed', error: reason });
  t.same(await chunkIds(bot.id, source!.id), []);
});

t.test('a reference the connector cannot read is refused before anything is stored', async (t) => {
  const { user } = await scaleAccount(gw.app);
  const bot = await services.chatbots.create(user.id, { name: 'Refused' });
  t.same(
    await runCli(['source', 'add', '--bot', bot.id, '--type', 'youtube', '--url', 'https://vimeo.com/1'], env),
    failure('url must be a link to one YouTube video, like https://www.youtube.com/watch?v=dQw4w9WgXcQ.'),
  );
  t.same(await services.sources.listForChatbot(bot.id), []);
});
