//===- Formulas.cpp - The registry of every wall formula ------------------===//
//
// One Formula per row of the wall tables, in FormulaId order. The file a
// row comes from is recorded (relative to the source tree) so that
// `mlsc walls` and docs/walls.md say where each formula lives.
//
//===----------------------------------------------------------------------===//

#include "runtime/walls/Formulas.h"

#include "llvm/ADT/StringRef.h"

namespace mlsc {

namespace {

/// "runtime/walls/Compute.def" from the compiler's path of the table.
const char *tableFile(const char *Path) {
  llvm::StringRef P(Path);
  size_t At = P.rfind("runtime/walls/");
  return At == llvm::StringRef::npos ? Path : Path + At;
}

const Formula Registry[] = {
#define FORMULA(W, Id, Name, Result, Function, Parameters, Equation, Citation) \
  walls::makeFormula<&walls::Function>(Name, Wall::W, Equation, Citation,      \
                                       #Function, tableFile(__FILE__),         \
                                       nullptr),
#define LIBRARY_FORMULA(W, Id, Name, Result, Function, Parameters, Equation,   \
                        Citation, Reason)                                      \
  walls::makeFormula<&walls::Function>(Name, Wall::W, Equation, Citation,      \
                                       #Function, tableFile(__FILE__),         \
                                       Reason),
#include "runtime/walls/AllWalls.inc"
#undef FORMULA
#undef LIBRARY_FORMULA
};

} // namespace

const Formula &formula(FormulaId Id) {
  return Registry[static_cast<unsigned>(Id)];
}

llvm::ArrayRef<Formula> allFormulas() { return Registry; }

WallStatus wallStatus(const WallInfo &W) {
  bool Lowered = false, Library = false;
  for (const Formula &F : Registry)
    if (F.W == W.Id)
      (F.isLibrary() ? Library : Lowered) = true;
  if (Lowered || llvm::StringRef(W.Algorithm).size())
    return W.Scope == WallScope::Partial ? WallStatus::Partial
                                         : WallStatus::Implemented;
  return Library ? WallStatus::Library : WallStatus::Planned;
}

} // namespace mlsc
