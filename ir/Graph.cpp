//===- Graph.cpp - The evaluation graph: walls, operators, printing -------===//

#include "ir/Graph.h"

#include "llvm/Support/Path.h"

#include <fmt/format.h>

namespace mlsc {

static const WallInfo WallTable[] = {
#define WALL(Number, Id, Name, Domain, Equation, Citation, Pass, Status)       \
  {Number,   Wall::Id, Name, Domain,                                           \
   Equation, Citation, Pass, WallStatus::Status},
#include "passes/walls/Walls.def"
};

llvm::ArrayRef<WallInfo> allWalls() { return WallTable; }

const char *wallStatusName(WallStatus S) {
  switch (S) {
  case WallStatus::Implemented:
    return "implemented";
  case WallStatus::Partial:
    return "partial";
  case WallStatus::Library:
    return "library";
  case WallStatus::Planned:
    return "planned";
  }
  return "planned";
}

const WallInfo *wallInfo(Wall W) {
  for (const WallInfo &I : WallTable)
    if (I.Id == W)
      return &I;
  return nullptr;
}

namespace graph {

const char *opSpelling(Op O) {
  static const char *const Names[] = {
      "leaf", "add",  "sub",   "mul",   "div",   "pow", "neg",
      "min",  "max",  "ceil",  "floor", "round", "abs", "sqrt",
      "log",  "log2", "log10", "exp",   "lt",    "le",  "gt",
      "ge",   "eq",   "ne",    "and",   "or",    "not", "apply"};
  return Names[static_cast<unsigned>(O)];
}

} // namespace graph
} // namespace mlsc
