//===- GraphBuilder.h - Appending nodes to an evaluation graph ---*- C++
//-*-===//
//
// Used by lowering: leaves with their origins, arithmetic nodes and wall
// formulas, each appended after its inputs so the graph stays in
// topological order. The builder works out every node's dimension: an
// operator's from its inputs, a formula's from its C++ signature, and it
// refuses inputs that do not fit (adding seconds to bytes, a formula fed
// the wrong dimension, a metric published with another dimension than the
// contract's). Such a mismatch is a bug in lowering and stops the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_PASSES_LOWERING_GRAPHBUILDER_H
#define MLSC_PASSES_LOWERING_GRAPHBUILDER_H

#include "ir/Graph.h"
#include "runtime/walls/Formulas.h"

#include "llvm/ADT/ArrayRef.h"

#include <string>

namespace mlsc {

/// Appends nodes to a graph in topological order (every input exists
/// before its user), checking every node's dimensions.
class GraphBuilder {
public:
  using NodeId = graph::NodeId;

  explicit GraphBuilder(graph::Graph &G) : G(G) {}

  NodeId leaf(double Value, Dimension D, graph::LeafOrigin O,
              bool IsBool = false);
  /// A dimensionless constant of a formula, with why it has that value.
  NodeId constant(double V, const char *Why);
  /// An operator over \p In; its dimension follows from theirs.
  NodeId op(graph::Op Kind, llvm::ArrayRef<NodeId> In);
  /// A wall formula over \p In, which must have the dimensions of its C++
  /// signature; \p Label names the node for explain ("" for none).
  NodeId apply(FormulaId F, llvm::ArrayRef<NodeId> In,
               const std::string &Label);

  /// Names a node for explain, without making it part of the contract.
  void label(NodeId N, const std::string &Name);
  /// Publishes \p N as metric \p M: its dimension must be the metric's.
  void publish(MetricId M, NodeId N);
  void publish(PhaseId P, PhaseMetricId M, NodeId N);

  const graph::Node &node(NodeId N) const { return G.node(N); }
  const Dimension &dim(NodeId N) const { return G.node(N).Dim; }

  graph::Graph &G;

private:
  NodeId push(graph::Node N, double Value, llvm::ArrayRef<NodeId> In);
  Dimension resultOf(graph::Op Kind, llvm::ArrayRef<NodeId> In,
                     bool &IsBool) const;
};

} // namespace mlsc

#endif
