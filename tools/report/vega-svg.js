// `mlsc ... --format=svg`: reads a Vega spec (JSON) on standard input and
// writes the chart as one SVG document on standard output, with Vega's
// own SVG renderer (no browser, no canvas: text widths are estimated).
// Bundled with vega-entry.js by esbuild at build time (CMakeLists.txt).
import * as vega from './vega-entry.js';

const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', async () => {
  try {
    const spec = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const view = new vega.View(vega.parse(spec), {renderer: 'none'});
    const svg = await view.toSVG();
    process.stdout.write(svg + '\n');
  } catch (e) {
    process.stderr.write(String(e && e.message ? e.message : e) + '\n');
    process.exitCode = 1;
  }
});
