//===- Pipeline.h - The compilation pipeline ---------------------*- C++
//-*-===//
//
// One readable function runs the passes of Passes.def in order over a
// Compilation (the SourceMgr, diagnostics and the program being built).
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_PASSES_PIPELINE_H
#define MLSC_PASSES_PIPELINE_H

#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"
#include "ir/Graph.h"
#include "ir/IR.h"
#include "ir/Query.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlsc {

/// Imported modules shared between compilations that run one after the
/// other in a process (the fuzzers; docs/fuzzing.md): each file read, by
/// real path, and its parse when that reported nothing. A later
/// compilation that imports the same file takes both as they are, without
/// reading or parsing it again, so the files must not change while the
/// cache lives. Not for concurrent compilations. A kept module's BufferId
/// is the one it had where it was parsed: only the main module's is read
/// (build-ir), and the main file is never kept.
struct ModuleCache {
  struct Entry {
    std::unique_ptr<llvm::MemoryBuffer> Buffer;
    std::shared_ptr<const ast::Module> Module; ///< null: it had errors
  };
  std::map<std::string, Entry> Entries;
  /// What the file system said about paths: their real path (nullopt when
  /// it has none) and whether they exist. Like the entries, taken not to
  /// change while the cache lives; resolving a module's imports asks these
  /// of every candidate, a few system calls a path component each.
  std::map<std::string, std::optional<std::string>, std::less<>> RealPaths;
  std::map<std::string, bool, std::less<>> Exists;
};

struct CompileOptions {
  std::vector<std::string> IncludeDirs; ///< -I, searched after the file's dir
  std::string DataDir;     ///< holds stdlib/ and registries/; searched last
  bool LoadPrelude = true; ///< implicitly import stdlib.prelude
  FrontendLimits Limits;
  std::string PrintIRAfter;   ///< pass flag, or "all"
  bool PrintImported = false; ///< dumps include imported modules' entities
  /// --max-points: the most points a sweep or grid solve may have. A file's
  /// `max_points` may lower it, never raise it.
  double MaxGridPoints = 1e7;
  /// Imported modules kept from earlier compilations; none by default.
  ModuleCache *Modules = nullptr;
  /// Export the serving simulator's inputs for every served decoder, not
  /// only those with a `simulate` block (`mlsc validate` runs its serving
  /// anchors through the simulator too).
  bool SimulateServing = false;
  /// The most requests one simulation may play (`simulate.requests`):
  /// about a second of the simulator's time a million, so that a file
  /// from someone else cannot hold the tool for hours.
  double MaxSimulatedRequests = 1e9;
};

struct Compilation {
  llvm::SourceMgr SM;
  DiagnosticEngine Diags{SM};
  CompileOptions Options;
  /// The parsed modules, in dependency order (resolve-imports); build-ir
  /// reads them, and nothing after it does.
  std::vector<std::shared_ptr<const ast::Module>> Modules;
  ir::Program Program;
  /// One evaluation graph per scenario of the main file (lower-to-graph).
  std::vector<graph::Graph> Graphs;
  /// The main file's solve and sweep blocks, resolved against those graphs.
  std::vector<query::Query> Queries;
  /// The main file's fleets, their members resolved to those graphs.
  std::vector<query::Fleet> Fleets;
  /// Where `--print-ir-after` output goes.
  llvm::raw_ostream *DumpStream = nullptr;
};

struct PassInfo {
  const char *Flag;
  bool (*Run)(Compilation &);
  const char *Summary;
};

llvm::ArrayRef<PassInfo> allPasses();

// The passes, one per file in passes/.
bool runResolveImports(Compilation &C);
bool runBuildIR(Compilation &C);
bool runCheckDimensions(Compilation &C);
bool runFoldConstants(Compilation &C);
bool runLowerToGraph(Compilation &C);

/// Adds \p Main as the main buffer and runs every pass (or up to and
/// including \p StopAfter when not empty). Returns false when any error was
/// reported.
/// Folds one constant expression (reporting its errors), or nullopt.
std::optional<ir::Value> foldConstant(Compilation &C, const ir::Expr &E);
/// The scenarios whose values \p E reads, through lets too, by name.
std::vector<std::string> scenariosRead(const ir::Expr &E);

bool compile(Compilation &C, std::unique_ptr<llvm::MemoryBuffer> Main,
             llvm::StringRef StopAfter = "");

/// Where stdlib/ and registries/ live: $MLSC_DATA_DIR, else the directory
/// next to the executable's `../share/mlsc`, else the source tree.
std::string defaultDataDir(const char *Argv0);

} // namespace mlsc

#endif
