// The oomlens engine's web worker. It owns the WebAssembly engine, reads the capture
// it is given (a File or Blob) in slices through FileReaderSync — never as one
// ArrayBuffer — and posts progress and the finished report model. The page only renders.
//
// Protocol (one analysis at a time; to cancel, the page terminates the worker):
//   in:  {id, blob, options}            options: {module, error_text, host, file_name}
//   out: {id, type: 'progress', phase, done, total, read}
//        {id, type: 'result', report, markdown, ms, phases, memoryBytes, version}
//        (phases: [name, ms] in order)
//        {id, type: 'error', message, kind}

import init, { analyzeBlob, reportMarkdown, version } from './oomlens.js';

const ready = init();

self.onmessage = async (event) => {
  const { id, blob, options } = event.data || {};
  let wasm;
  try {
    wasm = await ready;
  } catch (e) {
    self.postMessage({ id, type: 'error', kind: 'engine', message: `the engine did not load: ${e && e.message ? e.message : e}` });
    return;
  }
  if (!(blob instanceof Blob)) {
    self.postMessage({ id, type: 'error', kind: 'input', message: 'nothing to analyze: expected a File or Blob' });
    return;
  }
  const started = performance.now();
  // How long each phase took (for benchmarks and the page's footer).
  const phases = [];
  let phaseStart = started;
  let phaseName = 'open';
  try {
    const report = analyzeBlob(blob, options || {}, (phase, done, total, read) => {
      if (phase !== phaseName) {
        const now = performance.now();
        phases.push([phaseName, now - phaseStart]);
        phaseName = phase;
        phaseStart = now;
      }
      self.postMessage({ id, type: 'progress', phase, done, total, read });
    });
    let markdown = '';
    try {
      markdown = reportMarkdown(report);
    } catch (e) {
      markdown = '';
    }
    self.postMessage({
      id,
      type: 'result',
      report,
      markdown,
      ms: performance.now() - started,
      phases,
      memoryBytes: wasm.memory.buffer.byteLength,
      version: version(),
    });
  } catch (e) {
    const message = e && e.message ? e.message : String(e);
    // A Rust panic surfaces as a RuntimeError; the page then drops this worker.
    const kind = e && e.kind ? e.kind : e instanceof WebAssembly.RuntimeError ? 'panic' : 'analysis';
    self.postMessage({ id, type: 'error', kind, message });
  }
};
