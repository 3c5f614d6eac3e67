import fc from 'fast-check';
import t from 'tap';
import {
  applyCitations,
  CitationFilter,
  citationOf,
  citationsOf,
  sourcesFooter,
  withoutMarkers,
  type CitationMode,
} from '../../src/conversations/citations.ts';

t.test('markers are renumbered in the order the reply first uses them; unknown ones are dropped', async (t) => {
  t.same(applyCitations('Ships in two days [3]. Returns are free [1][3].', 5, 'renumber'), {
    text: 'Ships in two days [1]. Returns are free [2][1].',
    cited: [3, 1],
  });
  t.same(applyCitations('See [2, 4] and [4,2].', 5, 'renumber'), { text: 'See [1][2] and [2][1].', cited: [2, 4] });
  t.same(applyCitations('Made up [9]. Also [0] and [2].', 5, 'renumber'), {
    text: 'Made up. Also and [1].',
    cited: [2],
  });
  t.same(applyCitations('No sources at all [1].', 0, 'renumber'), { text: 'No sources at all.', cited: [] });
});

t.test('stripping removes every marker with the spaces before it, and nothing else', async (t) => {
  t.same(applyCitations('Fast [1]. Cheap\t[2, 3]! Good [x] [2024] [sic] a[b]', 3, 'strip'), {
    text: 'Fast. Cheap! Good [x] [2024] [sic] a[b]',
    cited: [],
  });
  t.equal(withoutMarkers('Answer [1][2].\nMore [3]'), 'Answer.\nMore');
  t.equal(withoutMarkers('an unfinished [1'), 'an unfinished [1', 'an unclosed bracket at the end stays');
});

t.test('a stream gives the same text as the whole reply, however it is cut', async (t) => {
  const reply = 'We ship fast [2]. Returns [1, 2] are free [7].  Ask [sic] us [3]';
  const modes: CitationMode[] = ['renumber', 'strip'];
  fc.assert(
    fc.property(fc.array(fc.nat({ max: reply.length }), { maxLength: 12 }), fc.constantFrom(...modes), (cuts, mode) => {
      const points = [...new Set(cuts)].sort((a, b) => a - b);
      const pieces = [0, ...points].map((start, i) => reply.slice(start, points[i] ?? reply.length));
      const filter = new CitationFilter(3, mode);
      const streamed = pieces.map((piece) => filter.push(piece)).join('') + filter.end();
      const whole = applyCitations(reply, 3, mode);
      return streamed === whole.text && JSON.stringify(filter.cited()) === JSON.stringify(whole.cited);
    }),
  );
  const filter = new CitationFilter(2, 'renumber');
  t.equal(filter.push('Shipping is fast '), 'Shipping is fast', 'a trailing space waits: a marker may follow');
  t.equal(filter.push('[2'), '', 'an unfinished marker waits');
  t.equal(filter.push('].'), ' [1].');
  t.equal(filter.end(), '');
});

t.test('a citation shows a title, and a link only where a person can open one', async (t) => {
  t.same(citationOf({ title: 'Shipping', url: 'https://shop.example/shipping' }), {
    title: 'Shipping',
    url: 'https://shop.example/shipping',
  });
  t.same(citationOf({ title: 'Price list.pdf', url: '' }), { title: 'Price list.pdf' });
  t.same(citationOf({ title: '', url: 'https://shop.example/a' }), {
    title: 'https://shop.example/a',
    url: 'https://shop.example/a',
  });
  t.same(citationOf({ title: '', url: 'notion:abc' }), { title: 'Untitled source' });
  const context = [
    { title: 'A', url: '' },
    { title: 'B', url: 'https://b.example/' },
  ];
  t.same(citationsOf(context, [2, 1]), [{ title: 'B', url: 'https://b.example/' }, { title: 'A' }]);
  t.equal(sourcesFooter(citationsOf(context, [2, 1])), '\n\nSources:\n[1] B — https://b.example/\n[2] A');
  t.equal(sourcesFooter([]), '');
});
