//===- OutputFile.h - Where the driver may write, and writing whole -*- C++
//-*-===//
//
// A scenario file is often someone else's: the `output` it names may only
// be a relative path below the working directory, reached through no
// symbolic link, and it may replace an existing file only with --force.
// No output, whoever named it, may replace an input or import of the run,
// a folder, device, pipe or socket, a read-only file, or a file with other
// hard links. A file is written whole or not at all: into a temporary in
// the same folder (removed on SIGINT and SIGTERM), with the replaced
// file's permissions, renamed over the target. docs/driver.md, "Output
// files".
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_TOOLS_MLSC_OUTPUTFILE_H
#define MLSC_TOOLS_MLSC_OUTPUTFILE_H

#include "passes/Pipeline.h"

#include "llvm/Support/SMLoc.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

#include <string>

namespace mlsc::driver {

/// An output file and who named it.
struct OutputRequest {
  std::string Path;
  /// Named by the scenario file's `output` (at Range), not by --output.
  bool FromFile = false;
  llvm::SMRange Range;
  /// --force: the file's `output` may replace an existing file.
  bool Force = false;
};

/// Checks \p R against the rules above; on a refusal reports a diagnostic
/// (located at the file's `output` when the file named it) and returns
/// false.
bool checkOutput(Compilation &C, const OutputRequest &R);

/// A file written whole or not at all, as it is produced: open() creates
/// the temporary beside the target, os() writes into it, commit() renames
/// it over the target. Destroyed without a commit, it leaves nothing.
class AtomicFile {
public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  ~AtomicFile();
  /// On failure returns false and sets \p Error (which does not repeat
  /// the path).
  bool open(llvm::StringRef Target, std::string &Error);
  llvm::raw_ostream &os() { return *OS; }
  bool commit(std::string &Error);

private:
  void discard();
  std::string Path, Temp;
  std::unique_ptr<llvm::raw_fd_ostream> OS;
};

/// Writes \p Contents to \p Path whole or not at all. On failure returns
/// false and sets \p Error (which does not repeat the path); nothing is
/// left behind.
bool writeFileAtomically(llvm::StringRef Path, llvm::StringRef Contents,
                         std::string &Error);

} // namespace mlsc::driver

#endif
