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

#include "llvm/ADT/ArrayRef.h"

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
  /// No answer because a latency bound lies below what no engine removes
  /// (the request's time outside the engine, its batcher's wait): why;
  /// empty otherwise.
  std::string OutsideFloor;
  /// No answer because the queue has no steady state at the closest end
  /// (`queue_stable`, written or implicit, fails there): what saturates.
  std::string QueueReason;
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
  /// A field computed from the variable left its domain at the closest end
  /// (no answer) or just beyond the answer: why, as invalidReason() says;
  /// empty otherwise.
  std::string InvalidAtClosest;
  std::string InvalidBeyond;
};

/// The first of the graph's domain checks (graph::DomainCheck) that fails
/// at the evaluator's current point, or -1. Such a point is infeasible,
/// whatever its conditions say.
int firstInvalid(const Evaluator &E);
/// "`v.batch` is -2; it must be a whole number from 1 to 2^53".
std::string invalidReason(const graph::Graph &G, int Check, double Value);

/// Solves a one-variable query. \p E is left evaluated at the answer (or at
/// the closest end of the range when there is none).
SolveResult solveOne(Evaluator &E, const query::Query &Q);

/// One evaluated grid point: the variables' values and the terms read.
struct GridRow {
  std::vector<double> Vars;
  std::vector<double> Values; ///< Report (sweep) or Objectives (Pareto)
  size_t Point = 0;           ///< index in the grid
  bool Meets = true;          ///< valid, and every condition holds
  unsigned Binding = 0;       ///< wall number; 0 when infeasible
  /// The first domain check that fails here (firstInvalid), and the
  /// value it saw; -1 when the point is valid.
  int InvalidCheck = -1;
  double InvalidValue = 0;
  /// At a valid point that misses: the first condition that fails (index
  /// into Query::Conditions), and how far all of them are from holding:
  /// the conditions no finite distance measures, then the others' summed
  /// relative violations (a Pareto solve's closest point); -1 and 0
  /// otherwise.
  int Failing = -1;
  double Unbounded = 0, Violation = 0;
};

/// A Pareto solve where no point meets the conditions: how many points
/// each condition fails first at, and the point that comes closest (as
/// GridRow orders them), with what fails there.
struct GridMiss {
  std::vector<size_t> FailsFirst; ///< per condition
  std::vector<double> Vars;       ///< the closest point
  int Failing = -1;               ///< its first failing condition
  std::string Operands;           ///< "1.497 s vs 1.500 s", or empty
  std::string QueueReason;        ///< when the queue has no steady state
};

struct GridResult {
  std::vector<GridRow> Rows; ///< after filtering, sorting and top N
  size_t Points = 0;         ///< evaluated
  size_t Kept = 0;           ///< meeting the conditions
  /// Points where a computed field left its domain (never kept), and the
  /// first of them: its variables and why.
  size_t Invalid = 0;
  std::vector<double> FirstInvalidVars;
  size_t FirstInvalidPoint = 0; ///< its index in the grid
  std::string FirstInvalidReason;
  /// The kept rows went to the sink, not into Rows.
  bool Streamed = false;
  /// A Pareto solve that kept no point (and evaluated a valid one).
  std::optional<GridMiss> Miss;
};

/// The points of a grid: the product of its variables' value counts
/// (bounded by --max-points when the query was lowered).
size_t gridPoints(const query::Query &Q);

/// Receives a sweep's kept rows in grid order, a block at a time.
using RowSink = std::function<void(llvm::ArrayRef<GridRow>)>;

/// Points evaluated at a time: the memory a sweep needs beyond the rows it
/// keeps.
constexpr size_t DefaultBlockRows = 65536;

/// Called now and then from the main thread with points done so far.
using Progress = std::function<void(size_t Done, size_t Total)>;

/// A sweep split over processes (the driver's MPI ranks, tools/mlsc/Mpi.h):
/// rank r of n evaluates the grid points r, r + n, r + 2n, ... (dealt in
/// turn, so that a costly corner of the grid is shared), and Gather hands
/// every rank's result to rank 0: the rows of all, counts summed, the
/// first invalid point the one of lowest index; other ranks get an empty
/// result. Rank 0 puts the rows back in grid order. Rows hold their sort
/// keys (NumValues columns) until rank 0 has sorted them.
struct SweepSplit {
  unsigned Rank = 0, Ranks = 1;
  std::function<GridResult(GridResult Mine, size_t NumVars, size_t NumValues)>
      Gather;
};

/// Evaluates every grid point of a sweep, a block at a time on \p Threads
/// threads (1: the calling thread), filtering (`where`) as it goes. With
/// `sort by`, `top` keeps only the best N rows (a heap), and without it
/// the first N. With neither, and a \p Sink, the kept rows go to the sink
/// as they come and none is kept. Rows come in the same order whatever
/// the thread count, block size or \p Split (then only rank 0's result
/// has them, and nothing is streamed).
GridResult runSweep(const Evaluator &Base, const query::Query &Q,
                    unsigned Threads, const Progress &P = nullptr,
                    const RowSink &Sink = nullptr,
                    size_t BlockRows = DefaultBlockRows,
                    const SweepSplit *Split = nullptr);

/// Sets the evaluator's leaves to a grid point's variables (\p Vars, one
/// value per variable of \p Q) and evaluates.
void evaluateAt(Evaluator &E, const query::Query &Q,
                const std::vector<double> &Vars);

/// Why the first of two sorted sweep rows beats the second: the parts of
/// the main phase's step (its binding candidates: compute, memory,
/// communication, ...) at each, those that differ most first.
struct RowPart {
  std::string Name; ///< "exposed communication", "decode compute"
  Dimension Dim;
  double Best = 0, RunnerUp = 0;
};
std::vector<RowPart> compareRows(const Evaluator &Base, const query::Query &Q,
                                 const GridRow &Best, const GridRow &RunnerUp);

/// The Pareto front of a grid solve: the points meeting the conditions
/// that no other point beats in both objectives, sorted by the first. The
/// front is kept as the blocks come, so memory is the front and a block.
GridResult paretoFront(const Evaluator &Base, const query::Query &Q,
                       unsigned Threads, size_t BlockRows = DefaultBlockRows);

} // namespace mlsc

#endif
