//===- RenderTables.h - Rendering solve and sweep results ----------*- C++
//-*-===//
#ifndef MLSC_TOOLS_MLSC_RENDERTABLES_H
#define MLSC_TOOLS_MLSC_RENDERTABLES_H

#include "runtime/Query.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace mlsc::driver {

/// "no `x` in [a, b] meets `c`: ..." or the answer with the conditions
/// there.
void printSolve(const query::Query &Q, const SolveResult &R,
                llvm::raw_ostream &OS);
void solveJSON(const query::Query &Q, const SolveResult &R,
               llvm::StringRef Scenario, llvm::json::OStream &J);

enum class TableFormat { Text, CSV, JSON };

/// A sweep's table, or a grid solve's Pareto front: one row per point with
/// the variables, the reported terms and the binding wall ("infeasible"
/// when the point does not fit), as aligned text or CSV. Large CSV tables
/// are formatted on \p Threads threads; the bytes are the same for any
/// count.
std::string gridText(const query::Query &Q, const GridResult &R);
std::string gridCSV(const query::Query &Q, const GridResult &R,
                    unsigned Threads = 1);
/// A sweep's table as one JSON document, streamed: one compact array per
/// row.
void sweepJSON(const query::Query &Q, const GridResult &R,
               llvm::StringRef Scenario, llvm::raw_ostream &OS);
/// A grid solve's Pareto front, as an element of `mlsc solve`'s JSON.
void paretoJSON(const query::Query &Q, const GridResult &R,
                llvm::StringRef Scenario, llvm::json::OStream &J);

/// The format an output file's extension asks for (.csv, .json, else text).
TableFormat formatForPath(llvm::StringRef Path);

} // namespace mlsc::driver

#endif
