//===- Validate.cpp - `mlsc validate`: anchors against measurements -------===//
//
// Compiles every file of the given paths (default: the bundled
// validation/), evaluates each `anchor`'s metric on its scenario and
// compares it with the published value: a table (anchor, quantity,
// published, predicted, error, role, status) and the median and maximum
// |error| of the validation anchors, as text or JSON. Exit 3 when a
// validation or calibration anchor leaves its tolerance, or when a known
// miss no longer misses (so the list of misses stays true); exit 1 when a
// file does not compile. docs/validation.md.
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Driver.h"
#include "tools/mlsc/Json.h"
#include "tools/mlsc/RenderTables.h"

#include "runtime/Evaluator.h"
#include "runtime/Format.h"
#include "runtime/Query.h"
#include "runtime/sim/Simulator.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

namespace mlsc::driver {

namespace {

enum class Status { Within, Outside, KnownMiss, NoLongerMisses };

struct Row {
  std::string Anchor, File, Scenario, Quantity, Unit;
  double Published = 0, Predicted = 0, Error = 0, Tolerance = 0;
  std::string PublishedShown, PredictedShown;
  bool Calibration = false, Feasible = true;
  bool Training = false; ///< the anchor's scenario trains a model
  /// An inverse anchor whose solve found no value meeting its conditions.
  bool NoAnswer = false;
  std::string Variable; ///< an inverse anchor's decision variable
  std::string Sets, KnownMiss, Source, SourceTitle, SourceUrl;
  Status S = Status::Within;
  /// The serving simulator's value of a latency percentile, and its error
  /// (docs/simulator.md); none for other quantities.
  std::optional<double> SimPredicted, SimError;
  std::string SimShown;

  bool fails() const {
    return S == Status::Outside || S == Status::NoLongerMisses;
  }
  const char *statusText() const {
    switch (S) {
    case Status::Within:
      return "ok";
    case Status::Outside:
      return "OUTSIDE";
    case Status::KnownMiss:
      return "known miss";
    case Status::NoLongerMisses:
      return "NO LONGER MISSES";
    }
    return "";
  }
};

/// The simulator's statistic and percentile an anchor's quantity names
/// (`ttft.p99`), when it is a latency percentile the simulator measures.
struct SimMeasure {
  const sim::Stats sim::Result::*Stat;
  double sim::Stats::*Level;
};
std::optional<SimMeasure> simMeasure(llvm::StringRef Quantity) {
  auto [What, Level] = Quantity.split('.');
  const sim::Stats sim::Result::*Stat = What == "ttft"      ? &sim::Result::TTFT
                                        : What == "tpot"    ? &sim::Result::TPOT
                                        : What == "itl"     ? &sim::Result::ITL
                                        : What == "latency" ? &sim::Result::E2E
                                                            : nullptr;
  double sim::Stats::*L = Level == "p50"    ? &sim::Stats::P50
                          : Level == "p90"  ? &sim::Stats::P90
                          : Level == "p99"  ? &sim::Stats::P99
                          : Level == "p999" ? &sim::Stats::P999
                                            : nullptr;
  if (!Stat || !L)
    return std::nullopt;
  return SimMeasure{Stat, L};
}

/// "+6.7%".
std::string percent(double E) {
  if (!std::isfinite(E))
    return E > 0 ? "+inf" : (E < 0 ? "-inf" : "nan");
  return fmt::format("{:+.1f}%", 100 * E);
}

double median(std::vector<double> V) {
  if (V.empty())
    return 0;
  std::sort(V.begin(), V.end());
  size_t N = V.size();
  return N % 2 ? V[N / 2] : 0.5 * (V[N / 2 - 1] + V[N / 2]);
}

struct Summary {
  size_t Count = 0, Outside = 0;
  double Median = 0, Max = 0;
};

/// The anchors of one role; of serving or training scenarios only when
/// \p Training is given.
Summary summarize(const std::vector<Row> &Rows, bool Calibration,
                  std::optional<bool> Training = std::nullopt) {
  Summary S;
  std::vector<double> Errors;
  for (const Row &R : Rows) {
    if (R.Calibration != Calibration || (Training && R.Training != *Training))
      continue;
    ++S.Count;
    Errors.push_back(std::fabs(R.Error));
    if (R.S == Status::Outside || R.S == Status::KnownMiss)
      ++S.Outside;
  }
  S.Median = median(Errors);
  S.Max = Errors.empty() ? 0 : *std::max_element(Errors.begin(), Errors.end());
  return S;
}

void printText(const std::vector<Row> &Rows, llvm::raw_ostream &OS) {
  bool AnySim = std::any_of(Rows.begin(), Rows.end(),
                            [](const Row &R) { return R.SimPredicted; });
  std::vector<std::vector<std::string>> Table{
      {"anchor", "quantity", "published", "predicted", "error", "tolerance",
       "role", "status"}};
  if (AnySim)
    Table.front().insert(Table.front().begin() + 5, {"simulated", "error"});
  for (const Row &R : Rows) {
    Table.push_back(
        {R.Anchor, R.Quantity, R.PublishedShown, R.PredictedShown,
         percent(R.Error), fmt::format("{:.0f}%", 100 * R.Tolerance),
         R.Calibration ? "calibration" : "validation",
         std::string(R.statusText()) + (R.Feasible ? "" : " (infeasible)")});
    if (AnySim)
      Table.back().insert(Table.back().begin() + 5,
                          {R.SimPredicted ? R.SimShown : "-",
                           R.SimError ? percent(*R.SimError) : "-"});
  }
  OS << alignedColumns(Table, 0, 3);
  Summary V = summarize(Rows, false), C = summarize(Rows, true);
  auto share = [](double E) {
    return std::isfinite(E) ? fmt::format("{:.1f}%", 100 * E)
                            : std::string("inf");
  };
  OS << fmt::format("\nvalidation anchors: {}; median |error| {}, max {}; {} "
                    "outside their tolerance\n",
                    V.Count, share(V.Median), share(V.Max), V.Outside);
  for (auto [Training, Name, Goal] :
       {std::tuple{false, "serving and inference", "25%"},
        std::tuple{true, "training", "20%"}}) {
    Summary K = summarize(Rows, false, Training);
    if (K.Count)
      OS << fmt::format("  {}: {}; median |error| {}, max {} (goal: median "
                        "<= 10%, max <= {})\n",
                        Name, K.Count, share(K.Median), share(K.Max), Goal);
  }
  // The simulator against the closed forms on the rows it measures.
  std::vector<double> SimErrors, SameRows;
  for (const Row &R : Rows)
    if (!R.Calibration && R.SimError) {
      SimErrors.push_back(std::fabs(*R.SimError));
      SameRows.push_back(std::fabs(R.Error));
    }
  if (!SimErrors.empty())
    OS << fmt::format("  simulated (serving simulator, {} latency rows): "
                      "median |error| {}; the closed forms on the same "
                      "rows: {}\n",
                      SimErrors.size(), share(median(SimErrors)),
                      share(median(SameRows)));
  OS << fmt::format("calibration anchors: {}", C.Count);
  std::vector<std::string> Sets;
  for (const Row &R : Rows)
    if (R.Calibration)
      Sets.push_back(R.Anchor + " sets " + R.Sets);
  OS << (Sets.empty() ? "" : " (" + llvm::join(Sets, "; ") + ")") << "\n";
  for (const Row &R : Rows) {
    if (R.S == Status::Outside && R.NoAnswer)
      OS << fmt::format("{}: no value of `{}` in its range meets the "
                        "anchor's conditions ({})\n",
                        R.Anchor, R.Variable, R.File);
    else if (R.S == Status::Outside && !R.Feasible)
      OS << fmt::format("{}: the scenario does not fit (infeasible), but the "
                        "published run ran ({})\n",
                        R.Anchor, R.File);
    else if (R.S == Status::Outside)
      OS << fmt::format(
          "{}: {} is {} from the published {}, beyond its {:.0f}% "
          "tolerance ({})\n",
          R.Anchor, R.Quantity, percent(R.Error), R.PublishedShown,
          100 * R.Tolerance, R.File);
    else if (R.S == Status::KnownMiss)
      OS << fmt::format("{}: known miss, {}: {}\n", R.Anchor, percent(R.Error),
                        R.KnownMiss);
    else if (R.S == Status::NoLongerMisses)
      OS << fmt::format("{}: marked a known miss but now within its {:.0f}% "
                        "tolerance ({}): remove `known_miss` ({})\n",
                        R.Anchor, 100 * R.Tolerance, percent(R.Error), R.File);
  }
}

void printJSON(const std::vector<Row> &Rows, llvm::raw_ostream &OS) {
  llvm::json::OStream J(OS, 2);
  auto summary = [&](const char *Key, bool Calibration,
                     std::optional<bool> Training = std::nullopt) {
    Summary S = summarize(Rows, Calibration, Training);
    J.attributeObject(Key, [&] {
      J.attribute("count", static_cast<int64_t>(S.Count));
      number(J, "median_abs_error", S.Median);
      number(J, "max_abs_error", S.Max);
      J.attribute("outside_tolerance", static_cast<int64_t>(S.Outside));
    });
  };
  J.object([&] {
    formatVersion(J);
    J.attributeArray("anchors", [&] {
      for (const Row &R : Rows)
        J.object([&] {
          J.attribute("anchor", R.Anchor);
          J.attribute("file", R.File);
          J.attribute("scenario", R.Scenario);
          J.attribute("quantity", R.Quantity);
          J.attribute("unit", R.Unit);
          number(J, "published", R.Published);
          number(J, "predicted", R.Predicted);
          number(J, "error", R.Error);
          // null above; say which non-finite value it was.
          if (!std::isfinite(R.Predicted))
            J.attribute("non_finite", std::isnan(R.Predicted) ? "nan"
                                      : R.Predicted > 0       ? "+inf"
                                                              : "-inf");
          number(J, "tolerance", R.Tolerance);
          J.attribute("role", R.Calibration ? "calibration" : "validation");
          if (R.Calibration)
            J.attribute("sets", R.Sets);
          if (!R.KnownMiss.empty())
            J.attribute("known_miss", R.KnownMiss);
          J.attribute("status", R.statusText());
          if (R.SimPredicted)
            J.attributeObject("simulated", [&] {
              number(J, "predicted", *R.SimPredicted);
              number(J, "error", *R.SimError);
            });
          J.attribute("feasible", R.Feasible);
          J.attribute("training", R.Training);
          J.attributeObject("source", [&] {
            J.attribute("name", R.Source);
            J.attribute("title", R.SourceTitle);
            J.attribute("url", R.SourceUrl);
          });
        });
    });
    summary("validation", false);
    summary("validation_serving", false, false);
    summary("validation_training", false, true);
    summary("calibration", true);
  });
  OS << "\n";
}

} // namespace

int validateCommand(const DriverOptions &O) {
  std::vector<std::string> Unique;
  if (!collectFiles(O, O.Compile.DataDir + "/validation", Unique))
    return InputErrors;
  std::vector<Row> Rows;
  // Serving anchors run through the simulator too.
  DriverOptions V = O;
  V.Compile.SimulateServing = true;
  bool Errors = !compileEach(
      V, Unique, [&](Compilation &C, bool Compiled, const std::string &Shown) {
        if (!Compiled)
          return;
        std::map<size_t, std::optional<sim::Simulated>> Simulations;
        for (const query::Query &Q : C.Queries) {
          if (Q.K != query::Query::Kind::Anchor)
            continue;
          const graph::Graph &G = C.Graphs[Q.Graph];
          Evaluator E(G);
          E.run();
          // An inverse anchor reads its quantity at the solve's answer;
          // with none in the range the prediction is missing.
          bool Answered = true;
          if (Q.A.Inverse) {
            query::Query S = Q;
            S.K = query::Query::Kind::Solve;
            S.Tolerance = Q.A.SolvePrecision;
            Answered = solveOne(E, S).Found;
          }
          const query::Term &T = Q.Report.front();
          Row R;
          R.Anchor = Q.Name;
          R.File = Shown;
          R.Scenario = G.Scenario;
          R.Quantity = T.Text;
          R.Unit = T.Dim.str();
          R.Published = Q.A.Published;
          R.Predicted = Answered ? E.value(T.Node) : std::nan("");
          R.Error = Answered ? R.Predicted / R.Published - 1
                             : std::numeric_limits<double>::infinity();
          R.Tolerance = Q.Tolerance;
          R.PublishedShown = formatQuantity(R.Published, T.Dim);
          R.PredictedShown =
              Answered ? formatQuantity(R.Predicted, T.Dim) : "no answer";
          R.NoAnswer = !Answered;
          if (Q.A.Inverse)
            R.Variable = Q.Vars.front().Name;
          R.Calibration = Q.A.Calibration;
          R.Sets = Q.A.Sets;
          R.KnownMiss = Q.A.KnownMiss;
          R.Source = Q.A.Source;
          R.SourceTitle = Q.A.SourceTitle;
          R.SourceUrl = Q.A.SourceUrl;
          R.Training = G.DecoderTraining || G.has(MetricId::StepTime);
          if (G.has(MetricId::Feasible))
            R.Feasible = E.value(G.get(MetricId::Feasible)) != 0;
          // The serving simulator's figure for a latency percentile: one
          // run a scenario, whatever rows read it.
          std::optional<SimMeasure> Measure = simMeasure(T.Text);
          // An inverse anchor's point is the solve's answer, not the
          // scenario's: it is not simulated (nor shares the scenario's run).
          if (G.Sim && R.Feasible && Measure && !Q.A.Inverse) {
            auto [It, New] = Simulations.try_emplace(Q.Graph);
            if (New) {
              std::string Why;
              It->second = sim::simulateScenario(E, Why);
            }
            const sim::Stats *St =
                It->second ? &(It->second->R.*Measure->Stat) : nullptr;
            if (St && St->Count) {
              double V = St->*Measure->Level;
              R.SimPredicted = V;
              R.SimError = V / R.Published - 1;
              R.SimShown = formatQuantity(V, T.Dim);
            }
          }
          // A published measurement ran: a scenario the model calls
          // infeasible misses it, whatever its number.
          bool Within = R.Feasible && std::fabs(R.Error) <= R.Tolerance;
          R.S = R.KnownMiss.empty()
                    ? (Within ? Status::Within : Status::Outside)
                    : (Within ? Status::NoLongerMisses : Status::KnownMiss);
          Rows.push_back(std::move(R));
        }
      });
  if (O.Format == OutputFormat::Json)
    printJSON(Rows, llvm::outs());
  else
    printText(Rows, llvm::outs());
  if (Errors)
    return InputErrors;
  return std::any_of(Rows.begin(), Rows.end(),
                     [](const Row &R) { return R.fails(); })
             ? CheckFailed
             : Success;
}

} // namespace mlsc::driver
