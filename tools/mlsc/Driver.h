//===- Driver.h - The mlsc command-line driver's shared parts ----*- C++
//-*-===//
//
// The driver reads its command and options through one table
// (Options.def), runs the pipeline, and hands each command's result to a
// renderer (Render.h, RenderTables.h). One file per command. Exit codes:
//   0  success (for `check`: every condition holds)
//   1  the input has errors (diagnostics were printed)
//   2  usage error (bad option, missing file argument, unknown metric)
//   3  `check`: a condition failed or could not be evaluated; `solve`: a
//      solve has no answer; `audit`: a value has no source; `validate`: a
//      validation anchor left its tolerance, or a known miss no longer
//      misses
// Documented in docs/driver.md.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_TOOLS_DRIVER_H
#define MLSC_TOOLS_DRIVER_H

#include "passes/Pipeline.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mlsc::driver {

enum ExitCode { Success = 0, InputErrors = 1, UsageError = 2, CheckFailed = 3 };

enum class Command : uint8_t {
#define COMMAND(Id, ...) Id,
#include "tools/mlsc/Options.def"
};

enum class OptionId : uint8_t {
#define OPTION(Id, ...) Id,
#include "tools/mlsc/Options.def"
};

enum class OutputFormat : uint8_t { Text, Json, Csv, Svg, Vega };

struct DriverOptions {
  Command Cmd = Command::Compile;
  std::string Input;
  std::string Target; ///< explain: SCENARIO.VALUE; sensitivity: SCENARIO[.M];
                      ///< help: COMMAND
  OutputFormat Format = OutputFormat::Text;
  bool Leaves = false; ///< explain --leaves
  std::vector<std::string> AuditPaths;
  int MaxAgeYears = 2;
  int MaxPriceAgeYears = 1;
  std::string AsOf; ///< YYYY-MM-DD; default today (UTC)
  std::string Emit = "ir";
  bool Verify = false;
  CompileOptions Compile;
  std::string List; ///< --list-WHAT
  bool Help = false;
  bool Version = false;
  std::string QueryName;   ///< solve, sweep: one block by name
  std::string Output;      ///< sweep: --output=FILE overrides `output`
  unsigned Jobs = 0;       ///< sweep, solve: threads (0: every core)
  bool Progress = true;    ///< eval, sweep: a progress bar on a terminal
  std::string RequestsCsv; ///< eval: --requests-csv=FILE
  std::string TimelineCsv; ///< eval: --timeline-csv=FILE
  bool Force = false;      ///< sweep: the file's `output` may replace a file
  bool Check = false;      ///< fmt --check: write nothing, print diffs
  std::vector<std::string> Expressions; ///< eval -e EXPR (in order)
  std::string Plot; ///< --plot: the plot --format=svg or vega prints
};

/// Reads argv into \p O. On a usage error, reports it (a diagnostic with
/// did-you-mean where one helps) and returns the exit code; -1 otherwise.
int parseArgs(int Argc, char **Argv, DriverOptions &O);

/// The text of `mlsc --help`, from the options table; of one command's
/// help when \p Topic names a command (`mlsc help eval`).
std::string helpText(llvm::StringRef Topic = "");

/// `--list-options`: one tab-separated line per command (`command`, name,
/// arguments, formats, help) and per option (`option`, spelling, commands,
/// help).
std::string optionsTable();

/// Reports a usage error (exit 2) through the diagnostics engine, as
/// `mlsc: error: MESSAGE [Kind]`, and says where help is.
int usage(DiagKind Kind, const std::string &Message);

/// Reports an error about no source location (an output file, an input
/// that cannot be read) through the diagnostics engine, as
/// `FILE: error: MESSAGE [Kind]` (`mlsc: error: ...` when \p File is "").
void reportError(DiagKind Kind, const std::string &File,
                 const std::string &Message);

/// Compiles for evaluation; prints diagnostics. Null on errors.
std::unique_ptr<Compilation>
compileForEval(const DriverOptions &O, std::unique_ptr<llvm::MemoryBuffer> Buf,
               const DiagnosticEngine::CommandLineLines *Appended = nullptr);

/// The commands, one file each.
int compileCommand(const DriverOptions &O,
                   std::unique_ptr<llvm::MemoryBuffer> Buf);
int verifyCommand(const DriverOptions &O,
                  std::unique_ptr<llvm::MemoryBuffer> Buf);
int listCommand(const std::string &What);
int evalCommand(const DriverOptions &O,
                std::unique_ptr<llvm::MemoryBuffer> Buf);
int checkCommand(const DriverOptions &O,
                 std::unique_ptr<llvm::MemoryBuffer> Buf);
int explainCommand(const DriverOptions &O,
                   std::unique_ptr<llvm::MemoryBuffer> Buf);
int solveCommand(const DriverOptions &O,
                 std::unique_ptr<llvm::MemoryBuffer> Buf);
int sweepCommand(const DriverOptions &O,
                 std::unique_ptr<llvm::MemoryBuffer> Buf);
int sensitivityCommand(const DriverOptions &O,
                       std::unique_ptr<llvm::MemoryBuffer> Buf);
/// `mlsc report FILE...`: an HTML report per file (Report.cpp).
int reportCommand(const DriverOptions &O);
int wallsCommand(const DriverOptions &O);
/// `mlsc eval FILE -e EXPR...`: each expression's value (Expression.cpp).
int expressionCommand(const DriverOptions &O,
                      std::unique_ptr<llvm::MemoryBuffer> Buf);
/// Where a let that reads a scenario's values is in that scenario's graph
/// (lower-to-graph names it there).
std::optional<std::pair<const graph::Graph *, graph::NodeId>>
letNode(const Compilation &C, llvm::StringRef Name);
/// `mlsc lsp`: the language server (Lsp.cpp).
int lspCommand(const DriverOptions &O);
/// Whether option \p Id may be given to command \p C (Options.def's
/// command lists; `*`: the commands that read files).
bool optionAppliesTo(OptionId Id, Command C);
/// `mlsc completion bash|zsh`: the script, from Options.def.
int completionCommand(const DriverOptions &O);
/// The kinds `--emit` prints.
inline std::vector<std::string> emitKinds() {
  return {"tokens", "ast", "ir", "graph"};
}
/// `mlsc fmt PATH...`: the canonical layout (frontend/Formatter.h).
int fmtCommand(const DriverOptions &O);
/// `mlsc explain-diagnostic KIND`: a kind's severity, meaning and example.
int explainDiagnosticCommand(const DriverOptions &O);
int auditCommand(const DriverOptions &O);
int validateCommand(const DriverOptions &O);

/// Every .mls file under \p Path (a file or a folder), sorted, appended to
/// \p Out. Symbolic links to folders are not followed, so a link to `.`
/// cannot make the walk loop; a linked file is read like any other (and
/// refused if it is no regular file).
void expandPath(const std::string &Path, std::vector<std::string> &Out);

/// The .mls files of the command's paths (--audit-style PATH...; \p Default
/// when none is given), each once, in order; false (reported) when a path
/// does not exist.
bool collectFiles(const DriverOptions &O, const std::string &Default,
                  std::vector<std::string> &Files);

/// Reads and compiles each of \p Files on its own, prints its diagnostics,
/// and hands the compilation to \p Each with whether it compiled and the
/// file's name as shown (relative to the data directory when inside it).
/// False when a file could not be read or did not compile.
bool compileEach(const DriverOptions &O, const std::vector<std::string> &Files,
                 llvm::function_ref<void(Compilation &C, bool Compiled,
                                         const std::string &Shown)>
                     Each);

/// Days in \p Month (1-12) of \p Year, in the Gregorian calendar.
unsigned daysInMonth(unsigned Year, unsigned Month);

/// Threads for sweeps and grid solves: --jobs, else every core.
unsigned threads(const DriverOptions &O);

/// A progress bar on stderr, "LABEL [####    ] done/total UNIT", drawn once
/// the work has taken a second; none (null) unless \p Enabled (a
/// terminal, without --no-progress).
std::function<void(size_t Done, size_t Total)>
progressBar(std::string Label, std::string Unit, bool Enabled);

/// Reads a source file (or `-`, standard input) within the front end's
/// size limit; on failure reports it (FileNotFound, NotASourceFile,
/// FileTooLarge) against the path and returns null.
std::unique_ptr<llvm::MemoryBuffer> readInput(const DriverOptions &O,
                                              const std::string &Path);

} // namespace mlsc::driver

#endif
