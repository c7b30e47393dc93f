//===- SourceFile.h - Reading a source file within bounds ---------*- C++
//-*-===//
//
// Every .mls file the tool reads - the main file, standard input, each
// import, each audited file - comes through here. What is not a regular
// file (a folder, a device such as /dev/zero, a FIFO, a socket) is refused
// before it is opened, so nothing blocks or reads without end; a file whose
// size exceeds the limit is refused before it is read (a sparse 1 GiB file
// costs nothing); a stream (standard input) is read to at most the limit
// plus one byte. A lone CR (old Mac OS line endings) is read as LF, so
// that line numbers are right.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_FRONTEND_SOURCEFILE_H
#define MLSC_FRONTEND_SOURCEFILE_H

#include "frontend/Diagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace mlsc {

struct SourceRead {
  /// The file's bytes, named by its path; null on failure.
  std::unique_ptr<llvm::MemoryBuffer> Buffer;
  /// On failure: FileNotFound, NotASourceFile or FileTooLarge, and why
  /// (the message does not repeat the path).
  DiagKind Kind = DiagKind::FileNotFound;
  std::string Why;
};

/// Reads \p Path ("-": standard input), at most \p MaxBytes.
SourceRead readSourceFile(llvm::StringRef Path, size_t MaxBytes);

/// What a path that is not a regular file names, for a message: "a
/// folder", "a device", "a pipe (FIFO)", "a socket".
const char *describeFileType(llvm::sys::fs::file_type T);

} // namespace mlsc

#endif
