//===- Sensitivity.h - Elasticities and binding-wall flips --------*- C++
//-*-===//
//
// Wall 21 (Saltelli et al., Global Sensitivity Analysis: The Primer, 2008):
//  - the elasticity of every metric with respect to every leaf,
//    e = d ln m / d ln x, by a central difference of +-0.01% around the
//    leaf's value, so e = -1 means "1% more x, 1% less m"; whole-valued
//    counts (batch, tp, layers), which feed floors and ceilings, move by
//    +-1 instead (the arc elasticity (m(x+1) - m(x-1)) / m * x / 2);
//  - for every calibrated factor with a stated plausible range
//    (runtime/Defaults.def): whether the
//    binding wall changes anywhere in the range, and where (flip points,
//    bisected to 0.01% of the range).
// Both only set leaves and re-evaluate their dependents.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_SENSITIVITY_H
#define MLSC_RUNTIME_SENSITIVITY_H

#include "runtime/Binding.h"
#include "runtime/Evaluator.h"

#include <string>
#include <vector>

namespace mlsc {

struct Elasticity {
  graph::NodeId Leaf;
  std::string Name; ///< "H100_SXM.hbm.bandwidth"
  double Value;     ///< d ln m / d ln x
};

/// The non-zero elasticities of \p Metric with respect to every numeric,
/// non-zero leaf that belongs to an entity or a let, largest |e| first
/// (ties by name). Leaves the evaluator at its base values.
std::vector<Elasticity> elasticities(Evaluator &E, graph::NodeId Metric);

struct FlipPoint {
  double At;         ///< the factor's value where the wall changes
  unsigned From, To; ///< wall numbers below and above it
};

struct FactorFlips {
  graph::NodeId Leaf;
  std::string Name;        ///< "chat.kernels.gemm"
  double Value, Low, High; ///< current value and plausible range
  const char *Source;
  unsigned WallAtLow = 0, WallAtHigh = 0;
  std::vector<FlipPoint> Flips; ///< empty: the binding wall is robust
};

/// For each calibrated factor the graph reads: where in its plausible range
/// the binding wall of \p Phase (the main phase by default) changes.
/// Leaves the evaluator at its base values.
std::vector<FactorFlips>
bindingFlips(Evaluator &E, std::optional<PhaseId> Phase = std::nullopt);

} // namespace mlsc

#endif
