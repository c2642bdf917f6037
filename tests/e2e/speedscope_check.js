// Validates a speedscope file against the schema speedscope publishes
// (node_modules/speedscope/dist/release/file-format-schema.json) with ajv.
// usage: node speedscope_check.js MODULES_DIR FILE
const fs = require('fs');
const path = require('path');
const modules = path.join(process.argv[2], 'node_modules');
const Ajv = require(path.join(modules, 'ajv'));
const schema = JSON.parse(fs.readFileSync(
    path.join(modules, 'speedscope', 'dist', 'release', 'file-format-schema.json')));
const ajv = new Ajv({strict: false});
const ok = ajv.validate(schema, JSON.parse(fs.readFileSync(process.argv[3])));
console.log(ok ? 'valid' : JSON.stringify(ajv.errors, null, 1));
process.exit(ok ? 0 : 1);
