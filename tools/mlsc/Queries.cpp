//===- Queries.cpp - `mlsc solve`, `sweep` and `sensitivity` --------------===//

#include "tools/mlsc/Driver.h"

#include "runtime/Format.h"
#include "runtime/QueryReport.h"
#include "runtime/Sensitivity.h"

#include "llvm/ADT/StringExtras.h"

#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <chrono>
#include <thread>

namespace mlsc::driver {

namespace {

/// The queries of the requested kind (and name), or an error message.
std::vector<const query::Query *> select(const Compilation &C,
                                         query::Query::Kind K,
                                         const std::string &Name,
                                         std::string &Error) {
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
    Error = Name.empty()
                ? fmt::format("the file has no {} block", What)
                : fmt::format("no {} named `{}`{}", What, Name,
                              Names.empty() ? ""
                                            : "; the file has " +
                                                  llvm::join(Names, ", "));
  return Out;
}

unsigned threads(const DriverOptions &O) {
  if (O.Jobs)
    return O.Jobs;
  return std::max(1u, std::thread::hardware_concurrency());
}

} // namespace

int solve(const DriverOptions &O, std::unique_ptr<llvm::MemoryBuffer> Buf) {
  std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
  if (!C)
    return InputErrors;
  std::string Error;
  auto Queries = select(*C, query::Query::Kind::Solve, O.QueryName, Error);
  if (Queries.empty()) {
    llvm::errs() << "mlsc: error: " << Error << "\n";
    return UsageError;
  }
  nlohmann::ordered_json All = nlohmann::ordered_json::array();
  bool AllFound = true;
  for (size_t I = 0; I < Queries.size(); ++I) {
    const query::Query &Q = *Queries[I];
    const graph::Graph &G = C->Graphs[Q.Graph];
    Evaluator E(G);
    if (!Q.Objectives.empty()) {
      GridResult R = paretoFront(E, Q, threads(O));
      AllFound &= !R.Rows.empty();
      if (O.Json) {
        All.push_back(nlohmann::ordered_json::parse(
            gridTable(Q, R, G, TableFormat::JSON)));
        continue;
      }
      llvm::outs() << (I ? "\n" : "") << "solve " << Q.Name
                   << ": Pareto front of " << Q.Objectives[0].Text << " and "
                   << Q.Objectives[1].Text << " ("
                   << (Q.Direction < 0 ? "both minimized" : "both maximized")
                   << "), " << R.Rows.size() << " of " << R.Kept
                   << " points that meet the conditions (" << R.Points
                   << " evaluated)\n"
                   << gridTable(Q, R, G, TableFormat::Text);
      continue;
    }
    SolveResult R = solveOne(E, Q);
    AllFound &= R.Found;
    if (O.Json) {
      All.push_back(solveJSON(Q, R, E));
      continue;
    }
    if (I)
      llvm::outs() << "\n";
    printSolve(Q, R, E, llvm::outs());
  }
  if (O.Json)
    llvm::outs() << nlohmann::ordered_json{{"solves", All}}.dump(2) << "\n";
  return AllFound ? Success : CheckFailed;
}

int sweep(const DriverOptions &O, std::unique_ptr<llvm::MemoryBuffer> Buf) {
  std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
  if (!C)
    return InputErrors;
  std::string Error;
  auto Queries = select(*C, query::Query::Kind::Sweep, O.QueryName, Error);
  if (Queries.empty()) {
    llvm::errs() << "mlsc: error: " << Error << "\n";
    return UsageError;
  }
  // One table per output: several sweeps go to stdout as text, or are run
  // one at a time by name.
  if (Queries.size() > 1 && (!O.Output.empty() || O.Json || O.Csv)) {
    std::vector<std::string> Names;
    for (const query::Query *Q : Queries)
      Names.push_back(Q->Name);
    llvm::errs() << "mlsc: error: the file has " << Queries.size()
                 << " sweeps (" << llvm::join(Names, ", ")
                 << "); name one for --output, --format=json or "
                    "--format=csv\n";
    return UsageError;
  }
  for (size_t I = 0; I < Queries.size(); ++I) {
    const query::Query &Q = *Queries[I];
    const graph::Graph &G = C->Graphs[Q.Graph];
    Evaluator E(G);
    // A progress bar on stderr when it is a terminal and the sweep has run
    // for more than a second.
    auto Start = std::chrono::steady_clock::now();
    bool Shown = false;
    Progress Bar;
    if (O.Progress && llvm::sys::Process::StandardErrIsDisplayed())
      Bar = [&](size_t Done, size_t Total) {
        double Elapsed = std::chrono::duration<double>(
                             std::chrono::steady_clock::now() - Start)
                             .count();
        if (Elapsed < 1 && !Shown)
          return;
        Shown = true;
        int Width = 40;
        int Fill = Total ? static_cast<int>(Width * Done / Total) : Width;
        llvm::errs() << fmt::format(
            "\r{} [{}{}] {}/{} points", Q.Name, std::string(Fill, '#'),
            std::string(Width - Fill, ' '), Done, Total);
        if (Done == Total)
          llvm::errs() << "\n";
      };
    GridResult R = runSweep(E, Q, threads(O), Bar);
    std::string Path = O.Output.empty() ? Q.Output : O.Output;
    TableFormat F = !Path.empty() ? formatForPath(Path)
                    : O.Json      ? TableFormat::JSON
                    : O.Csv       ? TableFormat::CSV
                                  : TableFormat::Text;
    std::string Table = gridTable(Q, R, G, F, threads(O));
    if (!Path.empty()) {
      if (!writeFileAtomically(Path, Table, Error)) {
        llvm::errs() << "mlsc: error: " << Error << "\n";
        return InputErrors;
      }
      llvm::outs() << fmt::format("sweep {}: {} points, {} kept, {} written "
                                  "to {}\n",
                                  Q.Name, R.Points, R.Kept, R.Rows.size(),
                                  Path);
      continue;
    }
    if (F == TableFormat::Text)
      llvm::outs() << (I ? "\n" : "")
                   << fmt::format(
                          "sweep {}: {} points, {} meet the "
                          "conditions{}\n",
                          Q.Name, R.Points, R.Kept,
                          R.Rows.size() < R.Kept
                              ? fmt::format(", first {} shown", R.Rows.size())
                              : "");
    llvm::outs() << Table;
  }
  return Success;
}

} // namespace mlsc::driver

// ------------------------------------------------------------ sensitivity

namespace mlsc::driver {

int sensitivity(const DriverOptions &O,
                std::unique_ptr<llvm::MemoryBuffer> Buf) {
  std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
  if (!C)
    return InputErrors;
  llvm::StringRef Target = O.Metric;
  const graph::Graph *G = nullptr;
  std::string Metric;
  for (const graph::Graph &Gr : C->Graphs)
    if (Target == Gr.Scenario || (Target.startswith(Gr.Scenario + ".") &&
                                  Target.size() > Gr.Scenario.size() + 1)) {
      G = &Gr;
      if (Target != Gr.Scenario)
        Metric = Target.drop_front(Gr.Scenario.size() + 1).str();
    }
  if (!G) {
    std::vector<std::string> Names;
    for (const graph::Graph &Gr : C->Graphs)
      Names.push_back(Gr.Scenario);
    llvm::errs() << "mlsc: error: no scenario `" << Target << "`; the file has "
                 << llvm::join(Names, ", ") << "\n";
    return UsageError;
  }
  std::vector<std::string> Metrics;
  if (!Metric.empty()) {
    if (!G->findNamed(Metric)) {
      std::vector<std::string> Names;
      for (MetricId M : G->Metrics)
        Names.push_back(metricInfo(M).Name);
      llvm::errs() << "mlsc: error: scenario `" << G->Scenario
                   << "` computes no `" << Metric << "`; it has "
                   << llvm::join(Names, ", ") << "\n";
      return UsageError;
    }
    Metrics.push_back(Metric);
  } else {
    for (MetricId M : G->Metrics)
      if (!G->node(G->get(M)).IsBool)
        Metrics.push_back(metricInfo(M).Name);
  }
  Evaluator E(*G);
  size_t Shown = Metric.empty() ? 5 : SIZE_MAX;
  nlohmann::ordered_json J;
  J["scenario"] = G->Scenario;
  nlohmann::ordered_json JM = nlohmann::ordered_json::array();
  if (!O.Json)
    llvm::outs() << "sensitivity of scenario " << G->Scenario
                 << " (elasticity d ln metric / d ln input: the % change of "
                    "the metric per 1% change of the input)\n";
  for (const std::string &M : Metrics) {
    graph::NodeId Id = *G->findNamed(M);
    std::vector<Elasticity> Es = elasticities(E, Id);
    const graph::Node &N = G->node(Id);
    if (O.Json) {
      nlohmann::ordered_json List = nlohmann::ordered_json::array();
      for (const Elasticity &El : Es)
        List.push_back({{"input", El.Name}, {"elasticity", El.Value}});
      JM.push_back({{"metric", M},
                    {"value", E.value(Id)},
                    {"unit", N.Dim.str()},
                    {"elasticities", List}});
      continue;
    }
    llvm::outs() << "\n"
                 << M << " = " << formatQuantity(E.value(Id), N.Dim) << "\n";
    if (Es.empty())
      llvm::outs() << "  (no input moves it)\n";
    for (size_t K = 0; K < Es.size() && K < Shown; ++K)
      llvm::outs() << fmt::format("  {:>+9.4f}  {}\n", Es[K].Value, Es[K].Name);
    if (Es.size() > Shown)
      llvm::outs() << fmt::format("  ... {} more (name the metric to see "
                                  "all)\n",
                                  Es.size() - Shown);
  }
  std::vector<FactorFlips> Flips = bindingFlips(E);
  BindingWall B = bindingWall(E);
  if (O.Json) {
    J["metrics"] = JM;
    nlohmann::ordered_json JF = nlohmann::ordered_json::array();
    for (const FactorFlips &F : Flips) {
      nlohmann::ordered_json Pts = nlohmann::ordered_json::array();
      for (const FlipPoint &P : F.Flips)
        Pts.push_back({{"at", P.At},
                       {"from", wallShortName(P.From)},
                       {"to", wallShortName(P.To)}});
      JF.push_back({{"factor", F.Name},
                    {"value", F.Value},
                    {"range", {F.Low, F.High}},
                    {"robust", F.Flips.empty()},
                    {"flips", Pts}});
    }
    J["binding_wall"] = B.Known ? nlohmann::ordered_json(B.Short)
                                : nlohmann::ordered_json(nullptr);
    J["calibrated_factors"] = JF;
    llvm::outs() << J.dump(2) << "\n";
    return Success;
  }
  if (!B.Known)
    return Success;
  llvm::outs() << "\nbinding wall " << B.label() << " ("
               << phaseInfo(B.Phase).Prefix
               << " step); across each calibrated factor's plausible range:\n";
  for (const FactorFlips &F : Flips) {
    std::string Where =
        F.Flips.empty()
            ? fmt::format("{} throughout (robust)", wallShortName(F.WallAtLow))
            : "";
    for (const FlipPoint &P : F.Flips)
      Where += fmt::format("{}{} below {}, {} above", Where.empty() ? "" : "; ",
                           wallShortName(P.From), formatNumber(P.At),
                           wallShortName(P.To));
    llvm::outs() << fmt::format("  {} = {} in [{}, {}]: {}\n", F.Name,
                                formatNumber(F.Value), formatNumber(F.Low),
                                formatNumber(F.High), Where);
  }
  return Success;
}

} // namespace mlsc::driver
