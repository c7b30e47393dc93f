//===- SourceFile.cpp - Reading a source file within bounds ---------------===//

#include "frontend/SourceFile.h"

#include "llvm/Support/Errc.h"
#include "llvm/Support/FileSystem.h"

#include <fmt/format.h>

namespace mlsc {

namespace fs = llvm::sys::fs;

namespace {

SourceRead failure(DiagKind K, std::string Why) {
  SourceRead R;
  R.Kind = K;
  R.Why = std::move(Why);
  return R;
}

SourceRead tooLarge(size_t MaxBytes, const std::string &Size) {
  return failure(
      DiagKind::FileTooLarge,
      fmt::format("file is {} bytes; the limit is {} bytes", Size, MaxBytes));
}

/// Reads \p FD to its end, or to MaxBytes + 1 bytes, whichever is first.
SourceRead readBounded(fs::file_t FD, llvm::StringRef Name, size_t MaxBytes) {
  std::string Data;
  char Chunk[65536];
  while (Data.size() <= MaxBytes) {
    size_t Want = std::min(sizeof(Chunk), MaxBytes + 1 - Data.size());
    llvm::Expected<size_t> Got =
        fs::readNativeFile(FD, llvm::MutableArrayRef<char>(Chunk, Want));
    if (!Got)
      return failure(DiagKind::FileNotFound,
                     "cannot read file: " + llvm::toString(Got.takeError()));
    if (*Got == 0)
      break;
    Data.append(Chunk, *Got);
  }
  if (Data.size() > MaxBytes)
    return tooLarge(MaxBytes, "more than " + std::to_string(MaxBytes));
  // A lone CR (classic Mac OS line endings) ends a line too; as LF, the
  // lines and columns of every diagnostic are right. Same length, so no
  // offset moves.
  for (size_t I = 0; I < Data.size(); ++I)
    if (Data[I] == '\r' && (I + 1 == Data.size() || Data[I + 1] != '\n'))
      Data[I] = '\n';
  SourceRead R;
  R.Buffer = llvm::MemoryBuffer::getMemBufferCopy(Data, Name);
  return R;
}

} // namespace

SourceRead readSourceFile(llvm::StringRef Path, size_t MaxBytes) {
  if (Path == "-")
    return readBounded(fs::getStdinHandle(), "<stdin>", MaxBytes);
  fs::file_status St;
  if (std::error_code EC = fs::status(Path, St))
    return failure(DiagKind::FileNotFound, "cannot read file: " + EC.message());
  if (St.type() != fs::file_type::regular_file)
    return failure(
        DiagKind::NotASourceFile,
        fmt::format("{} is not a source file", describeFileType(St.type())));
  if (St.getSize() > MaxBytes)
    return tooLarge(MaxBytes, std::to_string(St.getSize()));
  llvm::Expected<fs::file_t> FD = fs::openNativeFileForRead(Path);
  if (!FD)
    return failure(DiagKind::FileNotFound,
                   "cannot read file: " + llvm::toString(FD.takeError()));
  SourceRead R = readBounded(*FD, Path, MaxBytes);
  fs::closeFile(*FD);
  return R;
}

const char *describeFileType(fs::file_type T) {
  switch (T) {
  case fs::file_type::directory_file:
    return "a folder";
  case fs::file_type::block_file:
  case fs::file_type::character_file:
    return "a device";
  case fs::file_type::fifo_file:
    return "a pipe (FIFO)";
  case fs::file_type::socket_file:
    return "a socket";
  default:
    return "not a regular file";
  }
}

} // namespace mlsc
