//===- Walls.cpp - `mlsc walls`: the 22 walls and their status ------------===//

#include "tools/mlsc/Driver.h"
#include "tools/mlsc/Render.h"

#include "llvm/Support/raw_ostream.h"

namespace mlsc::driver {

int wallsCommand(const DriverOptions &O) {
  if (O.Format == OutputFormat::Json) {
    llvm::json::OStream J(llvm::outs(), 2);
    wallsJSON(J);
    llvm::outs() << "\n";
  } else {
    printWalls(llvm::outs());
  }
  return Success;
}

} // namespace mlsc::driver
