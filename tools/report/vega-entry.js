// The Vega build that mlsc's reports inline and its SVG renderer runs
// (docs/reports.md, "The Vega library"): Vega 5 as Debian's node-vega
// ships it, bundled by esbuild at build time. It is Vega's own entry
// (vega/index.js) without the Voronoi transform, whose d3-delaunay Debian
// does not package; mlsc draws no Voronoi diagrams and no maps.
import {extend} from 'vega-util';
import {transforms} from 'vega-dataflow';
import * as tx from 'vega-transforms';
import * as vtx from 'vega-view-transforms';
import * as encode from 'vega-encode';
import * as geo from 'vega-geo';
import * as label from 'vega-label';
import * as reg from 'vega-regression';
import * as xf from 'vega-crossfilter';
extend(transforms, tx, vtx, encode, geo, label, reg, xf);

export {version} from 'vega/package.json';
export * from 'vega-statistics';
export * from 'vega-time';
export * from 'vega-util';
export * from 'vega-loader';
export * from 'vega-scenegraph';
export {
  Dataflow, EventStream, Parameters, Pulse, MultiPulse, Operator, Transform,
  changeset, ingest, isTuple, definition, transform, transforms, tupleid
} from 'vega-dataflow';
export {scale, scheme, interpolate, interpolateColors, interpolateRange,
        quantizeInterpolator} from 'vega-scale';
export {View} from 'vega-view';
export {numberFormatDefaultLocale as formatLocale,
        timeFormatDefaultLocale as timeFormatLocale, locale, defaultLocale,
        resetDefaultLocale} from 'vega-format';
export {expressionFunction} from 'vega-functions';
export {parse} from 'vega-parser';
export {context as runtimeContext} from 'vega-runtime';
