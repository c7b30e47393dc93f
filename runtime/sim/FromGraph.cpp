//===- FromGraph.cpp - A scenario's simulation from its evaluated graph ---===//
//
// Reads the values of the graph's SimInputs (lowered from a `simulate`
// block) into a sim::Config and runs it with the graph's step model. Never
// reads the IR (docs/simulator.md).
//
//===----------------------------------------------------------------------===//

#include "runtime/sim/Simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace mlsc::sim {

namespace {

Length lengthOf(double Mean, double CV) {
  if (CV > 0)
    return {Length::Kind::Lognormal, Mean, CV};
  return {Length::Kind::Fixed, std::round(Mean), 0};
}

/// An empirical histogram's lengths from its bins' values; \p Else
/// without bins.
Length histogramOf(const Evaluator &E,
                   const std::vector<graph::SimInputs::Bin> &Bins,
                   const Length &Else) {
  if (Bins.empty())
    return Else;
  std::vector<Length::Bin> Weighted;
  for (const graph::SimInputs::Bin &B : Bins)
    Weighted.push_back({std::round(E.value(B.Lo)), std::round(E.value(B.Hi)),
                        E.value(B.Weight)});
  return Length::empirical(Weighted);
}

} // namespace

std::optional<Simulated> simulateScenario(const Evaluator &E, std::string &Why,
                                          const RequestSink &Sink) {
  const graph::Graph &G = E.graph();
  if (!G.Sim)
    return std::nullopt;
  const graph::SimInputs &In = *G.Sim;
  if (!In.NotSimulated.empty()) {
    Why = In.NotSimulated;
    return std::nullopt;
  }
  std::optional<StepModel> M = StepModel::of(E);
  if (!M) {
    Why = "the scenario has no step model";
    return std::nullopt;
  }
  auto v = [&](graph::NodeId N) { return E.value(N); };
  Config C;
  C.Replicas = static_cast<unsigned>(std::max(1.0, std::floor(v(In.Replicas))));
  C.MaxSequences = static_cast<unsigned>(std::max(1.0, v(In.Slots)));
  C.MaxBatchedTokens = v(In.MaxBatchedTokens);
  if (In.PromptChunk.isValid())
    C.PromptChunk = v(In.PromptChunk);
  C.KVCapacityTokens = std::floor(v(In.KVTokens));
  C.ArrivalRate = v(In.Arrival);
  C.Prompt = lengthOf(v(In.Prompt), v(In.PromptCV));
  C.Output = lengthOf(v(In.Output), v(In.OutputCV));
  if (In.PromptMin.isValid())
    C.Prompt = {Length::Kind::Uniform, std::round(v(In.PromptMin)),
                std::round(v(In.PromptMax))};
  if (In.OutputMin.isValid())
    C.Output = {Length::Kind::Uniform, std::round(v(In.OutputMin)),
                std::round(v(In.OutputMax))};
  C.Prompt = histogramOf(E, In.PromptHist, C.Prompt);
  C.Output = histogramOf(E, In.OutputHist, C.Output);
  C.Requests = static_cast<uint64_t>(v(In.Requests));
  C.Seed = static_cast<uint64_t>(v(In.Seed));
  // A choice's code is its position in the schema's enumeration, which
  // lists the routers and arrival processes in the simulator's order.
  C.Route = static_cast<Routing>(
      std::clamp(v(In.Router), 0.0, static_cast<double>(Routing::Weighted)));
  C.Weights = {v(In.WeightPrefix), v(In.WeightQueue), v(In.WeightKV)};
  C.Arrive.K = static_cast<Arrivals::Kind>(std::clamp(
      v(In.Arrivals), 0.0, static_cast<double>(Arrivals::Kind::Closed)));
  auto opt = [&](graph::NodeId N, double Else) {
    return N.isValid() ? v(N) : Else;
  };
  C.Arrive.CV = opt(In.ArrivalCV, 1);
  C.Arrive.On = opt(In.Burst, 0);
  C.Arrive.Off = opt(In.Silence, 0);
  C.Arrive.Amplitude = opt(In.Amplitude, 0);
  C.Arrive.Period = opt(In.Period, 0);
  C.Arrive.Users = static_cast<unsigned>(std::min(opt(In.Users, 0), 1e9));
  C.Arrive.Think = opt(In.Think, 0);
  for (const graph::SimInputs::Class &K : In.Classes) {
    RequestClass RC;
    RC.Name = K.Name;
    RC.Share = v(K.Share);
    RC.Prompt = lengthOf(v(K.Prompt), v(K.PromptCV));
    RC.Output = lengthOf(v(K.Output), v(K.OutputCV));
    RC.Prompt = histogramOf(E, K.PromptHist, RC.Prompt);
    RC.Output = histogramOf(E, K.OutputHist, RC.Output);
    RC.TTFTTarget = opt(K.TTFTTarget, 0);
    RC.TPOTTarget = opt(K.TPOTTarget, 0);
    RC.Priority = static_cast<int>(std::clamp(v(K.Priority), 0.0, 1e6));
    C.Classes.push_back(RC);
  }
  if (In.PrefixGroups.isValid()) {
    C.Prefix.Groups =
        static_cast<unsigned>(std::clamp(v(In.PrefixGroups), 0.0, 1e7));
    C.Prefix.Tokens =
        static_cast<uint32_t>(std::clamp(v(In.PrefixTokens), 0.0, 4e9));
    C.Prefix.Share = v(In.PrefixShare);
  }
  if (In.Sessions.isValid())
    C.Session = {static_cast<unsigned>(std::clamp(v(In.Sessions), 0.0, 1e8)),
                 v(In.SessionReuse)};
  C.PrefixCaching = v(In.PrefixCaching) != 0;
  if (In.SampleEvery.isValid())
    C.SampleEvery = v(In.SampleEvery);
  for (const graph::SimInputs::Tier &T : In.Tiers)
    C.Tiers.push_back({T.Name, v(T.Capacity), v(T.Bandwidth), v(T.Latency),
                       v(T.Shared) != 0});
  if (!In.Tiers.empty())
    C.TierBytesPerToken = v(In.TierBytesPerToken);
  if (In.SwapTokens.isValid()) {
    C.Preempt = Preemption::Swap;
    C.SwapTokens = v(In.SwapTokens);
    C.SwapBandwidth = v(In.SwapBandwidth);
    C.SwapBytesPerToken = v(In.SwapBytesPerToken);
  }
  // An autoscaler (the pool's, or the prefill pool's) from its bounds,
  // thresholds and start-up; the signal, cooldown and interval are shared.
  using graph::NodeId;
  auto scaler = [&](NodeId Max, NodeId Min, NodeId Up, NodeId Down,
                    NodeId StartUp) {
    Autoscaling A;
    A.Enabled = true;
    A.Max = static_cast<unsigned>(std::clamp(v(Max), 1.0, 1e5));
    A.Min = static_cast<unsigned>(std::clamp(v(Min), 1.0, 1e5));
    A.On = v(In.ScaleSignal) >= 1 ? Autoscaling::Signal::Utilisation
                                  : Autoscaling::Signal::Queue;
    A.Up = v(Up);
    A.Down = v(Down);
    A.StartUp = v(StartUp);
    A.Cooldown = v(In.ScaleCooldown);
    A.Interval = v(In.ScaleInterval);
    return A;
  };
  if (In.ScaleMax.isValid())
    C.Scale = scaler(In.ScaleMax, In.ScaleMin, In.ScaleUp, In.ScaleDown,
                     In.ScaleStartUp);
  if (In.PrefillScaleMax.isValid())
    C.PrefillScale =
        scaler(In.PrefillScaleMax, In.PrefillScaleMin, In.PrefillScaleUp,
               In.PrefillScaleDown, In.PrefillScaleStartUp);
  if (In.AdmitRate.isValid()) {
    C.Admit.Rate = v(In.AdmitRate);
    C.Admit.Burst = v(In.AdmitBurst);
  }
  if (In.ShedPriority.isValid()) {
    C.Admit.ShedPriority =
        static_cast<int>(std::clamp(v(In.ShedPriority), 0.0, 1e6));
    C.Admit.ShedQueue = v(In.ShedQueue);
  }
  if (In.Replay) {
    // A trace: its requests (the first `requests` of them) at their times;
    // the rate shown is the trace's mean.
    C.Replay = In.Replay;
    C.ReplayName = In.ReplayName;
    C.Requests = std::min<uint64_t>(C.Requests, In.Replay->size());
    double Span = In.Replay->back().Arrival - In.Replay->front().Arrival;
    C.ArrivalRate = Span > 0 ? (In.Replay->size() - 1) / Span : 1;
  }
  if (In.PrefillReplicas.isValid()) {
    C.Disagg.PrefillReplicas = static_cast<unsigned>(
        std::clamp(std::floor(v(In.PrefillReplicas)), 0.0, 1e6));
    C.Disagg.BytesPerToken = v(In.KVBytesPerToken);
    C.Disagg.Bandwidth = v(In.KVBandwidth);
    C.Disagg.Latency = v(In.KVLatency);
    C.Disagg.LocalBelow =
        static_cast<uint32_t>(std::clamp(v(In.LocalBelow), 0.0, 4e9));
  }
  if (C.MaxBatchedTokens < C.MaxSequences) {
    Why = fmt::format("an iteration's token budget ({}: the workload's "
                      "`max_batch_tokens`, or `simulate.max_batched_tokens`) "
                      "must hold a decode token of each of the {} slots",
                      C.MaxBatchedTokens, C.MaxSequences);
    return std::nullopt;
  }
  if (!(C.KVCapacityTokens >= 1)) {
    Why = "no memory is left for the KV cache";
    return std::nullopt;
  }
  if (C.Arrive.K != Arrivals::Kind::Closed &&
      (!(C.ArrivalRate > 0) || !std::isfinite(C.ArrivalRate))) {
    Why = "the arrival rate is not a positive number";
    return std::nullopt;
  }
  C.Static = In.Static;
  // Without `prefill_chunk` a colocated engine runs its prompts in
  // iterations of their own, as the closed forms take it (wall 4).
  C.PromptsFirst = In.PromptsFirst;
  C.ReserveToCompletion = In.ReserveToCompletion;
  if (In.ContextTokens.isValid())
    C.ContextTokens = v(In.ContextTokens);
  if (In.OutputCap.isValid())
    C.OutputCap = v(In.OutputCap);
  if (In.RequestOverhead.isValid())
    C.RequestOverhead = std::max(0.0, v(In.RequestOverhead));
  if (In.BatcherWindow.isValid())
    C.Batch.Window = v(In.BatcherWindow); // NaN or below 0: refused
  if (In.BatcherMax.isValid())
    C.Batch.MaxRequests = static_cast<unsigned>(
        std::clamp(std::round(v(In.BatcherMax)), 0.0, 1e9));
  if (In.Stages.isValid())
    C.PipelineStages =
        static_cast<unsigned>(std::clamp(std::round(v(In.Stages)), 1.0, 1e6));
  Simulated Out;
  if (In.StepFixed.isValid())
    Out.Linear = LinearStep{v(In.StepFixed), v(In.StepPrefill),
                            v(In.StepDecode), v(In.StepKV)};
  // Speculative decoding: the draft's steps on the draft's step model (a
  // linear step model is taken to include them).
  if (G.Draft) {
    C.Speculate.Tokens = static_cast<unsigned>(
        std::clamp(std::round(v(G.Draft->Tokens)), 0.0, 1000.0));
    C.Speculate.Acceptance = v(G.Draft->Acceptance);
    if (!Out.Linear)
      if (std::optional<StepModel> D = StepModel::draftOf(E))
        C.Speculate.Draft = [D = *D](const StepShape &S) {
          return D.shape(S).Time;
        };
  }
  Out.Cfg = C;
  try {
    if (Out.Linear)
      Out.R = simulate(C, *Out.Linear, Sink);
    else
      Out.R = simulate(
          C, [&](const StepShape &S) { return M->shape(S).Time; }, Sink);
  } catch (const std::invalid_argument &E) {
    Why = E.what();
    return std::nullopt;
  }
  return Out;
}

namespace {

bool isSimulated(MetricId M) {
  return metricInfo(M).Where == Applies::Simulated;
}

} // namespace

bool readsSimulated(const graph::Graph &G,
                    llvm::ArrayRef<graph::NodeId> Nodes) {
  if (!G.Sim || !G.Sim->Requested)
    return false;
  // Forward over the topological order: a node depends on the simulated
  // leaves when one of its inputs does.
  std::vector<bool> Depends(G.Nodes.size(), false);
  for (const MetricInfo &M : allMetrics())
    if (isSimulated(M.Id) && G.has(M.Id))
      Depends[G.get(M.Id).index()] = true;
  for (size_t I = 0; I < G.Nodes.size(); ++I) {
    const graph::Node &N = G.Nodes[I];
    for (uint32_t K = 0; K < N.NumInputs && !Depends[I]; ++K)
      Depends[I] = Depends[G.Inputs[N.FirstInput + K]];
  }
  for (graph::NodeId N : Nodes)
    if (N.isValid() && Depends[N.index()])
      return true;
  return false;
}

std::optional<Simulated> simulateInto(Evaluator &E, std::string &Why,
                                      const RequestSink &Sink) {
  const graph::Graph &G = E.graph();
  if (!G.Sim || !G.Sim->Requested)
    return std::nullopt;
  std::optional<Simulated> S;
  std::optional<graph::NodeId> Feasible = G.find(MetricId::Feasible);
  if (Feasible && E.value(*Feasible) == 0)
    Why = "the scenario does not fit";
  else
    S = simulateScenario(E, Why, Sink);
  const double NaN = std::numeric_limits<double>::quiet_NaN();
  auto stat = [&](const Stats &St, double V) { return St.Count ? V : NaN; };
  std::vector<graph::NodeId> Leaves;
  auto set = [&](MetricId M, double V) {
    if (!G.has(M))
      return;
    E.setLeaf(G.get(M), S ? V : NaN);
    Leaves.push_back(G.get(M));
  };
  const Result *R = S ? &S->R : nullptr;
  Result None;
  if (!R)
    R = &None;
  set(MetricId::SimTtftP50, stat(R->TTFT, R->TTFT.P50));
  set(MetricId::SimTtftP99, stat(R->TTFT, R->TTFT.P99));
  set(MetricId::SimTpotP50, stat(R->TPOT, R->TPOT.P50));
  set(MetricId::SimTpotP99, stat(R->TPOT, R->TPOT.P99));
  set(MetricId::SimItlP99, stat(R->ITL, R->ITL.P99));
  set(MetricId::SimLatencyP50, stat(R->E2E, R->E2E.P50));
  set(MetricId::SimLatencyP99, stat(R->E2E, R->E2E.P99));
  set(MetricId::SimQueueWait, stat(R->QueueWait, R->QueueWait.Mean));
  set(MetricId::SimThroughput, R->Throughput);
  // Replica time over the replicas x the run: an autoscaler's share.
  double Share = 1;
  if (S && (S->Cfg.Scale.Enabled || S->Cfg.PrefillScale.Enabled) &&
      S->Cfg.Replicas > 0) {
    const Config &K = S->Cfg;
    double Decode = K.Scale.Enabled ? R->MeanReplicas : K.Replicas;
    double Prefill = K.PrefillScale.Enabled ? R->MeanPrefillReplicas
                                            : K.Disagg.PrefillReplicas;
    Share = (Decode + Prefill) / (K.Replicas + K.Disagg.PrefillReplicas);
  }
  set(MetricId::SimReplicaShare, Share);
  set(MetricId::SimGoodput, R->WithTargets ? R->Goodput : NaN);
  set(MetricId::SimAttainment, R->WithTargets
                                   ? static_cast<double>(R->MetTargets) /
                                         static_cast<double>(R->WithTargets)
                                   : NaN);
  set(MetricId::SimPrefixHitRate,
      R->PromptTokens > 0 && S && (S->Cfg.Prefix.Groups || S->Cfg.Session.Open)
          ? R->PrefixHitRate
          : NaN);
  E.run(E.plan(Leaves));
  return S;
}

} // namespace mlsc::sim
