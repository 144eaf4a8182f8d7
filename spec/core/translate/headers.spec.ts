import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { okValue } from '../../helpers/outcome.ts';
import { computeHeaders, decodeHeaderValue, encodeHeaderValue, paramHeaders, verifyHeaders } from '../../../lib/core/translate/headers.ts';
import { modernRequest } from '../../helpers/messages.ts';

const enc = suite('encodeHeaderValue');
enc('should pass header-safe values and base64 the rest, exactly as the spec examples', () => {
  assert.is(encodeHeaderValue('get_weather'), 'get_weather');
  assert.is(encodeHeaderValue(42), '42');
  assert.is(encodeHeaderValue(true), 'true');
  assert.is(encodeHeaderValue('Hello, 世界'), '=?base64?SGVsbG8sIOS4lueVjA==?=');
  assert.is(encodeHeaderValue('=?base64?literal?='), '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=');
  assert.is(encodeHeaderValue(' padded'), `=?base64?${btoa(' padded')}?=`);
  assert.is(encodeHeaderValue('line\nbreak'), `=?base64?${btoa('line\nbreak')}?=`);
});
enc('should decode what it encodes and refuse bad base64 or control characters', () => {
  for (const s of ['plain', 'Hello, 世界', '=?base64?literal?=', ' x ', 'tab\there']) {
    const r = decodeHeaderValue(encodeHeaderValue(s));
    assert.is(okValue(r, s), s);
  }
  for (const raw of ['=?base64?***?=', 'bell\u0007', '=?base64?/w==?=', '=?base64?SGVsbG8?=', '=?base64?SGVs!!!bG8=?=']) {
    const r = decodeHeaderValue(raw);
    assert.not.ok(r.ok, raw);
    if (!r.ok) assert.is(r.error.code, -32020);
  }
});
enc.run();

const ann = suite('paramHeaders');
const schema = {
  type: 'object',
  properties: {
    region: { type: 'string', 'x-mcp-header': 'Region' },
    options: {
      type: 'object',
      properties: { dryRun: { type: 'boolean', 'x-mcp-header': 'Dry-Run' }, count: { type: 'integer', 'x-mcp-header': 'Count' } },
    },
    text: { type: 'string' },
  },
};
ann('should find annotations reachable through properties, with their paths and types', () => {
  const r = paramHeaders(schema);
  assert.ok(r.ok);
  if (r.ok)
    assert.equal(r.value, [
      { name: 'Region', path: ['region'], type: 'string' },
      { name: 'Dry-Run', path: ['options', 'dryRun'], type: 'boolean' },
      { name: 'Count', path: ['options', 'count'], type: 'integer' },
    ]);
});
ann('should refuse annotations the spec forbids', () => {
  const bad = [
    { type: 'object', properties: { n: { type: 'number', 'x-mcp-header': 'N' } } },
    { type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'X' }, b: { type: 'string', 'x-mcp-header': 'x' } } },
    { type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'bad name' } } },
    { type: 'object', properties: { a: { type: 'string', 'x-mcp-header': '' } } },
    { type: 'object', properties: { list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } } },
    { type: 'object', properties: { a: { anyOf: [{ type: 'string', 'x-mcp-header': 'A' }] } } },
    { type: 'object', 'x-mcp-header': 'Root' },
  ];
  for (const s of bad) assert.not.ok(paramHeaders(s).ok, JSON.stringify(s));
});
ann.run();

const hdr = suite('computeHeaders / verifyHeaders');
const call = modernRequest('tools/call', {
  name: 'deploy',
  arguments: { region: 'eu-west 1 ✓', options: { dryRun: false, count: 3 }, text: 'x' },
});
const lookup = (h: Record<string, string>) => (name: string) =>
  Object.entries(h).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
hdr('should compute every routing header for a tools/call', () => {
  const r = computeHeaders(call, { tool: { inputSchema: schema } });
  assert.ok(r.ok);
  if (r.ok)
    assert.equal(r.value, {
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/call',
      'Mcp-Name': 'deploy',
      'Mcp-Param-Region': encodeHeaderValue('eu-west 1 ✓'),
      'Mcp-Param-Dry-Run': 'false',
      'Mcp-Param-Count': '3',
    });
});
hdr('should use Mcp-Name for resources/read and none for server/discover', () => {
  const read = computeHeaders(modernRequest('resources/read', { uri: 'file:///a b.txt' }));
  assert.is(okValue(read)['Mcp-Name'], 'file:///a b.txt');
  const d = computeHeaders(modernRequest('server/discover'));
  assert.not.ok('Mcp-Name' in okValue(d));
});
hdr('should accept matching headers in any case, comparing integers numerically', () => {
  const r = computeHeaders(call, { tool: { inputSchema: schema } });
  if (!r.ok) return assert.unreachable();
  const lower = Object.fromEntries(Object.entries(r.value).map(([k, v]) => [k.toLowerCase(), v]));
  assert.ok(verifyHeaders(call, lookup(lower), { tool: { inputSchema: schema } }).ok);
  assert.ok(verifyHeaders(call, lookup({ ...r.value, 'Mcp-Param-Count': '3.0' }), { tool: { inputSchema: schema } }).ok);
});
hdr('should answer every mismatch with -32020', () => {
  const good = computeHeaders(call, { tool: { inputSchema: schema } });
  if (!good.ok) return assert.unreachable();
  const variants: Array<Record<string, string | undefined>> = [
    { 'MCP-Protocol-Version': undefined },
    { 'MCP-Protocol-Version': '2025-11-25' },
    { 'Mcp-Method': 'tools/list' },
    { 'Mcp-Method': undefined },
    { 'Mcp-Name': 'other' },
    { 'Mcp-Name': undefined },
    { 'Mcp-Param-Count': '4' },
    { 'Mcp-Param-Region': undefined },
    { 'Mcp-Param-Region': 'eu-west 1 \u0001' },
  ];
  for (const change of variants) {
    const headers = { ...good.value, ...change };
    for (const k of Object.keys(headers)) if (headers[k] === undefined) delete headers[k];
    const r = verifyHeaders(call, lookup(headers as Record<string, string>), { tool: { inputSchema: schema } });
    assert.not.ok(r.ok, JSON.stringify(change));
    if (!r.ok) assert.is(r.error.code, -32020);
  }
});
hdr('should not ask for a param header whose argument is absent or null', () => {
  const req = modernRequest('tools/call', { name: 'deploy', arguments: { region: null } });
  const r = computeHeaders(req, { tool: { inputSchema: schema } });
  const names = Object.keys(okValue(r));
  assert.ok(names.includes('Mcp-Method'), JSON.stringify(names));
  assert.equal(
    names.filter((k) => k.startsWith('Mcp-Param-')),
    [],
  );
  if (r.ok) assert.ok(verifyHeaders(req, lookup(r.value), { tool: { inputSchema: schema } }).ok);
});
hdr.run();

const hostile = suite('verifyHeaders under hostile members');
hostile('should answer -32020 for body values whose toString member is not a function', () => {
  const versionObject = JSON.parse(
    `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":{"toString":0}}}}`,
  );
  const r = verifyHeaders(versionObject, lookup({ 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/list' }));
  assert.not.ok(r.ok);
  if (!r.ok) assert.is(r.error.code, -32020);
  const schema = { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } };
  const call = JSON.parse(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"region":{"toString":0}}}}`);
  const p = verifyHeaders(
    call,
    lookup({ 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/call', 'Mcp-Name': 't', 'Mcp-Param-Region': 'x' }),
    { tool: { inputSchema: schema } },
  );
  assert.not.ok(p.ok);
  if (!p.ok) assert.is(p.error.code, -32020);
});
hostile.run();
