//===- Eval.cpp - `mlsc eval`: a scorecard per scenario -------------------===//

#include "tools/mlsc/Driver.h"
#include "tools/mlsc/Render.h"

#include "llvm/Support/raw_ostream.h"

namespace mlsc::driver {

namespace {

/// An assert over constants only, decided at compile time.
struct FoldedAssert {
  std::string Text, Location;
  bool Holds;
};

std::vector<FoldedAssert> foldedAsserts(Compilation &C) {
  std::vector<FoldedAssert> Out;
  for (const ir::Assert &A : C.Program.Asserts)
    if (A.Folded)
      Out.push_back({ir::sourceText(A.Condition->Range),
                     location(C.SM, A.Range), A.Folded->Number != 0});
  return Out;
}

} // namespace

int evalCommand(const DriverOptions &O,
                std::unique_ptr<llvm::MemoryBuffer> Buf) {
  std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
  if (!C)
    return InputErrors;
  std::vector<ScenarioResult> Results;
  for (const graph::Graph &G : C->Graphs) {
    Evaluator E(G);
    E.run();
    Results.push_back(scenarioResult(E, C->SM));
  }
  std::vector<FleetResult> Fleets;
  for (const query::Fleet &F : C->Fleets)
    Fleets.push_back(fleetResult(F, Results));
  std::vector<FoldedAssert> Asserts = foldedAsserts(*C);
  llvm::raw_ostream &OS = llvm::outs();
  if (O.Format == OutputFormat::Json) {
    llvm::json::OStream J(OS, 2);
    J.object([&] {
      J.attributeArray("scenarios", [&] {
        for (const ScenarioResult &R : Results)
          scorecardJSON(R, J);
      });
      if (!Fleets.empty())
        J.attributeArray("fleets", [&] {
          for (const FleetResult &F : Fleets)
            fleetJSON(F, J);
        });
      J.attributeArray("asserts", [&] {
        for (const FoldedAssert &A : Asserts)
          J.object([&] {
            J.attribute("text", A.Text);
            J.attribute("location", A.Location);
            J.attribute("verdict", A.Holds ? "pass" : "fail");
          });
      });
    });
    OS << "\n";
    return Success;
  }
  for (size_t I = 0; I < Results.size(); ++I) {
    if (I)
      OS << "\n";
    printScorecard(Results[I], OS);
  }
  for (const FleetResult &F : Fleets) {
    OS << "\n";
    printFleet(F, OS);
  }
  if (!Asserts.empty())
    OS << (Results.empty() ? "" : "\n") << "Asserts\n";
  for (const FoldedAssert &A : Asserts)
    OS << "  " << A.Text << "   " << (A.Holds ? "PASS" : "FAIL") << "  "
       << A.Location << "\n";
  if (Results.empty() && Asserts.empty())
    OS << "no scenario to evaluate in " << O.Input << "\n";
  return Success;
}

} // namespace mlsc::driver
