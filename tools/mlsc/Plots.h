//===- Plots.h - Results as Vega charts ----------------------------*- C++
//-*-===//
//
// One more renderer of the runtime's results (docs/reports.md): each plot
// is a Vega 5 spec, a template of tools/report/specs/ (embedded at build
// time) with the result's numbers as its data and its titles as signals.
// `mlsc report` puts them in one HTML page; `--format=vega` prints one
// spec and `--format=svg` renders one with Vega's own SVG renderer
// (Svg.cpp).
//
//  - a scenario: the roofline of its accelerator with each phase at its
//    arithmetic intensity, the memory per device against capacity, the
//    candidate times of each phase (the largest binds), and, with a
//    `simulate` block, the latency CDFs simulated against the closed
//    forms' percentiles;
//  - sensitivity: a tornado of elasticities, the binding wall across each
//    calibrated factor's plausible range;
//  - a sweep: a line per metric over one variable; over two or more, a
//    heat map per metric and a regime map of the binding wall, each with
//    the region that meets the conditions outlined (large grids binned);
//  - a Pareto solve: the points that meet the conditions, the front drawn
//    and the dominated points faded.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_TOOLS_MLSC_PLOTS_H
#define MLSC_TOOLS_MLSC_PLOTS_H

#include "runtime/Fleet.h"
#include "runtime/Query.h"
#include "runtime/Result.h"
#include "runtime/Sensitivity.h"

#include "llvm/Support/JSON.h"

#include <optional>
#include <string>
#include <vector>

namespace mlsc::driver {

struct Plot {
  std::string Id;      ///< "chat.roofline": what --plot names
  std::string Title;   ///< shown above the chart
  std::string Caption; ///< what it shows and how it was computed
  llvm::json::Value Spec = nullptr;
};

/// How an axis shows a quantity: values divided by Scale, in Unit
/// ("TB/s", "ms", "USD/h"), chosen from the largest magnitude shown.
struct AxisUnit {
  double Scale = 1;
  std::string Unit;
};
AxisUnit axisUnit(double MaxAbs, const Dimension &D);

/// The simulated requests' latencies, for the CDFs (seconds).
struct LatencySamples {
  std::vector<double> TTFT, TPOT, E2E;
};

/// A scenario's plots: roofline, memory, step times, latency CDFs (each
/// where the result has what it needs).
std::vector<Plot> scenarioPlots(const ScenarioResult &R,
                                const LatencySamples *Simulated);

/// A fleet's members' shares of its power, cost, CO2e and water (each
/// figure the fleet's total has); none without one.
std::optional<Plot> fleetPlot(const FleetResult &F);

/// A metric's tornado of elasticities (the \p Shown largest) and the
/// binding wall across each calibrated factor's range.
std::vector<Plot> sensitivityPlots(const std::string &Scenario,
                                   const std::string &Metric,
                                   const std::vector<Elasticity> &Es,
                                   const std::vector<FactorFlips> &Flips,
                                   const graph::Graph &G, size_t Shown = 15);

/// A grid (sweep or Pareto solve) evaluated at every point for plotting,
/// binned to at most 48 values per variable (400 on a line).
struct GridPlotData {
  std::vector<Plot> Plots;
  size_t Points = 0; ///< evaluated
  bool Binned = false;
};
/// Evaluates every point of \p Q's grid (on \p Threads threads, memory
/// bounded by the bins, not the points) and draws it: a sweep's lines,
/// heat maps and regime map, or a Pareto solve's front.
GridPlotData gridPlots(const Evaluator &Base, const query::Query &Q,
                       unsigned Threads);

/// The plot \p Name among \p Plots for --format=svg or vega; with no name,
/// the only plot. Reports a usage error (listing the ids) and returns null
/// otherwise.
const Plot *selectPlot(const std::vector<Plot> &Plots, const std::string &Name,
                       const std::string &What);

/// Prints one plot's Vega spec (\p Svg false) or its SVG rendering
/// (PlotOutput.cpp) to stdout; an exit code.
int printPlot(const Plot &P, bool Svg);

/// The Vega spec as text, compact and deterministic (keys sorted).
std::string specText(const Plot &P);

} // namespace mlsc::driver

#endif
