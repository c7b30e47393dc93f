//===- Formula.h - Wrapping Boost.Units formulas for the graph ---*- C++
//-*-===//
//
// makeFormula<&fn>(...) turns a function over Boost.Units quantities into a
// Formula the evaluator runs on doubles in SI base units: each argument is
// rebuilt with Q::from_value (zero cost) and the result unwrapped. The
// function's parameter and result types give the formula's dimensions, so
// graph wiring is checked against the same types the C++ compiler checked.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_PASSES_WALLS_FORMULA_H
#define MLSC_PASSES_WALLS_FORMULA_H

#include "ir/Graph.h"
#include "ir/Quantities.h"

#include <utility>

namespace mlsc::walls {

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
                      const char *Citation) {
    return Formula{Name,
                   W,
                   Equation,
                   Citation,
                   sizeof...(Args),
                   &eval,
                   q::dimensionOf<R>(),
                   {q::dimensionOf<Args>()...}};
  }
};

template <auto Fn>
Formula makeFormula(const char *Name, Wall W, const char *Equation,
                    const char *Citation) {
  return FormulaAdapter<Fn>::make(Name, W, Equation, Citation);
}

} // namespace mlsc::walls

#endif
