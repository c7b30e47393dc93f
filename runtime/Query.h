//===- Query.h - Inverse queries and sweeps on a compiled graph ---*- C++
//-*-===//
//
// Runs the solve and sweep blocks that lower-to-graph resolved
// (ir/Query.h). Everything here only sets leaves and re-evaluates the
// dependent part of the scenario's graph (Evaluator::plan); nothing is
// re-parsed or re-lowered.
//
//  - solve, one variable (walls 21-22): sample the range to detect
//    monotonicity, bracket the first (or last) value that meets every
//    condition, then bisect to the tolerance (in log space for ranges that
//    span a decade or more; exactly for whole numbers).
//  - solve over a grid of variables: every grid point, then the Pareto
//    front of two metrics among the points that meet the conditions.
//  - sweep: the Cartesian product of the `vary` lines on all cores, in a
//    fixed order whatever the thread count; filter, sort, top N.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_RUNTIME_QUERY_H
#define MLSC_RUNTIME_QUERY_H

#include "ir/Query.h"
#include "runtime/Binding.h"
#include "runtime/Evaluator.h"
#include "runtime/Result.h"

#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace mlsc {

struct SolveResult {
  bool Found = false;
  double Answer = 0; ///< SI units of the variable
  unsigned Evaluations = 0;
  unsigned Samples = 0;  ///< of which sampling for monotonicity
  bool Monotone = false; ///< the samples changed from fail to pass once
  /// When nothing meets the conditions: the end of the range that comes
  /// closest, and the first condition that fails there.
  double Closest = 0;
  int FailingCondition = -1; ///< index into Query::Conditions
  BindingWall Binding;       ///< at the answer, or at the closest end
  /// Beyond the answer: the neighbouring value that fails (the bracket's
  /// other end) and the first condition that fails there; -1 when the
  /// answer is an end of the range.
  double Beyond = 0;
  int LimitingCondition = -1;
  /// Closed-form synthesis where it applies (inverse roofline): the
  /// variable is a device's bandwidth or peak, a condition caps a step's
  /// time, and that step is bound by the wall the variable feeds there.
  /// NaN otherwise.
  double ClosedForm = std::numeric_limits<double>::quiet_NaN();
  std::string ClosedFormRule; ///< "bytes / ((T - T_comm) * eta_mem)"
  /// Each condition at the answer (or at the closest end): whether it
  /// holds, and a comparison's two sides, "1.497 s vs 1.500 s".
  struct ConditionAt {
    bool Holds = false;
    std::string Operands;
  };
  std::vector<ConditionAt> Conditions;
};

/// Solves a one-variable query. \p E is left evaluated at the answer (or at
/// the closest end of the range when there is none).
SolveResult solveOne(Evaluator &E, const query::Query &Q);

/// One evaluated grid point: the variables' values and the terms read.
struct GridRow {
  std::vector<double> Vars;
  std::vector<double> Values; ///< Report (sweep) or Objectives (Pareto)
  bool Meets = true;          ///< every condition holds
  unsigned Binding = 0;       ///< wall number; 0 when infeasible
};

struct GridResult {
  std::vector<GridRow> Rows; ///< after filtering, sorting and top N
  size_t Points = 0;         ///< evaluated
  size_t Kept = 0;           ///< meeting the conditions
};

/// Called now and then from the main thread with points done so far.
using Progress = std::function<void(size_t Done, size_t Total)>;

/// Evaluates every grid point of a sweep on \p Threads threads (1: the
/// calling thread), then filters (`where`), sorts and cuts to `top`. Rows
/// come in the same order whatever the thread count.
GridResult runSweep(const Evaluator &Base, const query::Query &Q,
                    unsigned Threads, const Progress &P = nullptr);

/// The Pareto front of a grid solve: the points meeting the conditions
/// that no other point beats in both objectives, sorted by the first.
GridResult paretoFront(const Evaluator &Base, const query::Query &Q,
                       unsigned Threads);

} // namespace mlsc

#endif
