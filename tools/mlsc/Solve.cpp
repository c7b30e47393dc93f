//===- Solve.cpp - `mlsc solve`: inverse queries and Pareto fronts --------===//

#include "tools/mlsc/Json.h"
#include "tools/mlsc/Plots.h"
#include "tools/mlsc/Queries.h"
#include "tools/mlsc/RenderTables.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace mlsc::driver {

std::vector<const query::Query *> selectQueries(const Compilation &C,
                                                query::Query::Kind K,
                                                const std::string &Name) {
  std::vector<const query::Query *> Out;
  std::vector<std::string> Names;
  for (const query::Query &Q : C.Queries)
    if (Q.K == K) {
      Names.push_back(Q.Name);
      if (Name.empty() || Q.Name == Name)
        Out.push_back(&Q);
    }
  const char *What = K == query::Query::Kind::Solve ? "solve" : "sweep";
  if (Out.empty())
    usage(DiagKind::UnknownTarget,
          Name.empty()
              ? fmt::format("the file has no {} block", What)
              : fmt::format("no {} named `{}`{}", What, Name,
                            Names.empty()
                                ? ""
                                : "; the file has " + llvm::join(Names, ", ")));
  return Out;
}

int solveCommand(const DriverOptions &O,
                 std::unique_ptr<llvm::MemoryBuffer> Buf) {
  std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
  if (!C)
    return InputErrors;
  auto Queries = selectQueries(*C, query::Query::Kind::Solve, O.QueryName);
  if (Queries.empty())
    return UsageError;
  // A Pareto front as SVG or a Vega spec (docs/reports.md).
  if (O.Format == OutputFormat::Svg || O.Format == OutputFormat::Vega) {
    std::vector<Plot> Plots;
    for (const query::Query *Q : Queries) {
      if (Q->Objectives.empty())
        continue;
      Evaluator E(C->Graphs[Q->Graph]);
      E.run();
      for (Plot &P : gridPlots(E, *Q, threads(O)).Plots)
        Plots.push_back(std::move(P));
    }
    const Plot *P = selectPlot(Plots, O.Plot,
                               O.Input + " (only Pareto solves are plotted)");
    return P ? printPlot(*P, O.Format == OutputFormat::Svg) : UsageError;
  }
  llvm::raw_ostream &OS = llvm::outs();
  bool Json = O.Format == OutputFormat::Json;
  std::optional<llvm::json::OStream> J;
  if (Json) {
    J.emplace(OS, 2);
    J->objectBegin();
    formatVersion(*J);
    J->attributeBegin("solves");
    J->arrayBegin();
  }
  bool AllFound = true;
  for (size_t I = 0; I < Queries.size(); ++I) {
    const query::Query &Q = *Queries[I];
    const graph::Graph &G = C->Graphs[Q.Graph];
    Evaluator E(G);
    if (!Q.Objectives.empty()) {
      GridResult R = paretoFront(E, Q, threads(O));
      AllFound &= !R.Rows.empty();
      if (Json) {
        paretoJSON(Q, R, G.Scenario, *J);
        continue;
      }
      OS << (I ? "\n" : "") << "solve " << Q.Name << ": Pareto front of "
         << Q.Objectives[0].Text << " and " << Q.Objectives[1].Text << " ("
         << (Q.Direction < 0 ? "both minimized" : "both maximized") << "), "
         << (R.Kept ? std::to_string(R.Rows.size()) + " of " +
                          std::to_string(R.Kept) +
                          " points that meet the conditions"
                    : std::string("no point meets the conditions"))
         << " (" << R.Points << " evaluated"
         << (R.Invalid ? "; " + invalidText(Q, R) : "") << ")\n"
         << (R.Kept ? gridText(Q, R) : missText(Q, R));
      continue;
    }
    SolveResult R = solveOne(E, Q);
    AllFound &= R.Found;
    if (Json) {
      solveJSON(Q, R, G.Scenario, *J);
      continue;
    }
    if (I)
      OS << "\n";
    printSolve(Q, R, OS);
  }
  if (Json) {
    J->arrayEnd();
    J->attributeEnd();
    J->objectEnd();
    OS << "\n";
  }
  return AllFound ? Success : CheckFailed;
}

} // namespace mlsc::driver
