//===- Evaluator.h - Evaluate a graph on plain doubles ------------*- C++ -*-===//
//
// Dimensions were proven at compile time, so evaluation is one forward pass
// over the nodes (stored in topological order) on doubles in SI base units.
// Setting a leaf and running again reuses the same buffers: no allocation,
// no re-lowering.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_EVALUATOR_H
#define MLSC_RUNTIME_EVALUATOR_H

#include "ir/Graph.h"

#include <vector>

namespace mlsc {

class Evaluator {
public:
  explicit Evaluator(const graph::Graph &G);

  /// Overrides a leaf's value for the next run().
  void setLeaf(uint32_t Node, double Value) { Values[Node] = Value; }
  /// Restores every leaf to its compiled value.
  void resetLeaves();
  /// Evaluates every non-leaf node.
  void run();

  double value(uint32_t Node) const { return Values[Node]; }
  const std::vector<double> &values() const { return Values; }
  const graph::Graph &graph() const { return G; }

private:
  const graph::Graph &G;
  std::vector<double> Values;
  std::vector<double> Scratch; ///< formula arguments
};

} // namespace mlsc

#endif
