//===- Walls.cpp - The 22 systems walls -----------------------------------===//

#include "ir/Walls.h"

namespace mlsc {

static const WallInfo WallTable[] = {
#define WALL(Number, Id, Name, Domain, Equation, Citation, Algorithm, Scope)   \
  {Number,   Wall::Id, Name,      Domain,                                      \
   Equation, Citation, Algorithm, WallScope::Scope},
#include "ir/Walls.def"
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

} // namespace mlsc
