// The client-library workload (see test_client_libraries.py) for two Node.js
// clients from npm, installed at test time into clients/node (NODE_PATH):
// `memcached` (3rd-Eden's; text protocol, a pool of connections) and `memjs`
// (binary protocol; no gets/cas or multi-get).
//
//     node node_driver.js memcached|memjs PREFIX HOST:PORT...
//
// Runs each step against every HOST:PORT in turn (so the TTL sleep is shared)
// and prints one JSON line per step and target: {"t": i, "op": name, "r": result}.
'use strict';

const crypto = require('crypto');

const TTL = 2;
const TTL_SLEEP_MS = 3200;

function makeValue(n) {
  const parts = [];
  let size = 0;
  for (let i = 0; size < n; i++) {
    const s = `${i}.`;
    parts.push(s);
    size += s.length;
  }
  return parts.join('').slice(0, n);
}

// Every byte value, then reply lines a careless proxy might parse as its own.
const NASTY = Buffer.concat([Buffer.from(Array.from({length: 256}, (_, i) => i)),
  Buffer.from('\r\nEND\r\nVALUE x 0 1\r\nx\r\nEND\r\n')]);

function show(v) {
  if (Buffer.isBuffer(v)) v = v.toString('latin1');
  if (typeof v !== 'string') return v === undefined ? null : v;
  if (v.length <= 64) return v;
  return `<${v.length} bytes md5 ${crypto.createHash('md5').update(v, 'latin1').digest('hex')}>`;
}

// Calls a Node-style callback API; the result is the callback's values, or
// {error: message} (messages are the libraries' own, such as "MemJS SET: Key
// not found" or memcached's reply line).
function call(obj, method, ...args) {
  return new Promise((resolve) => {
    obj[method](...args, (err, ...values) => {
      if (err) resolve({error: String(err.message || err)});
      else resolve(values.length <= 1 ? values[0] : values);
    });
  });
}

// --- memcached (3rd-Eden) ----------------------------------------------------

function memcachedClient(addr) {
  const Memcached = require('memcached');
  return new Memcached(addr, {timeout: 10000, retries: 0, failures: 100, reconnect: 100, idle: 30000});
}

function memcachedSteps(P) {
  const big100 = makeValue(100000);
  const big900 = makeValue(900000);
  const maxkey = P + 'maxkey' + 'k'.repeat(250 - P.length - 'maxkey'.length);
  const multi = Array.from({length: 50}, (_, i) => `${P}m${i}`);
  const multiResult = (found) => {
    if (!found || found.error) return found;
    return Object.fromEntries(Object.keys(found).sort().map((k) => [k.slice(P.length), show(found[k])]));
  };
  const get = async (c, k) => {
    const r = await call(c, 'get', k);
    return r && r.error ? r : show(r);
  };
  return [
    ['set_small', (c) => call(c, 'set', P + 'small', 'hello world', 0)],
    ['get_small', (c) => get(c, P + 'small')],
    ['get_missing', (c) => get(c, P + 'missing')],
    ['set_100k', (c) => call(c, 'set', P + 'v100k', big100, 0)],
    ['get_100k', (c) => get(c, P + 'v100k')],
    ['set_900k', (c) => call(c, 'set', P + 'v900k', big900, 0)],
    ['get_900k', (c) => get(c, P + 'v900k')],
    ['set_empty', (c) => call(c, 'set', P + 'empty', '', 0)],
    ['get_empty', (c) => get(c, P + 'empty')],
    ['set_binary', (c) => call(c, 'set', P + 'binary', NASTY, 0)],
    ['get_binary', (c) => get(c, P + 'binary')],
    ['get_multi_big', async (c) => multiResult(await call(c, 'getMulti', [P + 'small', P + 'v100k', P + 'v900k', P + 'missing']))],
    ['set_multi_keys', (c) => Promise.all(multi.filter((_, i) => i % 5 !== 0).map((k) => call(c, 'set', k, 'mv' + k.slice(P.length + 1), 0)))],
    ['get_multi_50', async (c) => multiResult(await call(c, 'getMulti', multi))],
    ['add_existing', (c) => call(c, 'add', P + 'small', 'other', 0)],
    ['add_new', (c) => call(c, 'add', P + 'add_new', 'fresh', 0)],
    ['get_add_new', (c) => get(c, P + 'add_new')],
    ['replace_existing', (c) => call(c, 'replace', P + 'small', 'replaced', 0)],
    ['replace_missing', (c) => call(c, 'replace', P + 'replace_missing', 'x', 0)],
    ['get_replaced', (c) => get(c, P + 'small')],
    ['set_append', (c) => call(c, 'set', P + 'append', 'mid', 0)],
    ['append', (c) => call(c, 'append', P + 'append', '_end')],
    ['prepend', (c) => call(c, 'prepend', P + 'append', 'start_')],
    ['get_append', (c) => get(c, P + 'append')],
    ['append_missing', (c) => call(c, 'append', P + 'append_missing', 'x')],
    ['prepend_missing', (c) => call(c, 'prepend', P + 'append_missing', 'x')],
    ['set_counter', (c) => call(c, 'set', P + 'counter', '10', 0)],
    ['incr', (c) => call(c, 'incr', P + 'counter', 5)],
    ['decr', (c) => call(c, 'decr', P + 'counter', 3)],
    ['decr_below_zero', (c) => call(c, 'decr', P + 'counter', 100)],
    ['get_counter', (c) => get(c, P + 'counter')],
    ['incr_missing', (c) => call(c, 'incr', P + 'counter_missing', 1)],
    ['decr_missing', (c) => call(c, 'decr', P + 'counter_missing', 1)],
    // Below 2^63: see test_client_libraries.py on memcached's incr of larger values.
    ['set_counter_large', (c) => call(c, 'set', P + 'counter', '9223372036854775806', 0)],
    ['incr_large', (c) => call(c, 'incr', P + 'counter', 1)],
    ['delete_existing', (c) => call(c, 'del', P + 'small')],
    ['get_deleted', (c) => get(c, P + 'small')],
    ['delete_missing', (c) => call(c, 'del', P + 'small')],
    ['set_touch', (c) => call(c, 'set', P + 'touch', 't', 0)],
    ['touch', (c) => call(c, 'touch', P + 'touch', TTL)],
    ['touch_missing', (c) => call(c, 'touch', P + 'touch_missing', TTL)],
    ['get_touched', (c) => get(c, P + 'touch')],
    ['set_cas', (c) => call(c, 'set', P + 'cas', 'c0', 0)],
    ['gets', async (c, s) => {
      const r = await call(c, 'gets', P + 'cas');
      s.token = r && r.cas;
      return r && r.error ? r : [show(r && r[P + 'cas']), Boolean(s.token)];
    }],
    ['cas_ok', (c, s) => call(c, 'cas', P + 'cas', 'c1', s.token, 0)],
    ['cas_conflict', (c, s) => call(c, 'cas', P + 'cas', 'c2', s.token, 0)],
    ['get_cas', (c) => get(c, P + 'cas')],
    ['delete_cas', (c) => call(c, 'del', P + 'cas')],
    ['cas_missing', (c, s) => call(c, 'cas', P + 'cas', 'c3', s.token, 0)],
    ['set_maxkey', (c) => call(c, 'set', maxkey, 'longest key', 0)],
    ['get_maxkey', (c) => get(c, maxkey)],
    ['get_multi_maxkey', async (c) => multiResult(await call(c, 'getMulti', [maxkey, P + 'v100k']))],
    ['set_ttl', (c) => call(c, 'set', P + 'ttl', 'short', TTL)],
    ['get_ttl_before', (c) => get(c, P + 'ttl')],
    ['sleep', null],
    ['get_ttl_after', (c) => get(c, P + 'ttl')],
    ['get_touched_after', (c) => get(c, P + 'touch')],
    ['sequential_500', async (c) => {
      let good = 0;
      for (let i = 0; i < 500; i++) {
        if ((await call(c, 'set', `${P}seq${i}`, `s${i}`, 0)) === true && (await get(c, `${P}seq${i}`)) === `s${i}`) good++;
      }
      return good;
    }],
    ['concurrent_100', async (c) => {
      // 100 set-then-get chains in flight at once over the client's pool.
      const one = async (i) => {
        const v = makeValue(1000 + 97 * i);
        return (await call(c, 'set', `${P}conc${i}`, v, 0)) === true && (await get(c, `${P}conc${i}`)) === show(v);
      };
      return (await Promise.all(Array.from({length: 100}, (_, i) => one(i)))).filter(Boolean).length;
    }],
  ];
}

// --- memjs --------------------------------------------------------------------

// memjs sends flags 0 and hands back the raw flags (the get's extras); this
// serializer sets them when the value is {flags, value}, for the round trip.
const flagsSerializer = {
  serialize(opcode, value, extras) {
    if (value && typeof value === 'object' && !Buffer.isBuffer(value)) {
      extras = Buffer.from(extras);
      extras.writeUInt32BE(value.flags, 0);
      value = value.value;
    }
    return {value, extras};
  },
  deserialize(opcode, value, extras) {
    return {value, extras};
  },
};

const quietLogger = {log: (...args) => process.stderr.write(args.join(' ') + '\n')};

function memjsClient(addr) {
  const memjs = require('memjs');
  return memjs.Client.create(addr, {
    timeout: 10, conntimeout: 10, retries: 0, failoverTime: 1, logger: quietLogger, serializer: flagsSerializer,
  });
}

function memjsSteps(P) {
  const big100 = makeValue(100000);
  const big900 = makeValue(900000);
  const maxkey = P + 'maxkey' + 'k'.repeat(250 - P.length - 'maxkey'.length);
  const get = async (c, k) => {
    const r = await call(c, 'get', k);
    if (!Array.isArray(r)) return r;
    return show(r[0]);
  };
  const getFlags = async (c, k) => {
    const r = await call(c, 'get', k);
    if (!Array.isArray(r) || !r[1]) return r;
    return [show(r[0]), r[1].readUInt32BE(0)];
  };
  const many = (c, keys) => Promise.all(keys.map((k) => get(c, k)));
  return [
    ['set_small', (c) => call(c, 'set', P + 'small', 'hello world', {})],
    ['get_small', (c) => get(c, P + 'small')],
    ['get_missing', (c) => get(c, P + 'missing')],
    ['set_100k', (c) => call(c, 'set', P + 'v100k', big100, {})],
    ['get_100k', (c) => get(c, P + 'v100k')],
    ['set_900k', (c) => call(c, 'set', P + 'v900k', big900, {})],
    ['get_900k', (c) => get(c, P + 'v900k')],
    ['set_empty', (c) => call(c, 'set', P + 'empty', '', {})],
    ['get_empty', (c) => get(c, P + 'empty')],
    ['set_binary', (c) => call(c, 'set', P + 'binary', NASTY, {})],
    ['get_binary', (c) => get(c, P + 'binary')],
    // No multi-get in memjs: 50 gets in flight at once on its one connection.
    ['set_multi_keys', (c) => Promise.all(Array.from({length: 50}, (_, i) => i).filter((i) => i % 5 !== 0)
      .map((i) => call(c, 'set', `${P}m${i}`, `mv${i}`, {})))],
    ['get_many_50', (c) => many(c, Array.from({length: 50}, (_, i) => `${P}m${i}`))],
    ['get_many_big', (c) => many(c, [P + 'small', P + 'v100k', P + 'v900k', P + 'missing'])],
    ['add_existing', (c) => call(c, 'add', P + 'small', 'other', {})],
    ['add_new', (c) => call(c, 'add', P + 'add_new', 'fresh', {})],
    ['get_add_new', (c) => get(c, P + 'add_new')],
    ['replace_existing', (c) => call(c, 'replace', P + 'small', 'replaced', {})],
    ['replace_missing', (c) => call(c, 'replace', P + 'replace_missing', 'x', {})],
    ['get_replaced', (c) => get(c, P + 'small')],
    ['set_append', (c) => call(c, 'set', P + 'append', 'mid', {})],
    ['append', (c) => call(c, 'append', P + 'append', '_end')],
    // memjs 1.3.2's prepend sends opcode 0x0E, append's: the value ends
    // "mid_endstart_" on memcached too (a library bug, the same on every target).
    ['prepend', (c) => call(c, 'prepend', P + 'append', 'start_')],
    ['get_append', (c) => get(c, P + 'append')],
    ['append_missing', (c) => call(c, 'append', P + 'append_missing', 'x')],
    ['prepend_missing', (c) => call(c, 'prepend', P + 'append_missing', 'x')],
    ['set_counter', (c) => call(c, 'set', P + 'counter', '10', {})],
    // memjs reads the 64-bit reply as (high << 8) + low, in 32-bit JS bit
    // arithmetic: large counters print oddly, the same on every target.
    ['incr', (c) => call(c, 'increment', P + 'counter', 5, {})],
    ['decr', (c) => call(c, 'decrement', P + 'counter', 3, {})],
    ['decr_below_zero', (c) => call(c, 'decrement', P + 'counter', 100, {})],
    ['get_counter', (c) => get(c, P + 'counter')],
    // memjs always sends an initial value (0 unless given) and expiration 0:
    // a missing counter is created, never NOT_FOUND.
    ['incr_missing', (c) => call(c, 'increment', P + 'counter_missing', 1, {})],
    ['get_incr_missing', (c) => get(c, P + 'counter_missing')],
    ['incr_initial', (c) => call(c, 'increment', P + 'counter_new', 1, {initial: 7})],
    ['incr_initial_again', (c) => call(c, 'increment', P + 'counter_new', 1, {initial: 7})],
    ['decr_initial_ttl', (c) => call(c, 'decrement', P + 'counter_new2', 1, {initial: 7, expires: TTL})],
    ['get_counter_new', (c) => get(c, P + 'counter_new')],
    // Below 2^63: see test_client_libraries.py on memcached's incr of larger values.
    ['set_counter_large', (c) => call(c, 'set', P + 'counter', '9223372036854775806', {})],
    ['incr_large', (c) => call(c, 'increment', P + 'counter', 1, {})],
    ['delete_existing', (c) => call(c, 'delete', P + 'small')],
    ['get_deleted', (c) => get(c, P + 'small')],
    ['delete_missing', (c) => call(c, 'delete', P + 'small')],
    ['set_touch', (c) => call(c, 'set', P + 'touch', 't', {})],
    ['touch', (c) => call(c, 'touch', P + 'touch', TTL)],
    ['touch_missing', (c) => call(c, 'touch', P + 'touch_missing', TTL)],
    ['get_touched', (c) => get(c, P + 'touch')],
    ['set_flags', (c) => call(c, 'set', P + 'flags', {flags: 0xDEADBEEF, value: 'flagged'}, {})],
    ['get_flags', (c) => getFlags(c, P + 'flags')],
    ['get_flags_default', (c) => getFlags(c, P + 'append')],
    ['set_maxkey', (c) => call(c, 'set', maxkey, 'longest key', {})],
    ['get_maxkey', (c) => get(c, maxkey)],
    ['set_ttl', (c) => call(c, 'set', P + 'ttl', 'short', {expires: TTL})],
    ['get_ttl_before', (c) => get(c, P + 'ttl')],
    ['sleep', null],
    ['get_ttl_after', (c) => get(c, P + 'ttl')],
    ['get_touched_after', (c) => get(c, P + 'touch')],
    ['get_counter_new2_after', (c) => get(c, P + 'counter_new2')],
    ['sequential_500', async (c) => {
      let good = 0;
      for (let i = 0; i < 500; i++) {
        if ((await call(c, 'set', `${P}seq${i}`, `s${i}`, {})) === true && (await get(c, `${P}seq${i}`)) === `s${i}`) good++;
      }
      return good;
    }],
    ['concurrent_100', async (c) => {
      // 100 set-then-get chains in flight at once, pipelined on memjs's one connection.
      const one = async (i) => {
        const v = makeValue(1000 + 97 * i);
        return (await call(c, 'set', `${P}conc${i}`, v, {})) === true && (await get(c, `${P}conc${i}`)) === show(v);
      };
      return (await Promise.all(Array.from({length: 100}, (_, i) => one(i)))).filter(Boolean).length;
    }],
  ];
}

async function main() {
  const [lib, P, ...addrs] = process.argv.slice(2);
  const make = lib === 'memjs' ? memjsClient : memcachedClient;
  const steps = lib === 'memjs' ? memjsSteps(P) : memcachedSteps(P);
  const clients = addrs.map(make);
  const states = addrs.map(() => ({}));
  for (const [name, fn] of steps) {
    if (fn === null) {
      await new Promise((resolve) => setTimeout(resolve, TTL_SLEEP_MS));
      continue;
    }
    for (let t = 0; t < clients.length; t++) {
      let r;
      try {
        r = await fn(clients[t], states[t]);
      } catch (e) {
        r = {error: String(e && e.message)};
      }
      process.stdout.write(JSON.stringify({t, op: name, r: r === undefined ? null : r}) + '\n');
    }
  }
  for (const c of clients) (c.end || c.close).call(c);
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(String(e && e.stack) + '\n');
  process.exit(1);
});
