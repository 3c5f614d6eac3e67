import t from 'tap';
import { extractMainContent } from '../../src/ingest/html-extractor.ts';
import { extractLinks } from '../../src/ingest/link-extractor.ts';

const page = `<!doctype html>
<html>
<head>
  <title>Pricing | Acme</title>
  <style>body { color: red }</style>
  <script>window.tracking = "secret";</script>
</head>
<body>
  <a class="skip-link" href="#main">Skip to content</a>
  <header><a href="/">Acme</a><nav><a href="/pricing">Pricing</a><a href="/blog">Blog</a></nav></header>
  <div id="cookie-banner">We use cookies. <button>Accept</button></div>
  <main id="main">
    <h1>Pricing</h1>
    <p>Plans for   every&nbsp;team.</p>
    <p hidden>Hidden by attribute.</p>
    <p aria-hidden="true">Hidden from assistive technology.</p>
    <p style="color: grey; display: none">Hidden by display.</p>
    <p style="visibility:hidden !important">Hidden by visibility.</p>
    <p style="display: block">Shown with a style.</p>
    <h2>Pro plan</h2>
    <p>Costs <strong>$10</strong> per <em>user</em>.<br>Billed monthly.</p>
    <ul><li>Unlimited bots</li><li>Priority <a href="/support">support</a></li></ul>
    <table><tr><th>Seats</th><th>Price</th></tr><tr><td>10</td><td>$100</td></tr></table>
    <h3>Limits</h3>
    <div>Up to 40,000 messages.</div>
    <aside class="note">Prices exclude VAT.</aside>
    <form><label>Email</label><input value="you@example.com"><select><option>EU</option></select></form>
    <h2>Enterprise</h2>
    <pre>  curl https://acme.test
    --header x</pre>
    <noscript>Enable JavaScript.</noscript>
    <div class="share-buttons">Share on X</div>
    <span class="sr-only">Opens in a new tab</span>
  </main>
  <aside>Related: our blog</aside>
  <footer>© 2026 Acme · <a href="/privacy">Privacy</a></footer>
</body>
</html>`;

t.test('main content keeps headings as sections and drops navigation, chrome, scripts and hidden text', async (t) => {
  const doc = extractMainContent(page);
  t.equal(doc.title, 'Pricing | Acme');
  t.equal(doc.pages.length, 1);
  t.same(doc.pages[0]!.sections, [
    { headings: ['Pricing'], blocks: ['Plans for every team.', 'Shown with a style.'] },
    {
      headings: ['Pricing', 'Pro plan'],
      blocks: [
        'Costs $10 per user. Billed monthly.',
        'Unlimited bots',
        'Priority support',
        'Seats | Price',
        '10 | $100',
      ],
    },
    { headings: ['Pricing', 'Pro plan', 'Limits'], blocks: ['Up to 40,000 messages.', 'Prices exclude VAT.', 'Email'] },
    { headings: ['Pricing', 'Enterprise'], blocks: ['  curl https://acme.test\n    --header x'] },
  ]);
  const text = doc.pages[0]!.text;
  for (const dropped of [
    'Skip to content',
    'cookies',
    'Blog',
    'Hidden',
    'secret',
    'color: red',
    '©',
    'Related',
    'Share',
    'Opens in',
    'Enable JavaScript',
    'EU',
  ]) {
    t.notOk(text.includes(dropped), `"${dropped}" is dropped`);
  }
});

t.test('the title is og:title, else <title>, else the first h1', async (t) => {
  const og =
    '<html><head><meta property="og:title" content=" Social  Title "><title>Doc Title</title></head><body><h1>Heading</h1><p>x</p></body></html>';
  t.equal(extractMainContent(og).title, 'Social Title');
  t.equal(extractMainContent('<title>\n Doc\n Title </title><h1>Heading</h1><p>x</p>').title, 'Doc Title');
  t.equal(
    extractMainContent('<body><h1 hidden>Secret</h1><h1>Visible <b>Heading</b></h1><p>x</p></body>').title,
    'Visible Heading',
  );
  t.equal(extractMainContent('<p>no title at all</p>').title, '');
});

t.test('without <main>, a single <article> is the content, with its own header and footer kept', async (t) => {
  const html = `<body>
    <header><h1>Site name</h1></header>
    <div class="sidebar-menu"><h2>Menu</h2><p>Links</p></div>
    <article>
      <header><h1>Release notes</h1><p>March 2026</p></header>
      <p>Faster retrieval.</p>
      <footer>Written by the team.</footer>
    </article>
  </body>`;
  t.same(extractMainContent(html).pages[0]!.sections, [
    { headings: ['Release notes'], blocks: ['March 2026', 'Faster retrieval.', 'Written by the team.'] },
  ]);
});

t.test('without <main> or one <article>, the body is the content and page-level chrome is still dropped', async (t) => {
  const html = `<body class="has-cookie-banner">
    <div role="navigation"><a href="/">Home</a></div>
    <div role="banner">Acme Inc.</div>
    <section><h2>About</h2><p>We build bots.</p></section>
    <div class="breadcrumbs">Home › About</div>
    <div class="gdpr-consent">Accept all</div>
    <div role="contentinfo">Contact us</div>
  </body>`;
  const doc = extractMainContent(html);
  t.same(doc.pages[0]!.sections, [{ headings: ['About'], blocks: ['We build bots.'] }]);
  t.equal(doc.pages[0]!.text, 'About\n\nWe build bots.');
});

t.test('a page with no content yields an empty page, not an error', async (t) => {
  t.same(extractMainContent('<html><head><title>Empty</title></head><body><nav>Menu</nav></body></html>'), {
    title: 'Empty',
    pages: [{ text: '', sections: [] }],
  });
  t.same(extractMainContent(''), { title: '', pages: [{ text: '', sections: [] }] });
});

t.test('links are read from the whole page against <base>, nofollow links left out, duplicates merged', async (t) => {
  const html = `<head><base href="https://acme.test/docs/"><meta name="robots" content="index, follow"></head>
    <body><nav><a href="intro">Intro</a><a href="/pricing#plans">Pricing</a></nav>
    <a href="https://other.test/">Elsewhere</a><a rel="nofollow ugc" href="/login">Log in</a>
    <map><area href="/map-target"></map><a href="intro">Intro again</a></body>`;
  t.same(extractLinks(html, 'https://acme.test/index.html'), {
    links: [
      'https://acme.test/docs/intro',
      'https://acme.test/pricing#plans',
      'https://other.test/',
      'https://acme.test/map-target',
    ],
    noindex: false,
    nofollow: false,
  });
});

t.test('robots meta directives for all robots or for SwitchboardBot are read', async (t) => {
  t.same(extractLinks('<meta name="ROBOTS" content="NOINDEX">', 'https://a.test/'), {
    links: [],
    noindex: true,
    nofollow: false,
  });
  t.same(extractLinks('<meta name="switchboardbot" content="nofollow">', 'https://a.test/'), {
    links: [],
    noindex: false,
    nofollow: true,
  });
  t.same(extractLinks('<meta name="robots" content="none">', 'https://a.test/'), {
    links: [],
    noindex: true,
    nofollow: true,
  });
  t.same(extractLinks('<meta name="googlebot" content="noindex">', 'https://a.test/'), {
    links: [],
    noindex: false,
    nofollow: false,
  });
});
