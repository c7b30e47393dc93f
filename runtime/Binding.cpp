//===- Binding.cpp - Which wall binds an evaluated scenario ---------------===//

#include "runtime/Binding.h"

#include <fmt/format.h>

namespace mlsc {

const char *wallShortName(unsigned Number) {
  for (const WallInfo &W : allWalls())
    if (W.Number == Number)
      return W.Name;
  return "infeasible";
}

PhaseId mainPhase(const graph::Graph &G) {
  if (G.MainPhase)
    return *G.MainPhase;
  return G.has(MetricId::DecodeStepTime) ? PhaseId::Decode : PhaseId::Batch;
}

BindingProbe::BindingProbe(const graph::Graph &G, std::optional<PhaseId> P)
    : Phase(P ? *P : mainPhase(G)) {
  for (const PhaseMetricInfo &M : allPhaseMetrics())
    if (M.Binds)
      Candidates.push_back({M.W, G.find(Phase, M.Id)});
  Known = G.has(Phase, PhaseMetricId::ComputeTime);
}

std::vector<graph::NodeId> BindingProbe::nodes() const {
  std::vector<graph::NodeId> Out;
  for (const Candidate &C : Candidates)
    if (C.Time)
      Out.push_back(*C.Time);
  return Out;
}

BindingWall BindingProbe::at(const Evaluator &E) const {
  // The largest time and the runner-up, the earlier candidate winning ties
  // (a sweep calls this for every point: no sort, no allocation).
  auto time = [&](size_t K) {
    return Candidates[K].Time ? E.value(*Candidates[K].Time) : 0.0;
  };
  auto largest = [&](size_t Skip) {
    size_t Best = Candidates.size();
    for (size_t K = 0; K < Candidates.size(); ++K)
      if (K != Skip && (Best == Candidates.size() || time(K) > time(Best)))
        Best = K;
    return Best;
  };
  size_t A = largest(Candidates.size());
  size_t B = largest(A);
  BindingWall R;
  R.Known = Known;
  R.Phase = Phase;
  const WallInfo &W = *wallInfo(Candidates[A].W);
  R.Number = W.Number;
  R.Short = W.Name;
  R.RunnerUp = wallInfo(Candidates[B].W)->Name;
  R.Margin = time(B) > 0 ? time(A) / time(B) : 0;
  return R;
}

std::string BindingWall::label() const {
  return fmt::format("wall {}: {}", Number, Short);
}

BindingWall bindingWall(const Evaluator &E, std::optional<PhaseId> Phase) {
  return BindingProbe(E.graph(), Phase).at(E);
}

} // namespace mlsc
