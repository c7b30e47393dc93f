//===- Evaluator.h - Evaluate a graph on plain doubles ------------*- C++
//-*-===//
//
// Dimensions were proven at compile time, so a scenario graph is compiled
// once into a compact program: one 16-byte instruction per computed node
// (an opcode, its operand slots, a formula's function) over one array of
// doubles in SI base units. Evaluation is a forward pass over the
// instructions; no allocation, no re-lowering.
//
// Inverse queries and sweeps change a few leaves many times. plan() finds
// the instructions that depend on those leaves (their forward closure, in
// topological order); run(Plan) recomputes only those. Both paths execute
// the same instructions in the same order, so results are bit-identical to
// a full run.
//
// An Evaluator is one set of values: copy it to give each thread its own.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_EVALUATOR_H
#define MLSC_RUNTIME_EVALUATOR_H

#include "ir/Graph.h"

#include "llvm/ADT/ArrayRef.h"

#include <vector>

namespace mlsc {

/// The instructions that depend on a set of leaves, in evaluation order.
struct EvalPlan {
  std::vector<uint32_t> Instrs; ///< indices into the program
};

class Evaluator {
public:
  explicit Evaluator(const graph::Graph &G);

  /// Overrides a leaf's value for the next run().
  void setLeaf(graph::NodeId Node, double Value) {
    Values[Node.index()] = Value;
  }
  /// Restores every leaf to its compiled value.
  void resetLeaves();
  /// Evaluates every non-leaf node.
  void run();
  /// Re-evaluates only the nodes that depend on the plan's leaves; the
  /// other values must be current (after run(), or an earlier plan over
  /// other leaves that were restored).
  void run(const EvalPlan &P);
  /// The nodes downstream of \p Leaves; with \p Wanted, only those of
  /// them the wanted nodes depend on. After run() of such a plan only the
  /// wanted nodes (and what they read) are current: the others keep the
  /// values of the last run that computed them.
  EvalPlan plan(llvm::ArrayRef<graph::NodeId> Leaves,
                llvm::ArrayRef<graph::NodeId> Wanted = {}) const;

  double value(graph::NodeId Node) const { return Values[Node.index()]; }
  /// The value of metric \p M, which the graph must have.
  double value(MetricId M) const { return value(G->get(M)); }
  const std::vector<double> &values() const { return Values; }
  const graph::Graph &graph() const { return *G; }
  /// Computed nodes (instructions) in the program.
  size_t size() const { return Code.size(); }

private:
  struct Instr {
    graph::Op Kind;
    uint8_t NumInputs;
    uint32_t Out;                   ///< node index written
    uint32_t FirstInput;            ///< into Operands
    double (*Eval)(const double *); ///< Apply only
  };
  const graph::Graph *G;
  std::vector<Instr> Code;
  std::vector<uint32_t> Operands;
  std::vector<double> Values;
  std::vector<double> Scratch; ///< formula arguments

  void exec(const Instr &I);
};

} // namespace mlsc

#endif
