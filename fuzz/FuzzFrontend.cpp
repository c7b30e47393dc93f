//===- FuzzFrontend.cpp - libFuzzer target: the front end -----------------===//
//
// Parse, resolve imports, build the IR, check dimensions and fold
// constants; render the diagnostics and, when the input compiled, print
// the IR. The fastest target: most inputs a mutator makes stop here.
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzCommon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  bool OK = false;
  auto C = mlsc::fuzz::compileInput(Data, Size, "fold-constants", OK);
  if (OK) {
    std::string Printed;
    llvm::raw_string_ostream OS(Printed);
    mlsc::ir::printProgram(C->Program, C->SM, OS, /*IncludeImported=*/false);
  }
  return 0;
}
