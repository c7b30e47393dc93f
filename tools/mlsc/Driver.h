//===- Driver.h - The mlsc command-line driver's shared parts ----*- C++
//-*-===//
#ifndef MLSC_TOOLS_DRIVER_H
#define MLSC_TOOLS_DRIVER_H

#include "passes/Pipeline.h"

#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <vector>

namespace mlsc::driver {

enum ExitCode { Success = 0, InputErrors = 1, UsageError = 2, CheckFailed = 3 };

struct DriverOptions {
  std::string Command = "compile";
  std::string Input;
  std::string Metric; ///< explain: SCENARIO.METRIC
  bool Json = false;
  bool Csv = false;
  bool Leaves = false; ///< explain --leaves
  std::vector<std::string> AuditPaths;
  int MaxAgeYears = 2;
  std::string AsOf; ///< YYYY-MM-DD; default today (UTC)
  std::string Emit = "ir";
  bool Verify = false;
  CompileOptions Compile;
  std::string ListWhat;
  bool Help = false;
  bool Version = false;
  std::string QueryName; ///< solve, sweep: one block by name
  std::string Output;    ///< sweep: --output=FILE overrides `output`
  unsigned Jobs = 0;     ///< sweep: threads (0: every core)
  bool Progress = true;  ///< sweep: a progress bar on a terminal
};

/// Compiles for evaluation; prints diagnostics. Null on errors.
std::unique_ptr<Compilation>
compileForEval(const DriverOptions &O, std::unique_ptr<llvm::MemoryBuffer> Buf);

/// `mlsc solve FILE [NAME]` (Queries.cpp).
int solve(const DriverOptions &O, std::unique_ptr<llvm::MemoryBuffer> Buf);
/// `mlsc sweep FILE [NAME]` (Queries.cpp).
int sweep(const DriverOptions &O, std::unique_ptr<llvm::MemoryBuffer> Buf);
/// `mlsc sensitivity FILE SCENARIO[.METRIC]` (Sensitivity.cpp).
int sensitivity(const DriverOptions &O,
                std::unique_ptr<llvm::MemoryBuffer> Buf);

} // namespace mlsc::driver

#endif
