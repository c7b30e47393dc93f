//===- LowerQueries.h - Solve and sweep blocks against their graphs -*- C++
//-*-===//
#ifndef MLSC_PASSES_LOWERQUERIES_H
#define MLSC_PASSES_LOWERQUERIES_H

#include "passes/lowering/Context.h"

#include <memory>
#include <vector>

namespace mlsc {

/// Resolves the main file's solve and sweep blocks against the graphs of
/// \p Scenarios, lowered by \p Contexts (part of lower-to-graph).
void lowerQueries(Compilation &C,
                  const std::vector<const ir::Entity *> &Scenarios,
                  std::vector<std::unique_ptr<LoweringContext>> &Contexts);

/// Resolves the main file's fleets: their members against the graphs of
/// \p Scenarios, their clusters' nodes against the members'
/// (FleetOverCommitted).
void lowerFleets(Compilation &C,
                 const std::vector<const ir::Entity *> &Scenarios);

} // namespace mlsc

#endif
