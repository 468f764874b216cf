/** The problem registry a domain adds its codes to (lib/http/problem.ts registerProblems), and the "service down" mapping lib/store registers. */
import t from 'tap';
import { problemRegistry, problemResponse, registerProblems, toHttpError } from '../../lib/http/problem.js';
import { isDependencyDown } from '../../lib/errors/index.js';
import { isStoreDown } from '../../lib/store/dependency.js';

const silent = { warn: () => undefined, error: () => undefined };

t.test('a domain code renders like a framework one, and is listed with the codes of its status', async (t) => {
  const make = registerProblems({
    'zz-test-gone': { status: 410, title: 'Gone' },
    'aa-test-bad': { status: 400, title: 'Bad Request' },
  });
  const p = JSON.parse(problemResponse(make('zz-test-gone', 'it went'), 'r1').body) as Record<string, unknown>;
  t.same(p, {
    type: 'urn:squeezeback:problem:zz-test-gone',
    title: 'Gone',
    status: 410,
    detail: 'it went',
    request_id: 'r1',
  });
  const codes = problemRegistry().map((e) => e.code);
  t.equal(codes.indexOf('aa-test-bad'), codes.indexOf('bad-path') + 1, 'a 400 after the last framework 400');
  // The last framework code of status 410 or below is upstream-client-error (404, listed after the 429).
  t.equal(
    codes.indexOf('zz-test-gone'),
    codes.indexOf('upstream-client-error') + 1,
    'a 410 after the last framework code of 410 or below',
  );
});

t.test('registering a code again is fine when it is the same, a programming error when it is not', async (t) => {
  registerProblems({ 'zz-test-twice': { status: 400, title: 'Bad Request' } });
  t.doesNotThrow(() => registerProblems({ 'zz-test-twice': { status: 400, title: 'Bad Request' } }));
  t.throws(() => registerProblems({ 'zz-test-twice': { status: 409, title: 'Conflict' } }), /registered already/);
  t.throws(() => registerProblems({ 'not-found': { status: 400, title: 'Bad Request' } }), /registered already/);
});

t.test("the store registers which of its clients' errors mean a service is down: 503 with Retry-After", async (t) => {
  const down = Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' });
  t.ok(isStoreDown(down));
  t.ok(isDependencyDown(down), 'known to the error kernel once lib/store loaded');
  t.ok(isDependencyDown(new Error('Connection is closed.')), 'ioredis');
  t.notOk(isDependencyDown(Object.assign(new Error('duplicate key'), { code: '23505' })));
  const e = toHttpError(down, silent);
  t.equal(e.status, 503);
  t.same(e.headers, { 'Retry-After': '2' });
});
