//===- Walls.h - The 22 systems walls ----------------------------*- C++
//-*-===//
//
// The wall table (Walls.def): number, name, domain, core equation, citation
// and status of each of the 22 walls (after MLSYSIM, arXiv 2607.02558).
// Every graph formula and metric is tagged with the wall it belongs to.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_IR_WALLS_H
#define MLSC_IR_WALLS_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace mlsc {

enum class Wall : uint8_t {
  None = 0,
#define WALL(Number, Id, Name, Domain, Equation, Citation, Algorithm, Scope)   \
  Id = Number,
#include "ir/Walls.def"
};

enum class WallStatus : uint8_t { Implemented, Partial, Library, Planned };
const char *wallStatusName(WallStatus S);

/// How much of a wall's model is meant to be lowered so far.
enum class WallScope : uint8_t { Full, Partial };

struct WallInfo {
  unsigned Number;
  Wall Id;
  const char *Name;
  const char *Domain;
  const char *Equation;
  const char *Citation;
  const char *Algorithm; ///< analysis walls: the file of the algorithm
  WallScope Scope;
};
llvm::ArrayRef<WallInfo> allWalls();
const WallInfo *wallInfo(Wall W);

} // namespace mlsc

#endif
