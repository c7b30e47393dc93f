//===- ReplayMain.cpp - Run a fuzz target over files, without libFuzzer ---===//
//
// Built with the normal compiler (`mlsc_fuzz_<target>_replay`), so the
// targets compile in every build, and the lit suite runs them over the
// seeds and every input that once crashed (test/lit/fuzz-replay.test),
// under the sanitizers in `make test-sanitize`. Arguments are files or
// folders (every `.mls` file below them, in path order).
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size);

int main(int Argc, char **Argv) {
  std::vector<std::string> Files;
  for (int I = 1; I < Argc; ++I) {
    if (!llvm::sys::fs::is_directory(Argv[I])) {
      Files.push_back(Argv[I]);
      continue;
    }
    std::vector<std::string> In;
    std::error_code EC;
    for (llvm::sys::fs::recursive_directory_iterator It(Argv[I], EC), End;
         It != End && !EC; It.increment(EC))
      if (llvm::StringRef(It->path()).endswith(".mls") &&
          llvm::sys::fs::is_regular_file(It->path()))
        In.push_back(It->path());
    llvm::sort(In);
    Files.insert(Files.end(), In.begin(), In.end());
  }
  for (const std::string &F : Files) {
    auto Buf = llvm::MemoryBuffer::getFile(F);
    if (!Buf) {
      llvm::errs() << F << ": " << Buf.getError().message() << "\n";
      return 1;
    }
    LLVMFuzzerTestOneInput(
        reinterpret_cast<const uint8_t *>((*Buf)->getBufferStart()),
        (*Buf)->getBufferSize());
  }
  llvm::outs() << Files.size() << " inputs\n";
  return 0;
}
