import t from 'tap';
import { foldText, splitWords, stem, STOPWORDS, tokenize } from '../../src/rag/text-tokenizer.ts';

t.test('words are stemmed with the Porter stemmer', async (t) => {
  t.same(tokenize('running runs connected connection connections'), ['run', 'run', 'connect', 'connect', 'connect']);
  t.same(tokenize('Ponies studies generously'), ['poni', 'studi', 'gener']);
  t.equal(stem('caresses'), 'caress');
  t.equal(stem('2024'), '2024', 'numbers are their own stem');
});

t.test("Redis's default English stopwords are dropped", async (t) => {
  t.same(tokenize('The cat is on the mat, and it was not there'), ['cat', 'mat']);
  t.equal(STOPWORDS.size, 33);
  t.same(tokenize('the a an of to'), []);
});

t.test('case and diacritics are folded, compatibility forms decomposed', async (t) => {
  t.equal(foldText('Crème Brûlée, Straße, ŁÓDŹ, Ærø'), 'creme brulee, strasse, lodz, aero');
  t.same(tokenize('Crème BRÛLÉE naïve Straße'), ['creme', 'brule', 'naiv', 'strass']);
  t.same(tokenize('ﬁnal ＡＢＣ'), ['final', 'abc']);
  t.same(tokenize('resume'), tokenize('Résumé'));
});

t.test('words are split by Unicode rules, apostrophes and possessives dropped', async (t) => {
  t.same(tokenize("The company's e-mail isn't hello@example.com"), [
    'compani',
    'e',
    'mail',
    'isnt',
    'hello',
    'example.com',
  ]);
  t.same(tokenize('version 2.0 costs $30'), ['version', '2.0', 'cost', '30']);
  t.same(tokenize('Привет, мир!'), ['привет', 'мир']);
  t.same(tokenize('我喜欢北京'), ['我', '喜欢', '北京']);
  t.same(tokenize('  ...  '), []);
});

t.test('splitWords keeps words unstemmed and splits identifiers after the whole', async (t) => {
  t.same(splitWords('Use fs.readFileSync and the HTTPServer'), [
    'use',
    'fs.readfilesync',
    'fs',
    'read',
    'file',
    'sync',
    'httpserver',
    'http',
    'server',
  ]);
  t.same(splitWords("node:fs start_end os.EOL the companies' Crème"), [
    'node:fs',
    'node',
    'fs',
    'start_end',
    'start',
    'end',
    'os.eol',
    'os',
    'eol',
    'companies',
    'creme',
  ]);
  t.same(splitWords('the of and'), []);
});
