//===- Explain.cpp - `mlsc explain`: the derivation of one value ----------===//

#include "tools/mlsc/Driver.h"
#include "tools/mlsc/Render.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace mlsc::driver {

int explainCommand(const DriverOptions &O,
                   std::unique_ptr<llvm::MemoryBuffer> Buf) {
  std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
  if (!C)
    return InputErrors;
  auto [Scenario, Name] = llvm::StringRef(O.Target).split('.');
  for (const graph::Graph &G : C->Graphs) {
    if (G.Scenario != Scenario)
      continue;
    std::optional<graph::NodeId> Node = G.findNamed(Name);
    std::optional<MetricId> Metric = findMetric(Name);
    if (!Node && Metric && llvm::is_contained(G.Unavailable, *Metric))
      return usage(DiagKind::UnknownTarget,
                   fmt::format("scenario `{}` does not compute `{}`: no "
                               "implemented wall lowers it for this workload, "
                               "or an input it needs is not given (see `mlsc "
                               "eval`)",
                               Scenario.str(), Name.str()));
    if (!Node) {
      std::vector<std::string> Names;
      for (const auto &Entry : G.Named)
        Names.push_back(Entry.getKey().str());
      std::sort(Names.begin(), Names.end());
      return usage(DiagKind::UnknownTarget,
                   fmt::format("scenario `{}` has no value `{}`; it has: {}",
                               Scenario.str(), Name.str(),
                               llvm::join(Names, ", ")));
    }
    Evaluator E(G);
    E.run();
    unsigned Main = C->Program.MainBufferId;
    llvm::raw_ostream &OS = llvm::outs();
    if (O.Format == OutputFormat::Json) {
      llvm::json::OStream J(OS, 2);
      if (O.Leaves)
        leavesJSON(E, *Node, C->SM, Main, J);
      else
        explainJSON(E, *Node, C->SM, J);
      OS << "\n";
    } else if (O.Leaves) {
      printLeaves(E, *Node, C->SM, Main, OS);
    } else {
      printExplain(E, *Node, C->SM, OS);
    }
    return Success;
  }
  std::vector<std::string> Names;
  for (const graph::Graph &G : C->Graphs)
    Names.push_back(G.Scenario);
  return usage(DiagKind::UnknownTarget,
               fmt::format("no scenario `{}` in {}; scenarios: {}",
                           Scenario.str(), O.Input,
                           Names.empty() ? "none" : llvm::join(Names, ", ")));
}

} // namespace mlsc::driver
