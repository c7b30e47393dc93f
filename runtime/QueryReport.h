//===- QueryReport.h - Printing solve and sweep results -----------*- C++
//-*-===//
#ifndef MLSC_RUNTIME_QUERYREPORT_H
#define MLSC_RUNTIME_QUERYREPORT_H

#include "runtime/Query.h"

#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <string>

namespace mlsc {

/// "no `x` in [a, b] meets `c`: ..." or the answer with the metrics there.
void printSolve(const query::Query &Q, const SolveResult &R, const Evaluator &E,
                llvm::raw_ostream &OS);
nlohmann::ordered_json solveJSON(const query::Query &Q, const SolveResult &R,
                                 const Evaluator &E);

enum class TableFormat { Text, CSV, JSON };

/// A sweep's table, or a grid solve's Pareto front: one row per point with
/// the variables, the reported terms and the binding wall ("infeasible"
/// when the point does not fit). Large CSV tables are formatted on
/// \p Workers threads; the bytes are the same for any count.
std::string gridTable(const query::Query &Q, const GridResult &R,
                      const graph::Graph &G, TableFormat F,
                      unsigned Workers = 1);

/// The format an output file's extension asks for (.csv, .json, else text).
TableFormat formatForPath(llvm::StringRef Path);

/// Writes \p Contents to \p Path whole or not at all: a temporary file in
/// the same folder, renamed over the target. On failure returns false and
/// sets \p Error.
bool writeFileAtomically(llvm::StringRef Path, llvm::StringRef Contents,
                         std::string &Error);

} // namespace mlsc

#endif
