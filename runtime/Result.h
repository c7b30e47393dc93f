//===- Result.h - What an evaluated scenario says, as data --------*- C++
//-*-===//
//
// The scorecard of `mlsc eval` and the results of `mlsc check` are built
// once, as data, from an evaluated graph: every metric's value, the three
// levels' verdicts, the binding wall, the conditions with their verdicts,
// and what is not computed and why. The text and JSON renderers of the
// driver (tools/mlsc/) read only this model; neither reads the graph.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_RESULT_H
#define MLSC_RUNTIME_RESULT_H

#include "runtime/Binding.h"
#include "runtime/Evaluator.h"
#include "runtime/sim/Simulator.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace mlsc {

/// A value with its dimension.
struct Quantity {
  double SI = std::nan("");
  Dimension Dim;
  bool IsBool = false;
};

/// The outcome of one condition after evaluation.
enum class Verdict { Pass, Fail, Unknown };
const char *verdictWord(Verdict V); ///< "PASS", "FAIL", "UNKNOWN"

struct ConditionResult {
  bool IsAssert = false;
  std::string Text;     ///< as written
  std::string Location; ///< "quickstart.mls:48:9"
  std::string Message;  ///< an assert's message
  Verdict V = Verdict::Unknown;
  /// Pass or fail: the comparison's two sides, "69.44 ms vs 500 ms" ("" for
  /// another condition). Unknown: why ("`s.x` is not computed yet").
  std::string Detail;
  /// A comparison's margin, how far its left side is past its right one
  /// on the failing side (positive: by how much it fails, "over by 2.4%";
  /// negative: its headroom), relative to the right side; none for other
  /// conditions, a right side of 0 or values not computed.
  std::optional<double> Margin;
  /// False when the condition reads a metric no wall computes (Missing).
  bool Computed = true;
  std::string Missing;
  bool Infeasible = false; ///< unknown because the scenario does not fit
};

/// Something the scorecard does not compute, and why.
struct NotComputed {
  std::string What, Why;
};

/// The workloads a scorecard describes.
enum class ResultKind {
  Decoder,   ///< a decoder LLM served
  PerSample, ///< a CNN or encoder model, inference or training
  /// A decoder LLM trained: only the walls that need no step model are
  /// lowered (Missing says what is not).
  DecoderTraining
};

struct ScenarioResult {
  std::string Scenario;
  std::string Location; ///< where the scenario is declared
  ResultKind Kind = ResultKind::Decoder;
  bool Training = false;

  /// Every metric and phase metric the graph has, evaluated.
  std::vector<std::optional<Quantity>> Metrics;
  std::vector<std::optional<Quantity>> PhaseMetrics;
  /// The public metrics computed and those that apply but are not, in the
  /// contract's order.
  std::vector<MetricId> Public, Unavailable;

  bool Feasible = true;
  /// The Performance level: PASS, FAIL (a failing SLA, an unstable queue),
  /// WARN (an SLA that cannot be evaluated, or decoder training, whose steps
  /// are not evaluated).
  const char *Performance = "PASS";
  /// The binding wall of the main phase, when the graph has its times.
  std::optional<BindingWall> Binding;
  std::vector<ConditionResult> Conditions;
  std::vector<NotComputed> Missing;
  /// A `simulate` block's run (docs/simulator.md), or why it did not run.
  std::optional<sim::Simulated> Simulated;
  std::string NotSimulated;
  bool HasSimulate = false;

  bool has(MetricId M) const {
    return Metrics[static_cast<unsigned>(M)].has_value();
  }
  bool has(PhaseId P, PhaseMetricId M) const {
    return PhaseMetrics[graph::Graph::phaseSlot(P, M)].has_value();
  }
  /// A metric the result must have (a bug otherwise).
  const Quantity &get(MetricId M) const;
  const Quantity &get(PhaseId P, PhaseMetricId M) const;
  double operator[](MetricId M) const { return get(M).SI; }
  double operator()(PhaseId P, PhaseMetricId M) const { return get(P, M).SI; }
};

/// Why a serving queue has no steady state: a replica's prefills
/// ("prefills alone take 274.9% of a replica's time"), the prefill pool
/// ("the prefill pool is 120% busy"), a slot that never frees ("a slot's
/// time is unbounded"), else the slots ("utilisation 132.9% of 64 slots (4
/// replicas x batch 16)"); empty when the queue is stable or not modelled.
/// \p Value gives a metric's value, or nullopt where there is none. The
/// scorecard's queue line, its JSON, the HTML report and `solve` share it.
std::string
queueSaturation(llvm::function_ref<std::optional<double>(MetricId)> Value);
std::string queueSaturation(const ScenarioResult &R);
std::string queueSaturation(const Evaluator &E);

/// "64 slots (4 replicas x batch 16)".
std::string slotsText(double Servers, double Replicas);

/// `file.mls:12:3`, or "" for an invalid range.
std::string location(llvm::SourceMgr &SM, llvm::SMRange R);

/// A comparison node's two sides at the evaluator's values,
/// "6.211 ms vs 40 ms"; "" for any other node.
std::string comparisonOperands(const Evaluator &E, graph::NodeId Node);
/// How far a comparison's left side is past its right one on the failing
/// side, relative to the right one (ConditionResult::Margin).
std::optional<double> comparisonMargin(const Evaluator &E, graph::NodeId Node);

/// The result of an evaluated scenario graph.
/// \p Sink, when set, receives each request a `simulate` block plays.
ScenarioResult scenarioResult(Evaluator &E, llvm::SourceMgr &SM,
                              const sim::RequestSink &Sink = nullptr);

} // namespace mlsc

#endif
