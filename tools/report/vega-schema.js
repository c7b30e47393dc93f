// Writes Vega's JSON Schema (draft 7) for the Vega build mlsc bundles
// (vega-entry.js): vega-schema's generator with the transforms' own
// definitions. Bundled and run at build time (CMakeLists.txt); the tests
// check every plot spec against it (utils/check-plots.py).
import {schema} from 'vega-schema';
import * as tx from 'vega-transforms';
import * as vtx from 'vega-view-transforms';
import * as encode from 'vega-encode';
import * as geo from 'vega-geo';
import * as label from 'vega-label';
import * as reg from 'vega-regression';
import * as xf from 'vega-crossfilter';

const defs = [];
for (const m of [tx, vtx, encode, geo, label, reg, xf])
  for (const k of Object.keys(m).sort())
    if (m[k] && m[k].Definition) defs.push(m[k].Definition);
process.stdout.write(JSON.stringify(schema(defs), null, 1) + '\n');
