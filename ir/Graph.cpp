//===- Graph.cpp - The evaluation graph: operator spellings ---------------===//

#include "ir/Graph.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"

namespace mlsc::graph {

const char *opSpelling(Op O) {
  static const char *const Names[] = {
      "leaf", "add",  "sub",   "mul",   "div",   "pow", "neg",
      "min",  "max",  "ceil",  "floor", "round", "abs", "sqrt",
      "log",  "log2", "log10", "exp",   "lt",    "le",  "gt",
      "ge",   "eq",   "ne",    "and",   "or",    "not", "apply"};
  return Names[static_cast<unsigned>(O)];
}

} // namespace mlsc::graph

namespace mlsc::graph {

NodeId Graph::get(MetricId M) const {
  NodeId N = MetricNodes[static_cast<unsigned>(M)];
  if (!N.isValid())
    llvm::report_fatal_error(llvm::Twine("graph `") + Scenario +
                             "` has no metric `" + metricInfo(M).Name +
                             "`: ask has() first");
  return N;
}

NodeId Graph::get(PhaseId P, PhaseMetricId M) const {
  NodeId N = PhaseNodes[phaseSlot(P, M)];
  if (!N.isValid())
    llvm::report_fatal_error(llvm::Twine("graph `") + Scenario + "` has no `" +
                             phaseMetricName(P, M) + "`: ask has() first");
  return N;
}

} // namespace mlsc::graph
