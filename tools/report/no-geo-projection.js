// vega-projection imports the Mollweide projection from d3-geo-projection,
// which Debian does not package; mlsc draws no maps (vega-entry.js).
export function geoMollweide() {
  throw new Error('the Mollweide projection is not in this Vega build');
}
