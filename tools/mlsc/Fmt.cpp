//===- Fmt.cpp - `mlsc fmt` -----------------------------------------------===//
//
// Rewrites each .mls file named (or found in a folder named) in its
// canonical layout (frontend/Formatter.h), whole or not at all and keeping
// its permissions; `-` formats standard input to standard output. With
// --check it writes nothing and prints a unified diff for each file that is
// not formatted. A file that does not parse is reported and left as it is.
// Exit 0 when every file was (or is, with --check) formatted, 1 otherwise.
//
//===----------------------------------------------------------------------===//

#include "tools/mlsc/Driver.h"
#include "tools/mlsc/OutputFile.h"

#include "frontend/Formatter.h"
#include "frontend/SourceFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

namespace mlsc::driver {

namespace {

/// Formats one file; false when it has errors or is not formatted
/// (--check), or cannot be rewritten.
bool formatOne(const DriverOptions &O, const std::string &Path) {
  std::unique_ptr<llvm::MemoryBuffer> Buf = readInput(O, Path);
  if (!Buf)
    return false;
  std::string Before = Buf->getBuffer().str();
  llvm::SourceMgr SM;
  DiagnosticEngine Diags(SM);
  unsigned Id = SM.AddNewSourceBuffer(std::move(Buf), llvm::SMLoc());
  std::optional<std::string> After = formatBuffer(Id, Diags, O.Compile.Limits);
  Diags.flush(llvm::errs());
  if (!After)
    return false;
  if (Path == "-") {
    if (!O.Check)
      llvm::outs() << *After;
    else
      llvm::outs() << unifiedDiff(Before, *After, "<stdin>",
                                  "<stdin> (formatted)");
    return !O.Check || Before == *After;
  }
  if (Before == *After)
    return true;
  if (O.Check) {
    llvm::outs() << unifiedDiff(Before, *After, Path, Path + " (formatted)");
    return false;
  }
  // Through a symbolic link, the file it names is rewritten, not the link.
  llvm::SmallString<256> Real;
  if (llvm::sys::fs::real_path(Path, Real)) {
    reportError(DiagKind::OutputFailed, Path, "cannot resolve the path");
    return false;
  }
  // By its mode, not access(): root may write any file.
  llvm::ErrorOr<llvm::sys::fs::perms> Mode =
      llvm::sys::fs::getPermissions(Real);
  if (!Mode || !(*Mode & llvm::sys::fs::owner_write)) {
    reportError(DiagKind::OutputReadOnly, Path,
                "the file is read-only; it was not formatted");
    return false;
  }
  llvm::sys::fs::file_status Status;
  if (!llvm::sys::fs::status(Real, Status) && Status.getLinkCount() > 1) {
    reportError(DiagKind::OutputHardLinked, Path,
                "the file has other hard links, which replacing it would "
                "split; it was not formatted (`mlsc fmt - < FILE` prints it)");
    return false;
  }
  std::string Error;
  if (!writeFileAtomically(Real, *After, Error)) {
    reportError(DiagKind::OutputFailed, Path, Error);
    return false;
  }
  llvm::outs() << Path << "\n";
  return true;
}

} // namespace

int fmtCommand(const DriverOptions &O) {
  std::vector<std::string> Files;
  for (const std::string &P : O.AuditPaths) {
    if (P != "-" && !llvm::sys::fs::exists(P)) {
      reportError(DiagKind::FileNotFound, P, "no such file or folder");
      return InputErrors;
    }
    if (P == "-")
      Files.push_back(P);
    else
      expandPath(P, Files);
  }
  bool OK = true;
  for (const std::string &F : Files)
    OK &= formatOne(O, F);
  return OK ? Success : InputErrors;
}

} // namespace mlsc::driver
