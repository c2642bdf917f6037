// Loads a Chrome JSON trace with Chrome DevTools' trace model
// (@paulirish/trace_engine from npm, a third-party consumer) and prints what
// it made of it as JSON: the X events it placed per thread, and its flows.
// usage: node trace_engine_load.mjs TRACE_ENGINE_DIR TRACE.json
import fs from 'node:fs';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [engineDir, tracePath] = process.argv.slice(2);
// the model reads DOMRect in one of its handlers; Node has none
globalThis.DOMRect ??= class {
  constructor(x = 0, y = 0, width = 0, height = 0) {
    Object.assign(this, {x, y, width, height});
  }
};
const Trace = await import(pathToFileURL(path.join(engineDir, 'models/trace/trace.js')).href);
const data = JSON.parse(fs.readFileSync(tracePath, 'utf8'));
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(data.traceEvents);
const parsed = model.parsedTrace();
const threads = {};
for (const [pid, proc] of parsed.data.Renderer.processes) {
  for (const [tid, thread] of proc.threads) {
    threads[`${pid}/${tid}`] = {name: thread.name, entries: thread.entries.length};
  }
}
console.log(JSON.stringify({threads, flows: parsed.data.Flows.flows.length}));
