// The GitHub Pages workflow (.github/workflows/pages.yml), checked by
// scripts/check-pages-workflow.mjs: the committed workflow passes, and the check fails
// when any step or setting Pages needs is removed or widened. (bash scripts/test.sh
// also runs the workflow's build commands with `--build`.)

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { REQUIRED_STEPS, buildCommands, buildJob, checkWorkflow, loadWorkflow, resolveValue } from '../../scripts/check-pages-workflow.mjs';

const committed = loadWorkflow();
const copy = () => structuredClone(committed);
const build = (doc) => buildJob(doc).job;

describe('the GitHub Pages workflow', () => {
  test('the committed workflow has what Pages needs', () => {
    assert.deepEqual(checkWorkflow(committed), []);
  });

  for (const r of REQUIRED_STEPS) {
    test(`removing the step "${r.key}" fails the check`, () => {
      const doc = copy();
      const job = build(doc);
      const before = job.steps.length;
      job.steps = job.steps.filter((s) => !r.is(s));
      assert.ok(job.steps.length < before, `the committed workflow has a ${r.key} step`);
      const problems = checkWorkflow(doc);
      assert.ok(problems.length > 0, `no problem reported without ${r.key}`);
    });
  }

  test('removing the deployment fails the check', () => {
    const doc = copy();
    for (const job of Object.values(doc.jobs)) job.steps = job.steps.filter((s) => !String(s.uses || '').startsWith('actions/deploy-pages'));
    assert.ok(checkWorkflow(doc).some((p) => /deploy-pages/.test(p)));
  });

  test('deploying before the build, or outside github-pages, fails the check', () => {
    const doc = copy();
    const deploy = Object.values(doc.jobs).find((j) => j.steps.some((s) => String(s.uses || '').startsWith('actions/deploy-pages')));
    delete deploy.needs;
    deploy.environment = { name: 'production' };
    const problems = checkWorkflow(doc);
    assert.ok(problems.some((p) => /must need/.test(p)), problems.join('\n'));
    assert.ok(problems.some((p) => /github-pages/.test(p)), problems.join('\n'));
  });

  test('uploading anything but dist fails the check', () => {
    const doc = copy();
    build(doc).steps.find((s) => String(s.uses || '').startsWith('actions/upload-pages-artifact')).with.path = 'www';
    assert.ok(checkWorkflow(doc).some((p) => /uploaded path must be dist/.test(p)));
  });

  test('the build needs the wasm32 target, and runs after npm ci', () => {
    let doc = copy();
    const rust = build(doc).steps.find((s) => String(s.uses || '').includes('rust-toolchain'));
    delete rust.with;
    assert.ok(checkWorkflow(doc).some((p) => /wasm32-unknown-unknown/.test(p)));
    doc = copy();
    const steps = build(doc).steps;
    const i = steps.findIndex((s) => /npm run build/.test(s.run || ''));
    const j = steps.findIndex((s) => /npm ci/.test(s.run || ''));
    [steps[i], steps[j]] = [steps[j], steps[i]];
    assert.ok(checkWorkflow(doc).some((p) => /npm-ci must come before build/.test(p)));
  });

  test('permissions are exactly contents: read, pages: write, id-token: write', () => {
    for (const change of [(p) => delete p['id-token'], (p) => delete p.pages, (p) => (p.contents = 'write'), (p) => (p.actions = 'write')]) {
      const doc = copy();
      change(doc.permissions);
      assert.ok(checkWorkflow(doc).some((p) => /permissions/.test(p)), JSON.stringify(doc.permissions));
    }
    const doc = copy();
    build(doc).permissions = { contents: 'write' };
    assert.ok(checkWorkflow(doc).some((p) => /more than Pages needs/.test(p)));
  });

  test('triggers and concurrency', () => {
    let doc = copy();
    delete doc.on.workflow_dispatch;
    assert.ok(checkWorkflow(doc).some((p) => /workflow_dispatch/.test(p)));
    doc = copy();
    doc.on.push.branches = ['release'];
    assert.ok(checkWorkflow(doc).some((p) => /main/.test(p)));
    doc = copy();
    delete doc.concurrency;
    assert.ok(checkWorkflow(doc).some((p) => /concurrency/.test(p)));
  });

  test('the build commands are the workflow\'s own, with its env; vars come from the environment', () => {
    const commands = buildCommands(committed);
    assert.deepEqual(commands.map((c) => c.run.trim()), ['npm run build']);
    for (const name of ['OOMLENS_SAMPLE', 'OOMLENS_CONNECT_SRC']) assert.ok(name in commands[0].env, `${name} is passed to the build`);
    assert.equal(resolveValue('${{ vars.OOMLENS_SAMPLE }}', { OOMLENS_SAMPLE: 'x.xplane.pb' }), 'x.xplane.pb');
    assert.equal(resolveValue('${{ vars.OOMLENS_SAMPLE }}', {}), '');
    assert.throws(() => resolveValue('${{ secrets.TOKEN }}', {}), /outside GitHub Actions/);
  });
});
