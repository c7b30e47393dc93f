//===- FuzzFrontend.cpp - libFuzzer target for the whole pipeline ---------===//
//
// Each input is a main .mls file: it is compiled by mlsc::compile with a fresh
// Compilation (prelude on, so imports and name resolution against real
// modules are exercised), then every diagnostic is rendered and, when the
// input compiled, the IR is printed, both into strings. Any crash, sanitizer
// report, leak or timeout is a bug; docs/fuzzing.md says how to run it.
//
//===----------------------------------------------------------------------===//

#include "ir/IR.h"
#include "passes/Pipeline.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

/// Where stdlib/ and registries/ live: $MLSC_DATA_DIR, else the source tree.
const std::string &dataDir() {
  static const std::string Dir =
      llvm::sys::Process::GetEnv("MLSC_DATA_DIR").getValueOr(MLSC_SOURCE_DIR);
  return Dir;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  mlsc::Compilation C;
  C.Options.DataDir = dataDir();
  C.Options.LoadPrelude = true;
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  bool OK = mlsc::compile(
      C, llvm::MemoryBuffer::getMemBufferCopy(Text, "fuzz-input.mls"));
  std::string Rendered;
  llvm::raw_string_ostream OS(Rendered);
  C.Diags.flush(OS);
  if (OK)
    mlsc::ir::printProgram(C.Program, C.SM, OS, /*IncludeImported=*/true);
  OS.flush();
  return 0;
}
