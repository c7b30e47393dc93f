//===- Sensitivity.cpp - Elasticities and binding-wall flips --------------===//

#include "runtime/Sensitivity.h"
#include "runtime/Binding.h"
#include "runtime/Defaults.h"
#include "runtime/Query.h"
#include "runtime/walls/Formulas.h"

#include <algorithm>
#include <cmath>

namespace mlsc {

namespace {

/// Relative step of the central difference (of a continuous input).
constexpr double Step = 1e-4;
/// Points scanned across a factor's range before bisecting a change.
constexpr unsigned ScanPoints = 33;

/// A leaf worth perturbing: a number that comes from an entity's field or
/// a let, not a formula constant, a boolean or a choice (`recompute`).
bool isInput(const graph::Graph &G, graph::NodeId Id) {
  const graph::Node &N = G.node(Id);
  if (N.Kind != graph::Op::Leaf || N.IsBool || N.Origin >= G.Origins.size())
    return false;
  const graph::LeafOrigin &O = G.Origins[N.Origin];
  return !N.Name.empty() && !O.Choice &&
         (!O.Entity.empty() || !O.Field.empty());
}

} // namespace

std::vector<Elasticity> elasticities(Evaluator &E, graph::NodeId Metric) {
  const graph::Graph &G = E.graph();
  E.run();
  double M0 = E.value(Metric);
  bool BaseValid = firstInvalid(E) < 0;
  std::vector<Elasticity> Out;
  if (!std::isfinite(M0) || M0 == 0)
    return Out;
  for (uint32_t I = 0; I < G.Nodes.size(); ++I) {
    graph::NodeId Id(I);
    if (!isInput(G, Id))
      continue;
    double X = E.value(Id);
    if (!std::isfinite(X) || X == 0)
      continue;
    EvalPlan P = E.plan({Id});
    if (P.Instrs.empty())
      continue;
    // A whole-valued count (batch, tp, layers) feeds floors and ceilings:
    // a 0.01% nudge would cross a step. It moves by one instead (the arc
    // elasticity), forward only from 1.
    bool Count = G.node(Id).Dim.isDimensionless() && X >= 1 &&
                 X == std::floor(X) && X < 1e15 &&
                 !G.Origins[G.node(Id).Origin].Calibrated;
    double Hi = Count ? X + 1 : X * (1 + Step);
    double Lo = Count ? std::max(1.0, X - 1) : X * (1 - Step);
    // A side that leaves what the scenario can be (tp 2 on one device, a
    // tp that does not divide the heads) is not a direction the input can
    // move in: the difference is taken on the other side, or not at all.
    E.setLeaf(Id, Hi);
    E.run(P);
    double Up = E.value(Metric);
    if (BaseValid && firstInvalid(E) >= 0) {
      Hi = X;
      Up = M0;
    }
    E.setLeaf(Id, Lo);
    E.run(P);
    double Down = E.value(Metric);
    if (BaseValid && firstInvalid(E) >= 0) {
      Lo = X;
      Down = M0;
    }
    E.setLeaf(Id, X);
    E.run(P);
    if (Hi == Lo)
      continue;
    double El = (Up - Down) / M0 * X / (Hi - Lo);
    if (!std::isfinite(El) || std::fabs(El) < 1e-6)
      continue;
    Out.push_back({Id, G.node(Id).Name, El});
  }
  std::stable_sort(Out.begin(), Out.end(),
                   [](const Elasticity &A, const Elasticity &B) {
                     if (std::fabs(A.Value) != std::fabs(B.Value))
                       return std::fabs(A.Value) > std::fabs(B.Value);
                     return A.Name < B.Name;
                   });
  return Out;
}

std::vector<FactorFlips> bindingFlips(Evaluator &E,
                                      std::optional<PhaseId> Phase) {
  const graph::Graph &G = E.graph();
  E.run();
  BindingProbe Probe(G, Phase);
  std::vector<FactorFlips> Out;
  for (uint32_t I = 0; I < G.Nodes.size(); ++I) {
    graph::NodeId Id(I);
    const graph::Node &N = G.node(Id);
    if (N.Kind != graph::Op::Leaf || N.Origin >= G.Origins.size())
      continue;
    const graph::LeafOrigin &O = G.Origins[N.Origin];
    if (!O.Calibrated)
      continue;
    const DefaultInfo *R = nullptr;
    for (const DefaultInfo &D : allDefaults())
      if (D.hasRange() && O.Field == D.Field)
        R = &D;
    if (!R)
      continue;
    FactorFlips F;
    F.Leaf = Id;
    F.Name = N.Name;
    F.Value = E.value(Id);
    F.Low = R->Low;
    F.High = R->High;
    F.Source = R->Evidence;
    EvalPlan P = E.plan({Id});
    auto wallAt = [&](double X) {
      E.setLeaf(Id, X);
      E.run(P);
      return Probe.at(E).Number;
    };
    double Prev = F.Low;
    unsigned PrevWall = F.WallAtLow = wallAt(F.Low);
    for (unsigned K = 1; K < ScanPoints; ++K) {
      double X = F.Low + (F.High - F.Low) * K / (ScanPoints - 1);
      unsigned W = wallAt(X);
      if (W != PrevWall) {
        // Bisect the change between Prev and X.
        double A = Prev, B = X;
        while (B - A > 1e-4 * (F.High - F.Low)) {
          double M = 0.5 * (A + B);
          (wallAt(M) == PrevWall ? A : B) = M;
        }
        F.Flips.push_back({0.5 * (A + B), PrevWall, W});
      }
      Prev = X;
      PrevWall = W;
    }
    F.WallAtHigh = PrevWall;
    wallAt(F.Value);
    Out.push_back(std::move(F));
  }
  return Out;
}

} // namespace mlsc
