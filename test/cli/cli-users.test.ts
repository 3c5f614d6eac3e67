import t from 'tap';
import { startGateway } from '../support/gateway.ts';
import { cliFailure as failure, runCli, runCliAtTerminal, runCliJson } from '../support/cli.ts';
import { until } from '../support/until.ts';
import { DashboardClient } from '../support/dashboard-client.ts';

// Keys for every provider: these chatbots are never asked anything, and `bot create` warns of none.
const gw = await startGateway({ GEMINI_API_KEY: 'g-unused', OPENAI_API_KEY: 'sk-unused' });
t.teardown(() => gw.stop());
const env = { REDIS_URL: gw.redis.url, PATH: process.env.PATH ?? '' };

t.test('user password reads one line from a pipe; the owner signs in with it', async (t) => {
  const user = await runCliJson(['user', 'create', '--email', 'first@example.com', '--plan', 'scale'], env);
  const set = await runCliJson(['user', 'password', '--user', user.id], env, 'a long enough secret\nignored\n');
  t.same(set, { id: user.id, email: 'first@example.com', password_set: true });
  const client = await DashboardClient.signIn(gw.baseUrl, { ...user, password: 'a long enough secret' });
  t.equal((await client.get('/dashboard/api/session')).status, 200);

  t.same(
    await runCli(['user', 'password', '--user', user.id], env, 'short\n'),
    failure('password must be 12 to 256 characters.'),
  );
  t.same(
    await runCli(['user', 'password', '--user', user.id], env, ''),
    failure('user password: no password on stdin (give it as one line)'),
  );
  t.same(
    await runCli(['user', 'password', '--user', crypto.randomUUID()], env, 'a long enough secret\n'),
    failure('User not found.'),
  );
  const changed = await runCliJson(['user', 'password', '--user', user.id], env, 'another long secret\r\n');
  t.equal(changed.password_set, true);
  t.equal((await client.get('/dashboard/api/session')).status, 401, 'a new password ends open sessions');
  await DashboardClient.signIn(gw.baseUrl, { ...user, password: 'another long secret' });
});

t.test(
  'user password at a terminal: asked twice, nothing typed shown; differing or cancelled, nothing set',
  async (t) => {
    const user = await runCliJson(['user', 'create', '--email', 'terminal@example.com', '--plan', 'scale'], env);
    const atTerminal = () => {
      const run = runCliAtTerminal(['user', 'password', '--user', user.id], env, 80);
      t.teardown(run.end);
      /** Types `text` once `prompt` ends the screen and the terminal no longer echoes what is typed. */
      const answer = async (prompt: string, text: string) => {
        await until(() => run.screen().endsWith(prompt) && !run.echoes(), prompt);
        run.type(text);
      };
      return { ...run, answer };
    };

    // A typo taken back with the backspace key.
    const set = atTerminal();
    await set.answer('New password: ', 'a long enough secretX\u007f\r');
    await set.answer('Repeat it: ', 'a long enough secret\r');
    t.equal(await set.exited, 0);
    t.equal(set.screen(), 'New password: \r\nRepeat it: \r\n', 'the prompts, and nothing typed');
    t.same(JSON.parse(await set.printed()), { id: user.id, email: 'terminal@example.com', password_set: true });
    const client = await DashboardClient.signIn(gw.baseUrl, { ...user, password: 'a long enough secret' });

    const differ = atTerminal();
    await differ.answer('New password: ', 'one long enough secret\r');
    await differ.answer('Repeat it: ', 'another long enough secret\r');
    t.equal(await differ.exited, 1);
    t.equal(differ.screen(), 'New password: \r\nRepeat it: \r\nThe two passwords differ.\r\n');
    t.equal(await differ.printed(), '');

    // Ctrl-C: the terminal sends it as a character while the typing is hidden.
    const cancelled = atTerminal();
    await cancelled.answer('New password: ', 'half typed\u0003');
    t.equal(await cancelled.exited, 1);
    t.equal(cancelled.screen(), 'New password: \r\nCancelled.\r\n');
    t.equal(await cancelled.printed(), '');
    t.equal((await client.get('/dashboard/api/session')).status, 200, 'the password set first is still the one');
  },
);

t.test("user invite links to the gateways' PUBLIC_URL, else to where one listens, never the CLI's guess", async (t) => {
  const user = await runCliJson(['user', 'create', '--email', 'invited@example.com'], env);
  // The CLI's own PORT and PUBLIC_URL are not the gateway's: the gateway published where it listens.
  const cliSettings = { ...env, PORT: '9090', PUBLIC_URL: 'https://not-the-gateway.example' };
  const local = await runCliJson(['user', 'invite', '--user', user.id], cliSettings);
  t.same(Object.keys(local), ['user_id', 'email', 'url', 'expires_at']);
  t.equal(local.user_id, user.id);
  t.equal(local.email, 'invited@example.com');
  t.match(local.url, new RegExp(`^${gw.baseUrl}/dashboard/#/invite/${user.id}\\.[A-Za-z0-9_-]{43}$`));
  const hoursLeft = (Date.parse(local.expires_at.replace(/(\.\d{3})\d{3}/, '$1')) - Date.now()) / 3_600_000;
  t.ok(hoursLeft > 71.9 && hoursLeft <= 72, `expires in 72 hours (${hoursLeft})`);

  // What a gateway started with PUBLIC_URL publishes.
  await gw.app.services.gateways.publishUrl('https://bots.example.com');
  const published = await runCliJson(['user', 'invite', '--user', user.id, '--hours', '2'], cliSettings);
  t.match(published.url, /^https:\/\/bots\.example\.com\/dashboard\/#\/invite\//);
  const client = new DashboardClient(gw.baseUrl);
  const stale = await client.post('/dashboard/api/invite', {
    token: local.url.split('#/invite/')[1],
    password: 'a password for me',
  });
  t.equal(stale.status, 404, 'the newer link replaced the older one');
  const accepted = await client.post('/dashboard/api/invite', {
    token: published.url.split('#/invite/')[1],
    password: 'a password for me',
  });
  t.equal(accepted.status, 200);
  t.equal(accepted.body.user.email, 'invited@example.com');
  t.same(
    await runCli(['user', 'invite', '--user', user.id, '--hours', '0'], env),
    failure('hours must be a whole number from 1 to 720.'),
  );
  t.same(await runCli(['user', 'invite', '--user', crypto.randomUUID()], env), failure('User not found.'));

  // No gateway has run on this Redis (a namespace of its own): the CLI's PUBLIC_URL, else localhost:PORT.
  const alone = { ...env, REDIS_PREFIX: 'alone:' };
  const lonely = await runCliJson(['user', 'create', '--email', 'alone@example.com'], alone);
  const guessed = await runCliJson(['user', 'invite', '--user', lonely.id], { ...alone, PORT: '9090' });
  t.match(guessed.url, /^http:\/\/localhost:9090\/dashboard\/#\/invite\//);
  const configured = await runCliJson(['user', 'invite', '--user', lonely.id], {
    ...alone,
    PUBLIC_URL: 'https://cli.example',
  });
  t.match(configured.url, /^https:\/\/cli\.example\/dashboard\/#\/invite\//);
});

t.test('bot update changes a chatbot under the create rules', async (t) => {
  const user = await runCliJson(['user', 'create', '--email', 'bots@example.com'], env);
  const bot = await runCliJson(['bot', 'create', '--user', user.id, '--name', 'Helper'], env);
  const updated = await runCliJson(
    ['bot', 'update', '--bot', bot.id, '--provider', 'gemini', '--system-prompt', 'Be brief.'],
    env,
  );
  t.same(updated, { ...bot, provider: 'gemini', system_prompt: 'Be brief.' });
  t.equal((await gw.app.services.chatbots.get(bot.id)).model, 'gemini-2.5-flash', 'the new provider’s default model');
  t.same(
    await runCli(['bot', 'update', '--bot', bot.id, '--fallback-message', ' '], env),
    failure('fallback_message must be 1 to 2000 characters.'),
  );
  t.same(
    await runCli(['bot', 'update', '--bot', crypto.randomUUID(), '--name', 'X'], env),
    failure('Chatbot not found.'),
  );
});
