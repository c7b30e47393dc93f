//===- FuzzPipeline.cpp - libFuzzer target: lowering and evaluation -------===//
//
// Every pass through lower-to-graph, then each scenario's graph is
// evaluated and its scorecard built and rendered as text and JSON, and the
// graph dumped, and its plots built as Vega specs: what `mlsc eval`,
// `--emit=graph` and `mlsc report` do.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzCommon.h"
#include "runtime/Evaluator.h"
#include "runtime/Result.h"
#include "tools/mlsc/Plots.h"
#include "tools/mlsc/Render.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  bool OK = false;
  auto C = mlsc::fuzz::compileInput(Data, Size, "", OK);
  if (!OK)
    return 0;
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  for (const mlsc::graph::Graph &G : C->Graphs) {
    mlsc::Evaluator E(G);
    E.run();
    mlsc::ScenarioResult R = mlsc::scenarioResult(E, C->SM);
    mlsc::driver::printScorecard(R, OS);
    llvm::json::OStream J(OS);
    mlsc::driver::scorecardJSON(R, J);
    mlsc::driver::printGraph(G, C->SM, OS);
    for (const mlsc::driver::Plot &P : mlsc::driver::scenarioPlots(R, nullptr))
      OS << mlsc::driver::specText(P);
  }
  return 0;
}
