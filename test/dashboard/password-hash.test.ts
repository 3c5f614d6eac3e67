import t from 'tap';
import {
  checkPassword,
  hashPassword,
  PASSWORD_WORK_CONCURRENCY,
  PASSWORD_WORK_QUEUE,
  PasswordWorkBusyError,
  passwordWorkLoad,
  verifyPassword,
} from '../../src/dashboard/password-hash.ts';
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

t.test('two scrypt computations run at once; the others wait in a queue and all get their answer', async (t) => {
  t.equal(PASSWORD_WORK_CONCURRENCY, 2);
  const stored = await hashPassword('correct horse battery staple');
  t.same(passwordWorkLoad(), { running: 0, waiting: 0 });
  const loads: Array<{ running: number; waiting: number }> = [];
  const guesses = ['correct horse battery staple', 'wrong horse battery staple'];
  const checks = [0, 1, 2, 3, 4, 5].map(async (i) => {
    const matches = await verifyPassword(guesses[i % 2]!, stored);
    loads.push(passwordWorkLoad());
    return matches;
  });
  const hashing = hashPassword('another password of twelve');
  t.same(passwordWorkLoad(), { running: 2, waiting: 5 }, 'two run, the rest wait (a new hash too)');
  t.same(await Promise.all(checks), [true, false, true, false, true, false]);
  t.match(await hashing, /^scrypt\$/);
  t.ok(
    loads.every((load) => load.running <= 2),
    `never more than two at once: ${JSON.stringify(loads)}`,
  );
  t.same(passwordWorkLoad(), { running: 0, waiting: 0 });
});

t.test('a check that finds every slot and queue place taken is refused at once, not queued', async (t) => {
  t.equal(PASSWORD_WORK_QUEUE, 4);
  const stored = await hashPassword('correct horse battery staple');
  const capacity = PASSWORD_WORK_CONCURRENCY + PASSWORD_WORK_QUEUE;
  const admitted = Array.from({ length: capacity }, () => verifyPassword('wrong horse battery staple', stored));
  t.same(passwordWorkLoad(), { running: 2, waiting: 4 });
  await t.rejects(
    verifyPassword('correct horse battery staple', stored),
    new PasswordWorkBusyError('every password check slot is taken'),
  );
  const hashing = hashPassword('a new password, set by its owner');
  t.same(passwordWorkLoad(), { running: 2, waiting: 5 }, 'setting a password still waits its turn');
  t.same(await Promise.all(admitted), Array<boolean>(capacity).fill(false));
  t.match(await hashing, /^scrypt\$/);
  t.equal(await verifyPassword('correct horse battery staple', stored), true, 'checked again once there is room');
});
