//===- Result.cpp - What an evaluated scenario says, as data --------------===//

#include "runtime/Result.h"
#include "runtime/Format.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Path.h"

#include <fmt/format.h>

#include <cmath>

namespace mlsc {

const char *verdictWord(Verdict V) {
  return V == Verdict::Pass ? "PASS" : V == Verdict::Fail ? "FAIL" : "UNKNOWN";
}

std::string location(llvm::SourceMgr &SM, llvm::SMRange R) {
  if (!R.isValid())
    return "";
  unsigned Buf = SM.FindBufferContainingLoc(R.Start);
  if (!Buf)
    return "";
  auto LC = SM.getLineAndColumn(R.Start, Buf);
  return fmt::format(
      "{}:{}:{}",
      llvm::sys::path::filename(SM.getMemoryBuffer(Buf)->getBufferIdentifier())
          .str(),
      LC.first, LC.second);
}

std::string comparisonOperands(const Evaluator &E, graph::NodeId Node) {
  const graph::Graph &G = E.graph();
  if (!graph::isComparison(G.node(Node).Kind))
    return "";
  graph::NodeId L = G.inputOf(Node, 0), R = G.inputOf(Node, 1);
  double A = E.value(L), B = E.value(R);
  std::string Left = formatQuantity(A, G.node(L).Dim, G.node(L).IsBool),
              Right = formatQuantity(B, G.node(R).Dim, G.node(R).IsBool);
  // Four digits can show two different values alike (a solve's answer
  // sits at its bound): say how far apart they are.
  if (Left == Right && A != B && std::isfinite(A) && std::isfinite(B) &&
      B != 0 && !G.node(L).IsBool)
    return fmt::format("{} vs {}, {:.2g}% {}", Left, Right,
                       100 * std::fabs(A - B) / std::fabs(B),
                       A < B ? "below" : "above");
  return fmt::format("{} vs {}", Left, Right);
}

/// How far a comparison's left side is past its right one on the failing
/// side, relative to the right one (`a < b`: a / b - 1; `a > b`: 1 - a /
/// b); none for `==`, `!=`, another condition or a right side of 0.
std::optional<double> comparisonMargin(const Evaluator &E, graph::NodeId Node) {
  const graph::Graph &G = E.graph();
  graph::Op K = G.node(Node).Kind;
  if (!graph::isComparison(K))
    return std::nullopt;
  double L = E.value(G.inputOf(Node, 0)), R = E.value(G.inputOf(Node, 1));
  if (R == 0 || !std::isfinite(L) || !std::isfinite(R))
    return std::nullopt;
  if (K == graph::Op::Lt || K == graph::Op::Le)
    return L / R - 1;
  if (K == graph::Op::Gt || K == graph::Op::Ge)
    return 1 - L / R;
  return std::nullopt;
}

const Quantity &ScenarioResult::get(MetricId M) const {
  const std::optional<Quantity> &Q = Metrics[static_cast<unsigned>(M)];
  if (!Q)
    llvm::report_fatal_error(llvm::Twine("the result of `") + Scenario +
                             "` has no `" + metricInfo(M).Name + "`");
  return *Q;
}

const Quantity &ScenarioResult::get(PhaseId P, PhaseMetricId M) const {
  const std::optional<Quantity> &Q =
      PhaseMetrics[graph::Graph::phaseSlot(P, M)];
  if (!Q)
    llvm::report_fatal_error(llvm::Twine("the result of `") + Scenario +
                             "` has no `" + phaseMetricName(P, M) + "`");
  return *Q;
}

ScenarioResult scenarioResult(Evaluator &E, llvm::SourceMgr &SM,
                              const sim::RequestSink &Sink) {
  const graph::Graph &G = E.graph();
  ScenarioResult R;
  // The serving simulator first: its metrics are leaves that SLAs read.
  if (G.Sim && G.Sim->Requested) {
    R.HasSimulate = true;
    R.Simulated = sim::simulateInto(E, R.NotSimulated, Sink);
  }
  R.Scenario = G.Scenario;
  R.Location = location(SM, G.ScenarioRange);
  auto value = [&](graph::NodeId N) {
    const graph::Node &Nd = G.node(N);
    return Quantity{E.value(N), Nd.Dim, Nd.IsBool};
  };
  for (const MetricInfo &M : allMetrics())
    R.Metrics.push_back(G.has(M.Id)
                            ? std::optional<Quantity>(value(G.get(M.Id)))
                            : std::nullopt);
  for (const PhaseInfo &P : allPhases())
    for (const PhaseMetricInfo &M : allPhaseMetrics())
      R.PhaseMetrics.push_back(
          G.has(P.Id, M.Id) ? std::optional<Quantity>(value(G.get(P.Id, M.Id)))
                            : std::nullopt);
  R.Public = G.Metrics;
  R.Unavailable = G.Unavailable;

  if (G.DecoderTraining) {
    R.Kind = ResultKind::DecoderTraining;
    R.Training = true;
    if (!R.has(MetricId::StepTime))
      R.Missing.push_back({"decoder training steps (time, memory, MFU)",
                           G.NotLowered.empty()
                               ? "an input they need is missing"
                               : G.NotLowered});
  } else if (R.has(MetricId::SampleThroughput)) {
    R.Kind = ResultKind::PerSample;
    R.Training = R.has(MetricId::StepTime);
  }
  R.Feasible = !R.has(MetricId::Feasible) || R[MetricId::Feasible] != 0;
  if (G.has(mainPhase(G), PhaseMetricId::ComputeTime))
    R.Binding = bindingWall(E);
  // Carbon and water need a site; costs a site and prices, or a rent.
  if (!R.has(MetricId::FacilityPower))
    R.Missing.push_back({"operational carbon and water",
                         "the system has no site (give a cluster a `site`)"});
  if (!R.has(MetricId::CostPerHour))
    R.Missing.push_back(
        {"costs", R.has(MetricId::FacilityPower)
                      ? "neither the node nor its accelerator gives a "
                        "`price`, or the site gives no `electricity_price`"
                      : "the system has no site or rent (a cluster's "
                        "`site`, a node's `rental`)"});

  bool AnyFail = R.has(MetricId::QueueStable) && R[MetricId::QueueStable] == 0;
  bool AnyUnknown = false;
  for (const graph::Condition &C : G.Conditions) {
    ConditionResult CR;
    CR.IsAssert = C.IsAssert;
    CR.Text = C.Text;
    CR.Location = location(SM, C.Range);
    CR.Message = C.Message;
    CR.Missing = C.Missing;
    CR.Computed = C.At.has_value();
    Verdict Raw = !C.At                 ? Verdict::Unknown
                  : E.value(*C.At) != 0 ? Verdict::Pass
                                        : Verdict::Fail;
    if (!C.IsAssert) {
      AnyFail |= Raw == Verdict::Fail;
      AnyUnknown |= Raw == Verdict::Unknown;
    }
    // A scenario that does not fit evaluates no condition, whether or not
    // its metric was lowered (a serving metric past a batch that cannot
    // be held read "not computed yet").
    if (!R.Feasible) {
      CR.V = Verdict::Unknown;
      CR.Infeasible = true;
    } else if (!C.At) {
      CR.V = Verdict::Unknown;
      CR.Detail = "`" + C.Missing + "` is not computed yet";
    } else {
      CR.V = Raw;
      CR.Detail = comparisonOperands(E, *C.At);
      CR.Margin = comparisonMargin(E, *C.At);
    }
    R.Conditions.push_back(std::move(CR));
  }
  R.Performance = AnyFail ? "FAIL" : AnyUnknown ? "WARN" : "PASS";
  // Decoder training whose steps are not lowered: never a plain PASS.
  if (R.Kind == ResultKind::DecoderTraining && !R.has(MetricId::StepTime) &&
      !AnyFail)
    R.Performance = "WARN";
  return R;
}

std::string slotsText(double Servers, double Replicas) {
  return fmt::format("{} slots ({} replica{} x batch {})",
                     formatNumber(Servers), formatNumber(Replicas),
                     Replicas == 1 ? "" : "s",
                     formatNumber(Servers / Replicas));
}

std::string
queueSaturation(llvm::function_ref<std::optional<double>(MetricId)> Value) {
  std::optional<double> Stable = Value(MetricId::QueueStable);
  if (!Stable || *Stable != 0)
    return "";
  // What saturates: the prefills (a replica's own, or the prefill pool's)
  // before the slots, whose utilisation is then unbounded or beside the
  // point.
  bool Pool = Value(MetricId::PrefillReplicas).has_value();
  if (std::optional<double> P = Value(MetricId::PrefillUtilisation);
      P && *P >= 1)
    return (Pool ? "the prefill pool is " : "prefills alone take ") +
           formatNumber(100 * *P) + (Pool ? "% busy" : "% of a replica's time");
  std::optional<double> U = Value(MetricId::Utilisation);
  if (!U || std::isinf(*U))
    return "a slot's time is unbounded";
  return fmt::format("utilisation {}% of {}", formatNumber(100 * *U),
                     slotsText(Value(MetricId::Servers).value_or(NAN),
                               Value(MetricId::Replicas).value_or(NAN)));
}

std::string queueSaturation(const ScenarioResult &R) {
  return queueSaturation([&](MetricId M) -> std::optional<double> {
    if (!R.has(M))
      return std::nullopt;
    return R[M];
  });
}

std::string queueSaturation(const Evaluator &E) {
  return queueSaturation([&](MetricId M) -> std::optional<double> {
    std::optional<graph::NodeId> N = E.graph().find(M);
    if (!N)
      return std::nullopt;
    return E.value(*N);
  });
}

} // namespace mlsc
