//===- Graph.cpp - The evaluation graph: operator spellings ---------------===//

#include "ir/Graph.h"

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
