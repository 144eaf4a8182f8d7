import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { extend, notArray, omitKeys, sameJson, setMember, shown } from '../../lib/core/primitives.ts';

/** A decoded message may have a member named `__proto__`: JSON.parse makes it an own data member. */
const decoded = JSON.parse('{"a":1,"__proto__":{"polluted":true}}') as Record<string, unknown>;

const copy = suite('setMember / omitKeys / extend');
copy('should copy a member named __proto__ as data and leave the prototype alone', () => {
  for (const out of [omitKeys(decoded, []), extend(decoded, { b: 2 }), extend({}, decoded)]) {
    assert.is(Object.getPrototypeOf(out), Object.prototype);
    assert.ok(Object.hasOwn(out, '__proto__'));
    assert.is(out['polluted'], undefined);
    assert.ok(JSON.stringify(out).includes('"__proto__":{"polluted":true}'));
  }
  const target: Record<string, unknown> = {};
  setMember(target, '__proto__', 5);
  assert.equal(Object.keys(target), ['__proto__']);
});
copy.run();

const text = suite('shown');
text('should word any decoded value, whatever its toString member', () => {
  assert.is(shown('x'), 'x');
  assert.is(shown(5), '5');
  assert.is(shown(JSON.parse('{"toString":0}')), '{"toString":0}');
  assert.is(shown(undefined), 'undefined');
});
text.run();

const objects = suite('notArray');
objects('should refuse an array where an object schema would take one', () => {
  const schema = notArray(v.looseObject({ a: v.optional(v.string()) }));
  assert.ok(v.is(schema, { a: 'x' }));
  assert.not.ok(v.is(v.looseObject({}), 5));
  assert.ok(v.is(v.looseObject({}), []), 'valibot alone takes an array for an object');
  assert.not.ok(v.is(schema, []));
  assert.not.ok(v.is(schema, [{ a: 'x' }]));
});
objects.run();

const equal = suite('sameJson');
equal('should compare decoded JSON by value, object members in any order, array items in order', () => {
  assert.ok(sameJson({ elicitation: { form: {} }, sampling: {} }, JSON.parse('{"sampling":{},"elicitation":{"form":{}}}')));
  assert.not.ok(sameJson({ a: {} }, { a: {}, b: {} }));
  assert.not.ok(sameJson({ a: {}, b: 1 }, { a: {}, c: 1 }));
  assert.not.ok(sameJson([1, 2], [2, 1]));
  assert.not.ok(sameJson({ a: [] }, { a: {} }));
  assert.not.ok(sameJson({ a: null }, { a: {} }));
  assert.ok(sameJson([{ x: 'y' }, 2, 'z', null], [{ x: 'y' }, 2, 'z', null]));
  let deep: unknown = {};
  for (let i = 0; i < 40; i++) deep = { d: deep };
  assert.not.ok(sameJson(deep, structuredClone(deep)), 'past 16 levels nothing is taken for equal');
});
equal.run();
