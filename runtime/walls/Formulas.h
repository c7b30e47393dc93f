//===- Formulas.h - The formula library: every wall's formulas ---*- C++
//-*-===//
//
// Declares every formula function of every wall table (runtime/walls/*.def,
// listed by the build in AllWalls.inc) and names each formula with a
// FormulaId, which is what an evaluation graph stores. The solver,
// sensitivity analysis and the serving simulator call the functions
// directly; lowering applies them by id.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_WALLS_FORMULAS_H
#define MLSC_RUNTIME_WALLS_FORMULAS_H

#include "ir/Graph.h"
#include "runtime/walls/Formula.h"

#include "llvm/ADT/ArrayRef.h"

namespace mlsc {

namespace walls {
#define FORMULA(Wall, Id, Name, Result, Function, Parameters, Equation,        \
                Citation)                                                      \
  Result Function Parameters;
#define LIBRARY_FORMULA(Wall, Id, Name, Result, Function, Parameters,          \
                        Equation, Citation, Reason)                            \
  Result Function Parameters;
#include "runtime/walls/AllWalls.inc"
#undef FORMULA
#undef LIBRARY_FORMULA
} // namespace walls

/// Every formula of the library, in the order of the wall tables.
enum class FormulaId : uint16_t {
#define FORMULA(Wall, Id, ...) Id,
#define LIBRARY_FORMULA(Wall, Id, ...) Id,
#include "runtime/walls/AllWalls.inc"
#undef FORMULA
#undef LIBRARY_FORMULA
};

const Formula &formula(FormulaId Id);
/// Every formula, indexed by FormulaId.
llvm::ArrayRef<Formula> allFormulas();
/// A wall's status, from the library: implemented (or partial, by the
/// wall's scope) when some formula of it is lowered, library when it has
/// only library formulas, planned when it has none. An analysis wall is
/// implemented by its algorithm.
WallStatus wallStatus(const WallInfo &W);

/// The formula a graph node applies (an Apply node).
inline const Formula &formula(const graph::Node &N) {
  return formula(static_cast<FormulaId>(N.Formula));
}

} // namespace mlsc

#endif
