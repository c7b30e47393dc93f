//===- Sweep.cpp - `mlsc sweep`: tables of points -------------------------===//

#include "tools/mlsc/Mpi.h"
#include "tools/mlsc/OutputFile.h"
#include "tools/mlsc/Plots.h"
#include "tools/mlsc/Queries.h"
#include "tools/mlsc/RenderTables.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace mlsc::driver {

namespace {

/// "sweep s: 100 points, 40 kept, 10 written to out.csv".
std::string written(const query::Query &Q, const GridResult &R,
                    llvm::StringRef Path) {
  std::string Invalid = invalidText(Q, R);
  size_t Rows = R.Streamed ? R.Kept : R.Rows.size();
  return fmt::format("sweep {}: {} points, {} kept, {} written to {}{}\n",
                     Q.Name, R.Points, R.Kept, Rows, Path,
                     Invalid.empty() ? "" : "; " + Invalid);
}

} // namespace

int sweepCommand(const DriverOptions &O,
                 std::unique_ptr<llvm::MemoryBuffer> Buf) {
  std::unique_ptr<Compilation> C = compileForEval(O, std::move(Buf));
  if (!C)
    return InputErrors;
  auto Queries = selectQueries(*C, query::Query::Kind::Sweep, O.QueryName);
  if (Queries.empty())
    return UsageError;
  // One plot as SVG or a Vega spec (docs/reports.md).
  if (O.Format == OutputFormat::Svg || O.Format == OutputFormat::Vega) {
    std::vector<Plot> Plots;
    for (const query::Query *Q : Queries) {
      Evaluator E(C->Graphs[Q->Graph]);
      E.run();
      for (Plot &P : gridPlots(E, *Q, threads(O)).Plots)
        Plots.push_back(std::move(P));
    }
    const Plot *P = selectPlot(Plots, O.Plot, O.Input);
    return P ? printPlot(*P, O.Format == OutputFormat::Svg) : UsageError;
  }
  // One table per output: several sweeps go to stdout as text, or are run
  // one at a time by name.
  if (Queries.size() > 1 &&
      (!O.Output.empty() || O.Format != OutputFormat::Text)) {
    std::vector<std::string> Names;
    for (const query::Query *Q : Queries)
      Names.push_back(Q->Name);
    return usage(DiagKind::MissingArgument,
                 fmt::format("the file has {} sweeps ({}); name one for "
                             "--output, --format=json or --format=csv",
                             Queries.size(), llvm::join(Names, ", ")));
  }
  llvm::raw_ostream &OS = llvm::outs();
  // Under mpirun each rank evaluates its share of the grid and rank 0
  // prints what one process would (tools/mlsc/Mpi.h); only rank 0 writes.
  SweepSplit Split = mpi::split();
  const SweepSplit *Share = mpi::active() ? &Split : nullptr;
  bool Root = mpi::rank() == 0;
  for (size_t I = 0; I < Queries.size(); ++I) {
    const query::Query &Q = *Queries[I];
    const graph::Graph &G = C->Graphs[Q.Graph];
    Evaluator E(G);
    Progress Bar = progressBar(
        Q.Name, "points",
        Root && O.Progress && llvm::sys::Process::StandardErrIsDisplayed());
    std::string Path = O.Output.empty() ? Q.Output : O.Output;
    TableFormat Asked = O.Format == OutputFormat::Json  ? TableFormat::JSON
                        : O.Format == OutputFormat::Csv ? TableFormat::CSV
                                                        : TableFormat::Text;
    TableFormat F = Path.empty() ? Asked : formatForPath(Path);
    // An output file's extension names its format; --format may not
    // contradict it.
    if (!Path.empty() && O.Format != OutputFormat::Text && F != Asked)
      return usage(DiagKind::InvalidOption,
                   fmt::format("--format={} contradicts the output file "
                               "`{}`, whose extension names its format",
                               O.Format == OutputFormat::Json ? "json" : "csv",
                               Path));
    // Where the table may go is checked before the sweep runs (by rank 0,
    // whose verdict every rank follows).
    OutputRequest Out{Path, O.Output.empty(), Q.OutputRange, O.Force};
    if (!mpi::fromRoot(Path.empty() || !Root || checkOutput(*C, Out)))
      return InputErrors;
    std::string Invalid;
    if (F == TableFormat::Text) {
      // Aligned columns need every row first: what is kept is held.
      GridResult R =
          runSweep(E, Q, threads(O), Bar, nullptr, DefaultBlockRows, Share);
      if (!Root)
        continue;
      std::string Table = gridText(Q, R);
      Invalid = invalidText(Q, R);
      if (!Path.empty()) {
        std::string Error;
        if (!writeFileAtomically(Path, Table, Error)) {
          reportError(DiagKind::OutputFailed, Path, Error);
          return InputErrors;
        }
        OS << written(Q, R, Path);
        continue;
      }
      // Without conditions every valid point is kept: say how many of
      // them do not fit rather than that they all "meet" none.
      std::string Kept = fmt::format(", {} meet the conditions", R.Kept);
      if (Q.Conditions.empty()) {
        size_t Infeasible = 0;
        for (const GridRow &Row : R.Rows)
          Infeasible += Row.Binding == 0;
        Kept = R.Rows.size() == R.Kept && Infeasible
                   ? fmt::format(", {} of them infeasible", Infeasible)
                   : "";
      }
      OS << (I ? "\n" : "")
         << fmt::format("sweep {}: {} points{}{}{}\n", Q.Name, R.Points, Kept,
                        R.Rows.size() < R.Kept
                            ? fmt::format(", first {} shown", R.Rows.size())
                            : "",
                        Invalid.empty() ? "" : "; " + Invalid);
      OS << Table;
      if (!Q.SortBy.empty() && R.Rows.size() >= 2)
        OS << bestVsRunnerUp(Q, R, compareRows(E, Q, R.Rows[0], R.Rows[1]));
      continue;
    }
    // CSV and JSON are written as the rows come, to the file or stdout.
    AtomicFile File;
    bool Opened = true;
    if (Root && !Path.empty()) {
      std::string Error;
      Opened = File.open(Path, Error);
      if (!Opened)
        reportError(DiagKind::OutputFailed, Path, Error);
    }
    if (!mpi::fromRoot(Opened))
      return InputErrors;
    if (!Root) {
      runSweep(E, Q, threads(O), nullptr, nullptr, DefaultBlockRows, Share);
      continue;
    }
    llvm::raw_ostream &To = Path.empty() ? OS : File.os();
    std::unique_ptr<TableWriter> W =
        tableWriter(F, Q, G.Scenario, To, threads(O));
    GridResult R = runSweep(
        E, Q, threads(O), Bar,
        [&](llvm::ArrayRef<GridRow> Rows) { W->rows(Rows); }, DefaultBlockRows,
        Share);
    if (!R.Streamed)
      W->rows(R.Rows);
    W->finish(R);
    if (!Path.empty()) {
      std::string Error;
      if (!File.commit(Error)) {
        reportError(DiagKind::OutputFailed, Path, Error);
        return InputErrors;
      }
      OS << written(Q, R, Path);
    }
  }
  return Success;
}

} // namespace mlsc::driver
