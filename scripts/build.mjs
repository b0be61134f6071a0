#!/usr/bin/env node
// Builds the static site into dist/ and the npm package into pkg/.
//
//   npm run build                 wasm-pack build, then dist/ and pkg/
//   OOMLENS_SKIP_WASM=1 npm run build   reuse pkg/ from an earlier wasm-pack build
//
// Settings (environment):
//   OOMLENS_SAMPLE       the capture bundled as dist/sample.xplane.pb ("Try a sample": a
//                        real out-of-memory failure); default: package.json "config.sample"
//   OOMLENS_SAMPLE_ERROR its error message, bundled as dist/sample.error.txt; default:
//                        package.json "config.sample_error"
//   OOMLENS_SAMPLE_FITS  the second sample, dist/sample-fits.xplane.pb (a training step
//                        that fits); default: package.json "config.sample_fits"
//   OOMLENS_CONNECT_SRC  extra origins the page may fetch ?url= captures from, added to
//                        the Content-Security-Policy connect-src (space-separated)
//   OOMLENS_WASM_OPT=1   also run binaryen's wasm-opt -O3 (needs a binaryen recent enough
//                        for wasm-bindgen's reference-types output; Debian 12's breaks it)
//
// Every URL in the site is relative, so dist/ works under any sub-path (GitHub Pages).

import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const www = join(root, 'www');
const pkg = join(root, 'pkg');
const dist = join(root, 'dist');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

function sh(cmd, args, opts = {}) {
  console.log(`$ ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} exited with ${r.status}`);
}

function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

// 1. The engine: wasm-pack --target web (ES module + .wasm, no bundler needed).
if (!process.env.OOMLENS_SKIP_WASM) {
  const wasmPack = which('wasm-pack') || join(process.env.HOME || '', '.cargo/bin/wasm-pack');
  sh(wasmPack, ['build', '--target', 'web', '--release', '--out-dir', 'pkg', '--out-name', 'oomlens', '--no-pack'], {
    env: { ...process.env, CARGO_BUILD_JOBS: process.env.CARGO_BUILD_JOBS || '1' },
  });
  const wasmOpt = process.env.OOMLENS_WASM_OPT === '1' ? which('wasm-opt') : null;
  if (wasmOpt) {
    const wasm = join(pkg, 'oomlens_bg.wasm');
    const before = statSync(wasm).size;
    sh(wasmOpt, ['-O3', '--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext', '--enable-mutable-globals', '--enable-reference-types', '--enable-multivalue', wasm, '-o', wasm]);
    console.log(`wasm-opt: ${before} → ${statSync(wasm).size} bytes`);
  }
}
for (const f of ['oomlens.js', 'oomlens_bg.wasm']) {
  if (!existsSync(join(pkg, f))) throw new Error(`pkg/${f} is missing: run the build without OOMLENS_SKIP_WASM`);
}

// 2. The site.
rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
// The page's modules: the app shell and its parts at the top, one file per view in views/.
const siteFiles = [
  'index.html', 'favicon.svg', 'style.css',
  'app.js', 'state.js', 'run.js', 'load.js', 'analyze.js', 'worker.js', 'slices.js', 'reader.js', 'dom.js', 'format.js', 'charts.js', 'bars.js', 'timeline.js',
  ...readdirSync(join(www, 'views')).filter((f) => f.endsWith('.js')).sort().map((f) => `views/${f}`),
];
mkdirSync(join(dist, 'views'));
for (const f of siteFiles) copyFileSync(join(www, f), join(dist, f));
for (const f of ['oomlens.js', 'oomlens_bg.wasm']) copyFileSync(join(pkg, f), join(dist, f));

const extra = (process.env.OOMLENS_CONNECT_SRC || '').split(/\s+/).filter(Boolean);
for (const origin of extra) {
  if (!/^https?:\/\/[A-Za-z0-9.-]+(:\d+)?$/.test(origin)) throw new Error(`OOMLENS_CONNECT_SRC: ${origin} is not an origin like https://host:port`);
}
if (extra.length) {
  const file = join(dist, 'index.html');
  const html = readFileSync(file, 'utf8').replace("connect-src 'self'", `connect-src 'self' ${extra.join(' ')}`);
  writeFileSync(file, html);
  console.log(`connect-src also allows: ${extra.join(' ')}`);
}

// The samples: a real out-of-memory failure (a capture and its error message) first,
// then a capture that fits.
const config = manifest.config || {};
for (const [env, key, out] of [
  ['OOMLENS_SAMPLE', 'sample', 'sample.xplane.pb'],
  ['OOMLENS_SAMPLE_ERROR', 'sample_error', 'sample.error.txt'],
  ['OOMLENS_SAMPLE_FITS', 'sample_fits', 'sample-fits.xplane.pb'],
]) {
  const sample = process.env[env] || config[key];
  const samplePath = sample ? resolve(root, sample) : null;
  if (samplePath && existsSync(samplePath)) {
    copyFileSync(samplePath, join(dist, out));
    console.log(`${out}: ${relative(root, samplePath)} (${statSync(samplePath).size} bytes)`);
  } else {
    console.warn(`warning: ${out} not bundled (${sample || 'none configured'} is absent): "Try a sample" will say so. Set ${env} or package.json config.${key}.`);
  }
}

// 3. The npm package: the wasm-pack output plus the worker and the analyze() wrapper.
copyFileSync(join(www, 'analyze.js'), join(pkg, 'index.js'));
for (const f of ['worker.js', 'slices.js', 'reader.js']) copyFileSync(join(www, f), join(pkg, f));
copyFileSync(join(www, 'index.d.ts'), join(pkg, 'index.d.ts'));
copyFileSync(join(www, 'EMBEDDING.md'), join(pkg, 'README.md'));
const cargo = readFileSync(join(root, 'Cargo.toml'), 'utf8');
const version = (cargo.match(/^version\s*=\s*"([^"]+)"/m) || [])[1] || '0.0.0';
writeFileSync(
  join(pkg, 'package.json'),
  `${JSON.stringify(
    {
      name: 'oomlens',
      version,
      description: 'Explains why a JAX/XLA program ran out of accelerator memory, from its profiler capture (*.xplane.pb), in the browser',
      license: 'Apache-2.0',
      type: 'module',
      main: './index.js',
      module: './index.js',
      types: './index.d.ts',
      exports: {
        '.': { types: './index.d.ts', default: './index.js' },
        './worker.js': './worker.js',
        './slices.js': './slices.js',
        './reader.js': './reader.js',
        './engine': { types: './oomlens.d.ts', default: './oomlens.js' },
        './oomlens_bg.wasm': './oomlens_bg.wasm',
      },
      files: ['index.js', 'index.d.ts', 'worker.js', 'slices.js', 'reader.js', 'oomlens.js', 'oomlens.d.ts', 'oomlens_bg.wasm', 'oomlens_bg.wasm.d.ts', 'README.md'],
      sideEffects: ['./worker.js', './reader.js'],
      keywords: ['jax', 'xla', 'oom', 'profiler', 'xplane', 'webassembly'],
    },
    null,
    2,
  )}\n`,
);
console.log(`built dist/ (${siteFiles.length + 2} files) and pkg/ (npm package oomlens@${version})`);
