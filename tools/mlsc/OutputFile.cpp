//===- OutputFile.cpp - Where the driver may write, and writing whole -----===//

#include "tools/mlsc/OutputFile.h"
#include "frontend/SourceFile.h"
#include "tools/mlsc/Driver.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <thread>

namespace mlsc::driver {

namespace fs = llvm::sys::fs;

namespace {

/// Reports a refusal: at the file's `output`, or against the path.
bool refuse(Compilation &C, const OutputRequest &R, DiagKind K,
            const std::string &Message) {
  if (R.FromFile && R.Range.isValid()) {
    C.Diags.report(K, R.Range, Message);
    C.Diags.flush(llvm::errs());
  } else {
    reportError(K, R.Path, Message);
  }
  return false;
}

/// The first existing component of the relative \p Path that is a
/// symbolic link, or "".
std::string symlinkOnPath(llvm::StringRef Path) {
  llvm::SmallString<256> Prefix;
  for (auto It = llvm::sys::path::begin(Path), End = llvm::sys::path::end(Path);
       It != End; ++It) {
    llvm::sys::path::append(Prefix, *It);
    fs::file_status St;
    if (fs::status(Prefix, St, /*follow=*/false))
      return ""; // the rest does not exist yet
    if (St.type() == fs::file_type::symlink_file)
      return std::string(Prefix);
  }
  return "";
}

/// Whether \p ID is the file of some buffer the run read (the main file
/// and every import).
bool isInputOfRun(const Compilation &C, const fs::UniqueID &ID) {
  for (unsigned I = 1; I <= C.SM.getNumBuffers(); ++I) {
    llvm::StringRef Name = C.SM.getMemoryBuffer(I)->getBufferIdentifier();
    fs::UniqueID Other;
    if (Name != "-" && !fs::getUniqueID(Name, Other) && Other == ID)
      return true;
  }
  return false;
}

} // namespace

bool checkOutput(Compilation &C, const OutputRequest &R) {
  if (R.FromFile) {
    std::string Link = symlinkOnPath(R.Path);
    if (!Link.empty())
      return refuse(C, R, DiagKind::OutputThroughSymlink,
                    fmt::format("`output = \"{}\"` goes through the symbolic "
                                "link `{}`; a scenario file may not write "
                                "through links (use --output on the command "
                                "line)",
                                R.Path, Link));
  }
  fs::file_status St;
  if (fs::status(R.Path, St))
    return true; // a new file: the write reports a missing folder
  if (St.type() != fs::file_type::regular_file)
    return refuse(C, R, DiagKind::OutputNotRegular,
                  fmt::format("`{}` is {}; an output must be a regular file",
                              R.Path, describeFileType(St.type())));
  if (isInputOfRun(C, St.getUniqueID()))
    return refuse(C, R, DiagKind::OutputIsInput,
                  fmt::format("`{}` is an input of this run (the file or a "
                              "module it imports); writing the output there "
                              "would destroy it",
                              R.Path));
  if (!(St.permissions() & fs::owner_write))
    return refuse(
        C, R, DiagKind::OutputReadOnly,
        fmt::format("`{}` is read-only; mlsc does not replace it", R.Path));
  if (St.getLinkCount() > 1)
    return refuse(C, R, DiagKind::OutputHardLinked,
                  fmt::format("`{}` has {} hard links; replacing it would "
                              "split them",
                              R.Path, St.getLinkCount()));
  if (R.FromFile && !R.Force)
    return refuse(C, R, DiagKind::OutputExists,
                  fmt::format("`output = \"{}\"` would replace an existing "
                              "file; pass --force to let the scenario file "
                              "replace it",
                              R.Path));
  return true;
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::discard() {
  if (Temp.empty())
    return;
  if (OS) {
    OS->close();
    OS->clear_error();
    OS.reset();
  }
  fs::remove(Temp);
  llvm::sys::DontRemoveFileOnSignal(Temp);
  Temp.clear();
}

bool AtomicFile::open(llvm::StringRef Target, std::string &Error) {
  if (fs::is_directory(Target)) {
    Error = "cannot write: it is a folder";
    return false;
  }
  llvm::SmallString<256> Folder = llvm::sys::path::parent_path(Target);
  if (Folder.empty())
    Folder = ".";
  if (!fs::is_directory(Folder)) {
    Error = fmt::format("cannot write: no folder `{}`", Folder.str());
    return false;
  }
  // A short temporary name, so that any valid target name fits beside it.
  llvm::SmallString<256> Model = Folder;
  llvm::sys::path::append(Model, ".mlsc-%%%%%%%%.tmp");
  // The name is scheduled for removal on SIGINT and SIGTERM before the file
  // exists: a signal that lands between creating the file and scheduling it
  // (fs::createUniqueFile, then RemoveFileOnSignal) would leave it behind.
  // A signal before the create finds nothing to remove.
  int FD = -1;
  std::error_code EC;
  for (int Attempt = 0; Attempt < 128; ++Attempt) {
    llvm::SmallString<256> Name;
    fs::createUniquePath(Model, Name, /*MakeAbsolute=*/false);
    llvm::sys::RemoveFileOnSignal(Name);
    EC = fs::openFileForWrite(Name, FD, fs::CD_CreateNew, fs::OF_None);
    if (!EC) {
      Temp = std::string(Name);
      break;
    }
    llvm::sys::DontRemoveFileOnSignal(Name);
    if (EC != std::errc::file_exists)
      break;
  }
  if (Temp.empty()) {
    Error = "cannot write: cannot create a temporary file in its folder (" +
            EC.message() + ")";
    return false;
  }
  Path = Target.str();
  OS = std::make_unique<llvm::raw_fd_ostream>(FD, /*shouldClose=*/true);
  return true;
}

bool AtomicFile::commit(std::string &Error) {
  auto Fail = [&](std::string Why) {
    discard();
    Error = std::move(Why);
    return false;
  };
  OS->close();
  if (OS->has_error())
    return Fail("cannot write: " + OS->error().message());
  OS.reset();
  // A replaced file keeps its permissions.
  fs::file_status St;
  if (!fs::status(Path, St))
    if (std::error_code EC = fs::setPermissions(Temp, St.permissions()))
      return Fail("cannot write: cannot keep the file's permissions (" +
                  EC.message() + ")");
  // Test hook (docs/driver.md): hold the finished temporary this many
  // seconds before the rename, so a test can interrupt the write.
  if (const char *Hold = std::getenv("MLSC_TEST_HOLD_TEMPORARY"))
    std::this_thread::sleep_for(std::chrono::seconds(std::atoi(Hold)));
  if (std::error_code EC = fs::rename(Temp, Path))
    return Fail("cannot write: cannot replace the file (" + EC.message() + ")");
  llvm::sys::DontRemoveFileOnSignal(Temp);
  Temp.clear();
  return true;
}

bool writeFileAtomically(llvm::StringRef Path, llvm::StringRef Contents,
                         std::string &Error) {
  AtomicFile F;
  if (!F.open(Path, Error))
    return false;
  F.os() << Contents;
  return F.commit(Error);
}

} // namespace mlsc::driver
