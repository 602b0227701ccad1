// The script's world, run in every VM before the script. It takes the one
// host function (__host), installs the globals a script sees and freezes
// the built-ins. It passes only strings to the host and takes only strings
// back, so that the Go side never converts a JavaScript value itself.
//
// host(op, ...args) returns a string, or undefined, or throws an Error
// whose message is the host's. The ops are listed in host.go.
(function () {
  'use strict';
  const G = globalThis;
  const host = G.__host;
  delete G.__host;

  const stringify = JSON.stringify, parse = JSON.parse, isArray = Array.isArray;
  const freeze = Object.freeze, define = Object.defineProperty, create = Object.create;
  const MapCtor = Map, ErrorCtor = Error, TypeErrorCtor = TypeError, PromiseCtor = Promise;
  const mapGet = Map.prototype.get, mapSet = Map.prototype.set, mapDelete = Map.prototype.delete, mapHas = Map.prototype.has;
  const StringCtor = String, apply = Reflect.apply, ownKeys = Reflect.ownKeys;
  // The bounds come from the host when a script takes the VM
  // (__configure), once.
  let MAX_DEPTH = 100, longest = 0, maxArgumentBytes = 0, maxArgumentSize = '', maxStoreBytes = 0, configured = false;
  const STOP = {};

  // write is JSON.stringify within MAX_DEPTH levels and maxBytes: a
  // replacer that sees every value stringify writes (after toJSON) keeps
  // the chain of holders above it, and counts the bytes from below.
  // It returns [text] (text undefined when stringify writes nothing), or
  // ['depth'] or ['bytes'] for the bound passed, or ['error', message].
  function write(v, maxBytes, indent) {
    const stack = [];
    let bytes = 0, over = '';
    function replacer(key, val) {
      while (stack.length > 0 && stack[stack.length - 1] !== this) stack.length--;
      // A lower bound of what stringify writes for this member: its key
      // (in an object), a separator, the indentation, the value's own
      // characters.
      bytes += 1 + stack.length * indent;
      if (stack.length > 0 && !isArray(this)) bytes += StringCtor(key).length + 3;
      if (val !== null && typeof val === 'object') {
        stack[stack.length] = val;
        if (stack.length > MAX_DEPTH) { over = 'depth'; throw STOP; }
        bytes += 2;
      } else if (typeof val === 'string') {
        bytes += val.length + 2;
      } else if (typeof val === 'number') {
        bytes += StringCtor(val).length;
      } else {
        bytes += 4;
      }
      if (bytes > maxBytes) { over = 'bytes'; throw STOP; }
      return val;
    }
    try {
      const text = stringify(v, replacer, indent > 0 ? indent : undefined);
      if (typeof text === 'string' && text.length > maxBytes) return ['bytes'];
      return [text];
    } catch (e) {
      if (e === STOP) return [over];
      return ['error', describe(e)];
    }
  }

  // describe is how a thrown value reads: an Error's name, message and
  // stack, anything else as JSON or text.
  function describe(e) {
    try {
      if (e instanceof ErrorCtor) {
        let s = StringCtor(e.name) + ': ' + StringCtor(e.message);
        if (typeof e.stack === 'string' && e.stack !== '') s += '\n' + e.stack.replace(/<eval>/g, 'script.js').replace(/\n+$/, '');
        return s;
      }
      if (e === undefined) return 'the script threw undefined';
      if (typeof e === 'string') return 'the script threw ' + e;
      const w = write(e, 4096, 0);
      return 'the script threw ' + (typeof w[0] === 'string' && w.length === 1 ? w[0] : StringCtor(e));
    } catch (_) {
      return 'the script threw a value that cannot be shown';
    }
  }

  // show is how console arguments and messages read: strings as they are,
  // other values as JSON where they have a JSON form.
  function show(v, maxBytes) {
    if (typeof v === 'string') return v;
    if (v === undefined) return 'undefined';
    if (typeof v === 'function') return '[function ' + (v.name || 'anonymous') + ']';
    if (typeof v === 'symbol' || typeof v === 'bigint') return StringCtor(v);
    const w = write(v, maxBytes, 0);
    switch (w[0]) {
      case 'depth': return '[a value nested deeper than ' + MAX_DEPTH + ' levels]';
      case 'bytes': return TOO_LONG;
      case 'error': return StringCtor(v);
    }
    return w[0] === undefined ? StringCtor(v) : w[0];
  }

  const TOO_LONG = '[a value too long to show]';
  const rejected = (msg) => PromiseCtor.reject(new ErrorCtor(msg));

  // Tool calls: each is a promise the host settles by id (pump).
  const waiting = new MapCtor();
  function callTool(name, ident, arg) {
    if (arg === undefined || arg === null) arg = {};
    if (typeof arg !== 'object' || isArray(arg)) {
      return rejected('tools.' + ident + ' takes one object of arguments, such as tools.' + ident + '({...}); got ' + show(arg, 200));
    }
    const w = write(arg, maxArgumentBytes, 0);
    switch (w[0]) {
      case 'depth': return rejected('the argument of tools.' + ident + ' is nested deeper than ' + MAX_DEPTH + ' levels');
      case 'bytes': return rejected('the arguments of tools.' + ident + ' are over ' + maxArgumentSize + ' as JSON; pass less in one call');
      case 'error': return rejected('the arguments of tools.' + ident + ' cannot be written as JSON: ' + w[1]);
    }
    const id = Number(host('call', name, w[0] === undefined ? '{}' : w[0]));
    return new PromiseCtor((resolve, reject) => { apply(mapSet, waiting, [id, [resolve, reject]]); });
  }

  // pump settles the calls the host finished: the host calls it.
  function pump() {
    for (;;) {
      const next = host('next');
      if (next === undefined) return;
      const c = parse(next);
      const r = apply(mapGet, waiting, [c.id]);
      if (r === undefined) continue;
      apply(mapDelete, waiting, [c.id]);
      if (!c.ok) { r[1](new ErrorCtor(c.v)); continue; }
      let v = c.v;
      if (c.json) { try { v = parse(v); } catch (_) { /* the text as it is */ } }
      r[0](v);
    }
  }

  const fns = new MapCtor();
  const passThrough = new Set(['then', 'toJSON', 'toString', 'valueOf', 'constructor', 'hasOwnProperty',
    'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', '__proto__']);
  const hasPass = Set.prototype.has;
  const target = create(null);
  const tools = new Proxy(target, {
    get(t, name) {
      if (typeof name === 'symbol' || apply(hasPass, passThrough, [name])) return undefined;
      let f = apply(mapGet, fns, [name]);
      if (f !== undefined) return f;
      const found = parse(host('lookup', name));
      if (!found.ok) throw new TypeErrorCtor(found.error);
      f = (arg) => callTool(found.name, found.ident, arg);
      apply(mapSet, fns, [name, f]);
      return f;
    },
    has(t, name) { return typeof name === 'string' && parse(host('lookup', name)).ok; },
    set() { return false; },
    defineProperty() { return false; },
    deleteProperty() { return false; },
    ownKeys() { return []; },
  });

  function logger(level) {
    return function (...args) {
      let budget = Number(host('outputLeft'));
      const parts = [];
      for (const a of args) {
        const s = show(a, budget);
        // A value longer than the output left is over the limit.
        if (s === TOO_LONG) { host('over'); return; }
        parts[parts.length] = s;
        budget -= s.length + 1;
        if (budget < 0) break;
      }
      host('log', level, parts.join(' '));
    };
  }
  const console = freeze({
    log: logger('log'), info: logger('info'), warn: logger('warn'), error: logger('error'), debug: logger('debug'),
  });

  function searchTools(query, opts) {
    try {
      if (query === undefined || query === null) return rejected('searchTools needs a query: await searchTools("read a file", {limit: 5})');
      const o = {};
      if (opts !== undefined && opts !== null && typeof opts === 'object') {
        if (opts.limit !== undefined && opts.limit !== null) o.limit = Number(opts.limit);
        if (opts.namespace !== undefined && opts.namespace !== null) o.namespace = StringCtor(opts.namespace);
      }
      return PromiseCtor.resolve(parse(host('search', StringCtor(query), stringify(o))));
    } catch (e) {
      return PromiseCtor.reject(e);
    }
  }
  function describeTool(name) {
    try { return PromiseCtor.resolve(parse(host('describeTool', StringCtor(name)))); } catch (e) { return PromiseCtor.reject(e); }
  }
  function describeNamespace(name) {
    try { return PromiseCtor.resolve(parse(host('describeNamespace', StringCtor(name)))); } catch (e) { return PromiseCtor.reject(e); }
  }

  function store(key, value) {
    if (typeof key !== 'string' || key === '') throw new TypeErrorCtor('store(key, value) needs a key that is a non-empty string, such as store("seen", ids)');
    const w = write(value === undefined ? null : value, maxStoreBytes, 0);
    switch (w[0]) {
      case 'depth': throw new TypeErrorCtor('store("' + key + '"): the value is nested deeper than ' + MAX_DEPTH + ' levels');
      case 'bytes': throw new TypeErrorCtor('store("' + key + '"): the value is too long; a session keeps at most ' + maxStoreBytes + ' bytes of stored values');
      case 'error': throw new TypeErrorCtor('store("' + key + '"): the value cannot be written as JSON: ' + w[1]);
    }
    host('store', key, w[0] === undefined ? 'null' : w[0]);
  }
  function load(key) {
    if (typeof key !== 'string') throw new TypeErrorCtor('load(key) needs a key that is a string, such as load("seen")');
    const v = host('load', key);
    return v === undefined ? undefined : parse(v);
  }
  function text(s) { host('text', show(s, Number(host('outputLeft')))); }
  function image(data, mimeType) {
    if (typeof data !== 'string') throw new TypeErrorCtor('image(data, mimeType) needs the image as a base64 string, such as image(png, "image/png")');
    host('image', data, mimeType === undefined ? 'image/png' : StringCtor(mimeType));
  }
  function exit(value) {
    if (value === undefined) host('exit');
    else host('exit', typeof value === 'string' ? value : show(value, Number(host('outputLeft'))));
    // The host has asked the engine to stop, which it does within a few
    // thousand instructions: nothing after exit() runs.
    for (;;) { /* wait for the stop */ }
  }

  function start(body) {
    const ok = (v) => {
      if (v === undefined) { host('done', 'undefined'); return; }
      if (typeof v === 'string') { host('done', 'string', v); return; }
      const w = write(v, Number(host('outputLeft')), 2);
      switch (w[0]) {
        case 'depth': host('done', 'error', 'the script\'s value is nested deeper than ' + MAX_DEPTH + ' levels: return a flatter value'); return;
        case 'bytes': host('done', 'over'); return;
        case 'error': host('done', 'error', w[1]); return;
      }
      host('done', 'string', w[0] === undefined ? StringCtor(v) : w[0]);
    };
    const fail = (e) => { host('done', 'error', describe(e)); };
    PromiseCtor.resolve().then(body).then(ok, fail);
  }

  // ALL_TOOLS is read from the host at its first use: most scripts never
  // look at it, and a shelf may hold thousands of tools.
  let all;
  const allTools = () => {
    if (all === undefined) all = freeze(parse(host('allTools')).map(freeze));
    return all;
  };

  // The built-ins are frozen, as the reference freezes them: a script
  // cannot change what another part of itself, or this prelude, relies on.
  const builtins = ['Object', 'Function', 'Array', 'String', 'Number', 'Boolean', 'Symbol', 'BigInt', 'Math', 'JSON',
    'Reflect', 'Promise', 'RegExp', 'Date', 'Error', 'EvalError', 'RangeError', 'ReferenceError', 'SyntaxError',
    'TypeError', 'URIError', 'AggregateError', 'Map', 'Set', 'WeakMap', 'WeakSet', 'WeakRef', 'FinalizationRegistry',
    'ArrayBuffer', 'SharedArrayBuffer', 'DataView', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array',
    'Uint16Array', 'Int32Array', 'Uint32Array', 'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array',
    'Float16Array', 'Proxy', 'Atomics', 'Iterator'];
  // The engine polls its interrupt in the interpreter and the regexp
  // engine, not in the native loops of the array methods, which walk an
  // array-like's length index by index: Array.prototype.indexOf.call(
  // {length: 2 ** 40}, 1) would run for hours, past every limit. No array
  // longer than the memory limit's worth of values (16 bytes each) can be
  // dense, so a call on one that long is stopped before the native loop
  // starts, with the memory limit's error.
  const mathMin = Math.min, mathTrunc = Math.trunc, NumberCtor = Number, ObjectCtor = Object;
  const toLength = (v) => { const n = mathTrunc(NumberCtor(v)); return n > 0 ? mathMin(n, 2 ** 53 - 1) : 0; };
  function tooLong(what, len) {
    host('tooLong', what, StringCtor(len));
    for (;;) { /* wait for the stop */ }
  }
  function guard(obj, names, prefix) {
    for (const name of names) {
      const native = obj[name];
      if (typeof native !== 'function') continue;
      const wrapped = {
        [name](...args) {
          if (this !== null && this !== undefined) {
            const len = toLength(ObjectCtor(this).length);
            if (len > longest) tooLong(prefix + name, len);
          }
          return apply(native, this, args);
        },
      }[name];
      define(obj, name, { value: wrapped, writable: true, enumerable: false, configurable: true });
    }
  }
  guard(Array.prototype, ['concat', 'copyWithin', 'every', 'fill', 'filter', 'find', 'findIndex', 'findLast',
    'findLastIndex', 'flat', 'flatMap', 'forEach', 'includes', 'indexOf', 'join', 'lastIndexOf', 'map', 'reduce',
    'reduceRight', 'reverse', 'shift', 'slice', 'some', 'sort', 'splice', 'toLocaleString', 'toReversed',
    'toSorted', 'toSpliced', 'toString', 'unshift', 'with'], 'Array.prototype.');
  const nativeFrom = Array.from, iterSym = Symbol.iterator;
  define(Array, 'from', {
    value: function from(items, ...rest) {
      if (items !== null && items !== undefined && typeof items[iterSym] !== 'function') {
        const len = toLength(ObjectCtor(items).length);
        if (len > longest) tooLong('Array.from', len);
      }
      return apply(nativeFrom, this, [items, ...rest]);
    },
    writable: true, enumerable: false, configurable: true,
  });

  // Freezing a prototype makes its data properties read-only on every
  // object that inherits them: in strict code, this.name = ... in an Error
  // subclass would throw. The properties scripts commonly set on their own
  // objects become accessors whose setter gives the object its own
  // property (the "override mistake" fix of hardened JavaScript).
  function enable(proto, key) {
    const d = Object.getOwnPropertyDescriptor(proto, key);
    if (d === undefined || !('value' in d)) return;
    const value = d.value;
    define(proto, key, {
      get() { return value; },
      set(v) {
        if (this === proto) throw new TypeErrorCtor('the built-ins are frozen: ' + StringCtor(key) + ' cannot be changed');
        define(this, key, { value: v, writable: true, enumerable: true, configurable: true });
      },
      enumerable: d.enumerable, configurable: false,
    });
  }
  for (const k of ['toString', 'valueOf', 'constructor', 'toLocaleString']) enable(Object.prototype, k);
  for (const k of ['name', 'message', 'toString', 'constructor']) enable(Error.prototype, k);
  for (const k of ['toString', 'constructor']) enable(Array.prototype, k);
  for (const k of ['toString', 'constructor']) enable(Function.prototype, k);
  for (const k of ['then', 'catch', 'finally', 'constructor']) enable(Promise.prototype, k);

  // Each built-in and its prototype are frozen (their own properties,
  // not the functions they hold: a script that changes Array.prototype.map
  // changes nothing any other code reads through Array.prototype).
  const protoOf = Object.getPrototypeOf, isFrozen = Object.isFrozen;
  const freezeWithProto = (o) => {
    if (o === null || o === undefined || isFrozen(o)) return;
    freeze(o);
    if (typeof o === 'function' && o.prototype !== undefined) freezeWithProto(o.prototype);
  };
  for (const name of builtins) {
    if (name in G) freezeWithProto(G[name]);
  }
  // What syntax and the built-ins make without a global constructor:
  // the prototypes of generators, async functions, iterators, typed
  // arrays and errors.
  for (const o of [protoOf(function* () {}), protoOf(protoOf(function* () {}).prototype),
    protoOf(async function () {}), protoOf(async function* () {}), protoOf(protoOf(async function* () {}).prototype),
    protoOf([][Symbol.iterator]()), protoOf(protoOf([][Symbol.iterator]())), protoOf(new Map().entries()),
    protoOf(new Set().values()), protoOf(''[Symbol.iterator]()), protoOf(/x/[Symbol.matchAll]('')),
    protoOf(Uint8Array), protoOf(Uint8Array.prototype)]) {
    freezeWithProto(o);
  }
  freeze(G.constructor === Object ? Object.prototype : protoOf(G));

  const globals = {
    tools, console, searchTools, describeTool, describeNamespace, store, load, text, image, exit,
  };
  for (const name of ownKeys(globals)) {
    define(G, name, { value: globals[name], writable: false, enumerable: false, configurable: false });
  }
  for (const f of [searchTools, describeTool, describeNamespace, store, load, text, image, exit]) freeze(f);
  define(G, 'ALL_TOOLS', { get: allTools, enumerable: false, configurable: false });
  const configure = (depth, longestArray, argumentBytes, argumentSize, storeBytes) => {
    if (configured) return;
    configured = true;
    MAX_DEPTH = NumberCtor(depth);
    longest = NumberCtor(longestArray);
    maxArgumentBytes = NumberCtor(argumentBytes);
    maxArgumentSize = StringCtor(argumentSize);
    maxStoreBytes = NumberCtor(storeBytes);
  };
  define(G, '__configure', { value: freeze(configure), writable: false, enumerable: false, configurable: false });
  define(G, '__start', { value: freeze(start), writable: false, enumerable: false, configurable: false });
  define(G, '__pump', { value: freeze(pump), writable: false, enumerable: false, configurable: false });
})();
