//===- Eval.cpp - `mlsc eval`: a scorecard per scenario -------------------===//

#include "tools/mlsc/Driver.h"
#include "tools/mlsc/Json.h"
#include "tools/mlsc/OutputFile.h"
#include "tools/mlsc/Render.h"
#include "tools/mlsc/Report.h"

#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

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

/// The columns of --requests-csv (docs/driver.md).
constexpr const char *RequestsHeader =
    "scenario,id,class,arrival_s,prompt_tokens,cached_prompt_tokens,"
    "output_tokens,replica,preemptions,rejected,shed,ttft_s,tpot_s,"
    "latency_s,met_targets\n";

/// A simulated request as a CSV row: numbers in their shortest exact
/// form, empty for what a rejected request has not.
void requestRow(llvm::raw_ostream &OS, const graph::Graph &G,
                const sim::RequestRecord &R) {
  std::string Class;
  if (G.Sim && R.Class < G.Sim->Classes.size())
    Class = G.Sim->Classes[R.Class].Name;
  std::string Times = ",,";
  if (!R.Rejected && !R.Shed)
    Times = fmt::format(
        "{},{},{}", R.TTFT,
        R.Output > 1 ? fmt::format("{}", (R.E2E - R.TTFT) / (R.Output - 1))
                     : std::string(),
        R.E2E);
  OS << fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", G.Scenario,
                    R.Id, Class, R.Arrival, R.Prompt, R.CachedPrompt, R.Output,
                    R.Replica, R.Preemptions, R.Rejected ? 1 : 0,
                    R.Shed ? 1 : 0, Times, R.MetTargets ? 1 : 0);
}

/// The columns of --timeline-csv (docs/driver.md).
constexpr const char *TimelineHeader =
    "scenario,time_s,replica,pool,state,busy,running,waiting,kv_used\n";

/// A scenario's replica samples as CSV rows.
void timelineRows(llvm::raw_ostream &OS, const ScenarioResult &R) {
  if (!R.Simulated)
    return;
  bool Disaggregated = R.Simulated->Cfg.Disagg.PrefillReplicas > 0;
  for (const sim::Result::ReplicaSample &X : R.Simulated->R.Replicas)
    OS << fmt::format("{},{},{},{},{},{},{},{},{}\n", R.Scenario, X.Time,
                      X.Replica,
                      X.Prefill       ? "prefill"
                      : Disaggregated ? "decode"
                                      : "colocated",
                      X.Starting   ? "starting"
                      : X.Draining ? "draining"
                                   : "serving",
                      X.Busy, X.Running, X.Waiting, X.KV);
}

} // namespace

int evalCommand(const DriverOptions &O,
                std::unique_ptr<llvm::MemoryBuffer> Buf) {
  if (!O.Expressions.empty())
    return expressionCommand(O, std::move(Buf));
  std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
  if (!C)
    return InputErrors;
  // One plot as SVG or a Vega spec (docs/reports.md).
  if (O.Format == OutputFormat::Svg || O.Format == OutputFormat::Vega) {
    std::vector<Plot> Plots = evalPlots(*C);
    const Plot *P = selectPlot(Plots, O.Plot, O.Input);
    return P ? printPlot(*P, O.Format == OutputFormat::Svg) : UsageError;
  }
  // --requests-csv: checked before anything runs, written as the requests
  // complete, committed whole at the end.
  AtomicFile Csv;
  if (!O.RequestsCsv.empty()) {
    std::string Error;
    if (!checkOutput(*C, OutputRequest{O.RequestsCsv, false, {}, true}))
      return InputErrors;
    if (!Csv.open(O.RequestsCsv, Error)) {
      reportError(DiagKind::OutputFailed, O.RequestsCsv, Error);
      return InputErrors;
    }
    Csv.os() << RequestsHeader;
  }
  // --timeline-csv: the same, written once the scenarios have run.
  AtomicFile Timeline;
  if (!O.TimelineCsv.empty()) {
    std::string Error;
    if (O.TimelineCsv == O.RequestsCsv) {
      reportError(DiagKind::InvalidOption, O.TimelineCsv,
                  "--timeline-csv and --requests-csv name the same file; "
                  "give each its own");
      return UsageError;
    }
    if (!checkOutput(*C, OutputRequest{O.TimelineCsv, false, {}, true}))
      return InputErrors;
    if (!Timeline.open(O.TimelineCsv, Error)) {
      reportError(DiagKind::OutputFailed, O.TimelineCsv, Error);
      return InputErrors;
    }
    Timeline.os() << TimelineHeader;
  }
  bool Bar = O.Progress && llvm::sys::Process::StandardErrIsDisplayed();
  std::vector<ScenarioResult> Results;
  for (const graph::Graph &G : C->Graphs) {
    Evaluator E(G);
    E.run();
    // A progress bar on stderr when it is a terminal and the simulation
    // has run for more than a second.
    uint64_t Done = 0, Total = 0;
    if (G.Sim && G.Sim->Requests.isValid())
      Total = static_cast<uint64_t>(E.value(G.Sim->Requests));
    if (G.Sim && G.Sim->Replay)
      Total = std::min<uint64_t>(Total, G.Sim->Replay->size());
    auto Draw = progressBar(G.Scenario, "requests", Bar);
    sim::RequestSink Sink;
    if (Draw || !O.RequestsCsv.empty())
      Sink = [&](const sim::RequestRecord &R) {
        if (!O.RequestsCsv.empty())
          requestRow(Csv.os(), G, R);
        ++Done;
        if (Draw && (Done % 8192 == 0 || Done == Total))
          Draw(Done, Total);
      };
    Results.push_back(scenarioResult(E, C->SM, Sink));
    if (!O.TimelineCsv.empty())
      timelineRows(Timeline.os(), Results.back());
  }
  if (!O.TimelineCsv.empty()) {
    std::string Error;
    if (!Timeline.commit(Error)) {
      reportError(DiagKind::OutputFailed, O.TimelineCsv, Error);
      return InputErrors;
    }
  }
  if (!O.RequestsCsv.empty()) {
    std::string Error;
    if (!Csv.commit(Error)) {
      reportError(DiagKind::OutputFailed, O.RequestsCsv, Error);
      return InputErrors;
    }
  }
  std::vector<FleetResult> Fleets;
  for (const query::Fleet &F : C->Fleets)
    Fleets.push_back(fleetResult(F, Results));
  std::vector<FoldedAssert> Asserts = foldedAsserts(*C);
  llvm::raw_ostream &OS = llvm::outs();
  if (O.Format == OutputFormat::Json) {
    llvm::json::OStream J(OS, 2);
    J.object([&] {
      formatVersion(J);
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
