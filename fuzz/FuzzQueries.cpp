//===- FuzzQueries.cpp - libFuzzer target: solve and sweep blocks ---------===//
//
// Every pass, then each solve and sweep block of the input is run and its
// result rendered as `mlsc solve` and `mlsc sweep` would (text, CSV and
// JSON), on one thread; each anchor's metric is evaluated as `mlsc
// validate` would; each sweep and Pareto solve is also plotted as `mlsc
// report` does. Grids are capped at 4,096 points so that an input stays
// fast.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzCommon.h"
#include "runtime/Evaluator.h"
#include "runtime/Query.h"
#include "tools/mlsc/Plots.h"
#include "tools/mlsc/RenderTables.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  bool OK = false;
  auto C = mlsc::fuzz::compileInput(Data, Size, "", OK, 4096);
  if (!OK)
    return 0;
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  for (const mlsc::query::Query &Q : C->Queries) {
    const mlsc::graph::Graph &G = C->Graphs[Q.Graph];
    mlsc::Evaluator E(G);
    using Kind = mlsc::query::Query::Kind;
    if (Q.K == Kind::Anchor) {
      // `mlsc validate`: the anchor's metric at the scenario's values.
      E.run();
      OS << E.value(Q.Report.front().Node) / Q.A.Published;
    } else if (Q.K == Kind::Solve && Q.Objectives.empty()) {
      mlsc::SolveResult R = mlsc::solveOne(E, Q);
      mlsc::driver::printSolve(Q, R, OS);
      llvm::json::OStream J(OS);
      mlsc::driver::solveJSON(Q, R, G.Scenario, J);
    } else if (Q.K == Kind::Solve) {
      mlsc::GridResult R = mlsc::paretoFront(E, Q, 1);
      E.run();
      for (const mlsc::driver::Plot &P : mlsc::driver::gridPlots(E, Q, 1).Plots)
        OS << mlsc::driver::specText(P);
      OS << mlsc::driver::gridText(Q, R) << mlsc::driver::invalidText(Q, R);
      llvm::json::OStream J(OS);
      mlsc::driver::paretoJSON(Q, R, G.Scenario, J);
    } else {
      E.run();
      for (const mlsc::driver::Plot &P : mlsc::driver::gridPlots(E, Q, 1).Plots)
        OS << mlsc::driver::specText(P);
      mlsc::GridResult R = mlsc::runSweep(E, Q, 1);
      OS << mlsc::driver::gridText(Q, R) << mlsc::driver::invalidText(Q, R);
      for (auto F :
           {mlsc::driver::TableFormat::CSV, mlsc::driver::TableFormat::JSON}) {
        auto W = mlsc::driver::tableWriter(F, Q, G.Scenario, OS, 1);
        W->rows(R.Rows);
        W->finish(R);
      }
    }
  }
  return 0;
}
