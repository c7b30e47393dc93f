//===- StepModelFixture.h - A small decoder scenario and its compile -*- C++
//-*-===//
//
// Shared by the step-model and simulator tests: a 10B decoder on a 1
// PFLOP/s, 2 TB/s device, compiled without the prelude.
//
//===----------------------------------------------------------------------===//
#ifndef MLSC_TEST_UNIT_STEPMODELFIXTURE_H
#define MLSC_TEST_UNIT_STEPMODELFIXTURE_H

#include "passes/Pipeline.h"

#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace mlsc::test {

inline const char *const SmallDecoderScenario = R"(
accelerator gpu { hbm.capacity = 80 GB; hbm.bandwidth = 2 TB/s; tdp = 700 W
                  peak.bf16 = 1000 TFLOP/s }
precision bf16 { bytes = 2 B }
model m { params = 10e9; layers = 10; heads = 8; head_dim = 64; kv_heads = 8 }
workload w : inference { model = m; precision = bf16; prompt = 1000 tok
                         output = 200 tok; batch = 2 }
scenario s { workload = w; system = gpu }
)";

/// \p Text compiled as a main file without the prelude; null on errors.
inline std::unique_ptr<Compilation> compileText(const std::string &Text,
                                                llvm::StringRef Name) {
  auto C = std::make_unique<Compilation>();
  C->Options.LoadPrelude = false;
  C->Options.DataDir = MLSC_SOURCE_DIR;
  if (!compile(*C, llvm::MemoryBuffer::getMemBufferCopy(Text, Name)))
    return nullptr;
  return C;
}

} // namespace mlsc::test

#endif
