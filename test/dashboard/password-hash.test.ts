import t from 'tap';
import { checkPassword, hashPassword, verifyPassword } from '../../src/dashboard/password-hash.ts';
import { ValidationError } from '../../src/errors.ts';

t.test('scrypt hashes carry their parameters and a fresh salt', async (t) => {
  const a = await hashPassword('correct horse battery staple');
  const b = await hashPassword('correct horse battery staple');
  t.match(a, /^scrypt\$32768\$8\$3\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  t.not(a, b, 'salted');
  t.equal(await verifyPassword('correct horse battery staple', a), true);
  t.equal(await verifyPassword('correct horse battery stapler', a), false);
  t.equal(await verifyPassword('correct horse battery staple', 'bcrypt$x'), false);
  // Unicode is compared in one normal form: é typed precomposed or as e + combining accent.
  const accented = await hashPassword('caf\u00e9 au lait, s\u2019il vous pla\u00eet');
  t.equal(await verifyPassword('cafe\u0301 au lait, s\u2019il vous pla\u00eet', accented), true);
});

t.test('passwords must be 12 to 256 characters', async (t) => {
  for (const bad of ['short', 'x'.repeat(11), 'x'.repeat(257), 42, undefined]) {
    t.throws(() => checkPassword(bad), new ValidationError('password must be 12 to 256 characters.'));
  }
  t.equal(checkPassword('x'.repeat(12)), 'x'.repeat(12));
});
