//===- FuzzCommon.h - What the libFuzzer targets share ------------*- C++
//-*-===//
//
// Each input is a main .mls file, compiled with a fresh Compilation. The
// prelude and every module an input imports are read and parsed once per
// process and kept in a ModuleCache (passes/Pipeline.h), so an input costs
// its own parse and passes, not the registries'. The cache only keeps
// modules that parsed without a diagnostic, and they are used as they are:
// an input cannot change them. docs/fuzzing.md says how to run the targets.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_FUZZ_FUZZCOMMON_H
#define MLSC_FUZZ_FUZZCOMMON_H

#include "ir/IR.h"
#include "passes/Pipeline.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace mlsc::fuzz {

/// Where stdlib/ and registries/ live: $MLSC_DATA_DIR, else the source tree.
inline const std::string &dataDir() {
  static const std::string Dir =
      llvm::sys::Process::GetEnv("MLSC_DATA_DIR").getValueOr(MLSC_SOURCE_DIR);
  return Dir;
}

inline ModuleCache &moduleCache() {
  static ModuleCache Cache;
  return Cache;
}

/// Compiles one input (up to and including \p StopAfter; "" for every
/// pass), then renders its diagnostics into a string, so the renderer is
/// fuzzed too. Sweeps are capped at \p MaxPoints points.
inline std::unique_ptr<Compilation>
compileInput(const uint8_t *Data, size_t Size, llvm::StringRef StopAfter,
             bool &OK, double MaxPoints = 1e4) {
  auto C = std::make_unique<Compilation>();
  C->Options.DataDir = dataDir();
  C->Options.LoadPrelude = true;
  C->Options.Modules = &moduleCache();
  C->Options.MaxGridPoints = MaxPoints;
  C->Options.MaxSimulatedRequests = 1e4;
  llvm::StringRef Text(reinterpret_cast<const char *>(Data), Size);
  OK = compile(*C, llvm::MemoryBuffer::getMemBufferCopy(Text, "fuzz-input.mls"),
               StopAfter);
  std::string Rendered;
  llvm::raw_string_ostream OS(Rendered);
  C->Diags.flush(OS);
  return C;
}

} // namespace mlsc::fuzz

#endif
