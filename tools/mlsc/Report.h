//===- Report.h - HTML reports and the Vega library ---------------*- C++
//-*-===//
//
// `mlsc report` (Report.cpp) and where the Vega library bundled at build
// time is found (PlotOutput.cpp). docs/reports.md.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_TOOLS_MLSC_REPORT_H
#define MLSC_TOOLS_MLSC_REPORT_H

#include "tools/mlsc/Plots.h"

#include "passes/Pipeline.h"

#include <string>
#include <vector>

namespace mlsc::driver {

/// The folder of vega.min.js and vega-svg.cjs: $MLSC_PLOT_DIR, else
/// share/mlsc/plot next to the installed driver, else the build tree's.
std::string plotAssetDir();
/// Reads one of them; false (reported) when it cannot.
bool readPlotAsset(llvm::StringRef Name, std::string &Text);

/// Every scenario of \p C evaluated, and its plots (the simulated latency
/// CDFs too, when it has a `simulate` block).
std::vector<Plot> evalPlots(Compilation &C);

} // namespace mlsc::driver

#endif
