//===- Formula.h - A wall formula as the evaluator runs it -------*- C++
//-*-===//
//
// A wall formula is a C++ function over Boost.Units quantities (Quantities.h)
// with a name, an equation and a citation. Each wall lists its formulas once,
// in a table of its own (runtime/walls/<Wall>.def, one row per formula):
//
//   FORMULA(Wall, Id, Name, Result, Function, (Parameters), Equation,
//           Citation)
//   LIBRARY_FORMULA(Wall, Id, Name, Result, Function, (Parameters),
//                   Equation, Citation, Reason)
//
// A table is included only through the build's list of tables
// (AllWalls.inc), with both macros defined by the includer, which undefines
// them after the list. The row declares the function (Formulas.h),
// registers it for the
// evaluation graph (Formulas.cpp), and generates the formula tables of
// docs/walls.md (`mlsc --list-formulas`). FORMULA rows are lowered into
// scenario graphs; LIBRARY_FORMULA rows are documented functions that no
// lowering uses, and Reason says why they are kept. The function's body is
// in <Wall>.cpp.
//
// makeFormula<&fn> wraps a function for the evaluator, which runs on doubles
// in SI base units: each argument is rebuilt with Q::from_value (zero cost)
// and the result unwrapped. The function's parameter and result types give
// the formula's dimensions, so the graph's wiring is checked against the
// same types the C++ compiler checked.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_WALLS_FORMULA_H
#define MLSC_RUNTIME_WALLS_FORMULA_H

#include "ir/Dimension.h"
#include "ir/Walls.h"
#include "runtime/walls/Quantities.h"

#include <utility>
#include <vector>

namespace mlsc {

struct Formula {
  const char *Name; ///< "decode_step_flops"
  Wall W;
  const char *Equation; ///< "F = (2*N*B + 2*L*B*ctx*d_attn) / tp"
  const char *Citation;
  const char *Function; ///< the C++ function: "decodeStepFlops"
  const char *File;     ///< the table it is listed in: "runtime/walls/..."
  /// Null for a lowered formula; for a library formula, why it is kept.
  const char *LibraryReason;
  unsigned Arity;
  double (*Eval)(const double *Inputs);
  Dimension Result;
  std::vector<Dimension> Params;

  bool isLibrary() const { return LibraryReason != nullptr; }
};

namespace walls {

template <auto Fn> struct FormulaAdapter;

template <class R, class... Args, R (*Fn)(Args...)> struct FormulaAdapter<Fn> {
  static double eval(const double *In) {
    return call(In, std::index_sequence_for<Args...>{});
  }
  template <size_t... I>
  static double call(const double *In, std::index_sequence<I...>) {
    return Fn(Args::from_value(In[I])...).value();
  }
  static Formula make(const char *Name, Wall W, const char *Equation,
                      const char *Citation, const char *Function,
                      const char *File, const char *LibraryReason) {
    return Formula{Name,
                   W,
                   Equation,
                   Citation,
                   Function,
                   File,
                   LibraryReason,
                   sizeof...(Args),
                   &eval,
                   q::dimensionOf<R>(),
                   {q::dimensionOf<Args>()...}};
  }
};

template <auto Fn>
Formula makeFormula(const char *Name, Wall W, const char *Equation,
                    const char *Citation, const char *Function,
                    const char *File, const char *LibraryReason) {
  return FormulaAdapter<Fn>::make(Name, W, Equation, Citation, Function, File,
                                  LibraryReason);
}

} // namespace walls
} // namespace mlsc

#endif
