// Drives the interactive flame graph of asys-export -t svg in jsdom: zoom
// into a box, reset, search.  Prints one JSON line of what it saw.
// usage: node svg_check.js MODULES_DIR FILE.svg ZOOM_NAME SEARCH_REGEX
const fs = require('fs');
const path = require('path');
const {JSDOM} = require(path.join(process.argv[2], 'node_modules', 'jsdom'));
const [file, zoomName, searchText] = process.argv.slice(3);
const dom = new JSDOM(fs.readFileSync(file, 'utf8'),
                      {contentType: 'image/svg+xml', runScripts: 'dangerously'});
const w = dom.window;
// jsdom leaves an SVG document's <script> alone: run its text in the window
w.eval(w.document.getElementsByTagName('script')[0].textContent);
w.prompt = () => searchText;
w.alert = (m) => { throw new Error(m); };
w.init();
const boxes = Array.from(w.document.getElementsByClassName('f'));
const label = (g) => g.getElementsByTagName('title')[0].textContent.replace(/ \([^()]*\)$/, '');
const rect = (g) => g.getElementsByTagName('rect')[0];
const width = (g) => +rect(g).getAttribute('width');
const target = boxes.find((g) => label(g) === zoomName);
const all = boxes[0];
const before = {all: width(all), target: width(target)};
target.onclick();
const zoomed = {
    target: width(target),
    hidden: boxes.filter((g) => g.style.display === 'none').map(label),
    all: width(all),
    unzoom: w.document.getElementById('unzoom').style.opacity,
};
w.unzoom();
const reset = {target: width(target)};
w.search();
const marked = boxes.filter((g) => rect(g).getAttribute('fill') === 'rgb(230,0,230)').map(label);
const matched = w.document.getElementById('matched').textContent;
console.log(JSON.stringify({before, zoomed, reset, marked, matched}));
