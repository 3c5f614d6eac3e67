import t from 'tap';
import { apiKeyPrefix, generateApiKey, hashApiKey, isWellFormedApiKey } from '../../src/auth/api-key-token.ts';

t.test('a generated key is well formed: ic_, 43 base64url characters, a 6-character checksum', async (t) => {
  const key = generateApiKey();
  t.match(key, /^ic_[A-Za-z0-9_-]{43}[0-9A-Za-z]{6}$/);
  t.equal(isWellFormedApiKey(key), true);
  t.equal(apiKeyPrefix(key), key.slice(0, 8));
  t.equal(apiKeyPrefix(key).startsWith('ic_'), true);
});

t.test('a changed character, a wrong prefix or a wrong length fails the checksum or the shape', async (t) => {
  const key = generateApiKey();
  const flipped = key.slice(0, 10) + (key[10] === 'a' ? 'b' : 'a') + key.slice(11);
  t.equal(isWellFormedApiKey(flipped), false);
  t.equal(isWellFormedApiKey(`xx_${key.slice(3)}`), false);
  t.equal(isWellFormedApiKey(key.slice(0, -1)), false);
  t.equal(isWellFormedApiKey(`${key}a`), false);
  t.equal(isWellFormedApiKey(''), false);
});

t.test('keys are distinct and only their SHA-256 is derived for storage', async (t) => {
  const keys = new Set(Array.from({ length: 1000 }, generateApiKey));
  t.equal(keys.size, 1000);
  const [key] = keys;
  t.match(hashApiKey(key!), /^[0-9a-f]{64}$/);
  t.equal(hashApiKey(key!), hashApiKey(key!));
});
