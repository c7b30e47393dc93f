//===- RenderTables.h - Rendering solve and sweep results ----------*- C++
//-*-===//
#ifndef MLSC_TOOLS_MLSC_RENDERTABLES_H
#define MLSC_TOOLS_MLSC_RENDERTABLES_H

#include "runtime/Query.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
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

/// \p Rows as aligned columns: each line \p Indent spaces, then its cells,
/// each padded to its column's width and \p Gap more spaces, the line's
/// trailing blanks trimmed.
std::string alignedColumns(const std::vector<std::vector<std::string>> &Rows,
                           unsigned Indent, unsigned Gap);

/// A sorted sweep's first two rows compared: what the best wins on, from
/// the parts of the main phase's step at each (compareRows); "" when the
/// sweep is not sorted or kept fewer than two rows.
std::string bestVsRunnerUp(const query::Query &Q, const GridResult &R,
                           const std::vector<RowPart> &Parts);
std::string gridCSV(const query::Query &Q, const GridResult &R,
                    unsigned Threads = 1);

/// Writes a sweep's table as its rows come (runSweep's RowSink), so that a
/// table of millions of rows is never held in memory: CSV (a header line,
/// then a line per row) or one JSON document (one compact array per row,
/// the counts after the rows).
class TableWriter {
public:
  virtual ~TableWriter();
  virtual void rows(llvm::ArrayRef<GridRow> Rows) = 0;
  /// After the last row.
  virtual void finish(const GridResult &R) = 0;
};
/// A writer for CSV or JSON; none for text, whose aligned columns need
/// every row first (gridText).
std::unique_ptr<TableWriter> tableWriter(TableFormat F, const query::Query &Q,
                                         llvm::StringRef Scenario,
                                         llvm::raw_ostream &OS,
                                         unsigned Threads);

/// "w.batch = 4, w.prompt = 1 ktok".
std::string pointText(const query::Query &Q, llvm::ArrayRef<double> Vars);
/// "3 points outside what a field can be (first at w.batch = 1: `v.batch`
/// is -2; it must be ...)"; empty when every point was valid.
std::string invalidText(const query::Query &Q, const GridResult &R);
/// A Pareto solve that kept no point: the rows that say why (which
/// conditions fail first, the closest point and what fails there); empty
/// when a point was kept.
std::string missText(const query::Query &Q, const GridResult &R);
/// A grid solve's Pareto front, as an element of `mlsc solve`'s JSON.
void paretoJSON(const query::Query &Q, const GridResult &R,
                llvm::StringRef Scenario, llvm::json::OStream &J);

/// The format an output file's extension asks for (.csv, .json, else text).
TableFormat formatForPath(llvm::StringRef Path);

} // namespace mlsc::driver

#endif
