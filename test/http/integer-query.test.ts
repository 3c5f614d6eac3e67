import type { Request } from 'restify';
import t from 'tap';
import { IntegerQuery } from '../../src/http/integer-query.ts';

const K = new IntegerQuery('k', { min: 1, max: 50, fallback: 10 });
const read = (query: string) => {
  try {
    return K.read({ url: `/retrieve${query}` } as Request);
  } catch (error) {
    return { name: (error as Error).name, detail: (error as { detail?: string }).detail };
  }
};
const REFUSED = { name: 'ValidationError', detail: 'k must be a whole number from 1 to 50.' };

t.test('absent: the fallback; whole numbers in range: their value', async (t) => {
  t.equal(read(''), 10);
  t.equal(read('?query=x'), 10);
  t.equal(read('?k=1'), 1);
  t.equal(read('?k=50'), 50);
  t.equal(read('?k=007'), 7, 'leading zeros are still a whole number');
  t.equal(read('?query=a&k=3&limit=x'), 3, 'other parameters are not its business');
});

t.test('anything else is refused with one detail naming the parameter and its range', async (t) => {
  const cases = {
    fraction: '?k=1.5',
    'fraction of a whole number': '?k=2.0',
    negative: '?k=-1',
    zero: '?k=0',
    'too large': '?k=51',
    huge: '?k=99999999999999999999',
    empty: '?k=',
    'no value': '?k',
    exponent: '?k=1e1',
    hex: '?k=0x10',
    'plus sign': '?k=%2B5',
    'leading space': '?k=%205',
    'trailing space': '?k=5%20',
    'not a number': '?k=ten',
    infinity: '?k=Infinity',
    'non-ASCII digit': '?k=%D9%A3',
    repeated: '?k=5&k=6',
    'malformed encoding': '?k=%E0%A4%A',
  };
  for (const [name, query] of Object.entries(cases)) t.same(read(query), REFUSED, name);
});

t.test('a programmer error in the range throws when the parameter is declared', async (t) => {
  t.throws(() => new IntegerQuery('n', { min: 5, max: 1, fallback: 5 }), {
    message: 'IntegerQuery n: min, max and fallback must be safe integers with 0 <= min <= max.',
  });
  t.throws(() => new IntegerQuery('n', { min: 0, max: 1.5, fallback: 0 }), {
    message: 'IntegerQuery n: min, max and fallback must be safe integers with 0 <= min <= max.',
  });
  t.throws(() => new IntegerQuery('n', { min: 1, max: 5, fallback: 0 }), {
    message: 'IntegerQuery n: fallback 0 is out of range.',
  });
});
