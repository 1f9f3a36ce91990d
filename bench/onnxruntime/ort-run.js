#!/usr/bin/env node
// Benchmark-only harness: runs an ONNX model with onnxruntime (the npm package
// onnxruntime-node, CPU execution provider) and times it, so that a kiln
// benchmark can compare its network latency with onnxruntime's in one run.
// onnxruntime is not a dependency of kiln; see README.md beside this file.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');

const USAGE = `usage: node ort-run.js MODEL.onnx [options]
  --threads N             intra-op threads (default 1); inter-op threads are 1
  --spin on|off           session.intra_op.allow_spinning "1"/"0" (default on)
  --inputs F0.f32,F1.f32  raw little-endian float32 files, one per graph input,
                          in the graph's input order (default: seeded inputs)
  --seed S                seed of the generated inputs (default 1)
  --write-outputs PREFIX  after one run, write output i to PREFIX.out<i>.f32
  --warmup W              untimed runs before timing (default 5)
  --repeats R             timed runs (default 20; 0 with --write-outputs/--serve)
  --serve                 after loading and warm-up, read commands from stdin:
                          "time R [W]" (W extra warm-up runs first) prints one
                          JSON line; "quit" (or end of input) exits 0
  --verbose               onnxruntime's verbose log on stderr (session options,
                          graph rewrites, node placements)
  --save-optimized PATH   write the graph as optimized by onnxruntime (shows
                          the kernels it picked, e.g. com.microsoft.nchwc Conv)
  --help                  this text`;

// The one session config entry this harness sets. onnxruntime accepts any key
// through AddConfigEntry without checking it (a misspelt key is stored and then
// ignored), so the key is a constant here and the value is checked below.
const SPIN_KEY = 'session.intra_op.allow_spinning';

class UsageError extends Error {}

function fail(msg, code) {
  process.stderr.write(`ort-run: ${msg}\n`);
  process.exit(code);
}

function parseCount(flag, text, min) {
  if (!/^\d+$/.test(String(text))) throw new UsageError(`${flag} needs a whole number, got "${text}"`);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${flag} must be at least ${min}, got ${text}`);
  return n;
}

function parseArgs(argv) {
  const opt = {
    model: null, threads: 1, spin: 'on', inputs: null, seed: 1,
    writeOutputs: null, warmup: 5, repeats: 20, serve: false, verbose: false, saveOptimized: null,
  };
  const valued = new Set(['--threads', '--spin', '--inputs', '--seed', '--write-outputs', '--warmup', '--repeats', '--save-optimized']);
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let v;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) { v = a.slice(eq + 1); a = a.slice(0, eq); }
    if (valued.has(a) && v === undefined) {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`);
      v = argv[++i];
    }
    switch (a) {
      case '--help': case '-h': process.stdout.write(USAGE + '\n'); process.exit(0); break;
      case '--threads': opt.threads = parseCount(a, v, 1); break;
      case '--spin':
        if (v !== 'on' && v !== 'off') throw new UsageError(`--spin takes on or off, got "${v}"`);
        opt.spin = v; break;
      case '--inputs': opt.inputs = v.split(',').filter((s) => s.length > 0); break;
      case '--seed': opt.seed = parseCount(a, v, 0); break;
      case '--write-outputs':
        if (!v) throw new UsageError('--write-outputs needs a prefix');
        opt.writeOutputs = v; break;
      case '--warmup': opt.warmup = parseCount(a, v, 0); break;
      case '--repeats': opt.repeats = parseCount(a, v, 0); break;
      case '--serve': opt.serve = true; break;
      case '--verbose': opt.verbose = true; break;
      case '--save-optimized':
        if (!v) throw new UsageError('--save-optimized needs a path');
        opt.saveOptimized = v; break;
      default:
        if (a.startsWith('-')) throw new UsageError(`unknown option ${a}`);
        if (opt.model !== null) throw new UsageError(`one model only (got "${opt.model}" and "${a}")`);
        opt.model = a;
    }
  }
  if (opt.model === null) throw new UsageError('no model given');
  if (opt.seed > 0xffffffff) throw new UsageError('--seed must fit in 32 bits');
  if (opt.repeats === 0 && !opt.writeOutputs && !opt.serve) {
    throw new UsageError('--repeats 0 only makes sense with --write-outputs or --serve');
  }
  return opt;
}

function loadOrt() {
  try {
    return require('onnxruntime-node');
  } catch (e) {
    fail(`cannot load onnxruntime-node (${e.message.split('\n')[0]}); ` +
         `run ${path.join(__dirname, 'install')} first`, 3);
  }
}

// Seeded inputs: mulberry32, one stream over all inputs in graph order, each
// value (u32 >>> 8) / 2^23 - 1, i.e. uniform in [-1, 1) on a 2^-23 grid (exact
// in float32). mulberry32(s): s += 0x6D2B79F5; t = imul(s ^ s>>>15, s|1);
// t ^= t + imul(t ^ t>>>7, t|61); return (t ^ t>>>14) >>> 0.
function mulberry32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6D2B79F5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

function shapeText(dims) { return `[${dims.join(',')}]`; }

function inputSpecs(session) {
  const md = session.inputMetadata;
  return session.inputNames.map((name, i) => {
    const m = md[i];
    if (!m || !m.isTensor) throw new Error(`input ${i} ("${name}") is not a tensor`);
    if (m.type !== 'float32') throw new Error(`input ${i} ("${name}") is ${m.type}; only float32 inputs are supported`);
    const dims = m.shape;
    if (!dims.every((d) => typeof d === 'number' && Number.isInteger(d) && d >= 0)) {
      throw new Error(`input ${i} ("${name}") has a dynamic shape ${shapeText(dims)}; only static shapes are supported`);
    }
    const count = dims.reduce((a, b) => a * b, 1);
    return { name, dims, count };
  });
}

function makeFeeds(ort, specs, opt) {
  const feeds = {};
  if (opt.inputs) {
    if (opt.inputs.length !== specs.length) {
      throw new Error(`--inputs has ${opt.inputs.length} file(s) but the model has ${specs.length} input(s): ` +
                      specs.map((s) => `${s.name} ${shapeText(s.dims)}`).join(', '));
    }
    if (os.endianness() !== 'LE') throw new Error('input files are little-endian; this host is not');
    specs.forEach((s, i) => {
      const file = opt.inputs[i];
      let buf;
      try { buf = fs.readFileSync(file); } catch (e) { throw new Error(`cannot read input file ${file}: ${e.message}`); }
      const want = s.count * 4;
      if (buf.length !== want) {
        throw new Error(`input file ${file} has ${buf.length} bytes, expected ${want} ` +
                        `(input ${i} "${s.name}", float32 ${shapeText(s.dims)})`);
      }
      const data = new Float32Array(s.count);
      new Uint8Array(data.buffer).set(buf);
      feeds[s.name] = new ort.Tensor('float32', data, s.dims);
    });
  } else {
    const next = mulberry32(opt.seed);
    for (const s of specs) {
      const data = new Float32Array(s.count);
      for (let j = 0; j < s.count; j++) data[j] = (next() >>> 8) / 8388608 - 1;
      feeds[s.name] = new ort.Tensor('float32', data, s.dims);
    }
  }
  return feeds;
}

async function writeOutputs(session, feeds, prefix) {
  const results = await session.run(feeds);
  const files = [];
  session.outputNames.forEach((name, i) => {
    const t = results[name];
    if (t.type !== 'float32') throw new Error(`output ${i} ("${name}") is ${t.type}; only float32 outputs are written`);
    const file = `${prefix}.out${i}.f32`;
    const d = t.data;
    fs.writeFileSync(file, Buffer.from(d.buffer, d.byteOffset, d.byteLength));
    files.push({ file, name, dims: t.dims });
  });
  return files;
}

async function timeRuns(session, feeds, warmup, repeats) {
  for (let i = 0; i < warmup; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < repeats; i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    const t1 = process.hrtime.bigint();
    times.push(Number(t1 - t0) / 1e6);
  }
  return times;
}

function round6(x) { return Math.round(x * 1e6) / 1e6; }

function summary(base, times) {
  const sorted = [...times].sort((a, b) => a - b);
  const n = sorted.length;
  const median = n === 0 ? null : (n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2);
  const mean = n === 0 ? null : times.reduce((a, b) => a + b, 0) / n;
  return {
    ...base,
    runs: n,
    median_ms: median === null ? null : round6(median),
    min_ms: n === 0 ? null : round6(sorted[0]),
    mean_ms: mean === null ? null : round6(mean),
    times_ms: times.map(round6),
  };
}

function emit(obj) { process.stdout.write(JSON.stringify(obj) + '\n'); }

async function serve(session, feeds, base) {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity, terminal: false });
  for await (const raw of rl) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const words = line.split(/\s+/);
    try {
      if (words[0] === 'quit' && words.length === 1) {
        rl.close();
        return;
      } else if (words[0] === 'time' && (words.length === 2 || words.length === 3)) {
        const r = parseCount('time R', words[1], 1);
        const w = words.length === 3 ? parseCount('time R W', words[2], 0) : 0;
        emit(summary(base, await timeRuns(session, feeds, w, r)));
      } else {
        emit({ error: `unknown command "${line}" (commands: "time R [W]", "quit")` });
      }
    } catch (e) {
      emit({ error: e.message });
    }
  }
}

async function main() {
  let opt;
  try {
    opt = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (e instanceof UsageError) fail(`${e.message}\n${USAGE}`, 2);
    throw e;
  }
  if (!fs.existsSync(opt.model)) fail(`model file ${opt.model} not found`, 2);

  const ort = loadOrt();
  const ortVersion = ort.env.versions.node || require('onnxruntime-node/package.json').version;
  if (opt.verbose) ort.env.logLevel = 'verbose';

  const sessionOptions = {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    intraOpNumThreads: opt.threads,
    interOpNumThreads: 1,
    // The node binding flattens extra into "a.b" keys and passes each to
    // SessionOptions::AddConfigEntry (values must be strings); a dotted key
    // works as is.
    extra: { [SPIN_KEY]: opt.spin === 'on' ? '1' : '0' },
  };
  if (opt.verbose) sessionOptions.logSeverityLevel = 0;
  if (opt.saveOptimized) sessionOptions.optimizedModelFilePath = opt.saveOptimized;

  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(opt.model, sessionOptions);
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;

  const specs = inputSpecs(session);
  const feeds = makeFeeds(ort, specs, opt);
  const base = { ort_version: ortVersion, threads: opt.threads, spin: opt.spin };

  let written = null;
  if (opt.writeOutputs) written = await writeOutputs(session, feeds, opt.writeOutputs);

  if (opt.serve) {
    await timeRuns(session, feeds, opt.warmup, 0);
    emit({
      ready: true, ...base,
      model: opt.model,
      load_ms: round6(loadMs),
      warmup: opt.warmup,
      inputs: specs.map((s) => ({ name: s.name, dims: s.dims })),
      outputs: session.outputNames,
      ...(written ? { outputs_written: written.map((w) => w.file) } : {}),
    });
    await serve(session, feeds, base);
  } else {
    const times = opt.repeats > 0 ? await timeRuns(session, feeds, opt.warmup, opt.repeats) : [];
    const out = summary(base, times);
    if (written) out.outputs_written = written.map((w) => w.file);
    emit(out);
  }
  await session.release();
}

// A reader that goes away (EPIPE) ends the run quietly.
process.stdout.on('error', (e) => process.exit(e.code === 'EPIPE' ? 0 : 1));

// Exit explicitly once stdout is written: stdin may still be open (serve mode
// after "quit"), and an open stdin would keep node alive.
main().then(
  () => process.stdout.write('', () => process.exit(0)),
  (e) => fail(e && e.message ? e.message : String(e), 1),
);
