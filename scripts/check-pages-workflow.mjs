#!/usr/bin/env node
// Checks the GitHub Pages workflow (.github/workflows/pages.yml), then runs its build.
//
//   node scripts/check-pages-workflow.mjs            the structure only
//   node scripts/check-pages-workflow.mjs --build    then the workflow's own build
//                                                    commands here, with its env
//
// Structure: it runs on pushes to main and by hand; its permissions are exactly
// `contents: read`, `pages: write`, `id-token: write`; deployments share a concurrency
// group; the build job checks out, sets up Rust with the wasm32-unknown-unknown target,
// installs wasm-pack, sets up Node, runs `npm ci` then `npm run build`, and uploads
// `dist` with actions/upload-pages-artifact; a deploy job after it runs
// actions/deploy-pages in the github-pages environment.
//
// Build: the `run:` steps between `npm ci` (done by scripts/setup.sh already) and the
// upload, in order, with the workflow's, the job's and the step's env, where
// `${{ vars.NAME }}` is this environment's NAME (empty when unset); then what is
// uploaded must be a built site.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { parse } from 'yaml';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const WORKFLOW = join(ROOT, '.github/workflows/pages.yml');

/** The permissions the workflow must ask for, and no more. */
export const PERMISSIONS = { contents: 'read', pages: 'write', 'id-token': 'write' };

export function loadWorkflow(file = WORKFLOW) {
  return parse(readFileSync(file, 'utf8'));
}

/** `actions/checkout@v4` → `actions/checkout`. */
const action = (step) => (typeof step.uses === 'string' ? step.uses.split('@')[0].toLowerCase() : '');
const runs = (step) => (typeof step.run === 'string' ? step.run : '');
const words = (value) => String(value ?? '').split(/[\s,]+/).filter(Boolean);

/** The steps the build needs, each found by what it does. */
export const REQUIRED_STEPS = [
  { key: 'checkout', what: 'a checkout (actions/checkout)', is: (s) => action(s) === 'actions/checkout' },
  {
    key: 'rust',
    what: 'Rust set up with the wasm32-unknown-unknown target (dtolnay/rust-toolchain with targets, or rustup target add)',
    is: (s) =>
      (/rust-toolchain|setup-rust/.test(action(s)) && words(s.with && (s.with.targets ?? s.with.target)).includes('wasm32-unknown-unknown')) ||
      /rustup\s+target\s+add\s+[^\n]*wasm32-unknown-unknown/.test(runs(s)),
  },
  {
    key: 'wasm-pack',
    what: 'wasm-pack installed (taiki-e/install-action with tool: wasm-pack, jetli/wasm-pack-action, or a run that installs it)',
    is: (s) =>
      (action(s) === 'taiki-e/install-action' && words(s.with && s.with.tool).some((t) => t.split('@')[0] === 'wasm-pack')) ||
      action(s) === 'jetli/wasm-pack-action' ||
      /cargo\s+(binstall|install)\s+[^\n]*wasm-pack|wasm-pack\/installer/.test(runs(s)),
  },
  { key: 'node', what: 'Node set up (actions/setup-node)', is: (s) => action(s) === 'actions/setup-node' },
  { key: 'npm-ci', what: 'npm ci', is: (s) => /(^|[\s;&])npm\s+ci\b/.test(runs(s)) },
  { key: 'build', what: 'npm run build', is: (s) => /(^|[\s;&])npm\s+run\s+build\b/.test(runs(s)) },
  { key: 'upload', what: 'the site uploaded with actions/upload-pages-artifact', is: (s) => action(s) === 'actions/upload-pages-artifact' },
];

const jobsOf = (doc) => (doc && typeof doc.jobs === 'object' && doc.jobs ? doc.jobs : {});
const stepsOf = (job) => (job && Array.isArray(job.steps) ? job.steps.filter((s) => s && typeof s === 'object') : []);

/** The job that uploads the site (or the one named `build`). */
export function buildJob(doc) {
  const jobs = jobsOf(doc);
  const id = Object.keys(jobs).find((k) => stepsOf(jobs[k]).some((s) => action(s) === 'actions/upload-pages-artifact')) || (jobs.build ? 'build' : null);
  return id ? { id, job: jobs[id] } : null;
}

/** What is wrong with the workflow, one sentence each; empty when nothing is. */
export function checkWorkflow(doc) {
  const problems = [];
  if (!doc || typeof doc !== 'object') return ['the workflow is not a YAML mapping'];
  // `on:` may be read as the key `on` or, by YAML 1.1 parsers, `true`.
  const on = doc.on ?? doc[true];
  const push = on && typeof on === 'object' ? on.push : null;
  const branches = push && typeof push === 'object' ? [].concat(push.branches || []) : [];
  if (!branches.includes('main')) problems.push('on.push.branches must include main');
  if (!on || typeof on !== 'object' || !('workflow_dispatch' in on)) problems.push('on must include workflow_dispatch (to deploy by hand)');

  const perms = doc.permissions;
  if (!perms || typeof perms !== 'object') problems.push(`permissions must be set at the top: ${JSON.stringify(PERMISSIONS)}`);
  else {
    for (const [k, v] of Object.entries(PERMISSIONS)) if (perms[k] !== v) problems.push(`permissions.${k} must be ${v} (it is ${perms[k] ?? 'unset'})`);
    for (const k of Object.keys(perms)) if (!(k in PERMISSIONS)) problems.push(`permissions.${k} is more than Pages needs`);
  }
  for (const [id, job] of Object.entries(jobsOf(doc))) {
    if (!job || typeof job !== 'object' || job.permissions == null) continue;
    const jp = job.permissions;
    if (typeof jp !== 'object') problems.push(`jobs.${id}.permissions must be a mapping within the workflow's`);
    else for (const [k, v] of Object.entries(jp)) if (PERMISSIONS[k] !== v && v !== 'none') problems.push(`jobs.${id}.permissions.${k}: ${v} is more than Pages needs`);
  }
  const group = doc.concurrency && typeof doc.concurrency === 'object' ? doc.concurrency.group : doc.concurrency;
  if (typeof group !== 'string' || !group.trim()) problems.push('concurrency.group must be set (one deployment at a time)');

  const build = buildJob(doc);
  if (!build) {
    problems.push('no build job: none uploads the site with actions/upload-pages-artifact');
  } else {
    const steps = stepsOf(build.job);
    if (!build.job['runs-on']) problems.push(`jobs.${build.id}.runs-on is missing`);
    const at = {};
    for (const r of REQUIRED_STEPS) {
      const i = steps.findIndex(r.is);
      if (i < 0) problems.push(`jobs.${build.id} lacks a step: ${r.what}`);
      else at[r.key] = i;
    }
    const before = (a, b) => {
      if (at[a] != null && at[b] != null && at[a] > at[b]) problems.push(`jobs.${build.id}: ${a} must come before ${b}`);
    };
    for (const first of ['checkout', 'rust', 'wasm-pack', 'node', 'npm-ci']) before(first, 'build');
    before('checkout', 'npm-ci');
    before('node', 'npm-ci');
    before('build', 'upload');
    if (at.upload != null) {
      const path = steps[at.upload].with && steps[at.upload].with.path;
      const clean = String(path ?? '').replace(/^\.\//, '').replace(/\/+$/, '');
      if (clean !== 'dist') problems.push(`the uploaded path must be dist (npm run build's output), not ${path ?? 'the default'}`);
    }
  }

  const deployId = Object.keys(jobsOf(doc)).find((k) => stepsOf(jobsOf(doc)[k]).some((s) => action(s) === 'actions/deploy-pages'));
  if (!deployId) problems.push('no job deploys with actions/deploy-pages');
  else {
    const job = jobsOf(doc)[deployId];
    const needs = [].concat(job.needs || []);
    if (build && deployId !== build.id && !needs.includes(build.id)) problems.push(`jobs.${deployId} must need jobs.${build.id} (deploy after the build)`);
    const env = job.environment;
    const name = env && typeof env === 'object' ? env.name : env;
    if (name !== 'github-pages') problems.push(`jobs.${deployId}.environment must be github-pages`);
    if (!job['runs-on']) problems.push(`jobs.${deployId}.runs-on is missing`);
  }
  return problems;
}

/** `${{ vars.NAME }}` → this environment's NAME; any other expression cannot be run here. */
export function resolveValue(value, env = process.env) {
  return String(value ?? '').replace(/\$\{\{\s*([^}]*?)\s*\}\}/g, (_, expr) => {
    const m = /^vars\.([A-Za-z_][A-Za-z0-9_]*)$/.exec(expr);
    if (!m) throw new Error(`cannot evaluate \${{ ${expr} }} outside GitHub Actions`);
    return env[m[1]] ?? '';
  });
}

function resolveEnv(...maps) {
  const out = {};
  for (const m of maps) if (m && typeof m === 'object') for (const [k, v] of Object.entries(m)) out[k] = resolveValue(v);
  return out;
}

/** The build's own commands: the `run:` steps after `npm ci` and before the upload, with their env. */
export function buildCommands(doc) {
  const build = buildJob(doc);
  if (!build) return [];
  const steps = stepsOf(build.job);
  const ci = steps.findIndex(REQUIRED_STEPS.find((r) => r.key === 'npm-ci').is);
  const upload = steps.findIndex(REQUIRED_STEPS.find((r) => r.key === 'upload').is);
  return steps
    .slice(ci + 1, upload < 0 ? steps.length : upload)
    .filter((s) => runs(s))
    .map((s) => ({ name: s.name || s.run, run: s.run, env: resolveEnv(doc.env, build.job.env, s.env), cwd: s['working-directory'] || build.job.defaults?.run?.['working-directory'] || '.' }));
}

function main() {
  const doc = loadWorkflow();
  const problems = checkWorkflow(doc);
  if (problems.length) {
    console.error(`${WORKFLOW}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    process.exit(1);
  }
  console.log('pages.yml: triggers, permissions, concurrency, build and deploy steps are as GitHub Pages needs');
  if (!process.argv.includes('--build')) return;
  const commands = buildCommands(doc);
  if (!commands.length) {
    console.error('pages.yml: no build command to run');
    process.exit(1);
  }
  for (const c of commands) {
    const shown = Object.entries(c.env).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ');
    console.log(`\n$ ${shown ? `${shown} ` : ''}${c.run.trim()}    # ${c.name}`);
    const r = spawnSync('bash', ['-eo', 'pipefail', '-c', c.run], { cwd: resolve(ROOT, c.cwd), stdio: 'inherit', env: { ...process.env, ...c.env } });
    if (r.status !== 0) {
      console.error(`pages.yml: "${c.name}" failed (exit ${r.status ?? r.signal})`);
      process.exit(1);
    }
  }
  const upload = stepsOf(buildJob(doc).job).find(REQUIRED_STEPS.find((r) => r.key === 'upload').is);
  const site = resolve(ROOT, upload.with.path);
  const missing = ['index.html', 'app.js', 'worker.js', 'oomlens.js', 'oomlens_bg.wasm', 'style.css'].filter((f) => !existsSync(join(site, f)));
  if (missing.length) {
    console.error(`pages.yml: the uploaded ${upload.with.path}/ lacks ${missing.join(', ')}`);
    process.exit(1);
  }
  const html = readFileSync(join(site, 'index.html'), 'utf8');
  const absolute = [...html.matchAll(/\s(?:src|href)="(\/[^"]*|https?:[^"]*)"/g)].map((m) => m[1]);
  if (absolute.length) {
    console.error(`pages.yml: index.html has non-relative URLs, which break under https://<owner>.github.io/<repository>/: ${absolute.join(', ')}`);
    process.exit(1);
  }
  console.log(`\npages.yml: its build wrote the site to ${upload.with.path}/, with relative URLs only`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
